package rollout

import "github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

// Jump is what a rollback within the rollback window does to traffic, for
// a Rollout of Replicas pods whose rollback target has been scaled to zero.
//
// The rollback is a new update: the canary ReplicaSet (the old version) is
// sized for step 0, then the step index is thrown to the end. The weight
// chain has no branch for that case and walks back to the last setWeight
// while the canary is still short; traffic routing runs before ReplicaSets
// are scaled, so the weight lands on what the canary has available then.
type Jump struct {
	Replicas  int32
	Weight    int32 // the backtrack weight the router writes
	MaxWeight int32
	// StepZeroPods is the canary's size at step 0.
	StepZeroPods int32
	// CanaryPods is what the weight typically lands on: the step-0 pods,
	// or 1 when step 0 gave the canary none (weight is held at 0 only
	// while no canary pod is available).
	CanaryPods int32
	// Needed is what the weight asks for: ceil(weight x replicas / max).
	Needed int32
}

// RollbackJump computes the jump at one replica count.
func RollbackJump(r *v1alpha1.Rollout, replicas int32, version string) Jump {
	w, _ := Backtrack(r)
	maxWeight := MaxTrafficWeight(r)
	zero, _ := ReplicaCounts(r, replicas, 0, version)
	return Jump{
		Replicas:     replicas,
		Weight:       w,
		MaxWeight:    maxWeight,
		StepZeroPods: zero,
		CanaryPods:   max(zero, 1),
		Needed:       WeightToReplicas(replicas, w, maxWeight),
	}
}

// Short reports whether the canary has fewer pods than the weight needs.
func (j Jump) Short() bool { return j.CanaryPods < j.Needed }

// Band is a run of replica counts over which the jump lands on the same
// number of canary pods.
type Band struct {
	From, To   int32
	CanaryPods int32
	Short      bool
	// Worst is the jump at To, where the shortfall is largest.
	Worst Jump
}

// maxBandScan bounds the replica counts tried for one autoscaler range.
const maxBandScan = 1 << 20

// JumpBands computes the jump for every replica count from lo to hi (an
// autoscaler's range) and groups the counts into bands.
func JumpBands(r *v1alpha1.Rollout, lo, hi int32, version string) []Band {
	first := int64(max(lo, 1))
	last := min(max(int64(hi), first), first+maxBandScan)
	var bands []Band
	for i := first; i <= last; i++ {
		n := int32(i)
		j := RollbackJump(r, n, version)
		if k := len(bands) - 1; k >= 0 && bands[k].CanaryPods == j.CanaryPods && bands[k].Short == j.Short() {
			bands[k].To, bands[k].Worst = n, j
			continue
		}
		bands = append(bands, Band{From: n, To: n, CanaryPods: j.CanaryPods, Short: j.Short(), Worst: j})
	}
	return bands
}
