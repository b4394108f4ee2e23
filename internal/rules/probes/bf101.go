package probes

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"backfire.dev/backfire/internal/classify"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/model/probe"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/rules/podfacts"
)

// BF101: a database whose liveness probe needs it to answer a query. The
// server refuses queries while it recovers from a crash, so the probe that
// caused the crash fails by design until it kills the recovery too.
var BF101 = rules.Register(&rules.Rule{
	ID:       "BF101",
	Slug:     "liveness-fails-during-recovery",
	Severity: finding.Error,
	Summary:  "A database's liveness probe needs it to answer a query, which it refuses during crash recovery: the probe kills the recovery it caused, forever.",
	Kinds:    object.WorkloadKinds,
	Reads:    []string{"ConfigMap", "Deployment", index.WorkloadRefs},
	Check:    &rules.Scan{Run: runBF101},
	Fix:      rules.FixFields{Sets: []string{"container.livenessProbe", "container.readinessProbe", "container.startupProbe"}, From: []string{"container.livenessProbe", "container.readinessProbe", "container.startupProbe", "container.ports"}},
	Evidence: []any{BF101Evidence{}},
})

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
	for _, ct := range t.Containers() {
		c := ct.Container
		if c.LivenessProbe == nil {
			continue
		}
		v := podfacts.Classify(p, c)
		if !v.DatabaseLike {
			continue
		}
		q := podfacts.ProbeQuery(p, t, c, c.LivenessProbe)
		if !q.FailsDuringRecovery(v) {
			continue
		}
		budget := p.Config().StartupBudgetSeconds()
		st := podfacts.Startup(p, t, c)
		b := bf101{p: p, t: t, at: ct.Path(), c: c, v: v, q: q, st: st, budget: budget}
		b.limit = limitOf(c, probe.TimingOf(c.LivenessProbe, t.Spec.TerminationGracePeriodSeconds), st)
		if b.closed() && b.limit.seconds >= budget {
			// The port stays closed through a recovery as long as the
			// threshold, and the probe holds off that long.
			if c.LivenessProbe.TCPSocket != nil {
				continue // nothing kills a slow server either: the kernel answers
			}
			b.coveredBy = "initial delay"
			if st.Present {
				b.coveredBy = "startupProbe"
			}
		}
		p.Report(b.finding())
	}
}

// bf101 is one finding in the making.
type bf101 struct {
	t      *object.PodTemplate
	at     *field.Path
	c      *corev1.Container
	v      classify.Verdict
	q      classify.ProbeQuery
	st     classify.Startup
	p      *rules.Pass
	budget int
	limit  recoveryLimit
	// coveredBy is set when a server that keeps its port closed during
	// recovery gets a recovery of at least the threshold before the
	// liveness probe can kill it: "startupProbe" or "initial delay".
	coveredBy string
}

// closed: the server opens its port only once it has recovered, so every
// probe that connects fails during recovery, tcpSocket included.
func (b *bf101) closed() bool { return b.v.Server.PortClosedDuringRecovery }

// held: something keeps the liveness probe away through a recovery as
// long as the threshold; every slow minute still costs a crash recovery.
func (b *bf101) held() bool { return b.st.Holds || b.coveredBy != "" }

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
	failures, period := strconv.Itoa(lt.Failure.N), strconv.Itoa(lt.Period.N)
	l := recoveryLimit{seconds: d + lt.Failure.N*lt.Period.N, formula: strconv.Itoa(d) + " + " + failures + " x " + period}
	if sd > lt.InitialDelay.N {
		l.from = "the startupProbe's first check at " + strconv.Itoa(sd) + " s, then " + failures + " liveness failures " + period + " s apart"
	}
	return l
}

func (b *bf101) finding() rules.Report {
	t, c, v, q, st := b.t, b.c, b.v, b.q, b.st
	lp := c.LivenessProbe
	lt := probe.TimingOf(lp, t.Spec.TerminationGracePeriodSeconds)
	s := v.Server
	limit := b.limit
	tcp := lp.TCPSocket != nil

	sev := finding.Error
	// A verdict read from an unchecked claim (an unknown script, nodetool
	// other than info | grep Native Transport) says so in the message.
	fails, needs, queries := "fails", "needs", "queries it"
	if q.Assumed {
		fails, needs, queries = "is assumed to fail", "is assumed to need", "is assumed to query it"
	}
	described := probe.Describe(lp)
	seconds := strconv.Itoa(limit.seconds)
	var msg string
	switch {
	case b.closed() && b.held():
		sev = finding.Warning
		msg = "liveness probe " + described + " " + fails + " while " + s.Name + " recovers (it " + s.Recovery + "): the " + b.coveredBy +
			" holds it back through a recovery of up to " + seconds + " s, but every slow minute still ends in a kill and a crash recovery"
	case b.closed():
		msg = "liveness probe " + described + " " + fails + " while " + s.Name + " recovers, because " + s.Name + " " + s.Recovery +
			": a recovery longer than " + seconds + " s (" + limit.formula + ") is killed and starts over, forever"
	case st.Holds:
		sev = finding.Warning
		msg = "liveness probe " + described + " " + needs + " " + s.Name + " to answer a query: the startupProbe holds it back through a recovery of up to " +
			strconv.Itoa(st.Budget) + " s, but every slow minute still ends in a kill and a crash recovery"
	default:
		msg = "liveness probe " + described + " " + needs + " " + s.Name + " " + s.Refusal() +
			": a recovery longer than " + seconds + " s (" + limit.formula + ") is killed and starts over, forever"
	}

	var first string
	if b.closed() && !q.Queries {
		first = "Container " + c.Name + " is " + classification(v) + ", which keeps its port closed while it recovers, and its liveness probe connects to it: " + q.Evidence + "."
	} else {
		first = "Container " + c.Name + " is " + classification(v) + ", and its liveness probe " + queries + ": " + q.Evidence + "."
	}
	var crash string
	if tcp {
		crash = "The kernel answers a tcpSocket probe however slow the server is, so this probe does not cause the first crash; any other does: an OOM kill, a node restart, an eviction, a kill by the runtime."
	} else {
		crash = "A slow minute makes the probe miss its " + strconv.Itoa(lt.Timeout.N) + " s timeout " + times(lt.Failure.N) + " in a row (" +
			lt.Timeout.Phrase("timeoutSeconds") + ", " + lt.Failure.Phrase("failureThreshold") + ", " + lt.Period.Phrase("periodSeconds") +
			"): the kubelet kills the container (" + strconv.Itoa(lt.Failure.N) + "-1) x " + strconv.Itoa(lt.Period.N) + " + " + strconv.Itoa(lt.Timeout.N) +
			" = " + strconv.Itoa(lt.KillAfterFirstFailure()) + " s after the first slow answer, SIGKILL at most " + strconv.Itoa(lt.Grace.N) + " s after SIGTERM."
	}
	mech := make([]string, 3, 6)
	mech[0], mech[1] = first, crash
	mech[2] = s.Name + " restarts into crash recovery and " + s.RecoveryAnswer(c.Image) + ": the same probe now fails by design."
	interrupted := ""
	if s.Interrupted != "" {
		interrupted = " (" + s.Interrupted + ")"
	}
	never := func() string {
		return "a crash recovery longer than " + seconds + " s from the container's start never completes; recovery restarts from scratch at every kill" + interrupted + "."
	}
	formula := limit.formula
	if limit.from != "" {
		formula += ": " + limit.from
	}
	switch {
	case b.coveredBy == "initial delay":
		mech = append(mech, "After each kill the liveness probe waits its initial delay and then allows "+strconv.Itoa(lt.Failure.N)+" failures: a recovery shorter than "+
			seconds+" s ("+formula+") completes, at least the "+strconv.Itoa(b.budget)+" s threshold; a longer one is killed and starts over"+interrupted+".")
	case b.held():
		mech = append(mech, "After each kill, "+st.Why+": a recovery shorter than "+seconds+" s completes; a longer one is killed by the startupProbe and starts over"+interrupted+".")
	case st.Present && st.FailsDuringRecovery:
		mech = append(mech, capitalize(st.Why)+": "+never())
	case st.Present:
		mech = append(mech, capitalize(st.Why)+", which kills a container that never becomes healthy "+seconds+" s after start ("+formula+"): "+never())
	default:
		mech = append(mech, "Killed "+seconds+" s after start if never healthy ("+formula+"): "+never())
	}
	if b.held() {
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
	if s.ListensDuringRecovery || b.closed() {
		listens := s.ListensDuringRecovery
		ev.ListensDuringRecovery = &listens // else not known
	}
	if st.Present {
		startupBudget := st.Budget
		ev.StartupProbe, ev.StartupBudgetSeconds = st.Why, &startupBudget
	}
	var assumed []string
	switch {
	case q.Assumption != "":
		assumed = append(assumed, q.Assumption)
	case q.Assumed:
		assumed = append(assumed, described+" is assumed to log in and query "+s.Name+"; if it only checks that the process runs, suppress this finding with the annotation backfire.dev/ignore: BF101.")
	}
	return rules.Report{
		At:          t.Owner,
		Path:        b.at.Child("livenessProbe"),
		Container:   c.Name,
		Severity:    sev,
		Message:     msg,
		Mechanism:   mech,
		Evidence:    ev,
		Assumptions: assumed,
		Fix:         b.fix(),
	}
}

func backoffLine(run int) string {
	r, initial, most := strconv.Itoa(run), strconv.Itoa(probe.BackoffInitial), strconv.Itoa(probe.BackoffMax)
	if probe.NeverWaits(run) {
		return "Each run lasts " + r + " s, longer than the kubelet's restart back-off ever waits (" + initial + " s doubling to at most " + most +
			" s, counted from the previous exit), so the container restarts at once every time: no CrashLoopBackOff pause, the restart count just climbs, one restart every " + r + " s."
	}
	return "The kubelet's restart back-off (" + initial + " s doubling to " + most + " s) only spaces the kills out; it never lets a recovery longer than " + r + " s finish."
}

// atLeast gives the period, timeout and failure threshold a fix sets on a
// probe the user already has, each at least the probe's own: a fix that
// replaces the handler owns the probe's numbers (docs/fix.md), but it never
// makes the user's probe less tolerant than they made it (a failureThreshold
// of 10 chosen for a slow disk stays 10). A period of 0 is one the fix does
// not set.
func atLeast(p *corev1.Probe, period, timeout, failures int) (int, int, int) {
	t := probe.TimingOf(p, nil)
	if period > 0 {
		period = max(period, t.Period.N)
	}
	return period, max(timeout, t.Timeout.N), max(failures, t.Failure.N)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// fix replaces the liveness handler with tcpSocket on the server's port
// and moves the query to readiness, where a slow answer only takes the pod
// out of rotation. A server that keeps its port closed while it recovers
// also gets a tcpSocket startupProbe whose budget (the BF101 threshold)
// holds liveness back through a recovery.
func (b *bf101) fix() *finding.Fix {
	t, c, v, budget := b.t, b.c, b.v, b.budget
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
	fields := map[string]any{}
	var desc []string
	if b.closed() {
		if !b.held() {
			failures := probe.FailuresToCover(budget, 0, fixStartupPeriod)
			period, timeout := fixStartupPeriod, fixLivenessTimeout
			what := "a tcpSocket startupProbe"
			if c.StartupProbe != nil {
				period, timeout, failures = atLeast(c.StartupProbe, period, timeout, failures)
			}
			sp := map[string]any{
				"tcpSocket":        map[string]any{"port": port},
				"periodSeconds":    period,
				"timeoutSeconds":   timeout,
				"failureThreshold": failures,
			}
			if c.StartupProbe != nil {
				if h := probe.Handler(c.StartupProbe); h != "tcpSocket" && h != "" {
					sp[h] = nil
				}
				what = "the startupProbe, made a tcpSocket probe"
			}
			fields["startupProbe"] = sp
			desc = append(desc, s.Name+" opens its port only once it has recovered: "+what+" on port "+strconv.Itoa(int(port))+" ("+portWhy+") with failureThreshold "+
				strconv.Itoa(failures)+" x periodSeconds "+strconv.Itoa(period)+" = "+strconv.Itoa(failures*period)+" s holds the liveness probe back until it does, through a recovery of up to "+
				strconv.Itoa(budget)+" s (the startupBudgetSeconds threshold; raise it for larger data).")
		}
		if lp.TCPSocket != nil {
			return &finding.Fix{
				Description: strings.Join(desc, " "),
				Type:        finding.StrategicMergePatch,
				Patch:       fix.ContainerPatch(t, c.Name, fields),
			}
		}
	}
	_, timeout, failures := atLeast(lp, 0, fixLivenessTimeout, fixLivenessFailures)
	fields["livenessProbe"] = map[string]any{
		old:                nil,
		"tcpSocket":        map[string]any{"port": port},
		"timeoutSeconds":   timeout,
		"failureThreshold": failures,
	}
	desc = append(desc, "Make the liveness probe check only that "+s.Name+" runs: tcpSocket on port "+strconv.Itoa(int(port))+" ("+portWhy+"), timeoutSeconds "+
		strconv.Itoa(timeout)+", failureThreshold "+strconv.Itoa(failures)+".")
	if timeout > fixLivenessTimeout || failures > fixLivenessFailures {
		desc = append(desc, "The probe's own numbers that are more tolerant than the fix's are kept.")
	}
	switch {
	case s.ListensDuringRecovery:
		desc = append(desc, s.Name+" listens during crash recovery, so the probe passes while it recovers.")
	case b.closed():
	default:
		desc = append(desc, "If "+s.Name+" does not listen while it recovers, also give it a startupProbe of "+strconv.Itoa(budget)+" s or more.")
	}
	desc = append(desc, "The patch deletes the "+old+` handler ("`+old+`": null): a strategic merge patch merges containers by name and would otherwise keep both handlers, which the API server rejects.`)

	rp := c.ReadinessProbe
	rq := podfacts.ProbeQuery(b.p, t, c, rp)
	switch {
	case rp == nil:
		fields["readinessProbe"] = map[string]any{
			old:                handlerValue(lp),
			"timeoutSeconds":   fixQueryTimeout,
			"periodSeconds":    probe.TimingOf(lp, nil).Period.N,
			"failureThreshold": 3,
		}
		desc = append(desc, "The query moves to a new readinessProbe with timeoutSeconds "+strconv.Itoa(fixQueryTimeout)+": a slow answer takes the pod out of rotation instead of killing it.")
	case rq.Queries:
		if probe.TimingOf(rp, nil).Timeout.N < fixQueryTimeout {
			fields["readinessProbe"] = map[string]any{"timeoutSeconds": fixQueryTimeout}
			desc = append(desc, "The readinessProbe already runs a query; it gets timeoutSeconds "+strconv.Itoa(fixQueryTimeout)+", so that one slow answer does not take the pod out of rotation.")
		} else {
			desc = append(desc, "The readinessProbe already runs a query: it takes a slow pod out of rotation instead of killing it.")
		}
	default:
		// The readiness check the authors wrote stays: replacing it could drop
		// what it checks (replication lag, a quorum) for the liveness query.
		desc = append(desc, "The readinessProbe keeps its own "+probe.Handler(rp)+" check; if it does not already ask "+s.Name+" to answer, add the query there (timeoutSeconds "+
			strconv.Itoa(fixQueryTimeout)+"), so that a slow answer takes the pod out of rotation instead of killing it.")
	}
	return &finding.Fix{
		Description: strings.Join(desc, " "),
		Type:        finding.StrategicMergePatch,
		Patch:       fix.ContainerPatch(t, c.Name, fields),
	}
}
