package restarts

import (
	"backfire.dev/backfire/internal/evidence"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/model/probe"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/rules/diagnosis"
)

// BF501 restart-period-matches-probe.
var BF501 = rules.Register(&rules.Rule{
	ID: "BF501", Slug: "restart-period-matches-probe", Severity: finding.Error,
	Summary:  "diagnose: a container's restarts come at its liveness or startup probe's arithmetic (D + F x P): the probe is the killer",
	Kinds:    podKind,
	Check:    &diagnosis.Check{Run: bf501},
	Evidence: []any{BF501Evidence{}},
})

// Candidate is a probe's prediction of the restart period.
type Candidate struct {
	Probe   string // "liveness", "startup"
	Timing  probe.Timing
	Run     int // seconds from start to the kill of a container that never passes
	Formula string
	// Wait is the mean back-off wait per cycle at that run length.
	Wait int
	// Low and High bound an interval that the probe explains: the
	// earliest kill (D + (F-1) x P: a refused probe fails at once, a slow
	// one adds T) up to the kill plus the grace period and one period for
	// the restart.
	Low, High int
}

func (c Candidate) Cycle() int { return c.Run + c.Wait }

// CandidatesOf predicts the restart period of container c from each of its
// killing probes.
func CandidatesOf(c *corev1.Container, podGrace *int64, cycles int) []Candidate {
	var out []Candidate
	for _, p := range []struct {
		name string
		pr   *corev1.Probe
	}{{"liveness", c.LivenessProbe}, {"startup", c.StartupProbe}} {
		if p.pr == nil {
			continue
		}
		t := probe.TimingOf(p.pr, podGrace)
		run := t.NeverHealthyKill()
		wait := meanWait(run, max(cycles, 2))
		out = append(out, Candidate{Probe: p.name, Timing: t, Run: run, Formula: t.NeverHealthyKillFormula(), Wait: wait,
			Low:  t.InitialDelay.N + (t.Failure.N-1)*t.Period.N + wait,
			High: run + t.Grace.N + t.Period.N + wait})
	}
	return out
}

// meanWait is the mean back-off wait of a container killed by its probe
// run seconds after each start, over n cycles (the kubelet's schedule).
func meanWait(run, n int) int {
	if probe.NeverWaits(run) {
		return 0
	}
	sum := 0
	for _, r := range probe.RestartSchedule(run, true, n) {
		sum += r.Wait
	}
	return sum / n
}

func bf501(p *diagnosis.Pass) {
	pod := p.Obs.Pod
	for _, c := range containers(pod) {
		h := historyOf(p.Obs, c.Name)
		iv := h.Intervals()
		cands := CandidatesOf(&c, pod.Pod.Spec.TerminationGracePeriodSeconds, max(h.Restarts, iv.N+1))
		path := pod.StatusPath(c.Name) + ".restartCount"
		switch {
		case h.Restarts == 0 && iv.N == 0:
			continue // nothing restarted: nothing to explain
		case len(cands) == 0:
			p.Note(fmt.Sprintf("container %s restarted %d times but has no liveness or startup probe: no probe kills it, BF501 has nothing to compare", c.Name, h.Restarts))
			continue
		case iv.N == 0 && h.LastRun == 0:
			p.Note(fmt.Sprintf("container %s restarted %d times, but no restart times were found (no Killing events, no log with timestamps, no lastState): no evidence for a period", c.Name, h.Restarts))
			continue
		}
		observed, what := iv.Median, "median interval"
		if iv.MeanOnly {
			what = "mean interval"
		}
		if iv.N == 0 {
			observed, what = h.LastRun, "last run"
		}
		var match *Candidate
		for i := range cands {
			cd := &cands[i]
			low, high := cd.Low, cd.High
			if iv.N == 0 { // a run, not a cycle: no back-off wait in it
				low, high = low-cd.Wait, high-cd.Wait
			}
			if s := int(observed.Seconds()); s >= low && s <= high {
				match = cd
				break
			}
		}
		ev := BF501Evidence{
			Restarts:        int32(h.Restarts),
			ObservedSeconds: int(observed.Seconds()),
			ObservedMeasure: what,
		}
		if iv.N > 0 {
			n, mean := iv.N, int(iv.Mean.Seconds())
			ev.Intervals, ev.MeanSeconds = &n, &mean
			if !iv.MeanOnly {
				lo, hi := int(iv.Min.Seconds()), int(iv.Max.Seconds())
				ev.MinSeconds, ev.MaxSeconds = &lo, &hi
			}
		}
		mech := observedLines(h, iv)
		if match == nil {
			c0 := cands[0]
			ev.PredictedSeconds = c0.Cycle()
			mech = append(mech, predictedLines(c0)...)
			mech = append(mech, fmt.Sprintf("the %s of %s is outside %d-%d s, the range a %s kill explains: the period is not this probe's arithmetic", what, seconds(observed), c0.Low, c0.High, c0.Probe))
			earliest := c0.Low - c0.Wait // a run, without the back-off wait
			switch {
			case h.LastRun > 0 && int(h.LastRun.Seconds()) < earliest:
				mech = append(mech, fmt.Sprintf("the last run lasted %s, less than the %d s the %s probe needs to kill (D + (F-1) x P): something else stops it (see its exit code, BF502)", secs(h.LastRun), earliest, c0.Probe))
			case int(observed.Seconds()) < c0.Low:
				mech = append(mech, fmt.Sprintf("the container stops sooner than its %s probe could kill it: something else stops it (see its exit code, BF502)", c0.Probe))
			default:
				mech = append(mech, fmt.Sprintf("the container lives longer than a container that never passes: if the %s probe kills it, it passed first and failed later, which the period alone cannot show", c0.Probe))
			}
			if _, st := pod.Container(c.Name); st != nil && st.LastTerminationState.Terminated != nil {
				t := st.LastTerminationState.Terminated
				mech = append(mech, fmt.Sprintf("the last stop: exit %d, reason %q (what that rules out: BF502)", t.ExitCode, t.Reason))
			}
			p.Report(finding.Finding{Severity: finding.Info, Container: c.Name, Path: path,
				Message: fmt.Sprintf("%d restarts, %s %s: does not match the %s probe's %s = %d s; the probe is not shown to be the killer",
					h.Restarts, what, seconds(observed), c0.Probe, c0.Formula, c0.Run),
				Mechanism: mech, Evidence: evidence.Map(ev)})
			continue
		}
		ev.PredictedSeconds, ev.Formula, ev.Probe = match.Cycle(), match.Formula, match.Probe
		mech = append(mech, predictedLines(*match)...)
		if iv.N > 0 && !iv.MeanOnly {
			in := inRange(h.Starts, match.Low, match.High)
			mech = append(mech, fmt.Sprintf("%d of %d intervals lie within %d-%d s (the kill, plus shutdown within the grace period and one period to start again)", in, iv.N, match.Low, match.High))
		}
		if h.Unhealthy > 0 && h.Killed != nil && h.UnhealthyKind == match.Probe {
			mech = append(mech, fmt.Sprintf("Unhealthy (%s) events %d for %d kills: about failureThreshold %d failed probes before each kill", match.Probe, h.Unhealthy, h.Killed.Count, match.Timing.Failure.N))
		}
		mech = append(mech, fmt.Sprintf("so the container never outlived its %s probe: it was killed at the same point of every run, before the probe ever passed", match.Probe))
		p.Report(finding.Finding{Container: c.Name, Path: path,
			Message: fmt.Sprintf("%d restarts, %s, match the %s probe's %s = %d s = %.1f min: the probe is the killer",
				h.Restarts, observedPhrase(iv, h), match.Probe, match.Formula, match.Run, float64(match.Run)/60),
			Mechanism: mech, Evidence: evidence.Map(ev)})
	}
}

func observedLines(h History, iv Intervals) []string {
	var out []string
	switch {
	case iv.N > 0 && !iv.MeanOnly:
		out = append(out, fmt.Sprintf("observed: %d starts from %s to %s (%s); %d intervals: median %s, min %s, max %s, mean %s",
			len(h.Starts), clock(h.Starts[0]), clock(h.Starts[len(h.Starts)-1]), h.Source, iv.N, seconds(iv.Median), seconds(iv.Min), seconds(iv.Max), seconds(iv.Mean)))
	case iv.MeanOnly:
		out = append(out, fmt.Sprintf("observed: no time of each restart, but the %s event counts %d from %s to %s: mean interval %s",
			iv.From.Reason, iv.From.Count, clock(iv.From.First), clock(iv.From.Last), seconds(iv.Mean)))
	default:
		out = append(out, fmt.Sprintf("observed: only the last run is known: it lasted %s (lastState.terminated startedAt to finishedAt)", seconds(h.LastRun)))
	}
	if h.Killed != nil && iv.From != h.Killed {
		out = append(out, fmt.Sprintf("events: Killing x%d (%q) from %s to %s",
			h.Killed.Count, h.Killed.Message, clock(h.Killed.First), clock(h.Killed.Last)))
	}
	if h.Killed == nil && (h.Started != nil || len(h.Starts) > 0) {
		out = append(out, "events: no Killing event: no probe is recorded killing this container")
	}
	if h.BackOff > 0 {
		out = append(out, fmt.Sprintf("events: BackOff x%d: the kubelet held restarts back, as it does for a container that keeps stopping soon after it starts", h.BackOff))
	}
	return out
}

func predictedLines(c Candidate) []string {
	t := c.Timing
	out := []string{fmt.Sprintf("predicted: a container that never passes its %s probe is killed D + F x P = %s = %d s (%.1f min) after it starts (%s, %s, %s), then stopped within the grace period (%d s)",
		c.Probe, c.Formula, c.Run, float64(c.Run)/60, t.InitialDelay.Phrase("initialDelaySeconds"), t.Failure.Phrase("failureThreshold"), t.Period.Phrase("periodSeconds"), t.Grace.N)}
	if probe.NeverWaits(c.Run) {
		out = append(out, fmt.Sprintf("back-off: killed after %d s of run (at least %d s), the kubelet restarts it at once every time: no growing back-off, the restart count just climbs", c.Run, probe.BackoffMax))
	} else {
		out = append(out, fmt.Sprintf("back-off: killed after %d s of run, the kubelet waits %d s on average before each restart (10 s doubling to %d s): a cycle of %d s", c.Run, c.Wait, probe.BackoffMax, c.Cycle()))
	}
	return out
}

func inRange(starts []time.Time, low, high int) int {
	n := 0
	for i := 1; i < len(starts); i++ {
		if s := int(starts[i].Sub(starts[i-1]).Seconds()); s >= low && s <= high {
			n++
		}
	}
	return n
}

// observedPhrase says how often the container restarted, by the best
// measure there is: "one every 5.7 min (median 344 s, mean 344 s over 15
// intervals)".
func observedPhrase(iv Intervals, h History) string {
	switch {
	case iv.MeanOnly:
		return fmt.Sprintf("one every %.1f min (mean %s over the %s event's count of %d)", minutes(iv.Mean), secs(iv.Mean), iv.From.Reason, iv.From.Count)
	case iv.N > 0:
		return fmt.Sprintf("one every %.1f min (median %s, mean %s over %d intervals)", minutes(iv.Median), secs(iv.Median), secs(iv.Mean), iv.N)
	}
	return fmt.Sprintf("last run %s", secs(h.LastRun))
}
