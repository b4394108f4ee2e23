package rolloutsim

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"backfire.dev/backfire/internal/model/rollout/twin"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/scan"
)

// seedManifest is seed 000's Rollout, its KEDA ScaledObject and its
// AnalysisTemplate, as the example in the repository has them.
const seedManifest = "../../../examples/order-front-api.yaml"

func load(t testing.TB, path string) []*object.Object {
	t.Helper()
	res, err := scan.Run(scan.Options{Paths: []string{path}, KeepObjects: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) > 0 {
		t.Fatalf("%s: %v", path, res.Errors)
	}
	return res.Objects
}

func seedInput(t testing.TB, scenario string, seed int64) Input {
	t.Helper()
	m, err := FromObjects(load(t, seedManifest), "order-front-api")
	if err != nil {
		t.Fatal(err)
	}
	return Input{
		Rollout: m.Rollout, Replicas: 20, Version: "v1.8.2", Scenario: scenario, Probe: m.Probe, Analysis: m.Analysis,
		// Given by the seed: 20 replicas (KEDA), 96 rps, two pods serving
		// about 27-31 rps together (15 each).
		RPS: 96, PodCapacity: 15,
		// Not given by the seed, chosen here: start-up 20 s to 4 min (40
		// pods on a cluster sized for 20: most canary pods wait for a node),
		// 1 of the broken version's 20 pods not Ready, and half its requests
		// failing.
		PodStart: [2]time.Duration{20 * time.Second, 240 * time.Second}, BrokenNotReady: 1, BrokenErrorRate: 0.5,
		ActionAt: time.Minute, Duration: 300 * time.Second, Seed: seed,
	}
}

func TestManifestInputs(t *testing.T) {
	m, err := FromObjects(load(t, seedManifest), "")
	if err != nil {
		t.Fatal(err)
	}
	if m.Replicas != 20 {
		t.Errorf("replicas %d, want the status's 20", m.Replicas)
	}
	want := Probe{Period: 5 * time.Second, SuccessThreshold: 3, FailureThreshold: 1}
	if m.Probe != want {
		t.Errorf("probe %+v, want %+v", m.Probe, want)
	}
	a := m.Analysis
	if a == nil || a.Interval != 20*time.Second || a.FailureLimit != 2 || a.MaxErrorRate != 0.05 || a.RevisionAware {
		t.Errorf("analysis %+v, want every 20s, failureLimit 2, < 0.05, whole Service", a)
	}
	if _, err := FromObjects(load(t, seedManifest), "other"); err == nil || !strings.Contains(err.Error(), `no Rollout named "other"`) {
		t.Errorf("a missing name: %v", err)
	}
}

// TestSeed000 replays the incident: a rollback within the window to a
// ReplicaSet scaled to zero. The seed measured the weight at 100% on 2
// Ready pods sized for 20, Ready flapping 2 -> 0 -> 2 -> 0, endpoints at 0
// for about 30 s and about 80% of the expected requests lost in the window.
// The twin must show the first two exactly and the last two within a
// tolerance, for every seed of the start-up times tried: a failed share of
// 60% to 95% in the window and 10 to 60 seconds at zero endpoints.
func TestSeed000(t *testing.T) {
	for _, version := range []string{"v1.8.2", "v1.10.2"} {
		t.Run(version, func(t *testing.T) { seed000(t, version) })
	}
}

func seed000(t *testing.T, version string) {
	for seed := int64(1); seed <= 8; seed++ {
		in := seedInput(t, Rollback, seed)
		in.Version = version
		r, err := Run(in)
		if err != nil {
			t.Fatal(err)
		}
		tot := r.Totals
		var onTwo bool
		var zeros int
		var prev int32 = -1
		for _, row := range r.Timeline {
			if row.Weight == 100 && row.CanaryReady == 2 && row.CanaryDesired == 20 {
				onTwo = true
			}
			if row.Weight == 100 && row.CanaryReady == 0 && prev > 0 {
				zeros++
			}
			prev = row.CanaryReady
		}
		if !onTwo {
			t.Errorf("seed %d: never 100%% of traffic on 2 Ready canary pods sized for 20", seed)
		}
		if zeros < 2 {
			t.Errorf("seed %d: Ready canary pods fell to 0 under 100%% weight %d times, want the 2 -> 0 -> 2 -> 0 flapping", seed, zeros)
		}
		if tot.WindowFailedShare < 0.60 || tot.WindowFailedShare > 0.95 {
			t.Errorf("seed %d: %.1f%% failed in the incident window, want about 80%% (60-95%%)", seed, 100*tot.WindowFailedShare)
		}
		if tot.ZeroEndpointSeconds < 10 || tot.ZeroEndpointSeconds > 60 {
			t.Errorf("seed %d: %.0f s at zero canary endpoints, want about 30 (10-60)", seed, tot.ZeroEndpointSeconds)
		}
		if tot.Outcome != "completed" || r.Timeline[len(r.Timeline)-1].Analysis != "-" {
			t.Errorf("seed %d: outcome %s, analysis %s: a rollback within the window skips analysis and completes", seed, tot.Outcome, r.Timeline[len(r.Timeline)-1].Analysis)
		}
	}
}

// TestStableGateHoldsTheWeight: with every pod of the stable Ready, the
// gate lets the weight fall back to 0 when the canary has no available
// pod, and no request meets an empty canary.
func TestStableGateHoldsTheWeight(t *testing.T) {
	in := seedInput(t, Rollback, 1)
	in.BrokenNotReady = 0
	r, err := Run(in)
	if err != nil {
		t.Fatal(err)
	}
	if r.Totals.ZeroEndpointSeconds != 0 {
		t.Errorf("%.0f s at zero canary endpoints with the stable fully available, want 0", r.Totals.ZeroEndpointSeconds)
	}
}

func TestDeterministic(t *testing.T) {
	a, _ := Run(seedInput(t, Rollback, 3))
	b, _ := Run(seedInput(t, Rollback, 3))
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same inputs gave two timelines")
	}
	c, _ := Run(seedInput(t, Rollback, 4))
	if reflect.DeepEqual(a.Timeline, c.Timeline) {
		t.Fatal("another seed gave the same timeline: the range is not drawn from")
	}
}

// TestRollbackOutsideWindowAbortsItself is BF402: past the window the
// rollback is a new update, its background analysis reads the whole
// Service's error rate (still the broken version's) and aborts it after
// failureLimit+1 measurements 20 s apart.
func TestRollbackOutsideWindowAbortsItself(t *testing.T) {
	r, err := Run(seedInput(t, RollbackOutsideWindow, 1))
	if err != nil {
		t.Fatal(err)
	}
	if r.Totals.Outcome != "aborted" {
		t.Fatalf("outcome %s, want aborted", r.Totals.Outcome)
	}
	var created, failed float64 = -1, -1
	for _, row := range r.Timeline {
		if row.Analysis == "Running" && created < 0 {
			created = row.T
		}
		if row.Analysis == "Failed" && failed < 0 {
			failed = row.T
		}
	}
	if created < 0 || failed-created != 40 {
		t.Errorf("analysis created at %.0f s, failed at %.0f s: want failed 40 s (3 measurements 20 s apart) after", created, failed)
	}
	// The canary stays up: abortScaleDownDelaySeconds starts only once the
	// stable is fully available, and one of its pods is not Ready.
	last := r.Timeline[len(r.Timeline)-1]
	if last.Weight != 0 || last.CanaryDesired != 2 {
		t.Errorf("after the abort: weight %d, canary %d pods; want 0 and 2", last.Weight, last.CanaryDesired)
	}

	// A query that tells the canary from the stable lets it finish.
	in := seedInput(t, RollbackOutsideWindow, 1)
	in.Analysis.RevisionAware = true
	if r, _ := Run(in); r.Totals.Outcome == "aborted" {
		t.Errorf("a revision-aware analysis still aborted the rollback")
	}
}

func TestDeployPromoteFullAndAbort(t *testing.T) {
	in := seedInput(t, Deploy, 1)
	in.PodStart = [2]time.Duration{10 * time.Second, 20 * time.Second}
	in.Analysis = nil
	in.Duration = 15 * time.Minute
	r, err := Run(in)
	if err != nil {
		t.Fatal(err)
	}
	if r.Totals.Outcome != "completed" || r.Totals.FailedRequests != 0 {
		t.Errorf("deploy: %s with %.0f failed, want completed with none", r.Totals.Outcome, r.Totals.FailedRequests)
	}
	seen := map[int32]bool{}
	for _, row := range r.Timeline {
		seen[row.Weight] = true
	}
	for _, w := range []int32{1, 5} {
		if !seen[w] {
			t.Errorf("deploy never set weight %d: %v", w, seen)
		}
	}
	if last := r.Timeline[len(r.Timeline)-1]; last.TargetShare != 100 {
		t.Errorf("deploy ends with %.0f%% of requests on the new revision, want 100", last.TargetShare)
	}

	in.Scenario, in.Duration = PromoteFull, 3*time.Minute
	r, _ = Run(in)
	for _, row := range r.Timeline {
		// promote --full at 60 s freezes the weight at the first step's 1%
		// until the canary is fully available, then promotes.
		if row.T > 60 && row.Weight != 1 && row.Weight != 0 {
			t.Fatalf("promote --full: weight %d at %.0f s, want it frozen at 1 then 0 once promoted", row.Weight, row.T)
		}
	}
	if r.Totals.Outcome != "completed" {
		t.Errorf("promote --full: %s", r.Totals.Outcome)
	}

	in.Scenario = Abort
	r, _ = Run(in)
	last := r.Timeline[len(r.Timeline)-1]
	if r.Totals.Outcome != "aborted" || last.Weight != 0 || last.CanaryDesired != 0 {
		t.Errorf("abort: %s, weight %d, canary %d; want aborted, 0, 0 after abortScaleDownDelaySeconds", r.Totals.Outcome, last.Weight, last.CanaryDesired)
	}
}

func TestRefusesWhatItDoesNotModel(t *testing.T) {
	in := seedInput(t, Rollback, 1)
	basic := in.Rollout.DeepCopy()
	basic.Spec.Strategy.Canary.TrafficRouting = nil
	in.Rollout = basic
	if _, err := Run(in); err == nil || !strings.Contains(err.Error(), "trafficRouting") {
		t.Errorf("a basic canary: %v", err)
	}
	in = seedInput(t, "sideways", 1)
	if _, err := Run(in); err == nil || !strings.Contains(err.Error(), "unknown scenario") {
		t.Errorf("an unknown scenario: %v", err)
	}
	in = seedInput(t, Rollback, 1)
	exp := in.Rollout.DeepCopy()
	exp.Spec.Strategy.Canary.Steps = append(exp.Spec.Strategy.Canary.Steps, v1alpha1.CanaryStep{Experiment: &v1alpha1.RolloutExperimentStep{}})
	in.Rollout = exp
	if _, err := Run(in); err == nil || !strings.Contains(err.Error(), "steps[5]") {
		t.Errorf("an experiment step: %v", err)
	}
}

// BenchmarkSeed000 measures one five-minute replay of the seed.
func BenchmarkSeed000(b *testing.B) {
	in := seedInput(b, Rollback, 1)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Run(in); err != nil {
			b.Fatal(err)
		}
	}
}

// TestFailuresByCause: every failed request has one cause, row by row and
// in the totals. The seed's rollback as written loses requests to all
// three: the broken version's errors before the jump, too few Ready canary
// pods after it, and no endpoint when they all fail their probes; with
// every stable pod Ready the gate takes the weight back, and no request
// meets an empty canary.
func TestFailuresByCause(t *testing.T) {
	r, err := Run(seedInput(t, Rollback, 1))
	if err != nil {
		t.Fatal(err)
	}
	var sum Failures
	for _, row := range r.Timeline {
		if d := row.Failed.Total() - row.FailedRps; d > 1e-9 || d < -1e-9 {
			t.Fatalf("t=%.0f: causes sum to %.3f, failed %.3f", row.T, row.Failed.Total(), row.FailedRps)
		}
		if row.BrokenRps == 0 && row.Failed.BrokenVersion > 0 {
			t.Fatalf("t=%.0f: the broken version failed requests it did not get", row.T)
		}
		sum = sum.plus(row.Failed)
	}
	tot := r.Totals
	if sum != tot.FailedByCause || tot.FailedByCause.Total() != tot.FailedRequests {
		t.Errorf("totals %+v, rows %+v, failed %.0f", tot.FailedByCause, sum, tot.FailedRequests)
	}
	if c := tot.FailedByCause; c.BrokenVersion == 0 || c.TooFewReady == 0 || c.NoEndpoint == 0 {
		t.Errorf("the seed's rollback loses to every cause: %+v", c)
	}
	if tot.BrokenUntil < 20 || tot.BrokenUntil > 60 {
		t.Errorf("the broken version got requests until %.0f s: want until the jump, 20 s to 60 s in", tot.BrokenUntil)
	}

	in := seedInput(t, Rollback, 1)
	in.BrokenNotReady = 0
	if r, _ = Run(in); r.Totals.FailedByCause.NoEndpoint != 0 {
		t.Errorf("%.0f requests met no endpoint with the stable fully available", r.Totals.FailedByCause.NoEndpoint)
	}
	in.Scenario = Deploy
	in.PodStart = [2]time.Duration{10 * time.Second, 20 * time.Second}
	if r, _ = Run(in); r.Broken != "" || r.Totals.FailedByCause.BrokenVersion != 0 {
		t.Errorf("a deploy has no broken version: %q, %+v", r.Broken, r.Totals.FailedByCause)
	}
}

// TestUntilSettled ends a run once it settles, and says when.
func TestUntilSettled(t *testing.T) {
	in := seedInput(t, Rollback, 1)
	in.UntilSettled, in.Duration = true, time.Hour
	r, err := Run(in)
	if err != nil {
		t.Fatal(err)
	}
	if r.Totals.Settled < 0 || float64(len(r.Timeline)) != r.Totals.Settled+2 {
		t.Fatalf("settled at %.0f, %d rows", r.Totals.Settled, len(r.Timeline))
	}
	last := r.Timeline[len(r.Timeline)-1]
	if last.TargetShare != 100 || last.CanaryReady != 20 || r.Totals.Outcome != "completed" {
		t.Errorf("last row %+v, outcome %s", last, r.Totals.Outcome)
	}
}

// TestRollbackActiveHasAScaleDownDeadline: the ReplicaSet rolled back to,
// still up, carries the deadline its replacement gave it; the controller
// removes it on the first reconcile that scales (removeScaleDownDeadlines).
func TestRollbackActiveHasAScaleDownDeadline(t *testing.T) {
	in := seedInput(t, RollbackActive, 1)
	ctl, err := twin.NewController(in.Rollout, in.Replicas, in.Version)
	if err != nil {
		t.Fatal(err)
	}
	r := newRun(&in, ctl)
	if at := r.cl.ReplicaSet("previous").ScaleDownAt; at == nil || *at != 30*time.Second {
		t.Fatalf("deadline %v, want scaleDownDelaySeconds (30 s)", at)
	}
	for now := time.Duration(0); now < 3*time.Second; now += time.Second {
		r.reconcile(now)
	}
	if at := r.cl.ReplicaSet("previous").ScaleDownAt; at != nil {
		t.Errorf("deadline %v still there after the rollback's reconciles", *at)
	}
}

// A replica count past MaxReplicas is refused at once: the run keeps each
// pod, and a billion of them never finished.
func TestRunRefusesPastMaxReplicas(t *testing.T) {
	in := seedInput(t, Rollback, 1)
	in.Replicas = 1_000_000_000
	done := make(chan error, 1)
	go func() { _, err := Run(in); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "more than the 150000 pods") {
			t.Errorf("err %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a run of a billion replicas did not return within 10 s")
	}
	in.Replicas = MaxReplicas
	in.Duration = time.Second
	if _, err := Run(in); err != nil {
		t.Errorf("at the bound: %v", err)
	}
}
