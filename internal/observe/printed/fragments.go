package printed

import (
	"backfire.dev/backfire/internal/lazyregexp"
	"regexp"
	"strings"
)

// Event messages pasted without their row. The messages are the kubelet's
// (k8s.io/kubernetes pkg/kubelet: prober "%s probe failed: %s" and "%s
// probe errored: %v"; kuberuntime "Container %s failed liveness probe,
// will be restarted"; images "Back-off pulling image %q", "Failed to pull
// image"; kuberuntime_container "Error: ..." for a container it cannot
// create), and "STATUS: message" lines as dashboards print a waiting
// container's reason and message.
var messagePatterns = []struct {
	re           func() *regexp.Regexp
	typ, reason  string
	reasonFromRE bool
}{
	{lazyregexp.New(`^(?:Liveness|Readiness|Startup) probe (?:failed|errored)\b`), "Warning", "Unhealthy", false},
	{lazyregexp.New(`^Container \S+ failed (?:liveness|startup) probe, will be restarted`), "Normal", "Killing", false},
	{lazyregexp.New(`^Back-off restarting failed container`), "Warning", "BackOff", false},
	{lazyregexp.New(`^Back-off pulling image`), "Normal", "BackOff", false},
	{lazyregexp.New(`^Failed to pull image`), "Warning", "Failed", false},
	{lazyregexp.New(`^Error: (?:secrets?|configmaps?) "[^"]*" not found|^Error: couldn't find key `), "Warning", "Failed", false},
	{lazyregexp.New(`^(?:Successfully pulled image|Container image .* already present on machine)`), "Normal", "Pulled", false},
	{lazyregexp.New(`^(?:Pulling|pulling) image`), "Normal", "Pulling", false},
	{lazyregexp.New(`^Created container`), "Normal", "Created", false},
	{lazyregexp.New(`^Started container`), "Normal", "Started", false},
	{lazyregexp.New(`^(?:ImagePullBackOff|ErrImagePull|CreateContainerConfigError|CreateContainerError|InvalidImageName|ErrImageNeverPull|CrashLoopBackOff|RunContainerError|OOMKilled): `), "Warning", "", true},
}

// messageEvent reads a line that is an event message on its own.
func messageEvent(s string) *Event {
	t := strings.TrimPrefix(strings.TrimSpace(s), "(combined from similar events): ")
	for _, p := range messagePatterns {
		if !p.re().MatchString(t) {
			continue
		}
		e := &Event{Type: p.typ, Reason: p.reason, Message: t, Count: 1, Timeless: true}
		if p.reasonFromRE {
			e.Reason, e.Message, _ = strings.Cut(t, ": ")
			e.Message = strings.TrimSpace(e.Message)
		}
		return e
	}
	return nil
}

// inlineStart finds where one of the kubelet's messages begins inside a
// line of prose: "Kubernetes reports Liveness probe failed: ...",
// "I see `Container web failed liveness probe, will be restarted`".
var inlineStart = lazyregexp.New(`(?:Liveness|Readiness|Startup) probe (?:failed|errored): |Container \S+ failed (?:liveness|startup) probe, will be restarted|Back-off restarting failed container`)

// inlineEvent reads an event message quoted in a line of prose, up to the
// quote that closes it when one opened it.
func inlineEvent(s string) *Event {
	loc := inlineStart().FindStringIndex(s)
	if loc == nil || loc[0] == 0 {
		return nil
	}
	msg := s[loc[0]:]
	if q := s[loc[0]-1]; q == '"' || q == '`' || q == '\'' {
		if end := strings.LastIndexByte(msg, q); end > 0 {
			msg = msg[:end]
		}
	}
	e := messageEvent(strings.TrimSpace(msg))
	if e != nil {
		e.Inline = true
	}
	return e
}

// messages reads consecutive event messages (each may continue on the
// lines after it, as a probe's output does).
func (r *reader) messages() {
	for r.i < len(r.lines) {
		l := r.lines[r.i]
		e := messageEvent(l.Text)
		if e == nil {
			return
		}
		e.Line = l.N
		r.i++
		for r.i < len(r.lines) && !blank(r.lines[r.i].Text) && messageEvent(r.lines[r.i].Text) == nil &&
			r.rowLayout(r.lines[r.i].Text) == nil && containerKey(r.lines[r.i].Text) == "" && !isPodsHeader(r.lines[r.i].Text) &&
			r.eventsHeader() == nil && !r.describeStart() && e.Wrapped < 40 && continuation(r.lines[r.i].Text) {
			e.Message += "\n" + strings.TrimSpace(r.lines[r.i].Text)
			e.Wrapped++
			r.i++
		}
		r.c.Loose = append(r.c.Loose, *e)
	}
}

// continuation: a probe's output continued ("timeout: the monitored
// command dumped core", ", stdout: , stderr: , exit code -1"), not prose:
// it has no sentence of words around the paste. Kept simple: a line that
// starts with a lowercase word and a colon, or with punctuation.
func continuation(s string) bool {
	t := strings.TrimSpace(s)
	if t == "" {
		return false
	}
	if strings.ContainsAny(t[:1], ",;:.)]\"'") {
		return true
	}
	return wordColon().MatchString(t)
}

var wordColon = lazyregexp.New(`^[a-z][a-z0-9_-]*:`)
