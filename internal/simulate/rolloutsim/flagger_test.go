package rolloutsim

import (
	"slices"
	"strings"
	"testing"
	"time"

	flaggerv1 "github.com/fluxcd/flagger/pkg/apis/flagger/v1beta1"
	istiov1beta1 "github.com/fluxcd/flagger/pkg/apis/istio/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func testCanary(stepWeight, maxWeight, threshold int) *flaggerv1.Canary {
	return &flaggerv1.Canary{
		ObjectMeta: metav1.ObjectMeta{Name: "podinfo", Namespace: "test"},
		Spec: flaggerv1.CanarySpec{
			TargetRef: flaggerv1.LocalObjectReference{Kind: "Deployment", Name: "podinfo"},
			Analysis:  &flaggerv1.CanaryAnalysis{Interval: "30s", Threshold: threshold, StepWeight: stepWeight, MaxWeight: maxWeight},
		},
	}
}

func float(v float64) *float64 { return &v }

func canaryInput(scenario, version string) CanaryInput {
	return CanaryInput{
		Canary: testCanary(20, 60, 2), Version: version, Scenario: scenario, Replicas: 10, CanaryReplicas: 10,
		Probe:  Probe{Period: 5 * time.Second, SuccessThreshold: 1, FailureThreshold: 3},
		Checks: []Check{{Name: "request-success-rate", Success: true, Min: float(99), Window: time.Minute}},
		RPS:    100, PodCapacity: 50, PodStart: [2]time.Duration{10 * time.Second, 10 * time.Second},
		BrokenErrorRate: 0.5, BreakAt: -1, Duration: 30 * time.Minute, Seed: 1,
	}
}

func whats(tl *Timeline) []string {
	var out []string
	for _, e := range tl.Events[1:] {
		out = append(out, e.What)
	}
	return out
}

func runCanary(t *testing.T, in CanaryInput) *Timeline {
	t.Helper()
	tl, err := RunCanary(in)
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// A healthy canary walks the steps, one per passing check, and is promoted
// in the scheduler's order: the spec copied, all traffic to the primary
// once its rolling update is Ready, the canary scaled to zero.
func TestCanaryDeployPromotesInTickOrder(t *testing.T) {
	in := canaryInput(Deploy, "v1.44.0")
	in.PodStart = [2]time.Duration{40 * time.Second, 40 * time.Second}
	tl := runCanary(t, in)
	got := slices.Compact(whats(tl))
	want := []string{"waiting for the canary", "advance: canary weight 20", "advance: canary weight 40", "advance: canary weight 60",
		"max weight reached: the canary's spec copied to the primary", "waiting for the primary",
		"promotion: all traffic to the primary", "promotion completed: canary scaled to zero"}
	if !slices.Equal(got, want) {
		t.Fatalf("ticks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if tl.Totals.Outcome != "promoted" || tl.Totals.FailedRequests != 0 {
		t.Fatalf("outcome %q, %v failed", tl.Totals.Outcome, tl.Totals.FailedRequests)
	}
	// Ticks land on the analysis interval.
	for _, e := range tl.Events[1:] {
		if int(e.T)%30 != 0 {
			t.Fatalf("tick at t=%v, not on the 30 s interval", e.T)
		}
	}
	last := tl.Timeline[len(tl.Timeline)-1]
	if last.TargetShare != 100 || last.CanaryDesired != 0 || last.StableReady != 10 {
		t.Fatalf("after promotion: %+v", last)
	}
}

// The canary's readiness feeds Observed.Canary and the primary's
// Observed.Primary: a canary whose pods never come up waits, then fails
// after the progress deadline and is rolled back; it never waits "for the
// primary".
func TestCanaryReadinessWiring(t *testing.T) {
	in := canaryInput(Deploy, "v1.44.0")
	in.PodStart = [2]time.Duration{time.Hour, time.Hour}
	in.ProgressDeadline = 5 * time.Minute
	tl := runCanary(t, in)
	got := slices.Compact(whats(tl))
	want := []string{"waiting for the canary", "canary failed: rollback, all traffic to the primary"}
	if !slices.Equal(got, want) {
		t.Fatalf("ticks %q, want %q", got, want)
	}
	if e := tl.Events[len(tl.Events)-1]; e.T <= 300 || e.T > 330 {
		t.Fatalf("rolled back at t=%v, want the first tick past the 300 s deadline", e.T)
	}
}

// The checks read the canary's errors: a broken canary fails threshold
// checks at its highest weight and is rolled back in one step.
func TestCanaryChecksRollBack(t *testing.T) {
	tl := runCanary(t, canaryInput(Rollback, "v1.44.0"))
	got := slices.Compact(whats(tl))
	want := []string{"advance: canary weight 20", "advance: canary weight 40", "advance: canary weight 60",
		"check failed (1 of 2)", "check failed (2 of 2)", "2 failed checks: rollback, all traffic to the primary"}
	if !slices.Equal(got, want) {
		t.Fatalf("ticks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if tl.Totals.Outcome != "rolled back" || tl.Totals.FailedByCause.BrokenVersion == 0 {
		t.Fatalf("outcome %q, errors of the canary %v", tl.Totals.Outcome, tl.Totals.FailedByCause.BrokenVersion)
	}
	// One step: 60% to 0% between two seconds.
	for i := 1; i < len(tl.Timeline); i++ {
		if a, b := tl.Timeline[i-1].Weight, tl.Timeline[i].Weight; a > b && (a != 60 || b != 0) {
			t.Fatalf("weight %d -> %d at t=%v: a rollback is one step", a, b, tl.Timeline[i].T)
		}
	}
}

// BF411's mechanism: a redeployed good version (the canary) judged by a
// query that cannot tell it from the broken primary fails and is rolled
// back; the same query on the canary's requests promotes it.
func TestCanaryBlindMetricRollsBackTheRevert(t *testing.T) {
	in := canaryInput(Revert, "v1.44.0")
	aware := runCanary(t, in)
	in.Checks[0].Blind = true
	blind := runCanary(t, in)
	if aware.Totals.Outcome != "promoted" || blind.Totals.Outcome != "rolled back" {
		t.Fatalf("canary-aware %q, blind %q: want promoted, rolled back", aware.Totals.Outcome, blind.Totals.Outcome)
	}
	if blind.Totals.BrokenUntil < aware.Totals.BrokenUntil {
		t.Fatalf("the broken primary got requests until %v blind, %v aware", blind.Totals.BrokenUntil, aware.Totals.BrokenUntil)
	}
}

// #869 as BF412 bounds it: the primary's autoscaler shrinks it while the
// canary holds its highest weight, and the one-step rollback sends it all
// the traffic: too few Ready pods until the scale-up is Ready.
func TestCanaryRollbackFloodsShrunkPrimary(t *testing.T) {
	in := canaryInput(Rollback, "v1.44.0")
	in.Canary.Spec.Analysis.Threshold = 5
	in.PodCapacity = 12
	in.Autoscaler = &Autoscaler{Min: 2, Max: 10, Window: time.Minute}
	tl := runCanary(t, in)
	var at Row
	for _, row := range tl.Timeline {
		if row.Analysis == string(flaggerv1.CanaryPhaseFailed) {
			at = row
			break
		}
	}
	if at.StableDesired == 0 || at.StableReady >= 10 {
		t.Fatalf("at the rollback the primary has %d Ready of %d asked for: want it shrunk below 10", at.StableReady, at.StableDesired)
	}
	if tl.Totals.FailedByCause.TooFewReady == 0 {
		t.Fatalf("no request failed for too few Ready primary pods: %+v", tl.Totals)
	}
	in.Autoscaler = nil
	if fixed := runCanary(t, in); fixed.Totals.FailedByCause.TooFewReady != 0 {
		t.Fatalf("a primary that keeps its 10 pods failed %v for too few Ready", fixed.Totals.FailedByCause.TooFewReady)
	}
}

// The target's HPA may scale another workload (upstream gitops-istio's
// backend HPA names frontend): Flagger copies it for the primary all the
// same, but the canary keeps what ScaleFromZero gave it, so the twin does
// not scale it with the weight.
func TestCanaryWhoseAutoscalerScalesAnother(t *testing.T) {
	in := canaryInput(Deploy, "v1.44.0")
	in.CanaryReplicas = 1
	in.Autoscaler = &Autoscaler{Min: 1, Max: 10, Window: time.Minute}
	scaled := 0
	for _, row := range runCanary(t, in).Timeline {
		scaled = max(scaled, int(row.CanaryDesired))
	}
	if scaled < 2 {
		t.Fatalf("an HPA on the target: the canary never scaled past %d pod", scaled)
	}
	in.Autoscaler.OtherTarget = "Deployment frontend"
	for _, row := range runCanary(t, in).Timeline {
		if row.CanaryDesired > 1 {
			t.Fatalf("t=%vs: canary asked for %d pods; an HPA on another workload scales none", row.T, row.CanaryDesired)
		}
	}
	dir := "../../../testdata/corpus/gitops-istio/apps/backend/"
	objs := append(load(t, dir+"canary.yaml"), load(t, dir+"hpa.yaml")...)
	m, err := CanaryFromObjects(objs, "")
	if err != nil {
		t.Fatal(err)
	}
	if m.Autoscaler == nil || m.Autoscaler.OtherTarget != "Deployment frontend" || m.CanaryReplicas != 1 {
		t.Fatalf("gitops-istio backend: autoscaler %+v, canary replicas %d: want the HPA read as scaling Deployment frontend, the canary at 1", m.Autoscaler, m.CanaryReplicas)
	}
}

// BF413: a primary that never becomes Ready during promotion is rolled
// back to by v1.43.0 (the canary scaled to zero) and halted on by v1.44.0
// (all traffic to the canary, which keeps running).
func TestCanaryFailedPromotionByVersion(t *testing.T) {
	for _, tc := range []struct {
		version, outcome, last string
		weight                 int32
	}{
		{"v1.43.0", "rolled back", "primary failed: rollback, all traffic to the primary", 0},
		{"v1.44.0", "halted: all traffic to the canary", "primary failed during promotion: halt, all traffic to the canary", 100},
	} {
		in := canaryInput(FailedPromotion, tc.version)
		in.ProgressDeadline = 5 * time.Minute
		tl := runCanary(t, in)
		last := tl.Timeline[len(tl.Timeline)-1]
		if tl.Totals.Outcome != tc.outcome || tl.Events[len(tl.Events)-1].What != tc.last || last.Weight != tc.weight {
			t.Fatalf("%s: outcome %q, last tick %q, weight %d", tc.version, tl.Totals.Outcome, tl.Events[len(tl.Events)-1].What, last.Weight)
		}
		if canaryUp := last.CanaryDesired > 0; canaryUp != (tc.weight == 100) {
			t.Fatalf("%s: the canary has %d pods asked for at the end", tc.version, last.CanaryDesired)
		}
	}
}

func TestCanaryNotModelled(t *testing.T) {
	for name, edit := range map[string]func(*flaggerv1.Canary){
		"mirroring": func(cd *flaggerv1.Canary) { cd.Spec.Analysis.Mirror = true },
		"A/B testing": func(cd *flaggerv1.Canary) {
			cd.Spec.Analysis.Match = make([]istiov1beta1.HTTPMatchRequest, 1)
			cd.Spec.Analysis.Iterations = 5
		},
		"blue/green":     func(cd *flaggerv1.Canary) { cd.Spec.Analysis.Iterations = 5 },
		"skipAnalysis":   func(cd *flaggerv1.Canary) { cd.Spec.SkipAnalysis = true },
		"kubernetes":     func(cd *flaggerv1.Canary) { cd.Spec.Provider = "kubernetes" },
		"no analysis":    func(cd *flaggerv1.Canary) { cd.Spec.Analysis = nil },
		"DaemonSet":      func(cd *flaggerv1.Canary) { cd.Spec.TargetRef.Kind = "DaemonSet" },
		"no step weight": func(cd *flaggerv1.Canary) { cd.Spec.Analysis.StepWeight = 0 },
	} {
		in := canaryInput(Deploy, "v1.44.0")
		edit(in.Canary)
		if _, err := RunCanary(in); err == nil || !strings.HasPrefix(err.Error(), "not modelled: ") {
			t.Errorf("%s: err %v, want not modelled", name, err)
		}
	}
}

// A name that matches no Canary says so, as for a Rollout, instead of
// "no Canary in the input" beside a file that has one.
func TestCanaryFromObjectsNamesTheMissingName(t *testing.T) {
	objs := load(t, "../../../testdata/corpus/gitops-istio/apps/backend/canary.yaml")
	if _, err := CanaryFromObjects(objs, ""); err != nil {
		t.Fatalf("the only Canary: %v", err)
	}
	if _, err := CanaryFromObjects(objs, "other"); err == nil || !strings.Contains(err.Error(), `no Canary named "other"`) {
		t.Errorf("a missing name: %v", err)
	}
}
