package probes

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"backfire.dev/backfire/internal/classify"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/model/probe"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/rules"
)

// BF101: a database whose liveness probe needs it to answer a query. The
// server refuses queries while it recovers from a crash, so the probe that
// caused the crash fails by design until it kills the recovery too.
var BF101 = &rules.Rule{
	ID:       "BF101",
	Slug:     "liveness-fails-during-recovery",
	Severity: finding.Error,
	Summary:  "A database's liveness probe needs it to answer a query, which it refuses during crash recovery: the probe kills the recovery it caused, forever.",
	Kinds:    object.WorkloadKinds,
	Run:      runBF101,
}

// Fix settings, from the seed's repair: liveness tolerates a minute of a
// closed port, readiness gives a query 5 s.
const (
	fixLivenessTimeout  = 3
	fixLivenessFailures = 6
	fixQueryTimeout     = 5
	fixStartupPeriod    = 10
)

func runBF101(p *rules.Pass) {
	t := p.PodTemplate()
	if t == nil {
		return
	}
	kind := p.Object.Kind
	for i := range t.Spec.Containers {
		c := &t.Spec.Containers[i]
		if c.LivenessProbe == nil {
			continue
		}
		v := p.Classify(c)
		if !v.DatabaseLike {
			continue
		}
		q := classify.Probe(kind, c, c.LivenessProbe, v)
		if !q.Queries {
			continue
		}
		budget := p.Config().StartupBudgetSeconds()
		st := classify.StartupOf(kind, c, v, budget)
		p.Report(bf101Finding(t, i, c, v, q, st, kind, budget))
	}
}

// recoveryLimit is how long after its start a container that never passes
// lives, and the arithmetic.
type recoveryLimit struct {
	seconds int
	formula string
	// from explains the first term when it is not the liveness probe's
	// initial delay.
	from string
}

func limitOf(c *corev1.Container, lt probe.Timing, st classify.Startup) recoveryLimit {
	switch {
	case !st.Present:
		return recoveryLimit{seconds: lt.NeverHealthyKill(), formula: lt.NeverHealthyKillFormula()}
	case st.FailsDuringRecovery:
		return recoveryLimit{seconds: st.Budget, formula: st.BudgetFormula}
	}
	// The startup probe passes at its first try, during recovery; liveness
	// counts its initial delay from the container's start, so it probes
	// from whichever comes later.
	sd := probe.TimingOf(c.StartupProbe, nil).InitialDelay.N
	d := max(lt.InitialDelay.N, sd)
	l := recoveryLimit{seconds: d + lt.Failure.N*lt.Period.N, formula: fmt.Sprintf("%d + %d x %d", d, lt.Failure.N, lt.Period.N)}
	if sd > lt.InitialDelay.N {
		l.from = fmt.Sprintf("the startupProbe's first check at %d s, then %d liveness failures %d s apart", sd, lt.Failure.N, lt.Period.N)
	}
	return l
}

func bf101Finding(t *object.PodTemplate, i int, c *corev1.Container, v classify.Verdict, q classify.ProbeQuery, st classify.Startup, kind string, budget int) rules.Report {
	lp := c.LivenessProbe
	lt := probe.TimingOf(lp, t.Spec.TerminationGracePeriodSeconds)
	s := v.Server
	limit := limitOf(c, lt, st)

	sev := finding.Error
	msg := fmt.Sprintf("liveness probe %s needs %s to answer a query, which it refuses during crash recovery: a recovery longer than %d s (%s) is killed and starts over, forever",
		probe.Describe(lp), s.Name, limit.seconds, limit.formula)
	if st.Holds {
		sev = finding.Warning
		msg = fmt.Sprintf("liveness probe %s needs %s to answer a query: the startupProbe holds it back through a recovery of up to %d s, but every slow minute still ends in a kill and a crash recovery",
			probe.Describe(lp), s.Name, st.Budget)
	}

	mech := []string{
		fmt.Sprintf("Container %s is %s, and its liveness probe queries it: %s.", c.Name, classification(v), q.Evidence),
		fmt.Sprintf("A slow minute makes the probe miss its %d s timeout %s in a row (%s, %s, %s): the kubelet kills the container (%d-1) x %d + %d = %d s after the first slow answer, SIGKILL at most %d s after SIGTERM.",
			lt.Timeout.N, times(lt.Failure.N), lt.Timeout.Phrase("timeoutSeconds"), lt.Failure.Phrase("failureThreshold"), lt.Period.Phrase("periodSeconds"),
			lt.Failure.N, lt.Period.N, lt.Timeout.N, lt.KillAfterFirstFailure(), lt.Grace.N),
		fmt.Sprintf("%s restarts into crash recovery and %s: the same probe now fails by design.", s.Name, s.Recovery),
	}
	interrupted := ""
	if s.Interrupted != "" {
		interrupted = " (" + s.Interrupted + ")"
	}
	never := fmt.Sprintf("a crash recovery longer than %d s from the container's start never completes; recovery restarts from scratch at every kill%s.", limit.seconds, interrupted)
	formula := limit.formula
	if limit.from != "" {
		formula += ": " + limit.from
	}
	switch {
	case st.Holds:
		mech = append(mech, fmt.Sprintf("After each kill, %s: a recovery shorter than %d s completes; a longer one is killed by the startupProbe and starts over%s.",
			st.Why, st.Budget, interrupted))
	case st.Present && st.FailsDuringRecovery:
		mech = append(mech, capitalize(st.Why)+": "+never)
	case st.Present:
		mech = append(mech, fmt.Sprintf("%s, which kills a container that never becomes healthy %d s after start (%s): %s", capitalize(st.Why), limit.seconds, formula, never))
	default:
		mech = append(mech, fmt.Sprintf("Killed %d s after start if never healthy (%s): %s", limit.seconds, formula, never))
	}
	if st.Holds {
		mech = append(mech, "Adding CPU only makes the first slow minute rarer; every kill still costs a crash recovery.")
	} else {
		mech = append(mech, backoffLine(limit.seconds),
			"Adding CPU only makes the first slow minute rarer; once the server is in recovery, the loop does not end on its own.")
	}

	ev := BF101Evidence{
		TimeToKillSeconds:       lt.KillAfterFirstFailure(),
		NeverHealthyKillSeconds: limit.seconds,
		InitialDelaySeconds:     lt.InitialDelay.N,
		PeriodSeconds:           lt.Period.N,
		TimeoutSeconds:          lt.Timeout.N,
		FailureThreshold:        lt.Failure.N,
		GracePeriodSeconds:      lt.Grace.N,
		Server:                  s.Name,
		Classification:          v.EvidenceString(),
		ProbeQueries:            q.Evidence,
	}
	if st.Present {
		startupBudget := st.Budget
		ev.StartupProbe, ev.StartupBudgetSeconds = st.Why, &startupBudget
	}
	var assumed []string
	if q.Assumed {
		assumed = append(assumed, fmt.Sprintf("%s is assumed to log in and query %s; if it only checks that the process runs, suppress this finding with the annotation backfire.dev/ignore: BF101.",
			strings.Join(lp.Exec.Command, " "), s.Name))
	}
	return rules.Report{
		At:          t.Owner,
		Path:        t.ContainerPath(i).Child("livenessProbe"),
		Container:   c.Name,
		Severity:    sev,
		Message:     msg,
		Mechanism:   mech,
		Evidence:    ev,
		Assumptions: assumed,
		Fix:         bf101Fix(t, c, v, kind, budget),
	}
}

func backoffLine(run int) string {
	if probe.NeverWaits(run) {
		return fmt.Sprintf("Each run lasts %d s, longer than the kubelet's restart back-off ever waits (%d s doubling to at most %d s, counted from the previous exit), so the container restarts at once every time: no CrashLoopBackOff pause, the restart count just climbs, one restart every %d s.",
			run, probe.BackoffInitial, probe.BackoffMax, run)
	}
	return fmt.Sprintf("The kubelet's restart back-off (%d s doubling to %d s) only spaces the kills out; it never lets a recovery longer than %d s finish.",
		probe.BackoffInitial, probe.BackoffMax, run)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// bf101Fix replaces the liveness handler with tcpSocket on the server's
// port and moves the query to readiness, where a slow answer only takes the
// pod out of rotation.
// budget is the startup budget a server that keeps its port closed during
// recovery gets (the BF101 threshold).
func bf101Fix(t *object.PodTemplate, c *corev1.Container, v classify.Verdict, kind string, budget int) *finding.Fix {
	s := v.Server
	port, portWhy := classify.ServerPort(c, v)
	lp := c.LivenessProbe
	old := probe.Handler(lp)
	if port == 0 {
		return &finding.Fix{
			Type: finding.ManualChange,
			Description: fmt.Sprintf("Make the liveness probe check only that %s runs: a tcpSocket probe on its port (timeoutSeconds %d, failureThreshold %d), deleting the %s handler; move the query to the readinessProbe (timeoutSeconds %d).",
				s.Name, fixLivenessTimeout, fixLivenessFailures, old, fixQueryTimeout),
		}
	}
	fields := map[string]any{
		"livenessProbe": map[string]any{
			old:                nil,
			"tcpSocket":        map[string]any{"port": port},
			"timeoutSeconds":   fixLivenessTimeout,
			"failureThreshold": fixLivenessFailures,
		},
	}
	var desc []string
	desc = append(desc, fmt.Sprintf("Make the liveness probe check only that %s runs: tcpSocket on port %d (%s), timeoutSeconds %d, failureThreshold %d.",
		s.Name, port, portWhy, fixLivenessTimeout, fixLivenessFailures))
	switch {
	case s.ListensDuringRecovery:
		desc = append(desc, fmt.Sprintf("%s listens during crash recovery, so the probe passes while it recovers.", s.Name))
	case s.PortClosedDuringRecovery && c.StartupProbe == nil:
		failures := (budget + fixStartupPeriod - 1) / fixStartupPeriod
		fields["startupProbe"] = map[string]any{
			"tcpSocket":        map[string]any{"port": port},
			"periodSeconds":    fixStartupPeriod,
			"timeoutSeconds":   fixLivenessTimeout,
			"failureThreshold": failures,
		}
		desc = append(desc, fmt.Sprintf("%s opens its port only after recovery, so a tcpSocket startupProbe (%d x %d = %d s) holds liveness back until it does.",
			s.Name, failures, fixStartupPeriod, failures*fixStartupPeriod))
	case s.PortClosedDuringRecovery:
		desc = append(desc, fmt.Sprintf("%s opens its port only after recovery: the startupProbe must allow a whole recovery (%d s or more).", s.Name, budget))
	default:
		desc = append(desc, fmt.Sprintf("If %s does not listen while it recovers, also give it a startupProbe of %d s or more.", s.Name, budget))
	}
	desc = append(desc, fmt.Sprintf(`The patch deletes the %s handler ("%s": null): a strategic merge patch merges containers by name and would otherwise keep both handlers, which the API server rejects.`, old, old))

	rp := c.ReadinessProbe
	rq := classify.Probe(kind, c, rp, v)
	query := handlerValue(lp)
	switch {
	case rp == nil:
		fields["readinessProbe"] = map[string]any{
			old:                query,
			"timeoutSeconds":   fixQueryTimeout,
			"periodSeconds":    probe.TimingOf(lp, nil).Period.N,
			"failureThreshold": 3,
		}
		desc = append(desc, fmt.Sprintf("The query moves to a new readinessProbe with timeoutSeconds %d: a slow answer takes the pod out of rotation instead of killing it.", fixQueryTimeout))
	case rq.Queries:
		if probe.TimingOf(rp, nil).Timeout.N < fixQueryTimeout {
			fields["readinessProbe"] = map[string]any{"timeoutSeconds": fixQueryTimeout}
			desc = append(desc, fmt.Sprintf("The readinessProbe already runs a query; it gets timeoutSeconds %d, so that one slow answer does not take the pod out of rotation.", fixQueryTimeout))
		} else {
			desc = append(desc, "The readinessProbe already runs a query: it takes a slow pod out of rotation instead of killing it.")
		}
	default:
		r := map[string]any{old: query, "timeoutSeconds": fixQueryTimeout}
		if rk := probe.Handler(rp); rk != old {
			r[rk] = nil
		}
		fields["readinessProbe"] = r
		desc = append(desc, fmt.Sprintf("The query moves to the readinessProbe, replacing its %s check, with timeoutSeconds %d: a slow answer takes the pod out of rotation instead of killing it.", probe.Handler(rp), fixQueryTimeout))
	}
	return &finding.Fix{
		Description: strings.Join(desc, " "),
		Type:        finding.StrategicMergePatch,
		Patch:       fix.ContainerPatch(t, c.Name, fields),
	}
}
