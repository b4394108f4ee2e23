package restarts

import (
	"backfire.dev/backfire/internal/evidence"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/rules/diagnosis"
)

// BF502 exit-code.
var BF502 = rules.Register(&rules.Rule{
	ID: "BF502", Slug: "exit-code", Severity: finding.Info,
	Summary:  "diagnose: what a container's exit code rules out (137 is OOM only with reason OOMKilled; 141 is only 128 + 13)",
	Kinds:    podKind,
	Check:    &diagnosis.Check{Run: bf502},
	Evidence: []any{BF502Evidence{}},
})

// signals names the signals whose 128 + n exit codes are common; the
// numbers are Linux's (signal(7)).
var signals = map[int]string{1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 6: "SIGABRT", 7: "SIGBUS",
	8: "SIGFPE", 9: "SIGKILL", 11: "SIGSEGV", 13: "SIGPIPE", 14: "SIGALRM", 15: "SIGTERM"}

// ExitReading is what an exit code says and what it rules out; it never
// names a cause the code cannot show.
type ExitReading struct {
	Message   string
	Says      string
	RulesOut  string
	NotShown  string
	OOM       bool
	SignalNum int
}

// ReadExit reads a terminated container's exit code and reason.
func ReadExit(code int32, reason string, grace int) (ExitReading, bool) {
	n := int(code)
	oom := reason == "OOMKilled"
	switch {
	case oom:
		return ExitReading{OOM: true, SignalNum: 9,
			Message:  fmt.Sprintf("exit %d with reason OOMKilled: the kernel's OOM killer ended the container", n),
			Says:     "reason OOMKilled: the container's memory cgroup hit its limit and the kernel killed a process in it",
			RulesOut: "a probe kill or a crash of its own as the last stop's cause",
			NotShown: "why memory grew: the code does not say which allocation"}, true
	case n == 137:
		return ExitReading{SignalNum: 9,
			Message:  "exit 137 = 128 + 9 (SIGKILL) without reason OOMKilled: not the OOM killer",
			Says:     "the main process died of SIGKILL",
			RulesOut: "the OOM killer (it would set reason OOMKilled)",
			NotShown: fmt.Sprintf("who sent SIGKILL: a stop that outlasts the grace period (%d s here) ends with one, but the code alone does not say", grace)}, true
	case n == 143:
		return ExitReading{SignalNum: 15,
			Message:  "exit 143 = 128 + 15 (SIGTERM): the process ended on the signal a stop begins with",
			Says:     "the main process died of SIGTERM, within the grace period",
			RulesOut: "the OOM killer, and a SIGKILL after the grace period",
			NotShown: "who stopped it: a liveness or startup kill, a delete, a drain or an eviction all send SIGTERM first"}, true
	case n == 141:
		return ExitReading{SignalNum: 13,
			Message:  "exit 141 = 128 + 13 (SIGPIPE) is arithmetic, not a mechanism",
			Says:     "the main process reported 141: by the shell convention, death by SIGPIPE",
			RulesOut: "the OOM killer (137 with OOMKilled) and a SIGKILL after the grace period (137)",
			NotShown: "which process wrote to a closed pipe or socket, or whether the main process is a shell passing on a child's status: check the image's entrypoint (PID 1) before naming a cause"}, true
	case n > 128 && n < 128+65:
		name := signals[n-128]
		if name == "" {
			name = fmt.Sprintf("signal %d", n-128)
		}
		return ExitReading{SignalNum: n - 128,
			Message:  fmt.Sprintf("exit %d = 128 + %d (%s) is arithmetic: death by that signal, if the main process followed the shell convention", n, n-128, name),
			Says:     "the main process reported a signal death",
			RulesOut: "the OOM killer (137 with OOMKilled)",
			NotShown: "who sent the signal, or why"}, true
	}
	return ExitReading{}, false
}

func bf502(p *diagnosis.Pass) {
	pod := p.Obs.Pod
	grace := 30
	if g := pod.Pod.Spec.TerminationGracePeriodSeconds; g != nil {
		grace = int(*g)
	}
	for _, c := range containers(pod) {
		_, st := pod.Container(c.Name)
		if st == nil {
			continue
		}
		t, where := st.LastTerminationState.Terminated, "lastState"
		if t == nil {
			t, where = st.State.Terminated, "state"
		}
		if t == nil {
			continue
		}
		r, ok := ReadExit(t.ExitCode, t.Reason, grace)
		if !ok {
			continue
		}
		mech := []string{
			fmt.Sprintf("%s.terminated: exitCode %d, reason %q%s, after %d restarts", where, t.ExitCode, t.Reason, signalNote(t), st.RestartCount),
			"it says: " + r.Says,
			"it rules out: " + r.RulesOut,
			"it does not show: " + r.NotShown,
		}
		sev := finding.Info
		if r.OOM {
			sev = finding.Warning
		}
		p.Report(finding.Finding{Severity: sev, Container: c.Name,
			Path:    pod.StatusPath(c.Name) + "." + statusField(where) + ".terminated.exitCode",
			Message: r.Message, Mechanism: mech,
			Evidence: evidence.Map(BF502Evidence{ExitCode: t.ExitCode, Reason: t.Reason, Signal: r.SignalNum, OOMKilled: r.OOM})})
	}
}

func statusField(where string) string {
	if where == "lastState" {
		return "lastState"
	}
	return "state"
}

func signalNote(t *corev1.ContainerStateTerminated) string {
	if t.Signal != 0 {
		return fmt.Sprintf(", signal %d", t.Signal)
	}
	return ""
}
