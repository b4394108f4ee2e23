package rollout

import "github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

// AbortWalk is GetDesiredCanaryWeight for an aborted Rollout with
// dynamicStableScale (utils/replicaset/canary.go v1.10.2 :523-543): the last
// setWeight step, walking backwards, whose pods at replicas are fewer than
// max(short, canaryAvailable), where short is spec.replicas minus the
// stable's available pods. 0 when none is (or the one found sets 0).
// explicitDelay is #4900 (master only): with an explicit
// abortScaleDownDelaySeconds the canary's pods are not counted.
func AbortWalk(r *v1alpha1.Rollout, replicas, short, canaryAvailable int32, explicitDelay bool) int32 {
	canary := max(short, canaryAvailable)
	if explicitDelay {
		canary = short
	}
	maxW := MaxTrafficWeight(r)
	s := steps(r)
	for i := len(s) - 1; i >= 0; i-- {
		if w := s[i].SetWeight; w != nil && WeightToReplicas(replicas, *w, maxW) < canary {
			return *w
		}
	}
	return 0
}

// Stuck is where an abort stops short of weight 0, and why.
type Stuck struct {
	// Weight is the canary weight the abort parks at, CanaryPods the pods
	// the aborted canary keeps, StablePods the stable's size at that weight.
	Weight, CanaryPods, StablePods int32
	// AbortedAt is the setWeight the update was aborted at (for the
	// deadlock: the largest, whose canary the delay keeps whole).
	AbortedAt int32
	MaxWeight int32
}

// ParkedByMinPods is #4841 at a replica count: the stable whole, the
// aborted canary floored at minPodsPerReplicaSet available pods, so the
// walk finds a setWeight whose pods are fewer than the floor and the weight
// parks there (min'd with the weight written, which only steps down:
// trafficrouting.go v1.10.2 :394). ok is false when the abort reaches 0.
func ParkedByMinPods(r *v1alpha1.Rollout, replicas int32, version string) (Stuck, bool) {
	c := r.Spec.Strategy.Canary
	if !AbortParksAtMinPods.Contains(version) || c == nil || !c.DynamicStableScale || c.TrafficRouting == nil ||
		c.MinPodsPerReplicaSet == nil || replicas <= 0 || explicitDelay(c) {
		return Stuck{}, false
	}
	floor := MinPods(r, replicas, 1, version)
	w := AbortWalk(r, replicas, 0, floor, false)
	if w <= 0 {
		return Stuck{}, false
	}
	maxW := MaxTrafficWeight(r)
	top := largestSetWeight(r)
	w = min(w, top)
	return Stuck{Weight: w, CanaryPods: MinPods(r, replicas, WeightToReplicas(replicas, w, maxW), version),
		StablePods: MinPods(r, replicas, WeightToReplicas(replicas, maxW-w, maxW), version), AbortedAt: top, MaxWeight: maxW}, true
}

// DelayDeadlock is #4898 at a replica count: aborted at the largest
// setWeight, the explicit abortScaleDownDelaySeconds keeps the canary at
// that step's pods (no scale-down before the stable is whole,
// rollout/replicaset.go v1.10.2 :190-209), so the walk finds a smaller
// setWeight and stops there: the stable, sized for the rest, is never
// whole, and the delay never starts.
func DelayDeadlock(r *v1alpha1.Rollout, replicas int32, version string) (Stuck, bool) {
	c := r.Spec.Strategy.Canary
	if !AbortDelayDeadlock.Contains(version) || c == nil || !c.DynamicStableScale || c.TrafficRouting == nil ||
		!explicitDelay(c) || replicas <= 0 {
		return Stuck{}, false
	}
	maxW := MaxTrafficWeight(r)
	top := largestSetWeight(r)
	held := MinPods(r, replicas, WeightToReplicas(replicas, top, maxW), version)
	w := AbortWalk(r, replicas, 0, held, false)
	if w <= 0 {
		return Stuck{}, false
	}
	return Stuck{Weight: w, CanaryPods: held,
		StablePods: MinPods(r, replicas, WeightToReplicas(replicas, maxW-w, maxW), version), AbortedAt: top, MaxWeight: maxW}, true
}

// Rescale is #4973: after an abort that finished (weight 0, canary at 0),
// the smallest shortfall of the stable (spec.replicas minus its available
// pods, after a scale-up to replicas or an eviction) that scales the
// aborted canary up again, and the pods it asks for then.
type Rescale struct {
	Short, CanaryPods, Weight int32
}

// RescaledAfterAbort returns the smallest shortfall that makes the walk
// find a setWeight again at replicas, or ok false when none below replicas
// does.
func RescaledAfterAbort(r *v1alpha1.Rollout, replicas int32, version string) (Rescale, bool) {
	c := r.Spec.Strategy.Canary
	if !AbortedCanaryRescaled.Contains(version) || c == nil || !c.DynamicStableScale || c.TrafficRouting == nil || replicas <= 0 {
		return Rescale{}, false
	}
	if c.AbortScaleDownDelaySeconds != nil {
		// 0 leaves the canary up; any other explicit delay scales it to 0 for
		// good once its deadline passes (replicaset.go v1.10.2 :185-188).
		return Rescale{}, false
	}
	maxW := MaxTrafficWeight(r)
	for short := int32(1); short <= replicas; short++ {
		if w := AbortWalk(r, replicas, short, 0, false); w > 0 {
			return Rescale{Short: short, Weight: w, CanaryPods: MinPods(r, replicas, WeightToReplicas(replicas, w, maxW), version)}, true
		}
	}
	return Rescale{}, false
}

// explicitDelay is an abortScaleDownDelaySeconds written and not 0: the
// aborted canary then waits for its deadline (shouldDelayScaleDownOnAbort,
// rollout/replicaset.go v1.10.2 :251-274); 0 or unset lets it drain with
// the weight under dynamicStableScale.
func explicitDelay(c *v1alpha1.CanaryStrategy) bool {
	return c.AbortScaleDownDelaySeconds != nil && *c.AbortScaleDownDelaySeconds != 0
}

// largestSetWeight is the largest setWeight an update can be aborted at:
// below the maximum weight when there is one (a last setWeight of 100
// promotes), else the maximum.
func largestSetWeight(r *v1alpha1.Rollout) int32 {
	var top, below int32
	maxW := MaxTrafficWeight(r)
	for _, s := range steps(r) {
		if s.SetWeight != nil {
			top = max(top, *s.SetWeight)
			if *s.SetWeight < maxW {
				below = max(below, *s.SetWeight)
			}
		}
	}
	if below > 0 {
		return below
	}
	return top
}
