package flagger

import (
	"fmt"
	"math"

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

// Weights lists the canary's weight after each step of the ramp, in
// order, as runCanary sets them (scheduler.go:565-617): stepWeight added
// per passing check up to maxWeight, or each of stepWeights; a mirrored
// step, which routes no live traffic to the canary, comes first.
func (r Ramp) Weights(cd *flaggerv1.Canary) []int {
	a := cd.GetAnalysis()
	if a == nil || r.MaxWeight == 0 {
		return nil
	}
	var ws []int
	if a.Mirror {
		ws = append(ws, 0)
	}
	if len(a.StepWeights) > 0 && a.StepWeight == 0 {
		for _, w := range a.StepWeights {
			ws = append(ws, min(w, 100))
		}
		return ws
	}
	for w := a.StepWeight; ; w += a.StepWeight {
		ws = append(ws, min(w, r.MaxWeight))
		if w >= r.MaxWeight {
			return ws
		}
	}
}

// HeldAtMax is how long, at most, the canary holds MaxWeight before a
// rollback: the tick that reaches it, then threshold failed checks, one per
// interval, and the rollback on the next tick (scheduler.go:429-438). A
// passing check at MaxWeight promotes instead.
func (r Ramp) HeldAtMax() float64 { return float64(r.Threshold+1) * r.Interval }

// WeightBefore is the canary's weight tau seconds before a rollback when
// every tick runs its checks (none waits): at MaxWeight for HeldAtMax,
// each earlier step held one interval. Failed checks below MaxWeight do
// not move it: they hold a lower weight one more interval but count
// towards the same threshold. Ticks that wait for the primary or the
// canary hold any weight longer without counting (scheduler.go:294-309,
// :353-361), so with them the weight tau seconds before can be MaxWeight
// for any tau.
func (r Ramp) WeightBefore(ws []int, tau float64) int {
	if len(ws) == 0 {
		return 0
	}
	held := r.HeldAtMax()
	if tau <= held {
		return ws[len(ws)-1]
	}
	j := int(math.Ceil((tau - held) / r.Interval))
	if i := len(ws) - 1 - j; i >= 0 {
		return ws[i]
	}
	return 0
}

// SinceWeight is how long before that rollback the canary's weight
// reached w: the window an autoscaler must look back over not to size the
// primary for less than 100 - w.
func (r Ramp) SinceWeight(ws []int, w int) float64 {
	held := r.HeldAtMax()
	for i := len(ws) - 1; i >= 0; i-- {
		if ws[i] < w {
			return held + float64(len(ws)-2-i)*r.Interval
		}
	}
	return held + float64(len(ws)-1)*r.Interval
}

// PrimaryPods is what the primary's autoscaler keeps for a share (percent)
// of a load that needs full pods for all traffic: the share's pods rounded
// up, within [min, max]. An HPA's recommendation is
// ceil(current x utilization / target) (Kubernetes docs, Horizontal Pod
// Autoscaling, Algorithm details): with the load counted in pods at the
// target utilization, the target cancels out.
func PrimaryPods(full, minR, maxR int32, share int) int32 {
	want := int32(math.Ceil(float64(full) * float64(share) / 100))
	return min(max(want, minR), max(maxR, minR))
}
