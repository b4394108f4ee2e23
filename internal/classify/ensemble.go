package classify

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Members refines verdict v of container c, run by a workload of replicas
// pods, for a server whose behaviour during recovery depends on its
// ensemble (EnsembleEnv): ZooKeeper run alone serves its client port
// (ruok, srvr) before it loads its data; a quorum member binds it before
// it loads (QuorumPeerMain.runFromConfig configures the connection factory,
// whose configure binds the socket, before QuorumPeer.start loads the
// data), but starts accepting connections only after: the kernel completes
// a connection, nothing answers it. Other verdicts are
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
		s.BoundButSilent = true
		s.Recovery = "is a quorum member (" + why + "): its client port is bound before it loads its snapshot and log, so a connection opens, but nothing is accepted or answered, ruok neither, until it has loaded them"
	}
	v.Server = &s
	return v
}
