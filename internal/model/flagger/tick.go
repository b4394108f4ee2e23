package flagger

import (
	"fmt"

	flaggerv1 "github.com/fluxcd/flagger/pkg/apis/flagger/v1beta1"
	"golang.org/x/mod/semver"
)

// This file is a twin of one analysis tick of Flagger's scheduler
// (advanceCanary, pkg/controller/scheduler.go at v1.44.0, commit 15bd6ad5)
// for the canary strategy under a provider that shifts traffic, from the
// tick after "New revision detected" (phase Progressing) on. It is exact
// for what the scheduler decides alone, given what it reads from outside:
// whether the metric checks pass, and whether the primary and the canary
// are ready. Those it takes as inputs (Observed): when a check fails
// depends on the metrics backend, when a workload is ready on its pods.
// Not modelled: mirroring, A/B testing and blue/green, webhooks (all
// taken as passing), skipAnalysis, suspend, a new revision during the
// analysis, and the kubernetes provider.

// Phase is a Canary's status.phase.
type Phase = flaggerv1.CanaryPhase

// Readiness is what IsPrimaryReady or IsCanaryReady answered: ready, not
// yet (a retriable error: the rollout is still in progress) or failed (not
// retriable: the progress deadline was exceeded;
// pkg/canary/deployment_ready.go).
type Readiness int

const (
	Ready Readiness = iota
	NotYet
	Failed
)

// Observed is what one tick reads from outside the scheduler.
type Observed struct {
	Primary, Canary Readiness
	// ChecksPass is the outcome of runAnalysis (the metric checks), read
	// only on the ticks that run it.
	ChecksPass bool
}

// State is what the scheduler keeps between ticks: the Canary's status
// and the routes the mesh router holds.
type State struct {
	Phase         Phase
	CanaryWeight  int
	PrimaryWeight int
	FailedChecks  int
	// CanaryScaledDown: the target (the canary) was scaled to zero.
	CanaryScaledDown bool
	// PrimaryPromoted: the target's spec was copied to the primary
	// (Promote).
	PrimaryPromoted bool
}

// Start is the state after the tick that detects a new revision: phase
// Progressing, all traffic on the primary.
func Start() State {
	return State{Phase: flaggerv1.CanaryPhaseProgressing, PrimaryWeight: 100}
}

// Done reports whether the scheduler leaves the Canary alone until the next
// revision.
func (s State) Done() bool {
	return s.Phase == flaggerv1.CanaryPhaseSucceeded || s.Phase == flaggerv1.CanaryPhaseFailed
}

// HaltsFailedPromotion is the first release that halts a failed promotion
// instead of rolling back to the failing primary (fluxcd/flagger#1931).
const HaltsFailedPromotion = "v1.44.0"

// Tick plays one analysis interval from s under Flagger version (v1.43.0
// and v1.44.0 differ only in a failed promotion) and says what happened.
func Tick(cd *flaggerv1.Canary, version string, s State, in Observed) (State, string) {
	a := cd.GetAnalysis()
	switch {
	case a == nil || s.Done():
		return s, "nothing to do"
	case cd.DeploymentStrategy() != flaggerv1.DeploymentStrategyCanary || cd.Spec.Provider == KubernetesProvider || a.Mirror:
		return s, "not modelled: only the canary strategy, without mirroring, under a provider that shifts traffic"
	}
	// The primary first, every tick (scheduler.go:294-309).
	switch in.Primary {
	case NotYet:
		return s, "waiting for the primary"
	case Failed:
		if semver.Compare(version, HaltsFailedPromotion) >= 0 && (s.Phase == flaggerv1.CanaryPhasePromoting || s.Phase == flaggerv1.CanaryPhaseFinalising) {
			// handleFailedPromotion, scheduler.go:1000-1035.
			s.Phase, s.PrimaryWeight, s.CanaryWeight = flaggerv1.CanaryPhaseFailed, 0, 100
			return s, "primary failed during promotion: halt, all traffic to the canary"
		}
		// Before v1.44.0 in every phase (scheduler.go:295-303 at v1.43.0,
		// commit 01aa1c8e).
		return rollback(s), "primary failed: rollback, all traffic to the primary"
	}
	// The canary (scheduler.go:353-361).
	switch in.Canary {
	case NotYet:
		return s, "waiting for the canary"
	case Failed:
		return rollback(s), "canary failed: rollback, all traffic to the primary"
	}
	switch s.Phase {
	case flaggerv1.CanaryPhasePromoting:
		// scheduler.go:380-390, runPromotionTrafficShift :508-563.
		if a.StepWeightPromotion == 0 {
			s.PrimaryWeight, s.CanaryWeight, s.Phase = 100, 0, flaggerv1.CanaryPhaseFinalising
			return s, "promotion: all traffic to the primary"
		}
		if s.CanaryWeight > 0 {
			s.PrimaryWeight = min(s.PrimaryWeight+a.StepWeightPromotion, 100)
			s.CanaryWeight = max(s.CanaryWeight-a.StepWeightPromotion, 0)
			if s.PrimaryWeight == 100 {
				s.Phase = flaggerv1.CanaryPhaseFinalising
			}
		}
		return s, fmt.Sprintf("promotion: primary weight %d", s.PrimaryWeight)
	case flaggerv1.CanaryPhaseFinalising:
		// scheduler.go:392-427.
		s.CanaryScaledDown, s.Phase = true, flaggerv1.CanaryPhaseSucceeded
		return s, "promotion completed: canary scaled to zero"
	}
	// scheduler.go:429-439: the threshold is counted over the whole
	// analysis (FailedChecks is reset only by a new revision, :339-346).
	if s.FailedChecks >= cd.GetAnalysisThreshold() {
		return rollback(s), fmt.Sprintf("%d failed checks: rollback, all traffic to the primary", s.FailedChecks)
	}
	// scheduler.go:447-467: no check before the first step.
	if s.CanaryWeight != 0 && !in.ChecksPass {
		s.FailedChecks++
		return s, fmt.Sprintf("check failed (%d of %d)", s.FailedChecks, cd.GetAnalysisThreshold())
	}
	// runCanary, scheduler.go:565-637, called only with a step to take
	// (:493-504): without stepWeight or stepWeights the canary never moves.
	c := &stepper{cd}
	if c.nextStepWeight(s.CanaryWeight) <= 0 {
		return s, "no step weight: the canary stays at its weight"
	}
	if maxW := c.maxWeight(); s.CanaryWeight < maxW {
		step := c.nextStepWeight(s.CanaryWeight)
		s.PrimaryWeight = max(s.PrimaryWeight-step, 0)
		s.CanaryWeight = min(s.CanaryWeight+step, 100)
		return s, fmt.Sprintf("advance: canary weight %d", s.CanaryWeight)
	}
	s.PrimaryPromoted, s.Phase = true, flaggerv1.CanaryPhasePromoting
	return s, "max weight reached: the canary's spec copied to the primary"
}

// rollback routes all traffic to the primary in one step and scales the
// canary to zero, whatever the primary's size (rollback, scheduler.go:948-998).
func rollback(s State) State {
	s.PrimaryWeight, s.CanaryWeight = 100, 0
	s.CanaryScaledDown, s.Phase = true, flaggerv1.CanaryPhaseFailed
	return s
}

// stepper holds the weight arithmetic of scheduler.go:34-88 (maxWeight,
// totalWeight 100, nextStepWeight).
type stepper struct{ cd *flaggerv1.Canary }

func (c *stepper) maxWeight() int {
	a := c.cd.GetAnalysis()
	if n := len(a.StepWeights); n > 0 {
		return min(100, a.StepWeights[n-1])
	}
	if a.MaxWeight > 0 {
		return a.MaxWeight
	}
	return 100
}

func (c *stepper) nextStepWeight(w int) int {
	a := c.cd.GetAnalysis()
	if a.StepWeight > 0 || len(a.StepWeights) == 0 {
		return a.StepWeight
	}
	maxStep := 100 - w
	if maxStep == 0 {
		return 1
	}
	if w == 0 {
		return min(maxStep, a.StepWeights[0])
	}
	for i := 0; i < len(a.StepWeights)-1; i++ {
		if a.StepWeights[i] == w {
			return min(maxStep, a.StepWeights[i+1]-w)
		}
	}
	return maxStep
}

// Play runs ticks from Start until the Canary is done or max ticks have
// passed; observe gives each tick's inputs (tick 1 is the first after
// Start).
func Play(cd *flaggerv1.Canary, version string, max int, observe func(tick int, s State) Observed) []Step {
	s := Start()
	var out []Step
	for tick := 1; tick <= max && !s.Done(); tick++ {
		var what string
		s, what = Tick(cd, version, s, observe(tick, s))
		out = append(out, Step{Tick: tick, Seconds: float64(tick) * cd.GetAnalysisInterval().Seconds(), State: s, What: what})
	}
	return out
}

// Step is one tick's outcome: the state after it, Seconds after Start.
type Step struct {
	Tick    int
	Seconds float64
	State   State
	What    string
}
