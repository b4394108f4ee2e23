package probes

import (
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/model/probe"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/rules"
)

// BF103: liveness and readiness ask the same question, and liveness gives
// up no later than readiness, so a slow pod is killed instead of rested.
var BF103 = rules.Register(&rules.Rule{
	ID:       "BF103",
	Slug:     "liveness-not-more-tolerant-than-readiness",
	Severity: finding.Warning,
	Summary:  "Liveness runs the readiness check and gives up no later: a slow pod is restarted instead of taken out of rotation.",
	Kinds:    object.WorkloadKinds,
	Reads:    []string{index.WorkloadRefs},
	Check:    &rules.Scan{Run: runBF103},
	Fix:      rules.FixFields{Sets: []string{"container.livenessProbe.failureThreshold"}, From: []string{"container.livenessProbe", "container.readinessProbe"}},
	Evidence: []any{BF103Evidence{}},
})

func runBF103(p *rules.Pass) {
	t := p.PodTemplate()
	if t == nil {
		return
	}
	for _, ct := range t.Containers() {
		c := ct.Container
		lp, rp := c.LivenessProbe, c.ReadinessProbe
		if lp == nil || rp == nil || !sameCheck(c, lp, rp) {
			continue
		}
		lt := probe.TimingOf(lp, t.Spec.TerminationGracePeriodSeconds)
		rt := probe.TimingOf(rp, t.Spec.TerminationGracePeriodSeconds)
		if lt.KillBudget() > rt.KillBudget() {
			continue // liveness is strictly more tolerant: readiness acts first
		}
		p.Report(bf103Finding(t, ct.Path(), c, lt, rt))
	}
}

// sameCheck reports whether two probes ask the same question: the same
// command, or the same HTTP path and port, or the same gRPC service. Two
// tcpSocket probes are not counted: the kernel answers a connect, so a slow
// server passes both.
func sameCheck(c *corev1.Container, a, b *corev1.Probe) bool {
	switch {
	case a.Exec != nil && b.Exec != nil:
		return slices.Equal(a.Exec.Command, b.Exec.Command)
	case a.HTTPGet != nil && b.HTTPGet != nil:
		x, y := a.HTTPGet, b.HTTPGet
		return httpPath(x.Path) == httpPath(y.Path) && portNumber(c, x.Port) == portNumber(c, y.Port) &&
			x.Host == y.Host && scheme(x.Scheme) == scheme(y.Scheme)
	case a.GRPC != nil && b.GRPC != nil:
		return a.GRPC.Port == b.GRPC.Port && ptrString(a.GRPC.Service) == ptrString(b.GRPC.Service)
	}
	return false
}

func httpPath(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

func scheme(s corev1.URIScheme) corev1.URIScheme {
	if s == "" {
		return corev1.URISchemeHTTP
	}
	return s
}

func ptrString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// portNumber resolves a named port, so that port: http and port: 8080 of
// the same container compare equal.
func portNumber(c *corev1.Container, p intstr.IntOrString) string {
	if p.Type == intstr.String {
		for _, cp := range c.Ports {
			if cp.Name == p.StrVal {
				return strconv.Itoa(int(cp.ContainerPort))
			}
		}
	}
	return p.String()
}

func bf103Finding(t *object.PodTemplate, at *field.Path, c *corev1.Container, lt, rt probe.Timing) rules.Report {
	lp := c.LivenessProbe
	lb, rb := lt.KillBudget(), rt.KillBudget()
	cmp, when := "the same as", "no later than"
	if lb < rb {
		cmp, when = "shorter than", "before"
	}
	// The smallest failureThreshold that lets liveness outlast twice the
	// readiness window: a slow pod is rested first, and killed only if it
	// stays stuck for as long again.
	failure := max(lt.Failure.N+1, (2*rt.Failure.N*rt.Period.N+lt.Period.N-1)/lt.Period.N)
	for failure*lt.Period.N+lt.Timeout.N <= rb {
		failure++
	}
	after := failure*lt.Period.N + lt.Timeout.N
	return rules.Report{
		At:        t.Owner,
		Path:      at.Child("livenessProbe"),
		Container: c.Name,
		Message: fmt.Sprintf("liveness and readiness run the same check, %s, and liveness gives up no later than readiness (%s = %d s against %s = %d s): a slow pod is restarted instead of rested",
			probe.Describe(lp), lt.KillBudgetFormula(), lb, rt.KillBudgetFormula(), rb),
		Mechanism: []string{
			fmt.Sprintf("Both probes run %s: an answer slower than the timeout fails both at once.", probe.Describe(lp)),
			fmt.Sprintf("Readiness takes the pod out of rotation (%d-1) x %d + %d = %d s after the first slow answer (%s, %s); liveness kills it (%d-1) x %d + %d = %d s after that same answer (%s, %s).",
				rt.Failure.N, rt.Period.N, rt.Timeout.N, rt.KillAfterFirstFailure(), rt.Failure.Phrase("failureThreshold"), rt.Period.Phrase("periodSeconds"),
				lt.Failure.N, lt.Period.N, lt.Timeout.N, lt.KillAfterFirstFailure(), lt.Failure.Phrase("failureThreshold"), lt.Period.Phrase("periodSeconds")),
			fmt.Sprintf("The liveness budget F x P + T = %d s is %s readiness's %d s: the pod is killed %s it is taken out of rotation, so it never gets the rest that readiness exists to give, and comes back cold.", lb, cmp, rb, when),
			"Readiness is the tool for \"slow\"; liveness should catch only a process that stays stuck well after readiness gave up.",
		},
		Evidence: BF103Evidence{
			Check:                  probe.Describe(lp),
			LivenessBudgetSeconds:  lb,
			ReadinessBudgetSeconds: rb,
			LivenessKillSeconds:    lt.KillAfterFirstFailure(),
			ReadinessRemoveSeconds: rt.KillAfterFirstFailure(),
		},
		Fix: &finding.Fix{
			Description: fmt.Sprintf("Make liveness strictly more tolerant than readiness: failureThreshold %d (%d x %d + %d = %d s against readiness's %d s), or give liveness a cheaper check than readiness (tcpSocket, or a check that the process runs).",
				failure, failure, lt.Period.N, lt.Timeout.N, after, rb),
			Type: finding.StrategicMergePatch,
			Patch: fix.ContainerPatch(t, c.Name, map[string]any{
				"livenessProbe": map[string]any{"failureThreshold": failure},
			}),
		},
	}
}
