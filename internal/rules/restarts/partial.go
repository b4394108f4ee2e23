package restarts

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"backfire.dev/backfire/internal/evidence"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/rules/diagnosis"
)

// BF501 on partial evidence: what a capture that lacks the restart times,
// or the probe's settings, still shows, and what to measure next.

// measure says how to get the restart times a capture lacks.
func measure(pod string) string {
	if pod == "" || strings.HasPrefix(pod, "(") {
		pod = "POD"
	}
	return fmt.Sprintf("to measure: the Last State's Started and Finished (kubectl describe pod %s), the Killing and Started events' times (kubectl get events --field-selector involvedObject.name=%s -o json), or the server's log with timestamps (--logs)", pod, pod)
}

// figureToCompare: the probe is known but no restart time is. The probe's
// arithmetic is the figure a measured period is compared with.
func figureToCompare(p *diagnosis.Pass, c corev1.Container, h History, cands []Candidate, restartsKnown bool, path string) {
	pod := p.Obs.Pod
	seen := "no restart times"
	if restartsKnown {
		seen = fmt.Sprintf("%d restarts but no restart times", h.Restarts)
	}
	c0 := cands[0]
	mech := []string{fmt.Sprintf("observed: %s (no Killing or Started events with times, no Last State with Started and Finished, no log with timestamps)", seen)}
	for _, cd := range cands {
		mech = append(mech, predictedLines(cd)...)
		mech = append(mech, fmt.Sprintf("a restart every %d-%d s is the %s probe's arithmetic (the kill, then shutdown within the grace period and one period to start again); a shorter or longer one is not", cd.Low, cd.High, cd.Probe))
	}
	for _, k := range []string{"startup", "liveness"} {
		if n := h.KilledBy[k]; n > 0 {
			mech = append(mech, fmt.Sprintf("the kubelet's Killing events blame the %s probe %s: it is the killer; its timing is what the measure tells", k, times(n)))
		}
		failures := 0
		for _, e := range h.Probes[k] {
			failures += e.Count
		}
		if failures > 0 {
			mech = append(mech, fmt.Sprintf("the %s probe failed %s (Unhealthy events, %s): a kill follows failureThreshold failures in a row", k, times(failures), quoteEvent(h.Probes[k][0])))
		}
	}
	mech = append(mech, graceNote(p, c0)...)
	mech = append(mech, measure(pod.Name))
	p.Report(finding.Finding{Severity: finding.Info, Container: c.Name, Path: path,
		Message: fmt.Sprintf("%s in the capture: a container that never passes its %s probe is killed %s = %d s (%.1f min) after each start, a cycle of %d s with the back-off; compare the time between restarts with it",
			seen, c0.Probe, c0.Formula, c0.Run, float64(c0.Run)/60, c0.Cycle()),
		Mechanism: mech,
		Evidence:  evidence.Map(BF501Evidence{Restarts: int32(h.Restarts), ObservedMeasure: "none", PredictedSeconds: c0.Cycle(), Formula: c0.Formula, Probe: c0.Probe})})
}

// graceNote says when the grace period is the default because kubectl
// describe does not print terminationGracePeriodSeconds.
func graceNote(p *diagnosis.Pass, c Candidate) []string {
	if p.Obs.Pod.Knows("spec.terminationGracePeriodSeconds") || c.Timing.Grace.Set {
		return nil
	}
	return []string{fmt.Sprintf("the grace period is taken as the default %d s: kubectl describe pod does not print terminationGracePeriodSeconds", c.Timing.Grace.N)}
}

// tooCoarse: the printed ages leave the period straddling the probe's range.
func tooCoarse(p *diagnosis.Pass, c corev1.Container, h History, iv Intervals, cd Candidate, observed, lo, hi time.Duration, what, path string) {
	mech := observedLines(h, iv)
	mech = append(mech, predictedLines(cd)...)
	mech = append(mech, fmt.Sprintf("the %s lies between %s and %s: the range a %s kill explains, %d-%d s, holds part of it only", what, secs(lo), secs(hi), cd.Probe, cd.Low, cd.High))
	mech = append(mech, measure(p.Obs.Pod.Name))
	p.Report(finding.Finding{Severity: finding.Info, Container: c.Name, Path: path,
		Message: fmt.Sprintf("%s, %s %s, too coarse to tell against the %s probe's %s = %d s: the printed ages are truncated",
			h.count(), what, seconds(observed), cd.Probe, cd.Formula, cd.Run),
		Mechanism: mech,
		Evidence:  evidence.Map(BF501Evidence{Restarts: int32(h.Restarts), ObservedSeconds: int(observed.Seconds()), ObservedMeasure: what, PredictedSeconds: cd.Cycle()})})
}

// byTheKubeletsWord: the capture lacks the probe's settings, but its
// events say which probe failed or killed.
func byTheKubeletsWord(p *diagnosis.Pass, c corev1.Container, h History, restartsKnown bool, path string) {
	kind, kills := "", 0
	for _, k := range []string{"startup", "liveness"} {
		if n := h.KilledBy[k]; n > kills {
			kind, kills = k, n
		}
	}
	failures, fkind := 0, ""
	for _, k := range []string{"startup", "liveness"} {
		n := 0
		for _, e := range h.Probes[k] {
			n += e.Count
		}
		if n > failures {
			failures, fkind = n, k
		}
	}
	lacks := "the capture does not show the probe's settings (the Liveness and Startup lines of kubectl describe pod: delay= timeout= period= #failure=): with them, D + F x P is how long a container that never passes lives, to set against how long the server takes to start or recover"
	switch {
	case kills > 0:
		mech := []string{}
		for _, e := range p.Obs.EventsOf(c.Name, "Killing") {
			if probeKind(e.Message) == kind {
				mech = append(mech, "events: "+quoteEvent(e))
			}
		}
		for _, e := range h.Probes[kind] {
			mech = append(mech, "events: "+quoteEvent(e))
			if why := refusal(e.Message); why != "" {
				mech = append(mech, why)
			}
		}
		mech = append(mech, lacks)
		if restartsKnown {
			mech = append(mech, fmt.Sprintf("Restart Count %d", h.Restarts))
		}
		sev := finding.Warning
		p.Report(finding.Finding{Severity: sev, Container: c.Name, Path: path, File: firstEventFile(p, c.Name, "Killing"), Line: firstEventLine(p, c.Name, "Killing"),
			Message:   fmt.Sprintf("the kubelet killed container %s %s for failing its %s probe (Killing events): the probe is the killer; whether its timing is too tight, this capture cannot show", c.Name, times(kills), kind),
			Mechanism: mech, Evidence: evidence.Map(BF501Evidence{Restarts: int32(h.Restarts), ObservedMeasure: "Killing events", Probe: kind})})
	case failures > 0:
		mech := []string{}
		for _, e := range h.Probes[fkind] {
			mech = append(mech, "events: "+quoteEvent(e))
			if why := refusal(e.Message); why != "" {
				mech = append(mech, why)
			}
		}
		mech = append(mech, fmt.Sprintf("the kubelet kills the container once the %s probe has failed failureThreshold times in a row (Kubernetes' default is 3); the capture shows no Killing event", fkind))
		if restartsKnown {
			mech = append(mech, fmt.Sprintf("Restart Count %d", h.Restarts))
		} else {
			mech = append(mech, "the capture does not show the Restart Count")
		}
		mech = append(mech, lacks)
		p.Report(finding.Finding{Severity: finding.Info, Container: c.Name, Path: path, File: h.Probes[fkind][0].File, Line: h.Probes[fkind][0].Line,
			Message:   fmt.Sprintf("the %s probe failed %s (Unhealthy events), and no kill is in the capture: a kill follows failureThreshold failures in a row", fkind, times(failures)),
			Mechanism: mech, Evidence: evidence.Map(BF501Evidence{Restarts: int32(h.Restarts), ObservedMeasure: "Unhealthy events", Probe: fkind})})
	case h.Kills > 0:
		mech := []string{}
		for _, e := range p.Obs.EventsOf(c.Name, "Killing") {
			if probeKind(e.Message) == "" && !specChange(e.Message) {
				mech = append(mech, "events: "+quoteEvent(e))
			}
		}
		if iv := h.Intervals(); iv.N > 0 {
			mech = append(mech, fmt.Sprintf("%d kills, %d intervals: median %s", iv.N+1, iv.N, seconds(iv.Median)))
		}
		mech = append(mech, "the Killing events do not say why (kubectl before 1.2 recorded only the container's id): a liveness probe, a delete or a spec change all read so", lacks)
		p.Report(finding.Finding{Severity: finding.Info, Container: c.Name, Path: path, File: firstEventFile(p, c.Name, "Killing"), Line: firstEventLine(p, c.Name, "Killing"),
			Message:   fmt.Sprintf("the kubelet killed container %s %s, and the capture does not say why", c.Name, times(h.Kills)),
			Mechanism: mech, Evidence: evidence.Map(BF501Evidence{Restarts: int32(h.Restarts), ObservedMeasure: "Killing events"})})
	case h.Restarts > 0:
		p.Note(fmt.Sprintf("container %s restarted %d times; %s", c.Name, h.Restarts, lacks))
	}
}

// refusal explains a probe's failure message when it is the plain
// "nothing listens": a server that has not opened its port (starting, or
// recovering) answers a TCP or HTTP probe so.
func refusal(msg string) string {
	switch {
	case strings.Contains(msg, "connection refused"):
		return "connection refused: nothing listened on the probe's port yet (a server still starting or recovering keeps it closed)"
	case strings.Contains(msg, "command \"") && strings.Contains(msg, "timed out"):
		return "timed out: the probe's command did not finish within timeoutSeconds (the kubelet's CRI client, remote_runtime.go ExecSync: \"command %q timed out\")"
	case strings.Contains(msg, "Client.Timeout") || strings.Contains(msg, "deadline exceeded") || strings.Contains(msg, "timed out") || strings.Contains(msg, "Timed out"):
		return "timed out: the server did not answer within timeoutSeconds"
	case strings.Contains(msg, "statuscode: 5"):
		return "an HTTP 5xx: the server answered, and said it is not healthy"
	case strings.Contains(msg, "statuscode: 401") || strings.Contains(msg, "statuscode: 403"):
		return "an HTTP 401 or 403: the server answered and refused the probe's request (the kubelet sends no credentials): the probe fails while the server may be serving; the probe's path or the server's authentication is the fix, not its timing"
	}
	return ""
}

func firstEventLine(p *diagnosis.Pass, container string, reasons ...string) int {
	for _, e := range p.Obs.EventsOf(container, reasons...) {
		return e.Line
	}
	return 0
}

func firstEventFile(p *diagnosis.Pass, container string, reasons ...string) string {
	for _, e := range p.Obs.EventsOf(container, reasons...) {
		if e.Line > 0 {
			return e.File
		}
	}
	return ""
}

// readinessOnly says so when a capture shows readiness failures and no
// liveness or startup ones: the kubelet never restarts a container for a
// failing readiness probe (k8s.io/kubernetes pkg/kubelet/kuberuntime
// kuberuntime_manager.go computePodActions kills only on the liveness and
// startup results; readiness only sets the container's Ready condition).
// It returns true when nothing else is left to say.
func readinessOnly(p *diagnosis.Pass, c corev1.Container, h History, restartsKnown bool, path string) bool {
	pod := p.Obs.Pod
	onlyReadinessSpec := c.ReadinessProbe != nil && c.LivenessProbe == nil && c.StartupProbe == nil &&
		pod.Knows(specPath(pod, c.Name)+".livenessProbe") && h.Restarts > 0
	failures := 0
	for _, e := range h.Probes["readiness"] {
		failures += e.Count
	}
	if (failures == 0 || len(h.Probes["liveness"])+len(h.Probes["startup"]) > 0 || h.KilledBy["liveness"]+h.KilledBy["startup"] > 0) && !onlyReadinessSpec {
		return false
	}
	mech := []string{}
	for _, e := range h.Probes["readiness"] {
		mech = append(mech, "events: "+quoteEvent(e))
		if why := refusal(e.Message); why != "" {
			mech = append(mech, why)
		}
	}
	if u := cannotRun(h, "readiness"); u != nil {
		what := "its command"
		if u.Command != "" {
			what = fmt.Sprintf("its command %q", u.Command)
		}
		mech = append(mech, fmt.Sprintf("the readiness probe cannot run: %s is not in the image or cannot be executed, so the container is never Ready while it stays so (the probe's command, or the image, is the fix)", what))
	}
	mech = append(mech, "the kubelet restarts a container only when its liveness or startup probe fails (pkg/kubelet/kuberuntime computePodActions); a failing readiness probe marks it not Ready, which takes the pod out of its Services' endpoints, and nothing more")
	msg := fmt.Sprintf("the readiness probe failed %s: a readiness probe never restarts a container", times(failures))
	switch {
	case h.Restarts > 0:
		mech = append(mech, fmt.Sprintf("the %d restarts come from something else: the exit code (BF502) and the previous run's log say what", h.Restarts))
		if failures == 0 {
			msg = fmt.Sprintf("%d restarts, and the only probe is a readiness probe, which never restarts a container", h.Restarts)
		} else {
			msg += fmt.Sprintf("; the %d restarts come from something else", h.Restarts)
		}
	case restartsKnown:
		mech = append(mech, "Restart Count 0: nothing restarted it")
	default:
		mech = append(mech, "the capture does not show the Restart Count; no Killing event is in it")
	}
	f := finding.Finding{Severity: finding.Info, Container: c.Name, Path: path, Message: msg, Mechanism: mech,
		Evidence: evidence.Map(BF501Evidence{Restarts: int32(h.Restarts), ObservedMeasure: "Unhealthy events", Probe: "readiness"})}
	if len(h.Probes["readiness"]) > 0 {
		f.File, f.Line = h.Probes["readiness"][0].File, h.Probes["readiness"][0].Line
	}
	p.Report(f)
	return h.Restarts == 0 || failures == 0
}

// probeCannotRun: the probe's command is not in the image, or cannot be
// executed: every probe fails, so the probe kills on a schedule that says
// nothing about the server.
func probeCannotRun(p *diagnosis.Pass, c corev1.Container, h History, cands []Candidate, u *unrunnable, path string) {
	what := "its command"
	if u.Command != "" {
		what = fmt.Sprintf("its command %q", u.Command)
	}
	mech := []string{"events: " + quoteEvent(u.Event)}
	if u.Shell {
		mech = append(mech, fmt.Sprintf("the probe's shell could not run %s (%s): the command is not in the image's PATH, or not executable; the shell exits 127 or 126 and the probe fails", what, strings.TrimSpace(shellCannotRun.FindString(u.Event.Message))),
			"an exec probe fails on any non-zero exit (pkg/probe/exec), so this probe fails every time, whatever the server does")
	} else {
		mech = append(mech, fmt.Sprintf("the container runtime could not run %s in the container (%s)", what, cannotExec.FindString(u.Event.Message)))
		if u.Failed {
			mech = append(mech, "the runtime reported it as the command's failure (\"probe failed\"), which the kubelet counts: this probe fails every time, whatever the server does")
		}
	}
	if strings.Contains(u.Command, " ") {
		mech = append(mech, "the command has spaces in one element: exec runs it as a single file name, not through a shell (write it as [\"sh\", \"-c\", \"...\"], or as separate elements)")
	}
	if !u.Failed {
		// The kubelet's worker discards a probe that errored: it neither
		// fails nor passes (k8s.io/kubernetes pkg/kubelet/prober
		// worker.go doProbe: "Prober error, throw away the result";
		// kubernetes/kubernetes#106682: no restart).
		mech = append(mech, "the events say \"probe errored\": the kubelet throws an errored probe's result away (pkg/kubelet/prober worker.go doProbe: \"Prober error, throw away the result\"; kubernetes/kubernetes#106682), so this probe never counts a failure: it does not kill the container, and it does not guard it either")
		if n := h.KilledBy[u.Kind]; n > 0 {
			mech = append(mech, fmt.Sprintf("the Killing events blame the %s probe %s, which its errors alone cannot do: it also failed at other times (a \"probe failed\" event), or the events are of another container", u.Kind, times(n)))
		} else if h.Restarts > 0 {
			mech = append(mech, fmt.Sprintf("the %d restarts come from something else: the exit code (BF502) and the previous run's log say what", h.Restarts))
		}
		mech = append(mech, "the fix is the probe's command, or the image: until then the container has no working "+u.Kind+" probe")
		p.Report(finding.Finding{Severity: finding.Warning, Container: c.Name, Path: path, File: u.Event.File, Line: u.Event.Line,
			Message:   fmt.Sprintf("the %s probe cannot run: %s is not in the image or cannot be executed; the kubelet discards a probe that errors, so this probe neither kills nor guards the container", u.Kind, what),
			Mechanism: mech, Evidence: evidence.Map(BF501Evidence{Restarts: int32(h.Restarts), ObservedMeasure: "Unhealthy events", Probe: u.Kind})})
		return
	}
	for _, cd := range cands {
		if cd.Probe == u.Kind {
			mech = append(mech, fmt.Sprintf("so the container is killed %s = %d s after every start: that period is the probe's arithmetic and says nothing about the server", cd.Formula, cd.Run))
		}
	}
	if n := h.KilledBy[u.Kind]; n > 0 {
		mech = append(mech, fmt.Sprintf("the kubelet's Killing events blame the %s probe %s", u.Kind, times(n)))
	} else if h.Restarts > 0 {
		mech = append(mech, fmt.Sprintf("Restart Count %d", h.Restarts))
	}
	mech = append(mech, "the fix is the probe's command, or the image; its timing is not the cause")
	p.Report(finding.Finding{Severity: finding.Error, Container: c.Name, Path: path, File: u.Event.File, Line: u.Event.Line,
		Message:   fmt.Sprintf("the %s probe cannot run: %s is not in the image or cannot be executed, so every probe fails and the kubelet kills the container on the probe's schedule; the probe's timing is ruled out", u.Kind, what),
		Mechanism: mech, Evidence: evidence.Map(BF501Evidence{Restarts: int32(h.Restarts), ObservedMeasure: "Unhealthy events", Probe: u.Kind})})
}

// times is "1 time", "3 times".
func times(n int) string {
	if n == 1 {
		return "1 time"
	}
	return fmt.Sprintf("%d times", n)
}
