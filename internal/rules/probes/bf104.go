package probes

import (
	"fmt"

	rolloutsv1alpha1 "github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/model/probe"
	"backfire.dev/backfire/internal/model/rollout"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/rules"
)

// BF104: a readiness probe that takes a pod out of rotation on a single
// slow answer, on a workload with so few pods that they all drop together.
var BF104 = rules.Register(&rules.Rule{
	ID:       "BF104",
	Slug:     "readiness-flaps-on-single-failure",
	Severity: finding.Warning,
	Summary:  "Readiness failureThreshold 1 on a workload of few pods: one slow answer per pod empties the endpoints.",
	// Kinds whose pod count the manifest (or its autoscaler) fixes; a
	// DaemonSet has one pod per node, and Jobs do not serve.
	Kinds:    []string{"Pod", "Deployment", "StatefulSet", "ReplicaSet", "ReplicationController", "Rollout"},
	Reads:    []string{index.Autoscalers, index.WorkloadRefs},
	Check:    &rules.Scan{Run: runBF104},
	Fix:      rules.FixFields{Sets: []string{"container.readinessProbe.failureThreshold", "container.readinessProbe.successThreshold"}, From: []string{"container.readinessProbe.periodSeconds"}},
	Evidence: []any{BF104Evidence{}},
})

func runBF104(p *rules.Pass) {
	t := p.PodTemplate()
	if t == nil {
		return
	}
	var pods *fewPods
	for _, ct := range t.Containers() {
		c := ct.Container
		rp := c.ReadinessProbe
		if rp == nil || rp.TCPSocket != nil {
			continue // the kernel answers a TCP connect, however slow the server
		}
		rt := probe.TimingOf(rp, nil)
		if !rt.Failure.Set || rt.Failure.N != 1 {
			continue
		}
		if pods == nil {
			pods = countPods(p)
		}
		if pods.min > p.Config().FewReplicas() {
			return
		}
		p.Report(bf104Finding(t, ct.Path(), c, rt, pods))
	}
}

// fewPods is the smallest number of pods behind one set of endpoints.
type fewPods struct {
	min, max int
	// how explains min (and max): "spec.replicas 2", "the first canary
	// step setWeight 1 runs ...".
	how string
	// canary: the few pods are a canary's, behind its own share of the
	// traffic.
	canary      bool
	weight      int32 // the canary's share, when canary
	assumptions []string
}

// countPods finds the fewest pods that may serve: the replica count (from
// spec.replicas, or the range of the autoscaler that owns it), or with
// Argo Rollouts traffic routing the canary's pods at its first step, which
// alone receive the canary's share of traffic.
func countPods(p *rules.Pass) *fewPods {
	o := p.Object
	if o.Kind == "Pod" {
		return &fewPods{min: 1, max: 1, how: "a bare Pod is a single pod"}
	}
	rep := p.Index.ReplicasOf(o)
	lo, hi := int(rep.Min), int(rep.Max)
	var how string
	var assumed []string
	switch {
	case rep.Set:
		how = fmt.Sprintf("spec.replicas %d", rep.Min)
	case len(rep.ScaledBy) > 0:
		s := rep.ScaledBy[0].Object
		how = fmt.Sprintf("replicas come from %s %s (%d..%d)", s.Kind, s.Name, rep.Min, rep.Max)
		assumed = append(assumed, fmt.Sprintf("spec.replicas is owned by %s %s: counted at its minimum, %d (range %d..%d).", s.Kind, s.Name, rep.Min, rep.Min, rep.Max))
	default:
		how = "spec.replicas unset, default 1"
		assumed = append(assumed, "spec.replicas is unset and no HorizontalPodAutoscaler or ScaledObject in the input targets it: counted as 1, the default.")
	}
	few := &fewPods{min: lo, max: hi, how: how, assumptions: assumed}
	if lo <= p.Config().FewReplicas() {
		return few
	}
	r, ok := o.Typed.(*rolloutsv1alpha1.Rollout)
	if !ok || r.Spec.Strategy.Canary == nil || r.Spec.Strategy.Canary.TrafficRouting == nil {
		return few
	}
	step, weight := firstWeightStep(r)
	if step < 0 {
		return few
	}
	version, err := rollout.ParseVersion(p.Options.RolloutsVersion)
	if err != nil {
		version = rollout.DefaultVersion
	}
	cLo, _ := rollout.ReplicaCounts(r, int32(lo), int32(step), version)
	cHi, _ := rollout.ReplicaCounts(r, int32(hi), int32(step), version)
	if int(cLo) >= lo {
		return few
	}
	maxWeight := rollout.MaxTrafficWeight(r)
	ch := fmt.Sprintf("the first canary step (steps[%d], setWeight %d) runs ceil(%d x %d / %d) = %d canary pods",
		step, weight, weight, lo, maxWeight, rollout.WeightToReplicas(int32(lo), weight, maxWeight))
	if m := r.Spec.Strategy.Canary.MinPodsPerReplicaSet; m != nil {
		ch = fmt.Sprintf("the first canary step (steps[%d], setWeight %d) runs max(ceil(%d x %d / %d), minPodsPerReplicaSet %d) = %d canary pods",
			step, weight, weight, lo, maxWeight, *m, cLo)
	}
	if hi != lo {
		ch += fmt.Sprintf(" at %d replicas, %d at %d", lo, cHi, hi)
	}
	return &fewPods{
		min: int(cLo), max: int(cHi), how: how + "; " + ch,
		canary: true, weight: weight, assumptions: assumed,
	}
}

// firstWeightStep returns the index and weight of the first setWeight step
// that sends the canary traffic, or -1.
func firstWeightStep(r *rolloutsv1alpha1.Rollout) (int, int32) {
	for i, s := range r.Spec.Strategy.Canary.Steps {
		if s.SetWeight != nil && *s.SetWeight > 0 {
			return i, *s.SetWeight
		}
	}
	return -1, 0
}

func bf104Finding(t *object.PodTemplate, at *field.Path, c *corev1.Container, rt probe.Timing, pods *fewPods) rules.Report {
	rp := c.ReadinessProbe
	who := fmt.Sprintf("%d pods", pods.min)
	if pods.min == 1 {
		who = "1 pod"
	}
	if pods.canary {
		who = fmt.Sprintf("%d canary pods", pods.min)
	}
	var drop, after string
	switch {
	case pods.canary:
		drop = fmt.Sprintf("Under load the %s slow down together and drop together: the canary's endpoints go to 0 and every request routed to it (%d%% of the traffic) fails (Istio: 503 UH \"no healthy upstream\").", who, pods.weight)
		after = "The weight does not follow readiness: the canary keeps its share while it has no endpoint, and a weight jump (BF401) sends it all of the traffic."
	case pods.min == 1:
		drop = "Under load the only pod drops: the endpoints go to 0 and every request fails (Istio: 503 UH \"no healthy upstream\"; a plain Service refuses the connection)."
	default:
		drop = fmt.Sprintf("Under load the %s slow down together and drop together: the endpoints go to 0 and every request fails (Istio: 503 UH \"no healthy upstream\"; a plain Service refuses the connection).", who)
		after = "Until then, the pods that stay get the load of those that left, which makes them the next to miss the timeout."
	}
	mech := []string{
		fmt.Sprintf("failureThreshold: 1 is written out: one answer slower than %d s (%s) removes the pod from the Service endpoints.", rt.Timeout.N, rt.Timeout.Phrase("timeoutSeconds")),
		fmt.Sprintf("It returns only after successThreshold x periodSeconds = %d x %d = %d s of passing probes (%s, %s).", rt.Success.N, rt.Period.N, rt.ReturnAfter(), rt.Success.Phrase("successThreshold"), rt.Period.Phrase("periodSeconds")),
		fmt.Sprintf("Pods behind the endpoints: %s.", pods.how),
		drop,
	}
	if after != "" {
		mech = append(mech, after)
	}
	return rules.Report{
		At:        t.Owner,
		Path:      at.Child("readinessProbe", "failureThreshold"),
		Container: c.Name,
		Message: fmt.Sprintf("readiness probe %s takes a pod out of the endpoints on its first answer slower than %d s, and this workload may serve with %s: one slow moment can leave none",
			probe.Describe(rp), rt.Timeout.N, who),
		Mechanism: mech,
		Evidence: BF104Evidence{
			FailureThreshold: rt.Failure.N,
			SuccessThreshold: rt.Success.N,
			PeriodSeconds:    rt.Period.N,
			TimeoutSeconds:   rt.Timeout.N,
			ReturnSeconds:    rt.ReturnAfter(),
			Pods:             pods.min,
			PodsMax:          pods.max,
			Canary:           pods.canary,
		},
		Assumptions: pods.assumptions,
		Fix: &finding.Fix{
			Description: fmt.Sprintf("Take a pod out only after 3 failed checks in a row (failureThreshold 3: 3 x %d = %d s of slow answers), and bring it back after one good answer (successThreshold 1).",
				rt.Period.N, 3*rt.Period.N),
			Type: finding.StrategicMergePatch,
			Patch: fix.ContainerPatch(t, c.Name, map[string]any{
				"readinessProbe": map[string]any{"failureThreshold": 3, "successThreshold": 1},
			}),
		},
	}
}
