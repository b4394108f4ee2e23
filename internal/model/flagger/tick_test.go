package flagger

import (
	"slices"
	"testing"

	flaggerv1 "github.com/fluxcd/flagger/pkg/apis/flagger/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func canaryWith(a flaggerv1.CanaryAnalysis) *flaggerv1.Canary {
	if a.Interval == "" {
		a.Interval = "1m"
	}
	return &flaggerv1.Canary{ObjectMeta: metav1.ObjectMeta{Name: "podinfo"},
		Spec: flaggerv1.CanarySpec{Provider: "nginx", Analysis: &a}}
}

func allPass(int, State) Observed { return Observed{ChecksPass: true} }

type row struct {
	phase           Phase
	canary, primary int
}

func rows(steps []Step) []row {
	var out []row
	for _, s := range steps {
		out = append(out, row{s.State.Phase, s.State.CanaryWeight, s.State.PrimaryWeight})
	}
	return out
}

const (
	progressing = flaggerv1.CanaryPhaseProgressing
	promoting   = flaggerv1.CanaryPhasePromoting
	finalising  = flaggerv1.CanaryPhaseFinalising
	succeeded   = flaggerv1.CanaryPhaseSucceeded
	failed      = flaggerv1.CanaryPhaseFailed
)

// stepWeight 10 up to maxWeight 50, every check passing: the first step
// without a check (scheduler.go:447-458), one step per interval, the spec
// copied to the primary on the tick at 50 (runCanary :617-636), all
// traffic to the primary on the next (stepWeightPromotion unset, :519-531),
// the canary scaled to zero on the one after (:392-427): 8 intervals.
func TestTickPromotesStepByStep(t *testing.T) {
	cd := canaryWith(flaggerv1.CanaryAnalysis{StepWeight: 10, MaxWeight: 50, Threshold: 5})
	steps := Play(cd, "v1.44.0", 100, allPass)
	want := []row{{progressing, 10, 90}, {progressing, 20, 80}, {progressing, 30, 70}, {progressing, 40, 60}, {progressing, 50, 50},
		{promoting, 50, 50}, {finalising, 0, 100}, {succeeded, 0, 100}}
	if got := rows(steps); !slices.Equal(got, want) {
		t.Fatalf("ticks\n got  %v\n want %v", got, want)
	}
	if last := steps[len(steps)-1]; last.Seconds != 480 || !last.State.PrimaryPromoted || !last.State.CanaryScaledDown {
		t.Errorf("done at %v s, %+v; want 480 s, promoted, canary scaled down", last.Seconds, last.State)
	}
	// The ramp the rules use (Ramp.Weights) is the twin's.
	var ws []int
	for _, s := range steps[:5] {
		ws = append(ws, s.State.CanaryWeight)
	}
	if r := RampOf(cd); !slices.Equal(r.Weights(cd), ws) {
		t.Errorf("Ramp.Weights %v, twin %v", r.Weights(cd), ws)
	}
}

// stepWeights: each listed weight in turn, maxWeight the last
// (nextStepWeight :58-88, maxWeight :41-51); a step past the list's end
// is capped at 100.
func TestTickStepWeights(t *testing.T) {
	for _, tc := range []struct {
		steps []int
		want  []int
	}{
		{[]int{1, 5, 10, 25, 50}, []int{1, 5, 10, 25, 50, 50}},
		{[]int{5, 100}, []int{5, 100, 100}},
		{[]int{20, 150}, []int{20, 100, 100}},
	} {
		steps := Play(canaryWith(flaggerv1.CanaryAnalysis{StepWeights: tc.steps}), "v1.44.0", 100, allPass)
		var got []int
		for _, s := range steps {
			if s.State.Phase == progressing || s.State.Phase == promoting {
				got = append(got, s.State.CanaryWeight)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("stepWeights %v: canary weights %v, want %v (the last on the promoting tick)", tc.steps, got, tc.want)
		}
	}
}

// Failed checks count over the whole analysis, a passing check between
// them resets nothing (:455-465, reset only at :339-346), and the tick
// after the threshold-th failure rolls back: all traffic to the primary in
// one step and the canary scaled to zero (:429-439, rollback :948-998),
// whatever the primary's size (fluxcd/flagger#869).
func TestTickRollsBackInOneStep(t *testing.T) {
	cd := canaryWith(flaggerv1.CanaryAnalysis{StepWeight: 20, MaxWeight: 60, Threshold: 2})
	fails := map[int]bool{3: true, 5: true}
	steps := Play(cd, "v1.44.0", 100, func(tick int, _ State) Observed { return Observed{ChecksPass: !fails[tick]} })
	want := []row{{progressing, 20, 80}, {progressing, 40, 60}, {progressing, 40, 60}, {progressing, 60, 40}, {progressing, 60, 40}, {failed, 0, 100}}
	if got := rows(steps); !slices.Equal(got, want) {
		t.Fatalf("ticks\n got  %v\n want %v", got, want)
	}
	if last := steps[len(steps)-1].State; !last.CanaryScaledDown || last.FailedChecks != 2 {
		t.Errorf("after the rollback %+v", last)
	}
}

// A primary that fails while promoting: before v1.44.0 the rollback sends
// all traffic to it and scales the healthy canary to zero (scheduler.go
// :295-303 at v1.43.0); from v1.44.0 the scheduler halts with all traffic
// on the canary (handleFailedPromotion :1000-1035). Not yet ready waits.
func TestTickFailedPromotionByVersion(t *testing.T) {
	cd := canaryWith(flaggerv1.CanaryAnalysis{StepWeight: 50, MaxWeight: 50, Threshold: 1})
	observe := func(tick int, s State) Observed {
		switch {
		case s.Phase != promoting:
			return Observed{ChecksPass: true}
		case tick == 3:
			return Observed{Primary: NotYet, ChecksPass: true}
		}
		return Observed{Primary: Failed, ChecksPass: true}
	}
	for _, tc := range []struct {
		version string
		want    row
		down    bool
	}{
		{"v1.43.0", row{failed, 0, 100}, true},
		{"v1.44.0", row{failed, 100, 0}, false},
	} {
		steps := Play(cd, tc.version, 100, observe)
		got := rows(steps)
		if len(got) != 4 || got[1] != (row{promoting, 50, 50}) || got[2] != got[1] || got[3] != tc.want {
			t.Errorf("%s: %v; want promoting at 50, a tick waiting, then %v", tc.version, got, tc.want)
		}
		if d := steps[len(steps)-1].State.CanaryScaledDown; d != tc.down {
			t.Errorf("%s: canary scaled down %v, want %v", tc.version, d, tc.down)
		}
	}
}

// stepWeightPromotion moves the primary's weight up by that much a tick
// (:533-557).
func TestTickStepWeightPromotion(t *testing.T) {
	cd := canaryWith(flaggerv1.CanaryAnalysis{StepWeight: 50, MaxWeight: 50, StepWeightPromotion: 20})
	got := rows(Play(cd, "v1.44.0", 100, allPass))
	want := []row{{progressing, 50, 50}, {promoting, 50, 50}, {promoting, 30, 70}, {promoting, 10, 90}, {finalising, 0, 100}, {succeeded, 0, 100}}
	if !slices.Equal(got, want) {
		t.Fatalf("ticks\n got  %v\n want %v", got, want)
	}
}

// What is not modelled says so and changes nothing; no input panics.
func TestTickOutsideTheModel(t *testing.T) {
	for _, cd := range []*flaggerv1.Canary{
		{},
		canaryWith(flaggerv1.CanaryAnalysis{Iterations: 10}),
		canaryWith(flaggerv1.CanaryAnalysis{StepWeight: 10, Mirror: true}),
		canaryWith(flaggerv1.CanaryAnalysis{StepWeights: []int{}}),
		canaryWith(flaggerv1.CanaryAnalysis{StepWeight: -5}),
	} {
		s, what := Tick(cd, "", Start(), Observed{ChecksPass: true})
		if s != Start() || what == "" {
			t.Errorf("%+v: %+v %q", cd.Spec.Analysis, s, what)
		}
	}
}
