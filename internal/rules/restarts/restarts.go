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
}

// intervalsOf measures the gaps between sorted start times.
func intervalsOf(starts []time.Time) Intervals {
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
}

// Intervals picks the best measure: each interval when start times are
// known, else the mean of an aggregated Killing event.
func (h History) Intervals() Intervals {
	if iv := intervalsOf(h.Starts); iv.N >= 2 {
		return iv
	}
	for _, k := range []*observe.Event{h.Killed, h.Started} {
		if k != nil && k.Count >= 3 && k.Last.After(k.First) {
			mean := k.Last.Sub(k.First) / time.Duration(k.Count-1)
			return Intervals{N: k.Count - 1, Mean: mean, Median: mean, Min: mean, Max: mean, MeanOnly: true, From: k}
		}
	}
	return Intervals{}
}

// historyOf gathers a container's restart evidence from its status, its
// events and its log.
func historyOf(obs *observe.Observation, name string) History {
	h := History{Container: name}
	_, st := obs.Pod.Container(name)
	if st != nil {
		h.Restarts = int(st.RestartCount)
		if t := st.LastTerminationState.Terminated; t != nil && !t.StartedAt.IsZero() && t.FinishedAt.After(t.StartedAt.Time) {
			h.LastRun = t.FinishedAt.Sub(t.StartedAt.Time)
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
	for _, e := range obs.EventsOf(name, "Started", "BackOff") {
		switch {
		case e.Reason == "BackOff":
			h.BackOff += e.Count
		case e.Instant():
			started = append(started, e.Last)
		case h.Started == nil || e.Count > h.Started.Count:
			ev := e
			h.Started = &ev
		}
	}
	for _, e := range obs.EventsOf(name, "Killing", "Unhealthy") {
		kind := probeKind(e.Message)
		if kind == "" {
			continue
		}
		if e.Reason == "Unhealthy" {
			h.Unhealthy += e.Count
			h.UnhealthyKind = kind
			continue
		}
		if e.Instant() {
			fromEvents = append(fromEvents, e.Last)
			continue
		}
		if h.Killed == nil || e.Count > h.Killed.Count {
			ev := e
			h.Killed = &ev
		}
	}
	if len(h.Starts) < 3 && len(fromEvents) > len(h.Starts) {
		h.Starts, h.Source = fromEvents, "Killing events"
	}
	if len(h.Starts) < 3 && len(started) > len(h.Starts) {
		h.Starts, h.Source = started, "Started events"
	}
	sort.Slice(h.Starts, func(i, j int) bool { return h.Starts[i].Before(h.Starts[j]) })
	return h
}

// probeKind reads "liveness" or "startup" from a kubelet event message
// ("Container database failed liveness probe, will be restarted",
// "Liveness probe failed: ...").
func probeKind(msg string) string {
	for _, k := range []string{"liveness", "startup", "Liveness", "Startup"} {
		if containsWord(msg, k) {
			return lower(k)
		}
	}
	return ""
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
