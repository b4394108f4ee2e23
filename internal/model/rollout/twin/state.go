// Package twin is a step-by-step model of the Argo Rollouts rollout
// controller's reconcile loop for a canary with traffic routing: in each
// reconcile it decides, in the controller's order, the Service selectors,
// the traffic weight, the analysis, the ReplicaSet sizes, the pause and the
// status, from the same inputs the controller reads (the Rollout's spec and
// status and its ReplicaSets). It does not run pods or serve traffic: the
// simulation around it plays the ReplicaSet controller, the kubelet and the
// analysis controller between reconciles.
//
// The line numbers cited are of rollout/*.go in argoproj/argo-rollouts
// v1.8.2 unless a comment names another release. hack/test-controller.sh
// checks the twin, reconcile by reconcile, against the real controller.
package twin

import "time"

// ReplicaSet is what the controller reads and writes of one ReplicaSet. A
// revision name stands for the pod-template hash.
type ReplicaSet struct {
	Revision string
	// Created is the creation timestamp: the rollback window compares
	// timestamps with Before, so two ReplicaSets created at the same instant
	// are neither before nor after each other, as upstream.
	Created time.Duration
	// Replicas is spec.replicas, the size the controller asks for.
	Replicas int32
	// Pods is status.replicas and Available status.availableReplicas: the
	// ReplicaSet controller and the kubelet set them between reconciles.
	Pods      int32
	Available int32
	// ScaleDownAt is the scale-down-deadline annotation, when set.
	ScaleDownAt *time.Duration
	// Experiment is set on a ReplicaSet an Experiment owns (the
	// experiment-name annotation): the rollback window does not count it.
	Experiment bool
}

// Weights is status.canary.weights: the weight last written to the router.
type Weights struct {
	Canary int32
	// Stable is the stable's weight (maxTrafficWeight - Canary without
	// experiments): dynamicStableScale sizes the stable from it.
	Stable         int32
	CanaryRevision string
	StableRevision string
}

// The Progressing condition's reasons the controller writes and reads
// (utils/conditions/conditions.go).
const (
	ReasonNewReplicaSetCreated   = "NewReplicaSetCreated"
	ReasonReplicaSetUpdated      = "ReplicaSetUpdated"
	ReasonNewReplicaSetAvailable = "NewReplicaSetAvailable"
	ReasonReplicaSetNotAvailable = "ReplicaSetNotAvailable"
	ReasonPaused                 = "RolloutPaused"
	ReasonResumed                = "RolloutResumed"
	ReasonAborted                = "RolloutAborted"
	ReasonRetry                  = "RolloutRetry"
)

// Conditions are the status conditions the controller reads back: from
// v1.10.0 a reconcile that patches them ends there (checkPausedConditions).
type Conditions struct {
	// Progressing is the Progressing condition's reason, "" when absent.
	Progressing string
	// Paused and Healthy are the Paused and Healthy conditions' status:
	// "True", "False", or "" when absent.
	Paused, Healthy string
}

// Counts are the replica counts of the status (calculateBaseStatus):
// RolloutProgressing compares them with the previous reconcile's. Ready
// pods are available pods in the twin (minReadySeconds 0).
type Counts struct {
	// Replicas sums status.replicas over all ReplicaSets, Updated is the
	// desired ReplicaSet's, Available sums status.availableReplicas.
	Replicas, Updated, Available int32
}

// AnalysisPhase is an AnalysisRun's phase.
type AnalysisPhase string

// The phases the twin and the simulation use.
const (
	AnalysisRunning    AnalysisPhase = "Running"
	AnalysisSuccessful AnalysisPhase = "Successful"
	AnalysisFailed     AnalysisPhase = "Failed"
	AnalysisCancelled  AnalysisPhase = "Cancelled"
)

// AnalysisRun is the background AnalysisRun of the current update. The
// controller creates and cancels it; the analysis controller (the
// simulation) measures and sets its phase.
type AnalysisRun struct {
	Revision string // the canary revision it was created for
	Created  time.Duration
	Phase    AnalysisPhase
	Message  string
}

// Status is the part of the Rollout's status the controller reads and
// writes.
type Status struct {
	CurrentRevision string // status.currentPodHash
	StableRevision  string // status.stableRS
	StepIndex       *int32 // status.currentStepIndex
	Abort           bool
	PromoteFull     bool
	ControllerPause bool
	// PauseStart is the CanaryPauseStep pause condition's start time.
	PauseStart *time.Duration
	Weights    *Weights
	// Background is status.canary.currentBackgroundAnalysisRunStatus.
	Background *AnalysisRun
	Conditions Conditions
	Counts     Counts
}

// Promoted is the status of a Rollout fully promoted to revision, as the
// controller leaves it: at the end of its steps, healthy, every pod of the
// revision counted.
func Promoted(revision string, steps int32, counts Counts) Status {
	end := steps
	return Status{CurrentRevision: revision, StableRevision: revision, StepIndex: &end,
		Conditions: Conditions{Progressing: ReasonNewReplicaSetAvailable, Healthy: "True"}, Counts: counts}
}

// Cluster is what the API server holds for one Rollout between reconciles.
type Cluster struct {
	// Template is the revision the Rollout's pod template names.
	Template    string
	Status      Status
	ReplicaSets []*ReplicaSet
	// CanarySelector and StableSelector are the revisions the canary and
	// stable Services select.
	CanarySelector, StableSelector string
}

// ReplicaSet returns the ReplicaSet of a revision, or nil.
func (c *Cluster) ReplicaSet(revision string) *ReplicaSet {
	for _, rs := range c.ReplicaSets {
		if rs.Revision == revision {
			return rs
		}
	}
	return nil
}

// Decision is what one reconcile did.
type Decision struct {
	// Weight is the canary weight written to the router (SetWeight), nil
	// when the reconcile did not reach it.
	Weight *int32
	// Branch names the weight chain's branch taken, and Stop why the
	// reconcile ended early ("" when it ran to the status sync).
	Branch, Stop string
	// Promoted is set when the reconcile marked the canary stable.
	Promoted bool
	// Panic is set when the real controller would panic (and recover,
	// requeueing) in this reconcile; the reconcile then changes nothing.
	Panic string
}
