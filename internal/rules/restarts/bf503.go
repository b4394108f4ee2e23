package restarts

import (
	"backfire.dev/backfire/internal/evidence"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"backfire.dev/backfire/internal/classify"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/observe"
	"backfire.dev/backfire/internal/recoverylog"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/rules/diagnosis"
)

// BF503 recovery-loop-in-logs.
var BF503 = rules.Register(&rules.Rule{
	ID: "BF503", Slug: "recovery-loop-in-logs", Severity: finding.Error,
	Summary:  "diagnose: the logs show a server killed while it recovers, under a liveness probe that fails during recovery; or a client refused by that recovery",
	Kinds:    podKind,
	Check:    &diagnosis.Check{Run: bf503},
	Evidence: []any{BF503Evidence{}, BF503ClientEvidence{}},
})

// FailsDuringRecovery reports whether the liveness probe of a container
// fails while its server recovers, and why.
func FailsDuringRecovery(c classifyInput) (bool, string) {
	lp := c.Container.LivenessProbe
	if lp == nil {
		return false, "it has no liveness probe"
	}
	v := c.Verdict
	q := classify.Probe("Pod", c.Container, lp, v)
	if !q.FailsDuringRecovery(v) {
		return false, q.Evidence
	}
	if !q.Queries && v.Server != nil {
		// It only connects: it fails because this server keeps its port
		// closed while it recovers (see docs/servers.md).
		return true, q.Evidence + "; it fails while " + v.Server.Name + " recovers: it " + v.Server.Recovery
	}
	return true, q.Evidence
}

type classifyInput struct {
	Container *corev1.Container
	Verdict   classify.Verdict
}

func bf503(p *diagnosis.Pass) {
	pod := p.Obs.Pod
	logs := p.Obs.Logs
	// A container without a log may still have probes that quote the
	// server's refusal: its events are its log.
	for _, c := range containers(pod) {
		has := false
		for _, l := range logs {
			has = has || l.Container == c.Name
		}
		if !has && len(refusedProbes(p.Obs, c.Name)) > 0 {
			logs = append(logs, observe.Log{Container: c.Name})
		}
	}
	for _, l := range logs {
		c, st := pod.Container(l.Container)
		if c == nil {
			continue
		}
		res := recoverylog.Scan(l.Data)
		probeRefused := refusedProbes(p.Obs, c.Name)
		if len(res.Matches) == 0 && len(probeRefused) == 0 {
			if res.InvalidUTF8 > 0 {
				p.Note(fmt.Sprintf("log %s: no recovery message in %d lines (%d lines held invalid UTF-8 and were searched with it replaced)", l.File, res.Lines, res.InvalidUTF8))
			}
			continue
		}
		v := p.Classify(c.Name)
		fails, why := FailsDuringRecovery(classifyInput{Container: c, Verdict: v})
		if !fails && len(res.Matches) > 0 && !pod.Knows(specPath(pod, c.Name)+".livenessProbe") && !pod.Knows(specPath(pod, c.Name)+".startupProbe") {
			logAlone(p, c, l, res)
			continue
		}
		if !fails && len(res.Matches) == 0 && !pod.Knows(specPath(pod, c.Name)+".livenessProbe") {
			p.Note(fmt.Sprintf("container %s's probes were refused by a recovering server (%d Unhealthy events: %q), but the capture does not show its liveness probe: whether it fails during every recovery, and so kills it, needs the Liveness line", c.Name, len(probeRefused), shorten(probeRefused[0].Message)))
			continue
		}
		if !fails {
			p.Note(fmt.Sprintf("log %s shows %d recovery messages, but container %s's liveness probe does not fail during recovery (%s): no loop", l.File, len(res.Matches), c.Name, why))
			continue
		}
		interrupted, recovering, refused := res.Of(recoverylog.Interrupted), res.Of(recoverylog.Recovering), res.Of(recoverylog.Refused)
		restarts := 0
		if st != nil {
			restarts = int(st.RestartCount)
		}
		mech := []string{fmt.Sprintf("container %s's liveness probe fails during recovery: %s", c.Name, why)}
		first := res.Matches
		if len(interrupted) > 0 {
			first = interrupted
			mech = append(mech, fmt.Sprintf("%s:%d: %s", l.File, interrupted[0].Line, interrupted[0].Text),
				fmt.Sprintf("%d times the server found its previous recovery cut short (%s): it was killed while it recovered", len(interrupted), interrupted[0].Pattern.Source))
		}
		if len(recovering) > 0 {
			mech = append(mech, fmt.Sprintf("%d crash-recovery lines (%s:%d: %s)", len(recovering), l.File, recovering[0].Line, recovering[0].Text))
		}
		if len(refused) > 0 {
			mech = append(mech, fmt.Sprintf("%d connections refused while recovering (%s:%d: %s)", len(refused), l.File, refused[0].Line, refused[0].Text))
		}
		for _, e := range probeRefused {
			mech = append(mech, fmt.Sprintf("its probes were refused by the recovering server: Unhealthy x%d %q", e.Count, shorten(e.Message)))
		}
		count := fmt.Sprintf("%d restarts", restarts)
		if !pod.Knows(pod.StatusPath(c.Name) + ".restartCount") {
			count = "restart count unknown"
		}
		sev, msg := finding.Warning, fmt.Sprintf("%s recovers from a crash at its starts (%s) under a liveness probe that fails during recovery: a kill loop is likely", serverName(res, v), count)
		if len(interrupted) > 0 || len(probeRefused) > 0 {
			sev = finding.Error
			msg = fmt.Sprintf("%s is killed while it recovers, by a liveness probe that fails during recovery: the loop is confirmed (%s)", serverName(res, v), count)
			mech = append(mech, "every kill restarts the recovery from scratch, and the probe fails again by design: the recovery never completes")
		}
		line := 0
		if len(first) > 0 {
			line = first[0].Line
		}
		f := finding.Finding{Severity: sev, Container: c.Name, File: l.File, Line: line, Column: 1, Message: msg, Mechanism: mech,
			Evidence: evidence.Map(BF503Evidence{Interrupted: len(interrupted), Recoveries: len(recovering), Refused: len(refused), ProbeRefused: len(probeRefused), InvalidUTF8Lines: res.InvalidUTF8})}
		if line == 0 {
			f.File, f.Path = "", pod.StatusPath(c.Name)
		}
		p.Report(f)
	}
	for _, l := range p.Obs.Clients {
		res := recoverylog.Scan(l.Data)
		refused := res.Of(recoverylog.Refused)
		if len(refused) == 0 {
			continue
		}
		mech := []string{fmt.Sprintf("%s:%d: %s", l.File, refused[0].Line, refused[0].Text),
			fmt.Sprintf("%d lines of client %s say the server refused it because it was starting up or recovering (%s)", len(refused), l.Container, refused[0].Pattern.Source)}
		if t0, t1 := refused[0].Time, refused[len(refused)-1].Time; !t0.IsZero() {
			mech = append(mech, fmt.Sprintf("from %s to %s: whatever error the client showed its users then (a 401, a 500) is this server's recovery, not its own fault", clock(t0), clock(t1)))
		}
		p.Report(finding.Finding{Severity: finding.Warning, Container: l.Container, File: l.File, Line: refused[0].Line, Column: 1,
			Message:   fmt.Sprintf("client %s was refused %d times by a %s that was recovering: its errors are this pod's restarts", l.Container, len(refused), refused[0].Pattern.Server),
			Mechanism: mech, Evidence: evidence.Map(BF503ClientEvidence{Refused: len(refused), Client: l.Container})})
	}
}

// logAlone says what a server's log shows when nothing shows the pod's
// probes (a log pasted alone): the server's own words on its recoveries,
// and what would tell whether a probe cut them short.
func logAlone(p *diagnosis.Pass, c *corev1.Container, l observe.Log, res recoverylog.Reading) {
	interrupted, recovering, refused := res.Of(recoverylog.Interrupted), res.Of(recoverylog.Recovering), res.Of(recoverylog.Refused)
	server := serverName(res, classify.Verdict{})
	var mech []string
	first := res.Matches[0]
	sev, msg := finding.Info, ""
	for _, m := range [][]recoverylog.Match{interrupted, recovering, refused} {
		if len(m) > 0 {
			mech = append(mech, fmt.Sprintf("%s:%d: %s (%s)", l.File, m[0].Line, m[0].Text, m[0].Pattern.Source))
		}
	}
	switch {
	case len(interrupted) > 0:
		sev, first = finding.Warning, interrupted[0]
		msg = fmt.Sprintf("%s was killed while it recovered, %s by its own log: each start found the previous recovery cut short; the log does not show what killed it", server, times(len(interrupted)))
	case len(recovering) > 0:
		first = recovering[0]
		starts := "1 start"
		if len(recovering) > 1 {
			starts = fmt.Sprintf("%d starts", len(recovering))
		}
		msg = fmt.Sprintf("%s recovered from a crash at %s: the run before did not shut down cleanly; the log does not show what ended it", server, starts)
	default:
		msg = fmt.Sprintf("%s refused %d connections while it started up or recovered: a probe that connects fails for as long as this lasts", server, len(refused))
	}
	if len(refused) > 0 {
		mech = append(mech, fmt.Sprintf("%d connections refused while starting up or recovering: a liveness or startup probe that connects fails then", len(refused)))
		if t0, t1 := refused[0].Time, refused[len(refused)-1].Time; !t0.IsZero() && t1.After(t0) {
			mech = append(mech, fmt.Sprintf("refused from %s to %s (%s): a probe budget D + F x P shorter than that kills the server before it is ready, and the next start recovers again", clock(t0), clock(t1), seconds(t1.Sub(t0))))
		}
	}
	mech = append(mech, "not in the input: the pod's probes (the Liveness and Startup lines of kubectl describe pod: delay= period= #failure=) and its restarts (Restart Count, the Killing events): with them, a recovery longer than the probe's D + F x P is a kill loop (BF501, BF503)")
	p.Report(finding.Finding{Severity: sev, Container: c.Name, File: l.File, Line: first.Line, Column: 1, Message: msg, Mechanism: mech,
		Evidence: evidence.Map(BF503Evidence{Interrupted: len(interrupted), Recoveries: len(recovering), Refused: len(refused), InvalidUTF8Lines: res.InvalidUTF8})})
}

// refusedProbes are Unhealthy events of the container whose probe output
// is a server's refusal during recovery.
func refusedProbes(obs *observe.Observation, container string) []observe.Event {
	var out []observe.Event
	for _, e := range obs.EventsOf(container, "Unhealthy") {
		if pt := recoverylog.MatchText(e.Message); pt != nil && pt.Kind == recoverylog.Refused {
			out = append(out, e)
		}
	}
	return out
}

func serverName(res recoverylog.Reading, v classify.Verdict) string {
	if v.Server != nil {
		return v.Server.Name
	}
	if s := res.Servers(); len(s) > 0 {
		return s[0]
	}
	return "the server"
}

func shorten(s string) string {
	r := []rune(strings.Join(strings.Fields(s), " "))
	if len(r) > 160 {
		return string(r[:157]) + "..."
	}
	return string(r)
}
