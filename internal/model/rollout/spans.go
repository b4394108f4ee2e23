package rollout

import "fmt"

// Span is the range of controller releases that have a behaviour. Keeping
// each behaviour's range in one table means that when upstream fixes one, the
// fix is a version bound here and every finding that cites it follows.
type Span struct {
	// Since is the first release with the behaviour.
	Since string
	// Until is the first release without it; "" while none is released.
	Until string
	// Ref names the upstream change or issue.
	Ref string
}

// Contains reports whether release v has the behaviour.
func (s Span) Contains(v string) bool {
	return AtLeast(v, s.Since) && (s.Until == "" || !AtLeast(v, s.Until))
}

// String describes the span for a finding: "v1.4.0 through v1.10.2 (...)".
func (s Span) String() string {
	if s.Until == Master {
		return fmt.Sprintf("%s through %s, fixed on %s (%s)", s.Since, DefaultVersion, MasterName, s.Ref)
	}
	if s.Until != "" {
		return fmt.Sprintf("%s up to %s (%s)", s.Since, s.Until, s.Ref)
	}
	return fmt.Sprintf("%s through %s, the newest modelled release (%s)", s.Since, DefaultVersion, s.Ref)
}

// The behaviours the Argo rules cite. Checked in the controller source of
// each release named.
var (
	// RollbackWindow: spec.rollbackWindow exists.
	RollbackWindow = Span{Since: "v1.4.0", Ref: "argoproj/argo-rollouts#2394"}
	// RollbackWindowWeightJump: the traffic router has no branch for a
	// rollback within the window, so its backward walk applies the last
	// setWeight to a canary that is not yet scaled.
	RollbackWindowWeightJump = Span{Since: "v1.4.0", Ref: "argoproj/argo-rollouts#3941 open; the cap in #4852 is not merged"}
	// SkipStepsWhenActive: a rollback within the window to a ReplicaSet that
	// still has replicas jumps to the end on the first reconcile.
	SkipStepsWhenActive = Span{Since: "v1.6.0", Ref: "argoproj/argo-rollouts#2953"}
	// RollbackWindowSkipsAnalysis: a rollback within the window skips and
	// cancels analysis (v1.10.0 moved the check into isFastRollback).
	RollbackWindowSkipsAnalysis = Span{Since: "v1.7.2", Ref: "argoproj/argo-rollouts#3670"}
	// StableCapacityGate: before a new weight is written, the stable
	// ReplicaSet (only it) must have the pods for the stable's share.
	StableCapacityGate = Span{Since: "v1.8.1", Ref: "checkReplicasAvailable(stableRS)"}
	// MinPodsCappedAtReplicas: minPodsPerReplicaSet is capped at spec.replicas.
	MinPodsCappedAtReplicas = Span{Since: "v1.10.0", Ref: "CheckMinPodsPerReplicaSet"}
)

// Newer reports whether v is newer than every release the rules model: the
// rules then assume the newest modelled behaviour and say so.
func Newer(v string) bool { return !AtLeast(DefaultVersion, v) }

// The abort bugs of dynamicStableScale: each follows from
// GetDesiredCanaryWeight (utils/replicaset/canary.go v1.9.0 :512-545,
// v1.10.2 :518-547), which #4035 added in v1.9.0: on abort it walks the
// setWeight steps backwards for the first whose pods are fewer than
// max(spec.replicas - stable available, canary available).
var (
	// AbortParksAtMinPods: minPodsPerReplicaSet holds the aborted canary at
	// its floor, which outnumbers a small setWeight's pods, so the abort
	// weight never reaches 0 (argoproj/argo-rollouts#4841; PR #4848 closed
	// unmerged; the walk is the same on master 9f8d111d8).
	AbortParksAtMinPods = Span{Since: "v1.9.0", Ref: "argoproj/argo-rollouts#4841, unfixed on master"}
	// AbortDelayDeadlock: an explicit abortScaleDownDelaySeconds keeps the
	// aborted canary whole until the stable is, which waits on the weight,
	// which waits on the canary (argoproj/argo-rollouts#4898). Fixed on
	// master by #4900 (d6bc6908d), in no release up to v1.10.2.
	AbortDelayDeadlock = Span{Since: "v1.9.0", Until: Master, Ref: "argoproj/argo-rollouts#4898, fixed by #4900 in no release yet"}
	// AbortedCanaryRescaled: once aborted, a stable short of spec.replicas
	// (an autoscaler's scale-up, an eviction) makes the walk find a
	// setWeight again, and the aborted canary is scaled up
	// (argoproj/argo-rollouts#4973 open; PRs #4974 and #5018 open).
	AbortedCanaryRescaled = Span{Since: "v1.9.0", Ref: "argoproj/argo-rollouts#4973 open"}
)
