package rollouts

import (
	"fmt"
	"strings"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/model/rollout"
	"backfire.dev/backfire/internal/rules"
)

// BF404: with dynamicStableScale an abort stops short of weight 0 and
// leaves traffic on the canary it was meant to take it from: held by
// minPodsPerReplicaSet (#4841), or by an explicit abortScaleDownDelaySeconds
// (#4898).
var BF404 = rules.Register(&rules.Rule{
	ID:       "BF404",
	Slug:     "dynamic-abort-never-finishes",
	Severity: finding.Error,
	Summary:  "With dynamicStableScale, an abort held by minPodsPerReplicaSet or an explicit abortScaleDownDelaySeconds never brings the canary weight back to 0.",
	Kinds:    rolloutKind,
	Reads:    []string{index.Autoscalers},
	Check:    &rules.Scan{Run: runBF404},
	Fix: rules.FixFields{Sets: []string{"spec.strategy.canary.steps", "spec.strategy.canary.abortScaleDownDelaySeconds"},
		From: []string{"spec.strategy.canary", "spec.replicas"}, FromDocument: true},
	Evidence: []any{BF404Evidence{}},
})

func runBF404(p *rules.Pass) {
	ro, c := canaryOf(p)
	if c == nil || c.TrafficRouting == nil || !c.DynamicStableScale {
		return
	}
	rr := replicasOf(p.Index, p.Object)
	if rr.max <= 0 {
		return
	}
	// The fewest replicas are the worst case: a setWeight then has the
	// fewest pods, below the floor or the held canary soonest.
	n := max(rr.min, 1)
	ctl := controllerOf(p)
	if s, ok := rollout.ParkedByMinPods(ro, n, ctl.version); ok {
		reportParked(p, ro, rr, n, s, ctl)
	}
	if s, ok := rollout.DelayDeadlock(ro, n, ctl.version); ok {
		reportDeadlock(p, ro, rr, n, s, ctl)
	}
}

func countPhrase(rr replicaRange, n int32) string {
	if rr.scaled() {
		return fmt.Sprintf("%d replicas (the minimum of %s)", n, rr.scaledBy)
	}
	return fmt.Sprintf("%d replicas", n)
}

func bf404Assumptions(rr replicaRange, ctl controller) []string {
	var as []string
	switch {
	case rr.scaled():
		as = append(as, fmt.Sprintf("replicas come from %s (%d to %d): computed at the minimum, where a setWeight has the fewest pods", rr.scaledBy, rr.min, rr.max))
	case !rr.set:
		as = append(as, "spec.replicas is unset and no HPA or KEDA ScaledObject targets the Rollout: 1 replica, the default")
	}
	return ctl.assumptions(as...)
}

// reportParked is #4841.
func reportParked(p *rules.Pass, ro *v1alpha1.Rollout, rr replicaRange, n int32, s rollout.Stuck, ctl controller) {
	c := ro.Spec.Strategy.Canary
	floor := rollout.MinPods(ro, n, 1, ctl.version)
	maxW := s.MaxWeight
	stepPods := rollout.WeightToReplicas(n, s.Weight, maxW)
	span := rollout.AbortParksAtMinPods
	p.Report(rules.Report{
		Path: field.NewPath("spec", "strategy", "canary", "minPodsPerReplicaSet"),
		Message: fmt.Sprintf("an abort never takes the last %s of traffic from the aborted canary: minPodsPerReplicaSet %d keeps it at %s, more than setWeight %d's %s of %d, so the abort weight stops at %d (argoproj/argo-rollouts#4841)",
			pct(s.Weight, maxW), *c.MinPodsPerReplicaSet, plural(s.CanaryPods, "pod", "pods"), s.Weight, plural(stepPods, "pod", "pods"), n, s.Weight),
		Mechanism: []string{
			fmt.Sprintf("On abort with dynamicStableScale the weight steps down through the setWeight steps: GetDesiredCanaryWeight (utils/replicaset/canary.go v1.9.0 :512-537, v1.10.2 :518-543) walks them backwards for the first whose pods, ceil(weight x %d / %d), are fewer than max(spec.replicas - stable available, canary available) (v1.9.0 :524, v1.10.2 :530).", n, maxW),
			fmt.Sprintf("The aborted canary is sized for the weight written and floored at minPodsPerReplicaSet (CalculateReplicaCountsForTrafficRoutedCanary, v1.10.2 :408-418): %s available.", plural(floor, "pod", "pods")),
			fmt.Sprintf("Once the stable is whole the first term is 0, the second %d: setWeight %d asks for %s, fewer, so the walk returns %d, never 0, and the weight written is min(that, the weight written before) (calculateDesiredWeightOnAbortOrStableRollback, trafficrouting.go v1.9.0 and v1.10.2 :394).", floor, s.Weight, plural(stepPods, "pod", "pods"), s.Weight),
			fmt.Sprintf("The canary is never sized below the floor, so the walk never changes: %s of traffic stays on the %d pods of the version aborted, the stable at %d, for as long as the Rollout stays aborted.", pct(s.Weight, maxW), s.CanaryPods, s.StablePods),
			fmt.Sprintf("Applies to Argo Rollouts %s: GetDesiredCanaryWeight arrived with #4035, and v1.8.x takes the abort weight from the stable's pods only and reaches 0; PR #4848 was closed unmerged, and master (9f8d111d8) walks the same. Computed for %s.", span.String(), rollout.VersionName(ctl.version)),
		},
		Evidence: BF404Evidence{Bug: "argoproj/argo-rollouts#4841", Replicas: n, AbortedAt: s.AbortedAt, ParkedWeight: s.Weight, MaxTrafficWeight: maxW,
			CanaryPods: s.CanaryPods, StablePods: s.StablePods, RolloutsVersion: ctl.version, AppliesTo: span.String()},
		Assumptions: bf404Assumptions(rr, ctl),
		Fix:         parkedFix(p, ro, n, floor, ctl),
	})
}

// parkedFix raises every setWeight whose pods fall below the floor to the
// smallest weight whose pods reach it: the canary had the floor's pods at
// that step anyway, and the walk then finds no step below them.
func parkedFix(p *rules.Pass, ro *v1alpha1.Rollout, n, floor int32, ctl controller) *finding.Fix {
	c := ro.Spec.Strategy.Canary
	maxW := rollout.MaxTrafficWeight(ro)
	// ceil(w x n / maxW) >= floor  <=>  w > (floor-1) x maxW / n.
	least := min(int32(int64(floor-1)*int64(maxW)/int64(n))+1, maxW)
	raw := rawSteps(p.Object.Doc.JSON)
	const others = " Or drop minPodsPerReplicaSet (the canary then has the setWeight's pods only), or dynamicStableScale (the stable stays whole and the abort moves all traffic back at once)."
	// With a rollback window BF401 may rewrite the same steps list (it has
	// no merge key): two patches of it do not compose, so say it by hand.
	if len(raw) != len(c.Steps) || (ro.Spec.RollbackWindow != nil && ro.Spec.RollbackWindow.Revisions > 0) {
		return &finding.Fix{Type: finding.ManualChange,
			Description: fmt.Sprintf("Raise every setWeight below %d to %d, the smallest share whose pods reach minPodsPerReplicaSet %d at %d replicas.", least, least, floor, n) + others}
	}
	var raised []string
	out := make([]any, len(raw))
	for i, st := range c.Steps {
		out[i] = raw[i]
		if st.SetWeight == nil || *st.SetWeight <= 0 || rollout.WeightToReplicas(n, *st.SetWeight, maxW) >= floor {
			continue
		}
		m, ok := raw[i].(map[string]any)
		if !ok {
			return &finding.Fix{Type: finding.ManualChange, Description: fmt.Sprintf("Raise every setWeight below %d to %d.", least, least) + others}
		}
		cp := make(map[string]any, len(m))
		for k, v := range m {
			cp[k] = v
		}
		cp["setWeight"] = least
		out[i] = cp
		raised = append(raised, fmt.Sprintf("setWeight %d (steps[%d])", *st.SetWeight, i))
	}
	return &finding.Fix{
		Type: finding.StrategicMergePatch,
		Description: fmt.Sprintf("Raise %s to %d: ceil(%d x %d / %d) = %d pods, the floor minPodsPerReplicaSet already gave that step, so the step costs no pod more and takes %s of traffic on them; on abort no step then has fewer pods than the canary, and the weight reaches 0.",
			strings.Join(raised, " and "), least, least, n, maxW, rollout.WeightToReplicas(n, least, maxW), pct(least, maxW)) + others,
		Patch: fix.At("spec.strategy.canary", map[string]any{"steps": out}),
	}
}

// reportDeadlock is #4898.
func reportDeadlock(p *rules.Pass, ro *v1alpha1.Rollout, rr replicaRange, n int32, s rollout.Stuck, ctl controller) {
	c := ro.Spec.Strategy.Canary
	maxW := s.MaxWeight
	span := rollout.AbortDelayDeadlock
	stepPods := rollout.WeightToReplicas(n, s.Weight, maxW)
	p.Report(rules.Report{
		Path: field.NewPath("spec", "strategy", "canary", "abortScaleDownDelaySeconds"),
		Message: fmt.Sprintf("an abort at setWeight %d never finishes: abortScaleDownDelaySeconds %d keeps the canary's %s until the stable is whole, the stable waits for the weight, and the weight stops at %d, %s of traffic on the version aborted (argoproj/argo-rollouts#4898)",
			s.AbortedAt, *c.AbortScaleDownDelaySeconds, plural(s.CanaryPods, "pod", "pods"), s.Weight, pct(s.Weight, maxW)),
		Mechanism: []string{
			fmt.Sprintf("An explicit abortScaleDownDelaySeconds makes the aborted canary wait for its scale-down deadline (shouldDelayScaleDownOnAbort, rollout/replicaset.go v1.9.0 :209-231, v1.10.2 :251-274), and the deadline is set only once the stable has all %s available (v1.9.0 :159, v1.10.2 :201); until then the canary keeps its %s (%s).", plural(n, "replica", "replicas"), plural(s.CanaryPods, "pod", "pods"), countPhrase(rr, n)),
			fmt.Sprintf("The abort weight steps down through the setWeight steps while their pods are fewer than max(spec.replicas - stable available, canary available) (GetDesiredCanaryWeight, utils/replicaset/canary.go v1.9.0 :524, v1.10.2 :530): the %d canary pods hold it at setWeight %d (%s).", s.CanaryPods, s.Weight, plural(stepPods, "pod", "pods")),
			fmt.Sprintf("With dynamicStableScale the stable is sized for the rest, %d pods: it is never whole, the deadline never set, the canary never drained, and %s of traffic stays on the version aborted.", s.StablePods, pct(s.Weight, maxW)),
			fmt.Sprintf("Applies to Argo Rollouts %s: #4900 (master d6bc6908d, utils/replicaset/canary.go :531-540) stops counting the canary's pods when the delay is explicit, but no release up to v1.10.2 has it; v1.8.x takes the abort weight from the stable's pods only and finishes. Computed for %s.", span.String(), rollout.VersionName(ctl.version)),
		},
		Evidence: BF404Evidence{Bug: "argoproj/argo-rollouts#4898", Replicas: n, AbortedAt: s.AbortedAt, ParkedWeight: s.Weight, MaxTrafficWeight: maxW,
			CanaryPods: s.CanaryPods, StablePods: s.StablePods, RolloutsVersion: ctl.version, AppliesTo: span.String()},
		Assumptions: bf404Assumptions(rr, ctl),
		Fix: &finding.Fix{
			Type:        finding.StrategicMergePatch,
			Description: "Remove abortScaleDownDelaySeconds: with dynamicStableScale and no explicit delay the aborted canary is scaled down as the weight steps down (shouldDelayScaleDownOnAbort returns false), so the abort reaches weight 0. Or upgrade to a release with argoproj/argo-rollouts#4900 once one ships.",
			Patch:       fix.At("spec.strategy.canary", map[string]any{"abortScaleDownDelaySeconds": nil}),
		},
	})
}
