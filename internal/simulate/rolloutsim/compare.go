package rolloutsim

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"backfire.dev/backfire/internal/model/rollout"
)

// The remedies a comparison tries, by name.
const (
	AsWritten          = "as-written"
	DropLastSetWeight  = "drop-last-setweight"
	CapLastSetWeight   = "cap-last-setweight"
	DynamicStableScale = "dynamic-stable-scale"
	NoRollbackWindow   = "no-rollback-window"
	UndoPromoteFull    = "undo-promote-full"
)

// promoteFullAfterUndo is when the undo-promote-full remedy issues promote
// --full: the first reconcile after the undo resets status.promoteFull
// (resetRolloutStatus, sync.go v1.10.2 :925), so it must come after it.
const promoteFullAfterUndo = time.Second

// Remedy is one way to roll back: a change to the Rollout, or a command
// after the undo.
type Remedy struct {
	Name string `json:"name"`
	// Change says what differs from the Rollout as written.
	Change   string            `json:"change"`
	Rollout  *v1alpha1.Rollout `json:"-"`
	Commands []Command         `json:"-"`
	// RevisionAware makes the background analysis read the canary's
	// requests only (BF402's fix).
	RevisionAware bool `json:"-"`
}

// Remedies builds the remedies for a Rollout of replicas pods rolled back
// within its window: as written; dropping the last setWeight (ruleFix, the
// Rollout with BF401's fix applied, when the rules propose one); a last
// setWeight no larger than the share the step-0 pods carry; dynamicStableScale;
// no rollbackWindow with a revision-aware analysis; and an undo followed by
// promote --full. A remedy that would leave the Rollout as written is left
// out and said so in the notes.
func Remedies(ro *v1alpha1.Rollout, replicas int32, version string, ruleFix *v1alpha1.Rollout) (out []Remedy, notes []string) {
	out = append(out, Remedy{Name: AsWritten, Change: "the Rollout as written", Rollout: ro})
	steps := ro.Spec.Strategy.Canary.Steps
	maxW := rollout.MaxTrafficWeight(ro)
	w, at := rollout.Backtrack(ro)

	switch {
	case ruleFix != nil:
		out = append(out, Remedy{Name: DropLastSetWeight, Change: "BF401's fix: " + stepsText(ruleFix), Rollout: ruleFix})
	case at >= 0:
		dropped := ro.DeepCopy()
		c := dropped.Spec.Strategy.Canary
		c.Steps = slices.Delete(slices.Clone(c.Steps), at, at+1)
		out = append(out, Remedy{Name: DropLastSetWeight, Change: fmt.Sprintf("setWeight %d (steps[%d]) dropped: %s", w, at, stepsText(dropped)), Rollout: dropped})
	default:
		notes = append(notes, DropLastSetWeight+": the steps set no weight")
	}

	j := rollout.RollbackJump(ro, replicas, version)
	capped := j.StepZeroPods * maxW / max(replicas, 1)
	switch {
	case at < 0:
		notes = append(notes, CapLastSetWeight+": the steps set no weight")
	case j.StepZeroPods == 0:
		notes = append(notes, CapLastSetWeight+": step 0 gives the canary no pod")
	case w <= capped:
		notes = append(notes, fmt.Sprintf("%s: the last setWeight (%d) is already no larger than the %d%% the %d step-0 pods carry", CapLastSetWeight, w, capped, j.StepZeroPods))
	default:
		c := ro.DeepCopy()
		c.Spec.Strategy.Canary.Steps = slices.Clone(steps)
		c.Spec.Strategy.Canary.Steps[at] = v1alpha1.CanaryStep{SetWeight: &capped}
		out = append(out, Remedy{Name: CapLastSetWeight, Change: fmt.Sprintf("setWeight %d (steps[%d]) lowered to %d, the share the %d pods of step 0 carry at %d replicas",
			w, at, capped, j.StepZeroPods, replicas), Rollout: c})
	}

	if ro.Spec.Strategy.Canary.DynamicStableScale {
		notes = append(notes, DynamicStableScale+": the Rollout already sets it")
	} else {
		d := ro.DeepCopy()
		d.Spec.Strategy.Canary.DynamicStableScale = true
		out = append(out, Remedy{Name: DynamicStableScale, Change: "dynamicStableScale: true", Rollout: d})
	}

	if ro.Spec.RollbackWindow == nil {
		notes = append(notes, NoRollbackWindow+": the Rollout has no rollbackWindow")
	} else {
		nw := ro.DeepCopy()
		nw.Spec.RollbackWindow = nil
		out = append(out, Remedy{Name: NoRollbackWindow, Change: "rollbackWindow removed and the analysis made to read the canary's requests only (BF402): the rollback runs the steps", Rollout: nw, RevisionAware: true})
	}

	out = append(out, Remedy{Name: UndoPromoteFull, Change: fmt.Sprintf("as written, and kubectl argo rollouts promote --full %s after the undo", promoteFullAfterUndo),
		Rollout: ro, Commands: []Command{{At: promoteFullAfterUndo, Do: PromoteFull}}})
	return out, notes
}

func stepsText(ro *v1alpha1.Rollout) string {
	var parts []string
	for _, s := range ro.Spec.Strategy.Canary.Steps {
		switch {
		case s.SetWeight != nil:
			parts = append(parts, fmt.Sprintf("setWeight %d", *s.SetWeight))
		case s.Pause != nil && s.Pause.Duration != nil:
			parts = append(parts, "pause "+s.Pause.Duration.String())
		case s.Pause != nil:
			parts = append(parts, "pause")
		default:
			parts = append(parts, "other")
		}
	}
	return fmt.Sprintf("steps %v", parts)
}

// Sweep is what the manifest cannot know, tried case by case: the broken
// version's error rate, the pods' start-up times and the load (multiples of
// Input.RPS).
type Sweep struct {
	ErrorRates []float64
	PodStarts  [][2]time.Duration
	Loads      []float64
}

// Case is one point of the sweep.
type Case struct {
	ErrorRate float64          `json:"brokenErrorRate"`
	PodStart  [2]time.Duration `json:"-"`
	Start     string           `json:"podStart"`
	RPS       float64          `json:"rps"`
}

// Tried is how one remedy did in one case, over the case's horizon.
type Tried struct {
	Remedy          string   `json:"remedy"`
	Outcome         string   `json:"outcome"`
	OfferedRequests float64  `json:"offeredRequests"`
	FailedRequests  float64  `json:"failedRequests"`
	FailedShare     float64  `json:"failedShare"`
	FailedByCause   Failures `json:"failedByCause"`
	// BrokenUntil is when the version rolled back from last got requests;
	// Settled when the run settled (-1: not within the cap).
	BrokenUntil float64 `json:"brokenVersionUntil"`
	Settled     float64 `json:"settledAt"`
}

// CaseResult is one case: every remedy over the same horizon, the time the
// slowest took to settle, and the remedy that lost least.
type CaseResult struct {
	Case    Case    `json:"case"`
	Horizon float64 `json:"horizonSeconds"`
	Tried   []Tried `json:"remedies"`
	Least   string  `json:"leastFailed"`
}

// Comparison is the remedies tried at the flags' values (Base) and over
// the sweep.
type Comparison struct {
	Remedies []Remedy     `json:"remediesTried"`
	Notes    []string     `json:"notes,omitempty"`
	Base     CaseResult   `json:"atTheseInputs"`
	Cases    []CaseResult `json:"sweep"`
	// Wins counts the cases in which each remedy lost least.
	Wins map[string]int `json:"leastFailedIn"`
	// Cap is the longest a run is played.
	Cap float64 `json:"capSeconds"`
}

// Compare plays a rollback within the window once per remedy and case.
// Each run lasts until it settles (at most in.Duration); a case's runs are
// compared over the same horizon, the time the slowest took, a run that
// settled earlier repeating its last second until then (after settling
// nothing changes: all traffic on the target, or, aborted, on the version
// rolled back from).
func Compare(in Input, remedies []Remedy, sw Sweep) (*Comparison, error) {
	if in.Scenario != Rollback {
		return nil, fmt.Errorf("the comparison rolls back within the window: scenario %q is not %q", in.Scenario, Rollback)
	}
	base := Case{ErrorRate: in.BrokenErrorRate, PodStart: in.PodStart, RPS: in.RPS}
	cases := []Case{base}
	for _, e := range sw.ErrorRates {
		for _, ps := range sw.PodStarts {
			for _, l := range sw.Loads {
				cases = append(cases, Case{ErrorRate: e, PodStart: ps, RPS: in.RPS * l})
			}
		}
	}
	for i := range cases {
		cases[i].Start = StartText(cases[i].PodStart)
	}
	type job struct{ c, r int }
	results := make([][]*Timeline, len(cases))
	for i := range results {
		results[i] = make([]*Timeline, len(remedies))
	}
	jobs := make(chan job)
	errs := make(chan error, len(cases)*len(remedies))
	var wg sync.WaitGroup
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				rin := in
				c, rem := cases[j.c], remedies[j.r]
				rin.Rollout, rin.Commands, rin.UntilSettled = rem.Rollout, rem.Commands, true
				rin.BrokenErrorRate, rin.PodStart, rin.RPS = c.ErrorRate, c.PodStart, c.RPS
				if rem.RevisionAware && rin.Analysis != nil {
					a := *rin.Analysis
					a.RevisionAware = true
					rin.Analysis = &a
				}
				res, err := Run(rin)
				if err != nil {
					errs <- fmt.Errorf("%s: %w", rem.Name, err)
					continue
				}
				results[j.c][j.r] = res
			}
		}()
	}
	for c := range cases {
		for r := range remedies {
			jobs <- job{c, r}
		}
	}
	close(jobs)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, err
	}
	cmp := &Comparison{Remedies: remedies, Wins: map[string]int{}, Cap: in.Duration.Seconds()}
	for i, c := range cases {
		cr := judge(c, remedies, results[i])
		if i == 0 {
			cmp.Base = cr
			continue
		}
		cmp.Cases = append(cmp.Cases, cr)
		cmp.Wins[cr.Least]++
	}
	return cmp, nil
}

// judge puts a case's runs on one horizon and finds the one that lost
// least (the earliest to stop serving the broken version on a tie).
func judge(c Case, remedies []Remedy, runs []*Timeline) CaseResult {
	cr := CaseResult{Case: c}
	for _, r := range runs {
		cr.Horizon = max(cr.Horizon, float64(len(r.Timeline)))
	}
	for i, r := range runs {
		t := Tried{Remedy: remedies[i].Name, Outcome: r.Totals.Outcome, OfferedRequests: r.Totals.OfferedRequests,
			FailedRequests: r.Totals.FailedRequests, FailedByCause: r.Totals.FailedByCause,
			BrokenUntil: r.Totals.BrokenUntil, Settled: r.Totals.Settled}
		if rest := cr.Horizon - float64(len(r.Timeline)); rest > 0 && len(r.Timeline) > 0 {
			last := r.Timeline[len(r.Timeline)-1]
			t.OfferedRequests += last.OfferedRps * rest
			t.FailedByCause = t.FailedByCause.plus(last.Failed.times(rest))
			t.FailedRequests = t.FailedByCause.Total()
			if last.BrokenRps > 0 {
				t.BrokenUntil = cr.Horizon
			}
		}
		if t.OfferedRequests > 0 {
			t.FailedShare = t.FailedRequests / t.OfferedRequests
		}
		cr.Tried = append(cr.Tried, t)
	}
	best := 0
	for i, t := range cr.Tried {
		b := cr.Tried[best]
		if t.FailedRequests < b.FailedRequests-0.5 || (t.FailedRequests < b.FailedRequests+0.5 && t.BrokenUntil < b.BrokenUntil) {
			best = i
		}
	}
	cr.Least = cr.Tried[best].Remedy
	return cr
}

// StartText writes a start-up range as the flag takes it.
func StartText(ps [2]time.Duration) string {
	if ps[0] == ps[1] {
		return ps[0].String()
	}
	return ps[0].String() + ".." + ps[1].String()
}
