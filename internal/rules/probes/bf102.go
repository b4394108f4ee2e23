package probes

import (
	"strconv"

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

// BF102: a liveness probe that keeps Kubernetes' 1 s default timeout.
var BF102 = rules.Register(&rules.Rule{
	ID:       "BF102",
	Slug:     "liveness-default-timeout",
	Severity: finding.Warning,
	Summary:  "A liveness probe that keeps the 1 s default timeout restarts a container that is only slow.",
	Kinds:    object.WorkloadKinds,
	Reads:    []string{index.WorkloadRefs},
	Check:    &rules.Scan{Run: runBF102},
	Fix:      rules.FixFields{Sets: []string{"container.livenessProbe.timeoutSeconds", "container.livenessProbe.failureThreshold"}, From: []string{"container.livenessProbe"}},
	Evidence: []any{BF102Evidence{}},
})

func runBF102(p *rules.Pass) {
	t := p.PodTemplate()
	if t == nil {
		return
	}
	for _, ct := range t.Containers() {
		c := ct.Container
		lp := c.LivenessProbe
		h := probe.Handler(lp)
		if h == "" || h == "tcpSocket" {
			continue // the kernel answers a TCP connect: no timeout to miss
		}
		tm := probe.TimingOf(lp, t.Spec.TerminationGracePeriodSeconds)
		if tm.Timeout.N != 1 {
			continue
		}
		if classify.Idle(c) != "" {
			continue // it only sleeps: a restart interrupts nothing
		}
		v := podfacts.Classify(p, c)
		q := podfacts.ProbeQuery(p, t, c, lp)
		p.Report(bf102Finding(t, ct.Path(), c, tm, v, q))
	}
}

func bf102Finding(t *object.PodTemplate, at *field.Path, c *corev1.Container, tm probe.Timing, v classify.Verdict, q classify.ProbeQuery) rules.Report {
	path := at.Child("livenessProbe")
	how := "timeoutSeconds is unset, so Kubernetes uses its default of 1 s: a value nobody chose"
	if tm.Timeout.Set {
		path = path.Child("timeoutSeconds")
		how = "timeoutSeconds: 1 is written out, but it is the Kubernetes default and the shortest allowed"
	}
	failure := max(tm.Failure.N, 3)
	timeout, why := 3, "timeoutSeconds 3 (5 if it runs a query)"
	if q.Queries {
		timeout, why = 5, "timeoutSeconds 5 (it runs a query)"
	}
	handler := probe.Handler(c.LivenessProbe)
	period, failures, window := strconv.Itoa(tm.Period.N), strconv.Itoa(tm.Failure.N), strconv.Itoa(tm.FailureWindow())
	mech := []string{
		how + ".",
		"The " + handler + " handler runs every " + period + " s (" + tm.Period.Phrase("periodSeconds") + ") and fails any answer slower than 1 s.",
		failures + " failures in a row (" + tm.Failure.Phrase("failureThreshold") + "), about " + failures + " x " + period + " = " + window +
			" s of slow answers, make the kubelet kill the container: (" + failures + "-1) x " + period + " + " + strconv.Itoa(tm.Timeout.N) + " = " +
			strconv.Itoa(tm.KillAfterFirstFailure()) + " s after the first slow answer, SIGKILL at most " + strconv.Itoa(tm.Grace.N) + " s later.",
		"Slow is not dead: the restart turns a slow minute into an outage, and the restarted container is slowest of all while it warms up.",
	}
	ev := BF102Evidence{
		Handler:               handler,
		TimeoutSeconds:        tm.Timeout.N,
		TimeoutSet:            tm.Timeout.Set,
		PeriodSeconds:         tm.Period.N,
		FailureThreshold:      tm.Failure.N,
		FailureWindowSeconds:  tm.FailureWindow(),
		TimeToKillSeconds:     tm.KillAfterFirstFailure(),
		GracePeriodSeconds:    tm.Grace.N,
		InitialDelaySeconds:   tm.InitialDelay.N,
		NeverHealthyKillAfter: tm.NeverHealthyKill(),
		ProbeQueries:          q.Evidence,
	}
	sev := finding.None // the rule's warning
	if v.DatabaseLike {
		sev = finding.Error
		ev.Server, ev.Classification = v.Server.Name, v.EvidenceString()
		mech = append(mech, "Container "+c.Name+" is "+ev.Server+" ("+ev.Classification+"): every restart is a crash that costs a crash recovery, hence an error rather than a warning.")
	}
	return rules.Report{
		At:        t.Owner,
		Path:      path,
		Container: c.Name,
		Severity:  sev,
		Message: "liveness probe " + probe.Describe(c.LivenessProbe) + " must answer within 1 s: " + failures + " slow answers in a row (" +
			failures + " x " + period + " = " + window + " s of latency) restart a container that is only slow",
		Mechanism: mech,
		Evidence:  ev,
		Fix: &finding.Fix{
			Description: "Give the liveness probe a timeout it can meet on a slow day: " + why + ", failureThreshold " + strconv.Itoa(failure) + ".",
			Type:        finding.StrategicMergePatch,
			Patch: fix.ContainerPatch(t, c.Name, map[string]any{
				"livenessProbe": map[string]any{"timeoutSeconds": timeout, "failureThreshold": failure},
			}),
		},
	}
}
