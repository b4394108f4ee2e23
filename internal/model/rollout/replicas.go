package rollout

import (
	"math"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"github.com/argoproj/argo-rollouts/utils/weightutil"
)

// The functions below restate the few lines of the controller's
// utils/replicaset that decide canary sizes with traffic routing. That
// package cannot be linked into backfire (it imports k8s.io/kubernetes), so
// test/upstream checks these against it, function by function, over a grid.

// MaxTrafficWeight returns trafficRouting.maxTrafficWeight, 100 when unset.
func MaxTrafficWeight(r *v1alpha1.Rollout) int32 { return weightutil.MaxTrafficWeight(r) }

// WeightToReplicas is the ReplicaSet size a traffic weight asks for:
// ceil(weight x replicas / maxWeight) (upstream trafficWeightToReplicas;
// the float arithmetic is kept so that rounding agrees bit for bit).
func WeightToReplicas(replicas, weight, maxWeight int32) int32 {
	return int32(math.Ceil(float64(weight) * float64(replicas) / float64(maxWeight)))
}

// MinPods applies canary.minPodsPerReplicaSet to a ReplicaSet size that is
// not zero (upstream CheckMinPodsPerReplicaSet). It applies only with
// traffic routing. From v1.10.0 the floor is capped at the Rollout's
// replicas; replicas is passed in, rather than read from spec.replicas, so
// that an autoscaler's counts can be tried.
func MinPods(r *v1alpha1.Rollout, replicas, count int32, version string) int32 {
	if count == 0 {
		return 0
	}
	c := r.Spec.Strategy.Canary
	if c == nil || c.MinPodsPerReplicaSet == nil || c.TrafficRouting == nil {
		return count
	}
	floor := *c.MinPodsPerReplicaSet
	if MinPodsCappedAtReplicas.Contains(version) && floor > replicas {
		floor = replicas
	}
	return max(count, floor)
}

func steps(r *v1alpha1.Rollout) []v1alpha1.CanaryStep {
	if r.Spec.Strategy.Canary == nil {
		return nil
	}
	return r.Spec.Strategy.Canary.Steps
}

// SetWeightAt is the canary weight the ReplicaSets are sized for at step
// index i of an update that is neither aborted nor promoted: the last
// setWeight at or before i, 0 if there is none, and the maximum weight once
// i is past the last step (upstream GetCurrentSetWeight).
func SetWeightAt(r *v1alpha1.Rollout, i int32) int32 {
	s := steps(r)
	if len(s) == 0 || int(i) >= len(s) {
		return MaxTrafficWeight(r)
	}
	for ; i >= 0; i-- {
		if s[i].SetWeight != nil {
			return *s[i].SetWeight
		}
	}
	return 0
}

// setCanaryScaleAt returns the setCanaryScale step in force at index i
// (upstream UseSetCanaryScale for a Rollout that is not aborted).
func setCanaryScaleAt(r *v1alpha1.Rollout, i int32) *v1alpha1.SetCanaryScale {
	s := steps(r)
	if r.Spec.Strategy.Canary == nil || r.Spec.Strategy.Canary.TrafficRouting == nil || int(i) >= len(s) {
		return nil
	}
	for ; i >= 0; i-- {
		scs := s[i].SetCanaryScale
		if scs == nil {
			continue
		}
		if scs.MatchTrafficWeight {
			return nil
		}
		return scs
	}
	return nil
}

// ReplicaCounts returns the canary and stable ReplicaSet sizes of a
// traffic-routed canary update at step index i, for a Rollout of replicas
// pods that is neither aborted nor promoted with --full (upstream
// CalculateReplicaCountsForTrafficRoutedCanary with no current weights).
func ReplicaCounts(r *v1alpha1.Rollout, replicas, i int32, version string) (canary, stable int32) {
	maxWeight := MaxTrafficWeight(r)
	weight := SetWeightAt(r, i)
	scs := setCanaryScaleAt(r, i)
	switch {
	case scs != nil && scs.Replicas != nil:
		canary, weight = *scs.Replicas, 0
	default:
		if scs != nil && scs.Weight != nil {
			weight = *scs.Weight
		}
		canary = MinPods(r, replicas, WeightToReplicas(replicas, weight, maxWeight), version)
	}
	if r.Spec.Strategy.Canary == nil || !r.Spec.Strategy.Canary.DynamicStableScale {
		return canary, replicas
	}
	stable = WeightToReplicas(replicas, maxWeight-weight, maxWeight)
	return MinPods(r, replicas, canary, version), MinPods(r, replicas, stable, version)
}

// Backtrack is where the traffic router's backward walk lands when the step
// index stands at the end of the steps while the canary is short of its
// desired size: the first setWeight met walking back from the last step.
// Step is its index, -1 (and weight 0) when the steps set no weight.
func Backtrack(r *v1alpha1.Rollout) (weight int32, step int) {
	s := steps(r)
	for i := len(s) - 1; i >= 0; i-- {
		if s[i].SetWeight != nil {
			return *s[i].SetWeight, i
		}
	}
	return 0, -1
}
