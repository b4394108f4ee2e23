package restarts

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"backfire.dev/backfire/internal/classify"
	"backfire.dev/backfire/internal/evidence"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/model/probe"
	"backfire.dev/backfire/internal/observe"
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
	}{{"startup", c.StartupProbe}, {"liveness", c.LivenessProbe}} {
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
		sp := specPath(pod, c.Name)
		restartsKnown := pod.Knows(path)
		probesKnown := pod.Knows(sp+".livenessProbe") || pod.Knows(sp+".startupProbe")
		killed := h.KilledBy["liveness"] + h.KilledBy["startup"]
		failed := len(h.Probes["liveness"]) + len(h.Probes["startup"])
		if u := cannotRun(h, "startup", "liveness"); u != nil {
			probeCannotRun(p, c, h, cands, u, path)
			continue
		}
		if e, n, ok := ranOnStopped(h); ok && killed == 0 {
			p.Report(finding.Finding{Severity: finding.Info, Container: c.Name, Path: path, File: e.File, Line: e.Line,
				Message: fmt.Sprintf("%d probe errors say the container was not running: the probe ran after it stopped; the stop is the cause to find, not the probe", n),
				Mechanism: []string{"events: " + quoteEvent(e),
					"an exec probe runs in the container: when the container has already stopped, the runtime refuses it and the kubelet records the error",
					"what stopped it is in the previous run's Last State and log (kubectl describe pod; kubectl logs --previous)"},
				Evidence: evidence.Map(BF501Evidence{Restarts: int32(h.Restarts), Probe: "none"})})
			continue
		}
		if readinessOnly(p, c, h, restartsKnown, path) {
			continue
		}
		switch {
		case h.Restarts == 0 && iv.N == 0 && killed == 0 && failed == 0 && h.Kills == 0 && (restartsKnown || h.LastRunFrom != "lastState") &&
			(restartsKnown || len(cands) == 0):
			continue // nothing restarted: nothing to explain
		case !restartsKnown && len(cands) > 0 && iv.N == 0 && h.LastRun == 0:
			// A probe's line without a restart count (a Liveness line
			// pasted alone): its budget is the figure to measure against.
			figureToCompare(p, c, h, cands, restartsKnown, path)
			continue
		case len(cands) == 0 && !probesKnown:
			byTheKubeletsWord(p, c, h, restartsKnown, path)
			continue
		case len(cands) == 0:
			p.Note(fmt.Sprintf("container %s restarted %d times but has no liveness or startup probe: no probe kills it, BF501 has nothing to compare", c.Name, h.Restarts))
			continue
		case iv.N == 0 && h.LastRun == 0:
			figureToCompare(p, c, h, cands, restartsKnown, path)
			continue
		}
		observed, what := iv.Median, "median interval"
		if iv.MeanOnly {
			what = "mean interval"
		}
		if iv.N == 0 {
			observed, what = h.LastRun, "last run"
		}
		lo, hi := iv.Range(observed)
		if iv.N == 0 {
			lo, hi = observed, observed
		}
		var match, overlap *Candidate
		for i := range cands {
			cd := &cands[i]
			low, high := cd.Low, cd.High
			if iv.N == 0 { // a run, not a cycle: no back-off wait in it
				low, high = low-cd.Wait, high-cd.Wait
			}
			if l, h := int(lo.Seconds()), int(hi.Seconds()); l >= low && h <= high {
				match = cd
				break
			} else if h >= low && l <= high && overlap == nil {
				overlap = cd
			}
		}
		if match == nil && overlap != nil {
			tooCoarse(p, c, h, iv, *overlap, observed, lo, hi, what, path)
			continue
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
		// One quantity against its own prediction: a run (start to
		// kill, D + F x P) for the last run, a cycle (the run plus the
		// back-off wait) for an interval between restarts.
		runOnly := iv.N == 0
		if match == nil {
			c0 := cands[0]
			low, high, predicted, quantity := c0.Low, c0.High, c0.Cycle(), "a restart cycle"
			if runOnly {
				low, high, predicted, quantity = c0.Low-c0.Wait, c0.High-c0.Wait, c0.Run, "a run"
			}
			ev.PredictedSeconds = predicted
			mech = append(mech, predictedLines(c0)...)
			mech = append(mech, graceNote(p, c0)...)
			mech = append(mech, fmt.Sprintf("the %s of %s is outside %d-%d s, %s that a %s kill explains: the period is not this probe's arithmetic", what, seconds(observed), low, high, quantity, c0.Probe))
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
				Message: fmt.Sprintf("%s, %s %s: does not match the %s probe's %s = %d s; the probe is not shown to be the killer",
					h.count(), what, seconds(observed), c0.Probe, c0.Formula, c0.Run),
				Mechanism: mech, Evidence: evidence.Map(ev)})
			continue
		}
		ev.PredictedSeconds, ev.Formula, ev.Probe = match.Cycle(), match.Formula, match.Probe
		if runOnly {
			ev.PredictedSeconds = match.Run
		}
		mech = append(mech, predictedLines(*match)...)
		mech = append(mech, graceNote(p, *match)...)
		if iv.N > 0 && !iv.MeanOnly {
			in := inRange(h.Starts, match.Low, match.High)
			mech = append(mech, fmt.Sprintf("%d of %d intervals lie within %d-%d s (the kill, plus shutdown within the grace period and one period to start again)", in, iv.N, match.Low, match.High))
		}
		if h.Unhealthy > 0 && h.Killed != nil && h.UnhealthyKind == match.Probe {
			mech = append(mech, fmt.Sprintf("Unhealthy (%s) events %d for %d kills: about failureThreshold %d failed probes before each kill", match.Probe, h.Unhealthy, h.Killed.Count, match.Timing.Failure.N))
		}
		mech = append(mech, fmt.Sprintf("so the container never outlived its %s probe: it was killed at the same point of every run, before the probe ever passed", match.Probe))
		if note := startupRecoveryNote(&c, *match); note != "" {
			mech = append(mech, note)
		}
		p.Report(finding.Finding{Container: c.Name, Path: path,
			Message: fmt.Sprintf("%s, %s, match the %s probe's %s = %d s = %.1f min: the probe is the killer",
				h.count(), observedPhrase(iv, h), match.Probe, match.Formula, match.Run, float64(match.Run)/60),
			Mechanism: mech, Evidence: evidence.Map(ev)})
	}
}

// startupRecoveryNote says what a startup probe kill on a database means:
// a probe that fails while the server recovers, killed at the budget, is a
// crash recovery that starts over every run (BF105 in a scan), which only
// a budget that covers the recovery ends.
func startupRecoveryNote(c *corev1.Container, m Candidate) string {
	if m.Probe != "startup" || c.StartupProbe == nil {
		return ""
	}
	v := classify.Container("Pod", c)
	if !v.DatabaseLike || v.Server.NoCrashRecovery || !classify.Probe("Pod", c, c.StartupProbe, v).FailsDuringRecovery(v) {
		return ""
	}
	return fmt.Sprintf("the startup probe fails while %s recovers (%s), so a crash recovery longer than %d s is killed before it ends and begins again on the next start: a startup budget below the recovery (BF105 when the manifest is scanned). Such a loop starts with a crash (an OOM kill, a node failure, a stop that ended in SIGKILL: BF601) or a start that is slow for another reason; only a budget that covers the recovery ends it",
		v.Server.Name, v.Server.Recovery, m.Run)
}

// specPath is the field path of a container's spec.
func specPath(p *observe.Pod, name string) string {
	for i, c := range p.Pod.Spec.Containers {
		if c.Name == name {
			return fmt.Sprintf("spec.containers[%d]", i)
		}
	}
	for i, c := range p.Pod.Spec.InitContainers {
		if c.Name == name {
			return fmt.Sprintf("spec.initContainers[%d]", i)
		}
	}
	return "spec"
}

func observedLines(h History, iv Intervals) []string {
	var out []string
	switch {
	case iv.N > 0 && !iv.MeanOnly:
		out = append(out, fmt.Sprintf("observed: %d starts from %s to %s (%s); %d intervals: median %s, min %s, max %s, mean %s%s",
			len(h.Starts), h.clock(h.Starts[0]), h.clock(h.Starts[len(h.Starts)-1]), h.Source, iv.N, seconds(iv.Median), seconds(iv.Min), seconds(iv.Max), seconds(iv.Mean), slackNote(iv)))
	case iv.MeanOnly:
		out = append(out, fmt.Sprintf("observed: no time of each restart, but the %s event counts %d %s: mean interval %s%s",
			iv.From.Reason, iv.From.Count, iv.From.When(), seconds(iv.Mean), slackNote(iv)))
	default:
		out = append(out, fmt.Sprintf("observed: only the last run is known: it lasted %s (%s.terminated startedAt to finishedAt)", seconds(h.LastRun), h.LastRunFrom))
	}
	if h.Killed != nil && iv.From != h.Killed {
		out = append(out, fmt.Sprintf("events: Killing x%d (%q) %s",
			h.Killed.Count, h.Killed.Message, h.Killed.When()))
	}
	if h.Killed == nil && h.KilledBy["liveness"]+h.KilledBy["startup"]+h.Kills == 0 && (h.Started != nil || len(h.Starts) > 0) {
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
