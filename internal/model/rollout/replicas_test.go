package rollout

import (
	"testing"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
)

func ptr[T any](v T) *T { return &v }

func set(w int32) v1alpha1.CanaryStep { return v1alpha1.CanaryStep{SetWeight: ptr(w)} }

var pause = v1alpha1.CanaryStep{Pause: &v1alpha1.RolloutPause{}}

// seedRollout is seed 000's order-front-api: steps [1, pause, 5, pause,
// 100], minPodsPerReplicaSet 2, Istio traffic routing.
func seedRollout() *v1alpha1.Rollout {
	return &v1alpha1.Rollout{Spec: v1alpha1.RolloutSpec{Strategy: v1alpha1.RolloutStrategy{
		Canary: &v1alpha1.CanaryStrategy{
			MinPodsPerReplicaSet: ptr(int32(2)),
			TrafficRouting:       &v1alpha1.RolloutTrafficRouting{},
			Steps:                []v1alpha1.CanaryStep{set(1), pause, set(5), pause, set(100)},
		}}}}
}

func TestSeedJump(t *testing.T) {
	j := RollbackJump(seedRollout(), 20, DefaultVersion)
	if j.Weight != 100 || j.StepZeroPods != 2 || j.CanaryPods != 2 || j.Needed != 20 || !j.Short() {
		t.Fatalf("seed 000 at 20 replicas: got %+v, want 100%% to 2 pods needing 20", j)
	}
}

func TestSeedBandsOverKEDARange(t *testing.T) {
	bands := JumpBands(seedRollout(), 8, 360, DefaultVersion)
	want := []struct{ from, to, pods int32 }{{8, 200, 2}, {201, 300, 3}, {301, 360, 4}}
	if len(bands) != len(want) {
		t.Fatalf("got %d bands %+v, want %d", len(bands), bands, len(want))
	}
	for i, w := range want {
		b := bands[i]
		if b.From != w.from || b.To != w.to || b.CanaryPods != w.pods || !b.Short {
			t.Errorf("band %d: got %d..%d -> %d pods (short %v), want %d..%d -> %d", i, b.From, b.To, b.CanaryPods, b.Short, w.from, w.to, w.pods)
		}
	}
	if w := bands[0].Worst; w.Replicas != 200 || w.Needed != 200 {
		t.Errorf("worst point of the first band: %+v, want 200 replicas needing 200", w)
	}
}

func TestBandsSplitWhereTheCanaryStopsBeingShort(t *testing.T) {
	r := seedRollout()
	r.Spec.Strategy.Canary.Steps = []v1alpha1.CanaryStep{set(50), pause, set(100)}
	bands := JumpBands(r, 1, 6, DefaultVersion)
	// 1 and 2 replicas: the step-0 canary (50%, floored at 2 and capped at
	// replicas from v1.10) already has every pod 100% needs.
	if len(bands) != 4 || bands[0].Short || bands[1].Short || bands[1].To != 2 || !bands[2].Short || bands[2].From != 3 {
		t.Fatalf("bands %+v: want 1 and 2 not short, then short from 3", bands)
	}
}

func TestMinPodsCappedAtReplicasFromV1_10(t *testing.T) {
	r := seedRollout()
	r.Spec.Strategy.Canary.MinPodsPerReplicaSet = ptr(int32(5))
	if got := MinPods(r, 3, 1, "v1.9.0"); got != 5 {
		t.Errorf("v1.9.0: got %d, want the uncapped floor 5", got)
	}
	if got := MinPods(r, 3, 1, "v1.10.0"); got != 3 {
		t.Errorf("v1.10.0: got %d, want the floor capped at replicas 3", got)
	}
	if got := MinPods(r, 3, 0, "v1.10.0"); got != 0 {
		t.Errorf("a zero count is never floored: got %d", got)
	}
	r.Spec.Strategy.Canary.TrafficRouting = nil
	if got := MinPods(r, 3, 1, "v1.10.0"); got != 1 {
		t.Errorf("without traffic routing the floor does not apply: got %d", got)
	}
}

func TestBacktrack(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []v1alpha1.CanaryStep
		w     int32
		at    int
	}{
		{"last setWeight", []v1alpha1.CanaryStep{set(1), pause, set(100)}, 100, 2},
		{"pause after the last weight", []v1alpha1.CanaryStep{set(10), set(80), pause}, 80, 1},
		{"ends low", []v1alpha1.CanaryStep{set(50), pause, set(5)}, 5, 2},
		{"no weight", []v1alpha1.CanaryStep{pause}, 0, -1},
		{"no steps", nil, 0, -1},
	} {
		r := seedRollout()
		r.Spec.Strategy.Canary.Steps = tc.steps
		if w, at := Backtrack(r); w != tc.w || at != tc.at {
			t.Errorf("%s: got %d at %d, want %d at %d", tc.name, w, at, tc.w, tc.at)
		}
	}
}

func TestJumpWithoutStepZeroWeightLandsOnOnePod(t *testing.T) {
	r := seedRollout()
	r.Spec.Strategy.Canary.Steps = []v1alpha1.CanaryStep{pause, set(100)}
	j := RollbackJump(r, 10, DefaultVersion)
	if j.StepZeroPods != 0 || j.CanaryPods != 1 || j.Needed != 10 {
		t.Fatalf("got %+v, want 0 pods at step 0 and the weight landing on 1", j)
	}
}

func TestMaxTrafficWeight(t *testing.T) {
	r := seedRollout()
	r.Spec.Strategy.Canary.TrafficRouting.MaxTrafficWeight = ptr(int32(1000))
	r.Spec.Strategy.Canary.Steps = []v1alpha1.CanaryStep{set(10), pause, set(1000)}
	j := RollbackJump(r, 20, DefaultVersion)
	// 10 of 1000 is 1%: ceil(0.2) = 1, floored at 2; 1000 of 1000 needs 20.
	if j.MaxWeight != 1000 || j.StepZeroPods != 2 || j.Needed != 20 {
		t.Fatalf("got %+v", j)
	}
}

func TestSpans(t *testing.T) {
	for _, tc := range []struct {
		span Span
		v    string
		want bool
	}{
		{RollbackWindowWeightJump, "v1.3.9", false},
		{RollbackWindowWeightJump, "v1.4.0", true},
		{RollbackWindowWeightJump, "v1.10.2", true},
		{RollbackWindowSkipsAnalysis, "v1.7.1", false},
		{RollbackWindowSkipsAnalysis, "v1.7.2", true},
		{StableCapacityGate, "v1.8.0", false},
		{StableCapacityGate, "v1.8.1", true},
		{Span{Since: "v1.4.0", Until: "v1.11.0"}, "v1.11.0", false},
	} {
		if got := tc.span.Contains(tc.v); got != tc.want {
			t.Errorf("%+v contains %s: got %v", tc.span, tc.v, got)
		}
	}
}

func TestSourceLines(t *testing.T) {
	for v, want := range map[string]string{
		"v1.4.0": "v1.8.2", "v1.8.2": "v1.8.2", "v1.8.5": "v1.8.2",
		"v1.9.0": "v1.9.0", "v1.9.3": "v1.9.0", "v1.10.0": "v1.10.2", "v1.12.0": "v1.10.2",
	} {
		if got := SourceLines(v).Release; got != want {
			t.Errorf("%s: cites %s, want %s", v, got, want)
		}
	}
	if l := SourceLines("v1.8.2"); l.Walk != 245 || l.StepToEnd != 390 || l.Gate != 266 {
		t.Errorf("v1.8.2 lines %+v do not match the seed", l)
	}
}
