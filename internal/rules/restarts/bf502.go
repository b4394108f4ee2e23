package restarts

import (
	"fmt"
	"slices"

	"backfire.dev/backfire/internal/classify"
	"backfire.dev/backfire/internal/evidence"

	corev1 "k8s.io/api/core/v1"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/rules/diagnosis"
)

// BF502 exit-code.
var BF502 = rules.Register(&rules.Rule{
	ID: "BF502", Slug: "exit-code", Severity: finding.Info,
	Summary:  "diagnose: what a container's exit code or failed start rules out (137 is OOM only with reason OOMKilled; 141 is only 128 + 13; a missing Secret or image means no probe ran)",
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

// ReadExit reads a terminated container's exit code and reason; restarts
// is its restart count (an exit 0 says something only when it was
// restarted).
func ReadExit(code int32, reason string, grace, restarts int) (ExitReading, bool) {
	n := int(code)
	oom := reason == "OOMKilled"
	switch {
	case oom && n != 137:
		// The runtime sets reason OOMKilled when the kernel's OOM killer
		// killed any process in the container's cgroup (containerd
		// pkg/cri/server/events.go: a TaskOOM event sets Reason to
		// OOMKilled whatever the exit code); the exit code is the main
		// process's own (kubernetes/kubernetes#131530: OOMKilled, exit 0).
		sig := 0
		if n > 128 && n < 128+65 {
			sig = n - 128
		}
		return ExitReading{OOM: true, SignalNum: sig,
			Message:  fmt.Sprintf("reason OOMKilled with exit %d: the OOM killer killed a process in the container, and the main process then exited %d itself", n, n),
			Says:     fmt.Sprintf("the container's memory cgroup hit its limit and the kernel killed a process in it; the main process was not that process (it would exit 137): it exited %d on its own", n),
			RulesOut: "a probe kill as the last stop's cause, and an OOM kill of the main process itself",
			NotShown: "which process was killed (a child, a worker) and why memory grew; the main process's log of its last run (kubectl logs --previous) may say what it lost"}, true
	case oom:
		return ExitReading{OOM: true, SignalNum: 9,
			Message:  fmt.Sprintf("exit %d with reason OOMKilled: the kernel's OOM killer ended the container", n),
			Says:     "reason OOMKilled: the container's memory cgroup hit its limit and the kernel killed a process in it",
			RulesOut: "a probe kill or a crash of its own as the last stop's cause",
			NotShown: "why memory grew: the code does not say which allocation"}, true
	case n == 137:
		return ExitReading{SignalNum: 9,
			Message:  "exit 137 = 128 + 9 (SIGKILL) without reason OOMKilled: a SIGKILL, and the OOM killer is unlikely",
			Says:     "the main process died of SIGKILL",
			RulesOut: "nothing for certain. The OOM killer is unlikely, since the runtime sets reason OOMKilled when it sees the container's cgroup OOM event (containerd pkg/cri/server/events.go, TaskOOM), but that event can be missed: a race between the exit and the event (kata-containers/kata-containers#8821), a runtime that did not report it (kubernetes/kubernetes#19825), or a kill under the node's memory pressure rather than the container's limit; the node's kernel log (dmesg: \"Killed process\") settles it",
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
	case n == 126 || n == 127:
		what := map[int]string{126: "found but not executable", 127: "not found"}[n]
		return ExitReading{
			Message:  fmt.Sprintf("exit %d: by the shell's convention, the command to run was %s", n, what),
			Says:     fmt.Sprintf("a shell that cannot run a command exits %d (POSIX Shell Command Language 2.8.2: 127 not found, 126 found but not executable)", n),
			RulesOut: "a signal, the OOM killer, a probe kill",
			NotShown: "which command: the previous run's log (kubectl logs --previous) names it"}, true
	case n > 0:
		return ExitReading{
			Message:  fmt.Sprintf("exit %d: the main process ended with its own status, not by a signal", n),
			Says:     fmt.Sprintf("the main process called exit(%d): an error it reported itself", n),
			RulesOut: "the OOM killer and a SIGKILL (both give 137)",
			NotShown: "what failed (the previous run's log says: kubectl logs --previous), nor that no probe stopped it: a process that handles SIGTERM exits with a code of its own"}, true
	case n == 0 && restarts > 0:
		return ExitReading{
			Message:  "exit 0 and restarted: the main process finished, and the kubelet started it again (restartPolicy)",
			Says:     "the main process exited with success: a container whose command returns is restarted under restartPolicy Always, and backs off as one that crashes",
			RulesOut: "the OOM killer and a SIGKILL (both give 137)",
			NotShown: "why the command returned (a command that does not stay in the foreground, such as a daemon that forks or a shell with nothing to run, returns at once), nor that no probe stopped it: a process that handles SIGTERM may exit 0"}, true
	}
	return ExitReading{}, false
}

// ReadReason reads a termination whose exit code the capture does not
// show (a kubectl get pods STATUS, a Reason line without Exit Code).
func ReadReason(reason string, restarts int) (ExitReading, bool) {
	switch reason {
	case "OOMKilled":
		r, _ := ReadExit(137, "OOMKilled", 30, restarts)
		r.Message = "reason OOMKilled: the kernel's OOM killer ended the container (the exit code is not in the capture)"
		return r, true
	case "Error":
		return ExitReading{
			Message:  "reason Error: the container stopped with a non-zero exit code, which the capture does not show",
			Says:     "the main process ended with a non-zero status or by a signal other than the OOM killer's",
			RulesOut: "the OOM killer (it gives reason OOMKilled)",
			NotShown: "the code, and so whether a signal ended it: kubectl describe pod prints the Last State's Exit Code"}, true
	case "Completed":
		if restarts > 0 {
			r, _ := ReadExit(0, "Completed", 30, restarts)
			return r, true
		}
	}
	return ExitReading{}, false
}

func bf502(p *diagnosis.Pass) {
	pod := p.Obs.Pod
	grace := 30
	if g := pod.Pod.Spec.TerminationGracePeriodSeconds; g != nil {
		grace = int(*g)
	}
	for _, c := range slices.Concat(pod.Pod.Spec.InitContainers, pod.Pod.Spec.Containers) {
		_, st := pod.Container(c.Name)
		waiting := ""
		if st != nil && st.State.Waiting != nil {
			waiting = st.State.Waiting.Reason
		}
		if ns := neverStarted(p.Obs, c.Name, waiting); ns != nil {
			reportNotStarted(p, c.Name, st, ns)
			continue
		}
		if st == nil {
			continue
		}
		t, where := st.LastTerminationState.Terminated, "lastState"
		if t == nil {
			t, where = st.State.Terminated, "state"
		}
		if t == nil {
			if waiting == "CrashLoopBackOff" {
				p.Note(fmt.Sprintf("container %s is in CrashLoopBackOff: it keeps stopping, and the kubelet holds its restarts back; the capture does not show how it stopped (the Last State's Reason and Exit Code)", c.Name))
			}
			continue
		}
		path := pod.StatusPath(c.Name) + "." + statusField(where) + ".terminated"
		codeKnown := pod.Knows(path + ".exitCode")
		var r ExitReading
		var ok bool
		if codeKnown {
			r, ok = ReadExit(t.ExitCode, t.Reason, grace, int(st.RestartCount))
		} else {
			r, ok = ReadReason(t.Reason, int(st.RestartCount))
		}
		if !ok {
			continue
		}
		after := RestartsPhrase(pod, c.Name, st.RestartCount)
		first := fmt.Sprintf("%s.terminated: exitCode %d, reason %q%s, %s", where, t.ExitCode, t.Reason, signalNote(t), after)
		if !codeKnown {
			first = fmt.Sprintf("%s.terminated: reason %q, %s; the capture does not show the exit code", where, t.Reason, after)
		}
		mech := []string{first,
			"it says: " + r.Says,
			"it rules out: " + r.RulesOut,
			"it does not show: " + r.NotShown,
		}
		if note := pid1Note(&c, t.ExitCode); note != "" {
			mech = append(mech, note)
		}
		sev := finding.Info
		if r.OOM {
			sev = finding.Warning
		}
		fpath := path + ".exitCode"
		if !codeKnown {
			fpath = path + ".reason"
		}
		p.Report(finding.Finding{Severity: sev, Container: c.Name,
			Path:    fpath,
			Message: r.Message, Mechanism: mech,
			Evidence: evidence.Map(BF502Evidence{ExitCode: t.ExitCode, Reason: t.Reason, Signal: r.SignalNum, OOMKilled: r.OOM, ExitCodeShown: boolPtr(codeKnown)})})
	}
}

// pid1Note reads the spec's command for what a shell exit code and a
// SIGKILL point at: a shell that stays PID 1 (classify.PID1Of, BF601 in a
// scan) reports its last command's status, and drops the stop signal, so
// every stop of the server ends in SIGKILL.
func pid1Note(c *corev1.Container, code int32) string {
	if code != 137 && code != 141 && code != 143 {
		return ""
	}
	v := classify.Container("Pod", c)
	p := classify.PID1Of(c, v)
	if !p.Keeps {
		return ""
	}
	what := fmt.Sprintf("the spec's command is %s -c: %s, so PID 1 is the shell (BF601 when the manifest is scanned)", p.Shell, p.Why)
	switch code {
	case 141, 143:
		return what + fmt.Sprintf("; a shell exits with its last command's status, 128 + the signal when a child died of one, so %d may be a child's death passed on, and the stop signal never reaches %s", code, v.Server.Name)
	}
	return what + "; PID 1 drops the stop signal, so a stop of the pod ends in the runtime's SIGKILL at the end of the grace period: 137 on every stop"
}

func boolPtr(b bool) *bool {
	if b {
		return nil // the usual case: the field is left out
	}
	return &b
}

// reportNotStarted: the kubelet never started the container. It has no
// exit code, and no probe of it ever ran.
func reportNotStarted(p *diagnosis.Pass, name string, st *corev1.ContainerStatus, ns *notStarted) {
	pod := p.Obs.Pod
	mech := []string{}
	if st != nil && st.State.Waiting != nil && st.State.Waiting.Reason != "" {
		mech = append(mech, fmt.Sprintf("state.waiting: reason %q", st.State.Waiting.Reason))
	}
	for _, e := range ns.Events {
		mech = append(mech, "events: "+quoteEvent(e))
	}
	mech = append(mech, "it says: "+ns.says(),
		"it rules out: every probe (none ran: the container never started), the OOM killer and the container's own exit: there is no exit code",
		"it does not show: "+map[string]string{
			"configuration": "which object to create, when the message does not name it: kubectl describe pod lists the Secrets and ConfigMaps the pod reads",
			"image":         "whether the tag was never pushed or the pull was refused: the Failed event's message says which",
			"command":       "why the command could not start: the Failed event's message quotes the runtime's error",
		}[ns.What])
	f := finding.Finding{Severity: finding.Warning, Container: name,
		Message:   fmt.Sprintf("the container never started: %s; no probe ran, so no probe is the cause", ns.says()),
		Mechanism: mech,
		Evidence:  evidence.Map(BF502Evidence{Reason: ns.Reason, NotStarted: ns.What})}
	if st != nil && st.State.Waiting != nil {
		f.Path = pod.StatusPath(name) + ".state.waiting.reason"
	} else if ns.Line > 0 {
		f.File, f.Line = ns.File, ns.Line
	}
	p.Report(f)
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
