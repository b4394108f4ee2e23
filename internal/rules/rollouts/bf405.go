package rollouts

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/model/rollout"
	"backfire.dev/backfire/internal/rules"
)

// BF405: with dynamicStableScale and an autoscaler, a scale-up while the
// Rollout stays aborted scales the aborted canary up again (#4973).
var BF405 = rules.Register(&rules.Rule{
	ID:       "BF405",
	Slug:     "aborted-canary-scaled-up-again",
	Severity: finding.Warning,
	Summary:  "With dynamicStableScale, an autoscaler's scale-up while the Rollout stays aborted scales the aborted canary up again.",
	Kinds:    rolloutKind,
	Reads:    []string{index.Autoscalers},
	Check:    &rules.Scan{Run: runBF405},
	Evidence: []any{BF405Evidence{}},
})

func runBF405(p *rules.Pass) {
	ro, c := canaryOf(p)
	if c == nil || c.TrafficRouting == nil || !c.DynamicStableScale {
		return
	}
	rr := replicasOf(p.Index, p.Object)
	ctl := controllerOf(p)
	if !rr.scaled() || rr.max <= rr.min || !rollout.AbortedCanaryRescaled.Contains(ctl.version) {
		return
	}
	if _, ok := rollout.RescaledAfterAbort(ro, rr.max, ctl.version); !ok {
		return // also rules out an explicit abortScaleDownDelaySeconds
	}
	// The smallest scale-up from the autoscaler's minimum that does it:
	// spec.replicas grows at once, the stable's available pods later.
	maxW := rollout.MaxTrafficWeight(ro)
	from := max(rr.min, 1)
	var up, to, w int32
	for n := from + 1; n <= rr.max; n++ {
		if w = rollout.AbortWalk(ro, n, n-from, 0, false); w > 0 {
			up, to = n-from, n
			break
		}
	}
	if up == 0 {
		return
	}
	pods := rollout.MinPods(ro, to, rollout.WeightToReplicas(to, w, maxW), ctl.version)
	span := rollout.AbortedCanaryRescaled
	p.Report(rules.Report{
		Path: field.NewPath("spec", "strategy", "canary", "dynamicStableScale"),
		Message: fmt.Sprintf("after an abort, a scale-up by %s from %d to %d scales the aborted canary back up to %s (setWeight %d) until the new stable pods are available (argoproj/argo-rollouts#4973)",
			rr.scaledBy, from, to, plural(pods, "pod", "pods"), w),
		Mechanism: []string{
			"An aborted Rollout stays aborted, its canary at 0 pods and weight 0, until its template changes; every reconcile still sizes the canary through GetDesiredCanaryWeight (utils/replicaset/canary.go v1.9.0 :512-537, v1.10.2 :518-543).",
			fmt.Sprintf("That walk looks for the last setWeight whose pods are fewer than spec.replicas - stable available: an autoscaler raising spec.replicas from %d to %d leaves the stable %d short until its new pods are available, and setWeight %d asks for ceil(%d x %d / %d) = %d < %d.",
				from, to, up, w, w, to, maxW, rollout.WeightToReplicas(to, w, maxW), up),
			fmt.Sprintf("The aborted canary is sized for that weight (CalculateReplicaCountsForTrafficRoutedCanary, v1.10.2 :386 and :415): it is scaled up to %s of the version aborted, and down again as the stable catches up; a canary pod that becomes available lets the canary Service select it (the issue reports its selector flapping).", plural(pods, "pod", "pods")),
			"An eviction or a node lost takes the same path: the stable short of spec.replicas by as many pods.",
			fmt.Sprintf("Applies to Argo Rollouts %s; v1.8.x sizes an aborted canary for weight 0. PRs #4974 and #5018 are open. Computed for %s.", span.String(), ctl.version),
		},
		Evidence: BF405Evidence{Replicas: from, ShortBy: up, CanaryPods: pods, Weight: w, ScaledBy: rr.scaledBy,
			RolloutsVersion: ctl.version, AppliesTo: span.String()},
		Assumptions: ctl.assumptions(fmt.Sprintf("the scale-up is computed from the autoscaler's minimum %d; from a larger count a larger step is needed", from)),
		Fix: &finding.Fix{
			Type: finding.ManualChange,
			Description: "After an abort, put the stable's template back (kubectl argo rollouts undo, or revert the change in Git): the Rollout leaves the aborted state and the canary ReplicaSet is no longer sized. " +
				"Or drop dynamicStableScale (an aborted canary is then sized for weight 0, at the cost of a whole stable during updates). An explicit abortScaleDownDelaySeconds would scale it to 0 for good, but deadlocks the abort on these releases (BF404).",
		},
	})
}
