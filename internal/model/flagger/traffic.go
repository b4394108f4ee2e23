package flagger

import (
	"fmt"

	flaggerv1 "github.com/fluxcd/flagger/pkg/apis/flagger/v1beta1"
)

// Flagger's provider without traffic shifting: its router sets no weights,
// the apex Service always selects the primary (pkg/router/factory.go,
// KubernetesNoopRouter for "kubernetes").
const KubernetesProvider = flaggerv1.KubernetesProvider

// Ramp is how a Canary's analysis moves traffic, as the scheduler does it
// (pkg/controller/scheduler.go at v1.44.0).
type Ramp struct {
	Strategy string // canary, ab-testing, blue-green
	// FirstWeight is the canary's weight after the first step (runCanary:
	// stepWeight, or stepWeights[0]); 0 when the canary gets no traffic
	// during the analysis (blue/green, mirroring).
	FirstWeight int
	// MaxWeight is the canary's weight when promotion starts (maxWeight,
	// the last of stepWeights, capped at 100; scheduler.go:41-51).
	MaxWeight int
	// Steps is how many analysis intervals the canary takes to reach
	// MaxWeight, each advanced by a passing check.
	Steps int
	// Interval is the analysis interval in seconds (GetAnalysisInterval,
	// default 60 s).
	Interval float64
	// Threshold is the number of failed checks that roll back
	// (GetAnalysisThreshold, default 1).
	Threshold int
	// Shifts is false for the kubernetes provider: no weights are set.
	Shifts bool
}

// RampOf reads the analysis of cd with the provider it runs under.
func RampOf(cd *flaggerv1.Canary) Ramp {
	a := cd.GetAnalysis()
	r := Ramp{
		Strategy:  cd.DeploymentStrategy(),
		Interval:  cd.GetAnalysisInterval().Seconds(),
		Threshold: cd.GetAnalysisThreshold(),
		Shifts:    cd.Spec.Provider != KubernetesProvider,
	}
	if a == nil || r.Strategy != flaggerv1.DeploymentStrategyCanary || !r.Shifts {
		return r
	}
	total := 100 // totalWeight, scheduler.go:53-56
	switch {
	case len(a.StepWeights) > 0 && a.StepWeight == 0:
		r.FirstWeight = min(a.StepWeights[0], total)
		r.MaxWeight = min(a.StepWeights[len(a.StepWeights)-1], total)
		r.Steps = len(a.StepWeights)
	case a.StepWeight > 0:
		r.FirstWeight = min(a.StepWeight, total)
		r.MaxWeight = total
		if a.MaxWeight > 0 {
			r.MaxWeight = min(a.MaxWeight, total)
		}
		r.Steps = (r.MaxWeight + a.StepWeight - 1) / a.StepWeight
	}
	if a.Mirror {
		// one mirrored step comes first (runCanary); the weights follow.
		r.Steps++
	}
	return r
}

// PrimaryShare is what the primary serves while the analysis first
// judges the canary, in words.
func (r Ramp) PrimaryShare() string {
	switch {
	case !r.Shifts:
		return "100% (the kubernetes provider shifts no traffic: the apex Service selects the primary)"
	case r.Strategy == flaggerv1.DeploymentStrategyBlueGreen:
		return "100% (blue/green: the canary gets no traffic until the analysis ends)"
	case r.Strategy == flaggerv1.DeploymentStrategyABTesting:
		return "every request that does not match the A/B conditions"
	}
	return fmt.Sprintf("%d%% (the canary's first step is %d%%)", 100-r.FirstWeight, r.FirstWeight)
}
