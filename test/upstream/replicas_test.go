// Package upstream checks backfire's model of the Argo Rollouts controller
// against the controller's own code, over a grid of inputs.
package upstream

import (
	"fmt"
	"sync"
	"testing"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	replicasetutil "github.com/argoproj/argo-rollouts/utils/replicaset"

	"backfire.dev/backfire/internal/model/rollout"
)

// version is the release whose utils/replicaset this module links: the
// model is asked to behave as that release does.
const version = "v1.9.0"

func ptr[T any](v T) *T { return &v }

// stepLists are the shapes of canary steps the grid tries with each weight w.
func stepLists(w int32) map[string][]v1alpha1.CanaryStep {
	pause := v1alpha1.CanaryStep{Pause: &v1alpha1.RolloutPause{}}
	set := func(w int32) v1alpha1.CanaryStep { return v1alpha1.CanaryStep{SetWeight: ptr(w)} }
	scale := func(s v1alpha1.SetCanaryScale) v1alpha1.CanaryStep {
		return v1alpha1.CanaryStep{SetCanaryScale: &s}
	}
	analysis := v1alpha1.CanaryStep{Analysis: &v1alpha1.RolloutAnalysis{
		Templates: []v1alpha1.AnalysisTemplateRef{{TemplateName: "t"}}}}
	return map[string][]v1alpha1.CanaryStep{
		"ramp ending at 100":      {set(w), pause, set(50), pause, set(100)},
		"ramp ending at w":        {set(1), pause, set(w), pause},
		"pause first":             {pause, set(w), pause},
		"no weight":               {pause, analysis, pause},
		"canary scale replicas":   {scale(v1alpha1.SetCanaryScale{Replicas: ptr(int32(3))}), set(w), pause},
		"canary scale weight":     {set(w), scale(v1alpha1.SetCanaryScale{Weight: ptr(int32(25))}), pause},
		"canary scale match":      {scale(v1alpha1.SetCanaryScale{Weight: ptr(int32(40))}), set(w), scale(v1alpha1.SetCanaryScale{MatchTrafficWeight: true}), pause},
		"analysis then weight":    {analysis, set(w)},
		"weight only":             {set(w)},
		"empty":                   nil,
		"weight after scale only": {scale(v1alpha1.SetCanaryScale{Replicas: ptr(int32(0))}), pause, set(w)},
	}
}

type gridPoint struct {
	name string
	ro   *v1alpha1.Rollout
}

// grid builds Rollouts in the middle of a traffic-routed canary update at
// every step index (the canary is not the stable, not aborted, not
// promoted with --full), over replicas x weights x minPods x
// maxTrafficWeight x dynamicStableScale x step shapes.
var grid = sync.OnceValue(buildGrid)

func buildGrid() []gridPoint {
	replicas := []int32{0, 1, 2, 3, 4, 5, 7, 8, 10, 13, 19, 20, 21, 33, 50, 99, 100, 101, 199, 200, 201, 360, 1000}
	weights := []int32{0, 1, 2, 5, 10, 25, 33, 50, 66, 99, 100}
	minPods := []*int32{nil, ptr(int32(0)), ptr(int32(1)), ptr(int32(2)), ptr(int32(3)), ptr(int32(5)), ptr(int32(30))}
	maxWeights := []*int32{nil, ptr(int32(100)), ptr(int32(1000)), ptr(int32(7))}
	var pts []gridPoint
	for _, n := range replicas {
		for _, w := range weights {
			for name, steps := range stepLists(w) {
				for _, mp := range minPods {
					for _, mw := range maxWeights {
						for _, dss := range []bool{false, true} {
							for i := 0; i <= len(steps); i++ {
								ro := &v1alpha1.Rollout{
									Spec: v1alpha1.RolloutSpec{
										Replicas: ptr(n),
										Strategy: v1alpha1.RolloutStrategy{Canary: &v1alpha1.CanaryStrategy{
											Steps:                steps,
											MinPodsPerReplicaSet: mp,
											DynamicStableScale:   dss,
											TrafficRouting:       &v1alpha1.RolloutTrafficRouting{MaxTrafficWeight: mw},
										}},
									},
									Status: v1alpha1.RolloutStatus{
										CurrentStepIndex: ptr(int32(i)),
										StableRS:         "stable-hash",
										CurrentPodHash:   "canary-hash",
									},
								}
								pts = append(pts, gridPoint{
									name: fmt.Sprintf("replicas=%d w=%d steps=%q minPods=%s maxWeight=%s dynamicStableScale=%v index=%d",
										n, w, name, show(mp), show(mw), dss, i),
									ro: ro,
								})
							}
						}
					}
				}
			}
		}
	}
	return pts
}

func show(p *int32) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprint(*p)
}

func TestReplicaCountsMatchUpstream(t *testing.T) {
	pts := grid()
	if len(pts) < 100000 {
		t.Fatalf("grid has only %d points", len(pts))
	}
	bad := 0
	for _, p := range pts {
		wantCanary, wantStable := replicasetutil.CalculateReplicaCountsForTrafficRoutedCanary(p.ro, nil, nil, nil)
		gotCanary, gotStable := rollout.ReplicaCounts(p.ro, *p.ro.Spec.Replicas, *p.ro.Status.CurrentStepIndex, version)
		if gotCanary != wantCanary || gotStable != wantStable {
			if bad++; bad <= 20 {
				t.Errorf("%s: model canary/stable %d/%d, upstream %d/%d", p.name, gotCanary, gotStable, wantCanary, wantStable)
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d grid points differ", bad, len(pts))
	}
	t.Logf("%d grid points agree", len(pts))
}

func TestSetWeightMatchesUpstream(t *testing.T) {
	for _, p := range grid() {
		want := replicasetutil.GetCurrentSetWeight(p.ro)
		if got := rollout.SetWeightAt(p.ro, *p.ro.Status.CurrentStepIndex); got != want {
			t.Fatalf("%s: model set weight %d, upstream %d", p.name, got, want)
		}
	}
}

// The backward walk of reconcileTrafficRouting (for i := index-1; i >= 0)
// is in the controller package, which cannot be called alone; with the
// index at the end of the steps it reads the same steps as
// GetCurrentSetWeight at the last index, which returns 0 when it finds no
// setWeight, as the walk leaves the weight at 0.
func TestBacktrackMatchesWalkFromLastStep(t *testing.T) {
	for _, p := range grid() {
		steps := p.ro.Spec.Strategy.Canary.Steps
		if len(steps) == 0 {
			continue
		}
		ro := p.ro.DeepCopy()
		ro.Status.CurrentStepIndex = ptr(int32(len(steps) - 1))
		want := replicasetutil.GetCurrentSetWeight(ro)
		got, at := rollout.Backtrack(ro)
		if got != want {
			t.Fatalf("%s: model backtrack %d, upstream %d", p.name, got, want)
		}
		if at >= 0 && (steps[at].SetWeight == nil || *steps[at].SetWeight != got) {
			t.Fatalf("%s: backtrack step %d is not the setWeight %d", p.name, at, got)
		}
	}
}

func TestMinPodsMatchesUpstream(t *testing.T) {
	for _, tr := range []*v1alpha1.RolloutTrafficRouting{nil, {}} {
		for _, mp := range []*int32{nil, ptr(int32(0)), ptr(int32(1)), ptr(int32(2)), ptr(int32(7))} {
			for _, n := range []int32{0, 1, 2, 5, 20} {
				ro := &v1alpha1.Rollout{Spec: v1alpha1.RolloutSpec{Replicas: ptr(n), Strategy: v1alpha1.RolloutStrategy{
					Canary: &v1alpha1.CanaryStrategy{MinPodsPerReplicaSet: mp, TrafficRouting: tr}}}}
				for count := int32(0); count <= 10; count++ {
					want := replicasetutil.CheckMinPodsPerReplicaSet(ro, count)
					if got := rollout.MinPods(ro, n, count, version); got != want {
						t.Fatalf("trafficRouting=%v minPods=%s replicas=%d count=%d: model %d, upstream %d",
							tr != nil, show(mp), n, count, got, want)
					}
				}
			}
		}
	}
}

// The model's step-0 canary size is what upstream sizes the canary at
// when a rollback starts over from index 0.
func TestRollbackJumpStepZeroMatchesUpstream(t *testing.T) {
	for _, p := range grid() {
		if *p.ro.Status.CurrentStepIndex != 0 || p.ro.Spec.Strategy.Canary.DynamicStableScale {
			continue
		}
		want, _ := replicasetutil.CalculateReplicaCountsForTrafficRoutedCanary(p.ro, nil, nil, nil)
		j := rollout.RollbackJump(p.ro, *p.ro.Spec.Replicas, version)
		if j.StepZeroPods != want {
			t.Fatalf("%s: model step-0 canary %d, upstream %d", p.name, j.StepZeroPods, want)
		}
	}
}

// A failing metric must make a failing test: the grid would agree with
// itself if, say, the model ignored minPodsPerReplicaSet everywhere.
func TestGridExercisesMinPodsAndRounding(t *testing.T) {
	var floored, rounded bool
	for _, p := range grid() {
		c := p.ro.Spec.Strategy.Canary
		canary, _ := replicasetutil.CalculateReplicaCountsForTrafficRoutedCanary(p.ro, nil, nil, nil)
		w := replicasetutil.GetCurrentSetWeight(p.ro)
		n := *p.ro.Spec.Replicas
		mw := rollout.MaxTrafficWeight(p.ro)
		exact := float64(w) * float64(n) / float64(mw)
		if c.MinPodsPerReplicaSet != nil && canary == *c.MinPodsPerReplicaSet && float64(canary) > exact+1 {
			floored = true
		}
		if exact != float64(int64(exact)) && float64(canary) == float64(int64(exact))+1 {
			rounded = true
		}
	}
	if !floored || !rounded {
		t.Fatalf("grid misses a case: minPods floor %v, rounding up %v", floored, rounded)
	}
}
