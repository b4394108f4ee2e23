package resources

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"backfire.dev/backfire/internal/classify"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/model/cgroup"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/rules/podfacts"
)

// BF203: a database whose memory limit leaves no room above its request.
var BF203 = rules.Register(&rules.Rule{
	ID:         "BF203",
	Slug:       "memory-limit-without-headroom",
	Severity:   finding.Info,
	Summary:    "A database with memory limit equal to its request is OOMKilled at the first spike: a crash restart and crash recovery.",
	Kinds:      object.WorkloadKinds,
	Reads:      []string{index.WorkloadRefs},
	DefaultOff: true, // equal request and limit is also a deliberate choice (Guaranteed QoS)
	Check:      &rules.Scan{Run: runBF203},
	Fix:        rules.FixFields{Sets: []string{"container.resources.requests.memory", "container.resources.limits.memory"}, From: []string{"container.resources"}},
	Evidence:   []any{BF203Evidence{}},
})

func runBF203(p *rules.Pass) {
	t := p.PodTemplate()
	if t == nil {
		return
	}
	qos := cgroup.QOSClass(t.Spec)
	for _, ct := range t.Containers() {
		c := ct.Container
		limit, ok := c.Resources.Limits[corev1.ResourceMemory]
		if !ok || limit.IsZero() {
			continue
		}
		request := cgroup.EffectiveRequests(c.Resources)[corev1.ResourceMemory]
		if !request.Equal(limit) {
			continue
		}
		v := podfacts.Classify(p, c)
		if !v.DatabaseLike {
			continue
		}
		p.Report(bf203Finding(t, ct, qos, v, limit))
	}
}

func bf203Finding(t *object.PodTemplate, ct object.Container, qos corev1.PodQOSClass, v classify.Verdict, limit resource.Quantity) rules.Report {
	c := ct.Container
	lim := limit.String()
	_, requestSet := c.Resources.Requests[corev1.ResourceMemory]
	reqWas := "requests.memory " + lim
	if !requestSet {
		reqWas = "requests.memory unset, which defaults to the limit"
	}
	raised := *resource.NewQuantity(limit.Value()*3/2, limit.Format)

	mech := []string{
		fmt.Sprintf("limits.memory %s with %s: no headroom above what the scheduler reserved.", lim, reqWas),
		fmt.Sprintf("The first spike past %s (a burst of connections, a large sort or hash, a bulk load) makes the kernel's cgroup OOM killer kill the server: exit code 137, reason OOMKilled.", lim),
		fmt.Sprintf("For a database that is a crash: %s must recover on restart and %s.", v.Server.Name, v.Server.RecoveryAnswer(c.Image)),
		"If its liveness probe queries the server, that probe fails through the recovery and kills it again: the same loop as a liveness kill, through another door.",
	}
	desc := fmt.Sprintf("Give container %s a memory limit above its request: %s (1.5 x %s), request %s written out. Size the headroom from observed peaks (the registry database of docs/incidents.md: request 2Gi, limit 3Gi for 678Mi observed).",
		c.Name, raised.String(), lim, lim)
	if qos == corev1.PodQOSGuaranteed {
		desc += fmt.Sprintf(" The pod leaves the Guaranteed QoS class: oom_score_adj goes from %d to 1000 - 1000 x request / node memory, so under node memory pressure it is no longer among the last to be killed; the trade is a rare node-level OOM for a certain OOMKill at the first spike.", cgroup.GuaranteedOOMScoreAdj)
	}
	return rules.Report{
		At:        t.Owner,
		Path:      ct.Path().Child("resources", "limits", "memory"),
		Container: c.Name,
		Message: fmt.Sprintf("memory limit %s equals the request of %s container %s: the first spike above it is an OOMKill (exit 137), a crash restart into crash recovery",
			lim, v.Server.Name, c.Name),
		Mechanism: mech,
		Evidence: BF203Evidence{
			MemoryLimit:          lim,
			MemoryRequest:        lim,
			MemoryRequestDefault: !requestSet,
			QOSClass:             string(qos),
			Classification:       fmt.Sprintf("database-like %s (%s)", v.Server.Name, v.EvidenceString()),
		},
		Fix: &finding.Fix{
			Description: desc,
			Type:        finding.StrategicMergePatch,
			Patch: fix.ContainerPatch(t, c.Name, map[string]any{
				"resources": map[string]any{
					"requests": map[string]any{"memory": lim},
					"limits":   map[string]any{"memory": raised.String()},
				},
			}),
		},
	}
}
