package twin

import "backfire.dev/backfire/internal/model/rollout"

// The behaviours of the controller that only some releases have, read in
// the source of each release named (rollout/*.go, utils/*).
var (
	// EarlyReturnOnWrite: a reconcile that wrote the Rollout ends there and
	// leaves the rest to the next one: after creating the desired
	// ReplicaSet (its revision annotation and the Progressing condition,
	// rollout/controller.go v1.10.2 :451-455, newRollout set in
	// sync.go :245-266), and after checkPausedConditions patched the
	// Progressing or Paused condition (context.go v1.10.2 :58-65, sync.go
	// :487-558). v1.9.x writes the same and carries on.
	EarlyReturnOnWrite = rollout.Span{Since: "v1.10.0", Ref: "controller.go:451-455, context.go:62-65"}
	// DynamicAbortFollowsSteps: with dynamicStableScale an aborted Rollout
	// steps its weight down through the setWeight steps as the stable grows
	// (utils/replicaset/canary.go GetDesiredCanaryWeight, v1.9.0 :512-545;
	// trafficrouting.go calculateDesiredWeightOnAbortOrStableRollback
	// :360-395). v1.8.x takes the weight from the stable's available pods
	// only (trafficrouting.go v1.8.2 :335-351).
	DynamicAbortFollowsSteps = rollout.Span{Since: "v1.9.0", Ref: "GetDesiredCanaryWeight"}
	// AbortWeightIgnoresHeldCanary: with dynamicStableScale and an explicit
	// abortScaleDownDelaySeconds, the abort weight no longer waits for the
	// canary's available pods, which the delay keeps up (argoproj/argo-rollouts
	// #4900, master d6bc6908d, utils/replicaset/canary.go :531-540). The
	// module proxy lists no release after v1.10.2: no release has it, and
	// the twin enables it for rollout.Master only.
	AbortWeightIgnoresHeldCanary = rollout.Span{Since: rollout.Master, Ref: "argoproj/argo-rollouts#4900, on master only"}
)
