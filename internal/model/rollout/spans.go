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
