package classify

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Members refines verdict v of container c, run by a workload of replicas
// pods, for a server whose behaviour during recovery depends on its
// ensemble (EnsembleEnv): ZooKeeper run alone opens its client port before
// it loads its data, a quorum member only after. Other verdicts are
// returned unchanged.
func Members(v Verdict, c *corev1.Container, replicas int32) Verdict {
	if v.Server == nil || len(v.Server.EnsembleEnv) == 0 {
		return v
	}
	n, why := replicas, fmt.Sprintf("%d replica", replicas)
	if replicas != 1 {
		why += "s"
	}
	for _, e := range c.Env {
		if !contains(v.Server.EnsembleEnv, e.Name) {
			continue
		}
		if m := int32(len(strings.FieldsFunc(e.Value, func(r rune) bool { return r == ' ' || r == ',' || r == ';' }))); m > n {
			n, why = m, fmt.Sprintf("%s lists %d servers", e.Name, m)
		}
	}
	s := *v.Server
	if n <= 1 {
		s.ListensDuringRecovery = true
		s.Recovery = "runs standalone (" + why + "): it listens, and answers ruok with imok, while it loads its snapshot and log, but serves no request until it has loaded them"
	} else {
		s.PortClosedDuringRecovery = true
		s.Recovery = "is a quorum member (" + why + "): it does not open its client port until it has loaded its snapshot and log"
	}
	v.Server = &s
	return v
}
