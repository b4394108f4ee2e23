// Package probe holds the kubelet's probe arithmetic: when a failing probe
// kills a container, how long a container that never becomes healthy lives,
// and the restart back-off. Kubernetes' defaults apply to unset fields, and
// every value remembers whether it was written or defaulted.
package probe

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Kubernetes' probe defaults (k8s.io/kubernetes/pkg/apis/core/v1/defaults.go).
const (
	DefaultTimeoutSeconds   = 1
	DefaultPeriodSeconds    = 10
	DefaultSuccessThreshold = 1
	DefaultFailureThreshold = 3
	DefaultGracePeriod      = 30
)

// Value is a probe setting and whether the manifest wrote it.
type Value struct {
	N   int
	Set bool
}

func (v Value) String() string {
	if v.Set {
		return strconv.Itoa(v.N)
	}
	return strconv.Itoa(v.N) + " (default)"
}

// value applies a default. In the typed struct an omitted field is 0, and
// the API server defaults an explicit 0 the same way, so 0 means "defaulted".
func value(v int32, def int) Value {
	if v == 0 {
		return Value{N: def}
	}
	return Value{N: int(v), Set: true}
}

// Timing is a probe's schedule with defaults applied.
type Timing struct {
	InitialDelay, Period, Timeout, Success, Failure Value
	// Grace is the SIGTERM-to-SIGKILL grace of a liveness or startup kill:
	// the probe's terminationGracePeriodSeconds, else the pod's.
	Grace Value
}

// TimingOf reads p; podGrace is the pod's terminationGracePeriodSeconds.
func TimingOf(p *corev1.Probe, podGrace *int64) Timing {
	t := Timing{
		InitialDelay: Value{N: int(p.InitialDelaySeconds), Set: p.InitialDelaySeconds != 0},
		Period:       value(p.PeriodSeconds, DefaultPeriodSeconds),
		Timeout:      value(p.TimeoutSeconds, DefaultTimeoutSeconds),
		Success:      value(p.SuccessThreshold, DefaultSuccessThreshold),
		Failure:      value(p.FailureThreshold, DefaultFailureThreshold),
		Grace:        Value{N: DefaultGracePeriod},
	}
	switch {
	case p.TerminationGracePeriodSeconds != nil:
		t.Grace = Value{N: int(*p.TerminationGracePeriodSeconds), Set: true}
	case podGrace != nil:
		t.Grace = Value{N: int(*podGrace), Set: true}
	}
	return t
}

// KillAfterFirstFailure is the worst case from the first failing probe to
// the kill: F-1 more periods, then the last probe's timeout.
func (t Timing) KillAfterFirstFailure() int { return (t.Failure.N-1)*t.Period.N + t.Timeout.N }

// FailureWindow is about how long answers must stay slow or failing before
// the kill: F x P.
func (t Timing) FailureWindow() int { return t.Failure.N * t.Period.N }

// NeverHealthyKill is when a container that never passes is killed,
// counted from its start: D + F x P (seed 003: 300 + 3 x 10 = 330 s).
func (t Timing) NeverHealthyKill() int { return t.InitialDelay.N + t.Failure.N*t.Period.N }

// NeverHealthyKillFormula spells NeverHealthyKill out: "300 + 3 x 10".
func (t Timing) NeverHealthyKillFormula() string {
	return strconv.Itoa(t.InitialDelay.N) + " + " + strconv.Itoa(t.Failure.N) + " x " + strconv.Itoa(t.Period.N)
}

// Handler names the probe's handler: exec, httpGet, tcpSocket, grpc, or "".
func Handler(p *corev1.Probe) string {
	switch {
	case p == nil:
		return ""
	case p.Exec != nil:
		return "exec"
	case p.HTTPGet != nil:
		return "httpGet"
	case p.TCPSocket != nil:
		return "tcpSocket"
	case p.GRPC != nil:
		return "grpc"
	}
	return ""
}

// Describe renders the handler the way a reader recognises it:
// "exec [/docker-healthcheck.sh]", "httpGet :8080/healthz".
func Describe(p *corev1.Probe) string {
	switch {
	case p == nil:
		return ""
	case p.Exec != nil:
		// A script's newlines and indentation would break the line it
		// is quoted in: runs of blanks read as one.
		return "exec [" + strings.Join(strings.Fields(strings.Join(p.Exec.Command, " ")), " ") + "]"
	case p.HTTPGet != nil:
		return "httpGet :" + p.HTTPGet.Port.String() + p.HTTPGet.Path
	case p.TCPSocket != nil:
		return "tcpSocket :" + p.TCPSocket.Port.String()
	case p.GRPC != nil:
		return "grpc :" + strconv.Itoa(int(p.GRPC.Port))
	}
	return "no handler"
}

// Phrase names a setting the way a mechanism line quotes it:
// "periodSeconds 10" when written, "periodSeconds 10 by default" when not.
func (v Value) Phrase(field string) string {
	if v.Set {
		return field + " " + strconv.Itoa(v.N)
	}
	return field + " " + strconv.Itoa(v.N) + " by default"
}

// KillBudget is how long a probe tolerates slow answers before it acts,
// F x P + T: the measure by which liveness must be more tolerant than
// readiness (BF103).
func (t Timing) KillBudget() int { return t.Failure.N*t.Period.N + t.Timeout.N }

// KillBudgetFormula spells KillBudget out: "3 x 10 + 1".
func (t Timing) KillBudgetFormula() string {
	return strconv.Itoa(t.Failure.N) + " x " + strconv.Itoa(t.Period.N) + " + " + strconv.Itoa(t.Timeout.N)
}

// StartupBudget is how long a startupProbe holds the liveness probe back
// while it keeps failing, counted from the container's start: D + F x P,
// after which the startup probe itself kills the container.
func (t Timing) StartupBudget() int { return t.NeverHealthyKill() }

// FailuresToCover is the failureThreshold at which a probe of this initial
// delay and period allows at least seconds from the container's start
// before it kills (D + F x P >= seconds); at least 1. It is the inverse of
// StartupBudget, the value a fix that raises a startup budget writes.
func (t Timing) FailuresToCover(seconds int) int {
	return FailuresToCover(seconds, t.InitialDelay.N, t.Period.N)
}

// FailuresToCover is ceil((seconds - delay) / period), at least 1.
func FailuresToCover(seconds, delay, period int) int {
	if period <= 0 {
		period = DefaultPeriodSeconds
	}
	need := seconds - delay
	if need <= 0 {
		return 1
	}
	return (need + period - 1) / period
}

// ReturnAfter is how long a pod that readiness took out of rotation needs
// passing probes to come back: successThreshold x periodSeconds.
func (t Timing) ReturnAfter() int { return t.Success.N * t.Period.N }
