package resources

import (
	"encoding/json"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/model/cgroup"
	"backfire.dev/backfire/internal/model/probe"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/rules"
)

// BF201: a database or other stateful pod that sets no requests or limits.
var BF201 = rules.Register(&rules.Rule{
	ID:       "BF201",
	Slug:     "best-effort-stateful",
	Severity: finding.Warning, // error when the pod runs a database
	Summary:  "A database or stateful pod without cpu or memory requests is BestEffort: cpu.weight 1 and the first OOM victim.",
	Kinds:    object.WorkloadKinds,
	Reads:    []string{index.WorkloadRefs},
	Check:    &rules.Scan{Run: runBF201},
	Fix:      rules.FixFields{Sets: []string{"container.resources.requests", "container.resources.limits.memory"}, From: []string{"container.resources"}},
	Evidence: []any{BF201Evidence{}},
})

// Placeholder requests for the fix: stated in the finding, to be replaced
// by observed use.
var (
	databaseRequests = sizing{cpu: "500m", memory: "1Gi", memoryLimit: "2Gi"}
	statefulRequests = sizing{cpu: "250m", memory: "256Mi", memoryLimit: "512Mi"}
)

type sizing struct{ cpu, memory, memoryLimit string }

func runBF201(p *rules.Pass) {
	w := workloadOf(p)
	if w == nil || len(w.t.Spec.Containers) == 0 {
		return // no container to point at (the API server refuses such a pod)
	}
	keeps := "" // what a stateful workload keeps, read once for the guard and the message
	if !w.databaseLike() {
		if w.stateful != "" {
			keeps = w.keepsData()
		}
		if keeps == "" {
			return // a StatefulSet without a volume claim keeps nothing of its own
		}
	}
	qos := cgroup.QOSClass(w.t.Spec)
	if qos != corev1.PodQOSBestEffort {
		return
	}
	p.Report(bf201Finding(w, qos, keeps))
}

// bf201Finding reports workload w; keeps is what it keeps (keepsData)
// unless it is database-like.
func bf201Finding(w *workload, qos corev1.PodQOSClass, keeps string) rules.Report {
	t := w.t
	// The fix goes to the container that holds the data: a request on a
	// sidecar makes the pod Burstable while the data container keeps
	// cpu.weight 1. Without one, every container gets requests.
	data := w.dataContainers()
	targets, size, sev := data, statefulRequests, finding.Warning
	if len(targets) == 0 {
		targets = t.Containers()
	}
	if w.databaseLike() {
		size, sev = databaseRequests, finding.Error
	}
	c, at := targets[0].Container, targets[0].Path()
	own := cgroup.WeightsOf(0)
	nb := cgroup.OneCPU
	oom := cgroup.OOMScoreAdj(qos, 0, 0)

	var what string
	it := "container " + c.Name
	switch {
	case w.databaseLike():
		what, it = w.verdict.Server.Name+" container "+c.Name, "it"
	case len(targets) > 1:
		what, it = "stateful workload ("+w.stateful+", "+keeps+")", "containers "+names(targets)
	default:
		what = "stateful workload (" + w.stateful + ", " + keeps + ")"
	}
	ownRuntime, nbRuntime, nbLinear := utoa(own.Runtime), utoa(nb.Runtime), utoa(nb.Linear)
	msg := what + " runs BestEffort: no container of the pod sets a cpu or memory request or limit, so " + it + " gets cpu.weight " + ownRuntime +
		" against " + nbRuntime + " for a 1-CPU neighbour (" + nbLinear + " under the linear formula) and oom_score_adj " + strconv.Itoa(oom)

	containers := plural(len(t.Spec.Containers), "container", "containers")
	if n := len(t.Spec.InitContainers); n > 0 {
		containers += " and " + plural(n, "init container", "init containers")
	}
	first := "Whatever must answer it within a deadline times out first"
	if tps := timedProbes(c, t.Spec.TerminationGracePeriodSeconds); len(tps) > 0 {
		first = "Its probes time out first: the " + tps[0].kind + " probe " + probe.Describe(tps[0].p) + " has " + tps[0].budget() + " to answer"
	}
	mech := []string{
		"None of the pod's " + containers + " sets a cpu or memory request or limit, so its QoS class is BestEffort.",
		"Container " + c.Name + " gets cpu.shares " + utoa(own.Shares) + ", which is cpu.weight " + ownRuntime +
			" (cgroup v2) under both formulas; everything on the node that set nothing (kubelet, systemd, kernel threads) has " + strconv.Itoa(cgroup.DefaultWeight) +
			", and a 1-CPU request has " + nbRuntime + " under runc >= 1.3.2 / crun >= 1.23 (" + nbLinear + " under the older linear formula).",
		"Under contention it gets about 1/" + nbRuntime + " (" + share(own.Runtime, nb.Runtime) + ") of what a 1-CPU neighbour gets (1/" + nbLinear + ", " +
			share(own.Linear, nb.Linear) + ", under the linear formula). " + first + ".",
		"oom_score_adj " + strconv.Itoa(oom) + ": when the node runs out of memory it is the first OOM victim, before every Burstable and Guaranteed container.",
	}
	if w.databaseLike() && w.verdict.Server.Recovery != "" {
		mech = append(mech, "An OOM kill or a probe's kill is a crash for a database: "+w.verdict.Server.Name+" must recover on restart and "+
			w.verdict.Server.RecoveryAnswer(c.Image)+", on the same starved CPU.")
	}

	fixed := cgroup.WeightsOf(milli(size.cpu))
	var placeholders []string
	for _, tc := range targets {
		placeholders = append(placeholders,
			fix.ContainerField(t, tc.Name, "resources.requests.cpu"),
			fix.ContainerField(t, tc.Name, "resources.requests.memory"),
			fix.ContainerField(t, tc.Name, "resources.limits.memory"))
	}
	who := "container " + c.Name
	if len(targets) > 1 {
		who = "each of the containers " + names(targets)
	}
	why := ""
	if !w.databaseLike() && len(data) > 0 && len(t.Containers()) > len(targets) {
		why = " It holds the pod's data (" + mountsOf(w, targets) + "): a request on another container would make the pod Burstable while " + c.Name + " keeps cpu.weight " + ownRuntime + "."
	}
	return rules.Report{
		At:        t.Owner,
		Path:      at.Child("resources"),
		Container: c.Name,
		Severity:  sev,
		Message:   msg,
		Mechanism: mech,
		Evidence: BF201Evidence{
			QOSClass:           string(qos),
			CPUShares:          own.Shares,
			CPUWeightOld:       own.Linear,
			CPUWeightNew:       own.Runtime,
			NeighbourWeightOld: nb.Linear,
			NeighbourWeightNew: nb.Runtime,
			OOMScoreAdj:        oom,
			Classification:     w.classification(),
		},
		Assumptions: []string{
			"cgroup v2 nodes; on cgroup v1 the same container gets cpu.shares " + utoa(own.Shares) + " against " + utoa(nb.Shares) + " for a 1-CPU neighbour",
		},
		Fix: &finding.Fix{
			Description: "Give " + who + " requests for cpu and memory and a memory limit above the request, and no cpu limit (BF202). The values in the patch are placeholders (cpu " +
				size.cpu + ", memory " + size.memory + ", memory limit " + size.memoryLimit + "): size them from observed use. A " + size.cpu + " cpu request gives cpu.weight " +
				utoa(fixed.Runtime) + " (" + utoa(fixed.Linear) + " under the linear formula) instead of 1; the pod becomes Burstable." + why,
			Type:         finding.StrategicMergePatch,
			Patch:        requestsPatch(t, targets, size),
			Placeholders: placeholders,
		},
	}
}

// requestsPatch gives every target container the placeholder requests, in
// the list that holds it (a native sidecar is an init container).
func requestsPatch(t *object.PodTemplate, targets []object.Container, size sizing) json.RawMessage {
	lists := map[string][]any{}
	for _, tc := range targets {
		list := "containers"
		if tc.Sidecar {
			list = "initContainers"
		}
		lists[list] = append(lists[list], map[string]any{
			"name": tc.Name,
			"resources": map[string]any{
				"requests": map[string]any{"cpu": size.cpu, "memory": size.memory},
				"limits":   map[string]any{"memory": size.memoryLimit},
			},
		})
	}
	value := map[string]any{}
	for k, v := range lists {
		value[k] = v
	}
	return fix.At(t.SpecPath.String(), value)
}

func names(cs []object.Container) string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return strings.Join(out, ", ")
}

// mountsOf says where the targets keep the pod's data: "/data (volumeClaimTemplate data)".
func mountsOf(w *workload, targets []object.Container) string {
	var out []string
	for _, tc := range targets {
		for _, m := range w.pod.PersistentMounts(tc.Container) {
			out = append(out, tc.Name+" mounts "+m.String())
		}
	}
	return strings.Join(out, "; ")
}
