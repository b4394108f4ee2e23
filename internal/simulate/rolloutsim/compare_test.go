package rolloutsim

import (
	"strings"
	"testing"
	"time"

	"backfire.dev/backfire/internal/model/rollout"
)

func TestRemediesOfTheSeed(t *testing.T) {
	in := seedInput(t, Rollback, 1)
	rem, notes := Remedies(in.Rollout, 20, "v1.10.2", nil)
	if len(notes) != 0 {
		t.Errorf("notes %v", notes)
	}
	byName := map[string]Remedy{}
	var names []string
	for _, r := range rem {
		byName[r.Name] = r
		names = append(names, r.Name)
	}
	if got := strings.Join(names, " "); got != "as-written drop-last-setweight cap-last-setweight dynamic-stable-scale no-rollback-window undo-promote-full" {
		t.Fatalf("remedies %s", got)
	}
	if w, at := rollout.Backtrack(byName[DropLastSetWeight].Rollout); w != 5 || at != 2 {
		t.Errorf("drop: the walk lands on setWeight %d at steps[%d], want 5 at steps[2]", w, at)
	}
	// Step 0 gives the canary minPodsPerReplicaSet 2 of 20 pods: 10%.
	if w, at := rollout.Backtrack(byName[CapLastSetWeight].Rollout); w != 10 || at != 4 {
		t.Errorf("cap: setWeight %d at steps[%d], want 10 at steps[4]", w, at)
	}
	if !byName[DynamicStableScale].Rollout.Spec.Strategy.Canary.DynamicStableScale {
		t.Error("dynamic-stable-scale does not set dynamicStableScale")
	}
	if nw := byName[NoRollbackWindow]; nw.Rollout.Spec.RollbackWindow != nil || !nw.RevisionAware {
		t.Error("no-rollback-window keeps the window or the Service-wide analysis")
	}
	if u := byName[UndoPromoteFull]; len(u.Commands) != 1 || u.Commands[0] != (Command{At: time.Second, Do: PromoteFull}) {
		t.Errorf("undo-promote-full commands %v", u.Commands)
	}
	// The Rollout as written is not changed by any of them.
	if in.Rollout.Spec.RollbackWindow == nil || len(in.Rollout.Spec.Strategy.Canary.Steps) != 5 || *in.Rollout.Spec.Strategy.Canary.Steps[4].SetWeight != 100 {
		t.Error("a remedy changed the Rollout as written")
	}

	// Without a window, and already dynamic, those remedies are left out.
	ro := in.Rollout.DeepCopy()
	ro.Spec.RollbackWindow = nil
	ro.Spec.Strategy.Canary.DynamicStableScale = true
	rem, notes = Remedies(ro, 20, "v1.10.2", nil)
	if len(rem) != 4 || len(notes) != 2 || !strings.Contains(strings.Join(notes, "\n"), "no rollbackWindow") {
		t.Errorf("%d remedies, notes %v", len(rem), notes)
	}
}

// TestCompareChoosesBySimulation: seed 000's Rollout rolled back within
// its window. When the version rolled back from fails half its requests,
// the jump as written loses least (the canary takes the traffic early);
// when it fails 2%, a fix that keeps the canary's share small does.
func TestCompareChoosesBySimulation(t *testing.T) {
	in := seedInput(t, Rollback, 1)
	in.Version, in.Duration = "v1.10.2", time.Hour
	rem, _ := Remedies(in.Rollout, in.Replicas, in.Version, nil)
	cmp, err := Compare(in, rem, Sweep{ErrorRates: []float64{0.02, 0.5}, PodStarts: [][2]time.Duration{in.PodStart}, Loads: []float64{1}})
	if err != nil {
		t.Fatal(err)
	}
	wins := 0
	for _, n := range cmp.Wins {
		wins += n
	}
	if len(cmp.Cases) != 2 || wins != 2 {
		t.Fatalf("cases %d, wins %v", len(cmp.Cases), cmp.Wins)
	}
	low, half := cmp.Cases[0], cmp.Cases[1]
	if half.Least != AsWritten {
		t.Errorf("at 50%% errors %s loses least, want as-written: %+v", half.Least, half.Tried)
	}
	if low.Least == AsWritten || low.Least == DynamicStableScale {
		t.Errorf("at 2%% errors %s loses least, want a fix that keeps the jump small", low.Least)
	}
	tried := map[string]Tried{}
	for _, tr := range half.Tried {
		tried[tr.Remedy] = tr
		if tr.OfferedRequests != half.Horizon*in.RPS {
			t.Errorf("%s: %.0f offered over a horizon of %.0f s: every remedy is counted over the same time", tr.Remedy, tr.OfferedRequests, half.Horizon)
		}
	}
	as, drop, nw := tried[AsWritten], tried[DropLastSetWeight], tried[NoRollbackWindow]
	// As written, the canary's failures; with the fix, the broken version's.
	if as.FailedByCause.TooFewReady == 0 || as.FailedByCause.NoEndpoint == 0 || drop.FailedByCause.TooFewReady+drop.FailedByCause.NoEndpoint != 0 {
		t.Errorf("by cause: as written %+v, dropped %+v", as.FailedByCause, drop.FailedByCause)
	}
	if !(as.BrokenUntil < drop.BrokenUntil && drop.BrokenUntil < nw.BrokenUntil) {
		t.Errorf("the broken version got requests until %.0f (as written), %.0f (drop), %.0f (no window): want each later", as.BrokenUntil, drop.BrokenUntil, nw.BrokenUntil)
	}
	// The horizon is the slowest run: the steps, two 5-minute pauses.
	if half.Horizon < 600 || nw.Settled+2 < half.Horizon-1 {
		t.Errorf("horizon %.0f s, no-window settled at %.0f s", half.Horizon, nw.Settled)
	}
	// The inputs given are the base case.
	if cmp.Base.Case.ErrorRate != 0.5 || cmp.Base.Least != half.Least {
		t.Errorf("base %+v", cmp.Base.Case)
	}
}

// TestJudgeRepeatsTheLastSecond: a run that settled early is counted up to
// the horizon with its last second.
func TestJudgeRepeatsTheLastSecond(t *testing.T) {
	short := &Timeline{Timeline: []Row{{OfferedRps: 10, FailedRps: 5, Failed: Failures{BrokenVersion: 5}, BrokenRps: 10}},
		Totals: Totals{OfferedRequests: 10, FailedRequests: 5, FailedByCause: Failures{BrokenVersion: 5}, BrokenUntil: 1}}
	long := &Timeline{Timeline: make([]Row, 4), Totals: Totals{OfferedRequests: 40}}
	for i := range long.Timeline {
		long.Timeline[i].OfferedRps = 10
	}
	cr := judge(Case{}, []Remedy{{Name: "short"}, {Name: "long"}}, []*Timeline{short, long})
	if cr.Horizon != 4 || cr.Tried[0].FailedRequests != 20 || cr.Tried[0].OfferedRequests != 40 || cr.Tried[0].BrokenUntil != 4 || cr.Least != "long" {
		t.Fatalf("%+v", cr)
	}
}

func TestCompareNeedsARollback(t *testing.T) {
	in := seedInput(t, Deploy, 1)
	if _, err := Compare(in, nil, Sweep{}); err == nil || !strings.Contains(err.Error(), "rolls back within the window") {
		t.Fatalf("err %v", err)
	}
}

// BenchmarkCompare measures the comparison of the six remedies at one
// case (each run until it settles, the slowest about 18 minutes).
func BenchmarkCompare(b *testing.B) {
	in := seedInput(b, Rollback, 1)
	in.Version, in.Duration = "v1.10.2", time.Hour
	rem, _ := Remedies(in.Rollout, in.Replicas, in.Version, nil)
	for b.Loop() {
		if _, err := Compare(in, rem, Sweep{}); err != nil {
			b.Fatal(err)
		}
	}
}
