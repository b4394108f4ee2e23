package restarts

import (
	"fmt"
	"regexp"
	"strings"

	"backfire.dev/backfire/internal/observe"
)

// A probe whose command cannot run in the container fails every time: the
// kubelet turns a probe error into a failure (k8s.io/kubernetes
// pkg/kubelet/prober prober.go: "Probe errored" → results.Failure), so a
// liveness or startup probe kills the container at D + F x P after every
// start, whatever the server does. The messages are the container
// runtime's: runc's "exec: \"pidof\": executable file not found in $PATH",
// "stat /unleash-edge: no such file or directory", a shell's "Can't open".
var (
	cannotExec = regexp.MustCompile(`executable file not found in \$PATH|no such file or directory|[Cc]an't open|: not found\b|permission denied`)
	execTarget = regexp.MustCompile(`exec: \\*"((?:[^"\\]|\\[^"])+?)\\*"`)
	// A shell's own words for a command it cannot run, the probe's output
	// when the probe is a shell script: dash "sh: 1: pgrep: not found",
	// bash "bash: line 1: curl: command not found", busybox "sh: curl: not
	// found", and "sh: /inited: Permission denied" (POSIX Shell Command
	// Language 2.9.1.1: the shell exits 127 for a command not found, 126
	// for one it cannot execute).
	shellCannotRun = regexp.MustCompile(`(?:^|[\s:])(?:/bin/|/usr/bin/)?(?:ba|da|k|z|a)?sh: (?:line )?(?:[0-9]+: )?([^\s:]+): (?:command not found|not found|Permission denied)`)
	notRunning     = regexp.MustCompile(`(?i)\bis not running\b|container not running`)
)

// unrunnable is a probe that cannot run, as its events say.
type unrunnable struct {
	Kind    string // liveness, startup, readiness
	Command string // as the runtime quotes it, when it does
	Event   observe.Event
	Count   int
	// Shell: the probe's shell said it (its script runs, a command in
	// it cannot), not the container runtime.
	Shell bool
	// Failed: some of its events say "probe failed" (a result the
	// kubelet counts); only "probe errored" ones are results it discards.
	Failed bool
}

// erroredOnly: "Liveness probe errored: ..." (the prober's error, which
// the kubelet's worker throws away), not "... probe failed: ...".
func erroredOnly(msg string) bool {
	kind, rest, ok := strings.Cut(msg, " probe ")
	return ok && kind != "" && strings.HasPrefix(rest, "errored")
}

// cannotRun finds a probe whose command the runtime could not start.
func cannotRun(h History, kinds ...string) *unrunnable {
	for _, k := range kinds {
		var u *unrunnable
		for _, e := range h.Probes[k] {
			if m := shellCannotRun.FindStringSubmatch(e.Message); m != nil {
				if u == nil {
					u = &unrunnable{Kind: k, Event: e, Command: m[1], Shell: true}
				}
				u.Count += e.Count
				u.Failed = u.Failed || !erroredOnly(e.Message)
				continue
			}
			if !strings.Contains(e.Message, "exec") && !strings.Contains(e.Message, "OCI runtime") && !strings.Contains(e.Message, "/bin/sh") {
				continue
			}
			if !cannotExec.MatchString(e.Message) {
				continue
			}
			if u == nil {
				u = &unrunnable{Kind: k, Event: e}
				if m := execTarget.FindStringSubmatch(e.Message); m != nil {
					u.Command = strings.ReplaceAll(m[1], `\`, "")
				}
			}
			u.Count += e.Count
			u.Failed = u.Failed || !erroredOnly(e.Message)
		}
		if u != nil {
			return u
		}
	}
	return nil
}

// ranOnStopped finds probe errors of a container that was not running:
// the stop came first; the error is its echo, not its cause.
func ranOnStopped(h History) (observe.Event, int, bool) {
	var first observe.Event
	n := 0
	for _, k := range []string{"liveness", "startup", "readiness"} {
		for _, e := range h.Probes[k] {
			if strings.Contains(e.Message, "errored") && notRunning.MatchString(e.Message) {
				if n == 0 {
					first = e
				}
				n += e.Count
			}
		}
	}
	return first, n, n > 0
}

// notStarted is a container the kubelet never got running: its config
// (a Secret or ConfigMap it reads) or its image is missing. No probe ran
// and no exit code exists.
type notStarted struct {
	Reason string // the waiting reason, or the event's
	What   string // "configuration", "image", "command"
	// Quote is the kubelet's most telling message, where it was read.
	Quote string
	File  string
	Line  int
	// Events are the events that say so (at most a few, for the report).
	Events []observe.Event
}

// waitingReasons are the kubelet's reasons for a container it could not
// create or start (k8s.io/kubernetes pkg/kubelet/images types.go:
// ErrImagePull, ImagePullBackOff, InvalidImageName, ErrImageNeverPull;
// pkg/kubelet/kuberuntime: CreateContainerConfigError,
// CreateContainerError, RunContainerError).
var waitingReasons = map[string]string{
	"CreateContainerConfigError": "configuration", "CreateContainerError": "configuration",
	"ErrImagePull": "image", "ImagePullBackOff": "image", "InvalidImageName": "image", "ErrImageNeverPull": "image",
	"RunContainerError": "command",
}

var (
	// The kubelet's Failed events: "Error: secret %q not found" and the
	// like from generateContainerConfig, "Error: " + the waiting reason,
	// and the image puller's "Failed to pull image".
	configMessage = regexp.MustCompile(`^Error: (?:secrets?|configmaps?) "[^"]*" not found|^Error: couldn't find key|^Error: .*(?:not found|no such)`)
	imageMessage  = regexp.MustCompile(`^Failed to pull image|^Back-off pulling image|manifest unknown|pull access denied|repository does not exist|not found: manifest`)
	errorReason   = regexp.MustCompile(`^Error: ([A-Za-z]+)$`)
)

// neverStarted reads the container's waiting reason and the events that
// say why it was not created.
func neverStarted(obs *observe.Observation, name, waiting string) *notStarted {
	var ns *notStarted
	if what, ok := waitingReasons[waiting]; ok {
		ns = &notStarted{Reason: waiting, What: what}
	}
	rank := 0 // how telling the quote is: 3 names the object or tag
	for _, e := range obs.Events {
		if e.Container != "" && e.Container != name {
			continue
		}
		what, r := "", 0
		switch {
		case waitingReasons[e.Reason] != "":
			what, r = waitingReasons[e.Reason], 2
		case e.Reason == "Failed" && errorReason.MatchString(e.Message) && waitingReasons[errorReason.FindStringSubmatch(e.Message)[1]] != "":
			what, r = waitingReasons[errorReason.FindStringSubmatch(e.Message)[1]], 1
		case (e.Reason == "Failed" || e.Reason == "BackOff") && configMessage.MatchString(e.Message):
			what, r = "configuration", 3
		case (e.Reason == "Failed" || e.Reason == "BackOff") && imageMessage.MatchString(e.Message):
			what, r = "image", 2
			if e.Reason == "Failed" {
				r = 3
			}
		default:
			continue
		}
		if ns == nil {
			ns = &notStarted{Reason: e.Reason, What: what}
		}
		if what != ns.What {
			continue
		}
		if len(ns.Events) < 4 {
			ns.Events = append(ns.Events, e)
		}
		if r > rank {
			rank = r
			ns.Quote, ns.File, ns.Line = e.Message, e.File, e.Line
			if waitingReasons[e.Reason] != "" {
				ns.Quote = e.Reason + ": " + e.Message
			}
		}
	}
	return ns
}

func (n *notStarted) says() string {
	switch n.What {
	case "configuration":
		return "the kubelet could not create the container: a Secret, ConfigMap or key it reads is missing (or its spec is invalid)"
	case "image":
		return "the kubelet could not pull the image: the name or tag does not exist, or the registry refused the pull"
	}
	return "the container runtime could not start the container's command"
}

func quoteEvent(e observe.Event) string {
	return fmt.Sprintf("%s x%d %q (%s)", e.Reason, e.Count, shorten(e.Message), e.When())
}
