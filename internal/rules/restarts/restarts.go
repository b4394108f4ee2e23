// Package restarts holds the diagnose rules (BF5xx): they read what a
// running pod did (container status, events, logs) and say whether its
// restarts are its own probe's arithmetic, what its exit codes rule out, and
// whether its logs show a recovery that is killed again and again.
package restarts

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"backfire.dev/backfire/internal/observe"
	"backfire.dev/backfire/internal/recoverylog"
)

// Kinds: the diagnose rules read pods only.
var podKind = []string{"Pod"}

// Intervals summarises the time between restarts.
type Intervals struct {
	N                      int
	Median, Min, Max, Mean time.Duration
	// MeanOnly: only the count and the span are known (an aggregated
	// event, From), not each interval.
	MeanOnly bool
	From     *observe.Event
	// Slack is how far the measure may be off because the times were
	// printed as truncated ages (zero for times read from the API).
	Slack time.Duration
}

// Range is the interval the measure may lie in, given its slack.
func (iv Intervals) Range(observed time.Duration) (lo, hi time.Duration) {
	return max(observed-iv.Slack, 0), observed + iv.Slack
}

// intervalsOf measures the gaps between sorted start times.
func intervalsOf(starts []time.Time, slack time.Duration) Intervals {
	iv := intervalsBetween(starts)
	if iv.N > 0 {
		iv.Slack = slack
	}
	return iv
}

func intervalsBetween(starts []time.Time) Intervals {
	var d []time.Duration
	for i := 1; i < len(starts); i++ {
		d = append(d, starts[i].Sub(starts[i-1]))
	}
	if len(d) == 0 {
		return Intervals{}
	}
	slices.Sort(d)
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	med := d[len(d)/2]
	if len(d)%2 == 0 {
		med = (d[len(d)/2-1] + d[len(d)/2]) / 2
	}
	return Intervals{N: len(d), Median: med, Min: d[0], Max: d[len(d)-1], Mean: sum / time.Duration(len(d))}
}

// History is what is known of one container's restarts.
type History struct {
	Container string
	Restarts  int // restartCount
	// Starts are individual start times (from a log, single events, the
	// container's state), sorted; Source says where they came from.
	Starts []time.Time
	Source string
	// Killed is the aggregated Killing event of a liveness or startup
	// kill, when there is one.
	Killed *observe.Event
	// LastRun is how long the previous container ran (lastState).
	LastRun time.Duration
	// Started is the aggregated Started event: a mean interval when no
	// Killing event gives one (a container that exits on its own).
	Started *observe.Event
	// Unhealthy counts failed liveness (or startup) probes, by the events.
	Unhealthy     int
	UnhealthyKind string
	// BackOff counts the kubelet's "Back-off restarting failed container"
	// events: restarts held back, as for a container that exits on its own.
	BackOff int
	// LastRunFrom says where LastRun was read: "lastState" or "state"
	// (a container that is stopped now).
	LastRunFrom string
	// Slack: the start times were printed as ages, truncated by up to this.
	Slack time.Duration
	// Kills are Killing events whose message does not say why (kubectl
	// 1.0's "Killing <id>"): stops by the kubelet, cause unknown.
	Kills int
	// Probes are the Unhealthy events by probe kind ("liveness",
	// "readiness", "startup").
	Probes map[string][]observe.Event
	// KilledBy counts the kills the kubelet's Killing events put on each
	// probe ("liveness", "startup").
	KilledBy map[string]int
	// RestartsKnown: the restart count was read (a capture may not show
	// it; Restarts is then 0 and means nothing).
	RestartsKnown bool
}

// count says the restart count as read: "42 restarts", or that the
// capture does not show it, never a 0 that was not read.
func (h History) count() string {
	if !h.RestartsKnown {
		return "restart count unknown (not in the capture)"
	}
	return fmt.Sprintf("%d restarts", h.Restarts)
}

// RestartsPhrase is "after 42 restarts", or "restart count unknown" when
// the pod's restart count for the container was not read.
func RestartsPhrase(p *observe.Pod, name string, n int32) string {
	if !p.Knows(p.StatusPath(name) + ".restartCount") {
		return "restart count unknown (not in the capture)"
	}
	return fmt.Sprintf("after %d restarts", n)
}

// Intervals picks the best measure: each interval when start times are
// known, else the mean of an aggregated Killing event.
func (h History) Intervals() Intervals {
	if iv := intervalsOf(h.Starts, h.Slack); iv.N >= 2 {
		return iv
	}
	for _, k := range []*observe.Event{h.Killed, h.Started} {
		if k != nil && k.Count >= 3 && k.Last.After(k.First) {
			n := time.Duration(k.Count - 1)
			mean := k.Last.Sub(k.First) / n
			return Intervals{N: k.Count - 1, Mean: mean, Median: mean, Min: mean, Max: mean, MeanOnly: true, From: k,
				Slack: (k.FirstSlack + k.LastSlack) / n}
		}
	}
	return Intervals{}
}

// historyOf gathers a container's restart evidence from its status, its
// events and its log.
func historyOf(obs *observe.Observation, name string) History {
	h := History{Container: name, Probes: map[string][]observe.Event{}, KilledBy: map[string]int{}}
	_, st := obs.Pod.Container(name)
	h.RestartsKnown = st != nil && obs.Pod.Knows(obs.Pod.StatusPath(name)+".restartCount")
	if st != nil {
		h.Restarts = int(st.RestartCount)
		for _, s := range []struct {
			t    *corev1.ContainerStateTerminated
			from string
		}{{st.LastTerminationState.Terminated, "lastState"}, {st.State.Terminated, "state"}} {
			if t := s.t; t != nil && !t.StartedAt.IsZero() && t.FinishedAt.After(t.StartedAt.Time) && h.LastRun == 0 {
				h.LastRun, h.LastRunFrom = t.FinishedAt.Sub(t.StartedAt.Time), s.from
			}
		}
	}
	for _, l := range obs.Logs {
		if l.Container != name {
			continue
		}
		if starts := recoverylog.Scan(l.Data).Starts; len(starts) > len(h.Starts) {
			h.Starts, h.Source = starts, "log "+l.File
		}
	}
	var fromEvents, started []time.Time
	var eventSlack time.Duration
	for _, e := range obs.EventsOf(name, "Started", "BackOff") {
		switch {
		case e.Timeless:
		case e.Reason == "BackOff":
			if !strings.Contains(e.Message, "pulling image") {
				h.BackOff += e.Count
			}
		case e.Instant():
			started = append(started, e.Last)
			eventSlack = max(eventSlack, e.LastSlack)
		case h.Started == nil || e.Count > h.Started.Count:
			ev := e
			h.Started = &ev
		}
	}
	for _, e := range obs.EventsOf(name, "Killing", "Unhealthy") {
		if e.Reason == "Unhealthy" {
			if k := unhealthyKind(e.Message); k != "" {
				h.Probes[k] = append(h.Probes[k], e)
			}
		}
		kind := probeKind(e.Message)
		if kind == "" {
			if e.Reason == "Killing" && !specChange(e.Message) {
				h.Kills += e.Count
				if e.Instant() && !e.Timeless {
					fromEvents = append(fromEvents, e.Last)
					eventSlack = max(eventSlack, e.LastSlack)
				}
			}
			continue
		}
		if e.Reason == "Unhealthy" {
			h.Unhealthy += e.Count
			h.UnhealthyKind = kind
			continue
		}
		h.KilledBy[kind] += e.Count
		if e.Timeless {
			continue
		}
		if e.Instant() {
			fromEvents = append(fromEvents, e.Last)
			eventSlack = max(eventSlack, e.LastSlack)
			continue
		}
		if h.Killed == nil || e.Count > h.Killed.Count {
			ev := e
			h.Killed = &ev
		}
	}
	if len(h.Starts) < 3 && len(fromEvents) > len(h.Starts) {
		h.Starts, h.Source, h.Slack = fromEvents, "Killing events", eventSlack
	}
	if len(h.Starts) < 3 && len(started) > len(h.Starts) {
		h.Starts, h.Source, h.Slack = started, "Started events", eventSlack
	}
	sort.Slice(h.Starts, func(i, j int) bool { return h.Starts[i].Before(h.Starts[j]) })
	return h
}

// probeKind reads "liveness" or "startup" from a kubelet event message
// ("Container database failed liveness probe, will be restarted",
// "Liveness probe failed: ..."). The kubelet of Kubernetes 1.3-1.8 wrote
// "container %q is unhealthy, it will be killed and re-created." for a
// liveness kill (its livenessManager was then the only prober that
// killed; startup probes came in 1.16).
func probeKind(msg string) string {
	if strings.HasPrefix(msg, "Readiness probe") {
		return ""
	}
	for _, k := range []string{"liveness", "startup", "Liveness", "Startup"} {
		if containsWord(msg, k) {
			return lower(k)
		}
	}
	if strings.Contains(msg, "is unhealthy, it will be killed and re-created") {
		return "liveness"
	}
	return ""
}

// unhealthyKind reads the probe of an Unhealthy event: "Liveness probe
// failed: ...", "Readiness probe errored: ..." (k8s.io/kubernetes
// pkg/kubelet/prober: "%s probe failed: %s", "%s probe errored: %v").
func unhealthyKind(msg string) string {
	for _, k := range []string{"Liveness", "Readiness", "Startup"} {
		if strings.HasPrefix(msg, k+" probe") {
			return lower(k)
		}
	}
	return ""
}

// specChange: a Killing event for a changed container spec, not a probe
// ("Container spec hash changed ... will be killed and recreated",
// "Container x definition changed").
func specChange(msg string) bool {
	return strings.Contains(msg, "hash changed") || strings.Contains(msg, "definition changed")
}

func containsWord(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		if s[i:i+len(w)] == w {
			return true
		}
	}
	return false
}

func lower(s string) string {
	if s != "" && s[0] >= 'A' && s[0] <= 'Z' {
		return string(s[0]+'a'-'A') + s[1:]
	}
	return s
}

// containers lists the pod's containers that have a status, in spec order.
func containers(p *observe.Pod) []corev1.Container {
	var out []corev1.Container
	for _, c := range p.Pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			out = append(out, c) // a native sidecar runs and restarts like a container
		}
	}
	return append(out, p.Pod.Spec.Containers...)
}

// seconds prints a duration in whole seconds with minutes beside it:
// "342 s (5.7 min)".
func seconds(d time.Duration) string {
	s := d.Seconds()
	if s < 90 {
		return fmt.Sprintf("%.0f s", s)
	}
	return fmt.Sprintf("%.0f s (%.1f min)", s, s/60)
}

func secs(d time.Duration) string { return fmt.Sprintf("%.0f s", d.Seconds()) }

func minutes(d time.Duration) float64 { return math.Round(d.Minutes()*10) / 10 }

func clock(t time.Time) string { return t.UTC().Format("15:04:05") }

// clock prints a start time as it was read: a time of day, or an age
// when the times were printed as ages.
func (h History) clock(t time.Time) string {
	if h.Slack > 0 && !t.After(observe.CaptureTime) {
		return observe.AgoOf(t)
	}
	return clock(t)
}

// slackNote says how far printed ages leave a measure uncertain.
func slackNote(iv Intervals) string {
	if iv.Slack < time.Second {
		return ""
	}
	return fmt.Sprintf(" (within ±%s: the times were printed as truncated ages)", secs(iv.Slack))
}
