// Package observe reads what a running pod did, the way the API server and
// kubectl print it: the pod with its status (kubectl get pod -o yaml|json),
// its events (kubectl get events -o json, core/v1 and events.k8s.io/v1),
// and its containers' logs (plain text). The diagnose rules read these.
package observe

import (
	"backfire.dev/backfire/internal/exactjson"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"

	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
)

// Pod is one pod as read, with the document it came from (for positions).
type Pod struct {
	*object.Object
	Pod *corev1.Pod
	// Printed is set for a pod rebuilt from kubectl's printed text: what
	// the capture held, and on which lines.
	Printed *Printed
}

// Container returns the spec and status of a container (init containers
// included) by name.
func (p *Pod) Container(name string) (*corev1.Container, *corev1.ContainerStatus) {
	var spec *corev1.Container
	for i := range p.Pod.Spec.Containers {
		if p.Pod.Spec.Containers[i].Name == name {
			spec = &p.Pod.Spec.Containers[i]
		}
	}
	for i := range p.Pod.Spec.InitContainers {
		if p.Pod.Spec.InitContainers[i].Name == name {
			spec = &p.Pod.Spec.InitContainers[i]
		}
	}
	for i := range p.Pod.Status.ContainerStatuses {
		if p.Pod.Status.ContainerStatuses[i].Name == name {
			return spec, &p.Pod.Status.ContainerStatuses[i]
		}
	}
	for i := range p.Pod.Status.InitContainerStatuses {
		if p.Pod.Status.InitContainerStatuses[i].Name == name {
			return spec, &p.Pod.Status.InitContainerStatuses[i]
		}
	}
	return spec, nil
}

// StatusPath is the field path of a container's status:
// "status.containerStatuses[0]".
func (p *Pod) StatusPath(name string) string {
	for i, s := range p.Pod.Status.ContainerStatuses {
		if s.Name == name {
			return fmt.Sprintf("status.containerStatuses[%d]", i)
		}
	}
	for i, s := range p.Pod.Status.InitContainerStatuses {
		if s.Name == name {
			return fmt.Sprintf("status.initContainerStatuses[%d]", i)
		}
	}
	return "status"
}

// Line returns the line of a field of the pod's document, or of the
// deepest part of it that exists.
func (p *Pod) Line(path string) (int, int) {
	if p.Printed != nil {
		if l := p.Printed.Line(path); l > 0 {
			return l, 1
		}
		return max(p.Printed.First(), 1), 1
	}
	pos, _ := p.Doc.Locate(path)
	return pos.Line, pos.Column
}

// Event is one event of either API, as the diagnosis needs it.
type Event struct {
	Reason, Message, Type string
	// Object is what the event is about.
	Object    object.Ref
	UID       string
	FieldPath string
	// Container is read from the field path ("spec.containers{database}").
	Container string
	// Count is how many times the event happened (1 when not aggregated);
	// First and Last when it happened first and last.
	Count       int
	First, Last time.Time
	File        string
	Line        int
	// Ago: the event was printed with ages ("3m2s (x42 over 1h)") counted
	// back from when kubectl ran, which the capture does not say. First
	// and Last are then on an arbitrary clock, right for differences only,
	// and FirstAge and LastAge are the ages as printed.
	Ago               bool
	FirstAge, LastAge string
	// FirstSlack and LastSlack: a printed age is truncated, so the event
	// may have happened up to this much before First and Last.
	FirstSlack, LastSlack time.Duration
	// Timeless: the capture gives no time at all (an event message on its
	// own); First and Last are zero.
	Timeless bool
}

// Instant reports whether the event is one occurrence at one time.
func (e Event) Instant() bool { return e.Count <= 1 || e.First.Equal(e.Last) }

// When says when the event happened, in the terms it was printed in:
// "from 04:53:01 to 08:50:03", "from 3h57m to 7s ago", "at 08:50:03".
func (e Event) When() string {
	const clock = "15:04:05"
	switch {
	case e.Timeless:
		return "at a time the capture does not give"
	case e.Ago && (e.Count <= 1 || e.FirstAge == e.LastAge):
		return e.LastAge + " ago"
	case e.Ago:
		return "from " + e.FirstAge + " to " + e.LastAge + " ago"
	case e.Instant():
		return "at " + e.Last.UTC().Format(clock)
	}
	return "from " + e.First.UTC().Format(clock) + " to " + e.Last.UTC().Format(clock)
}

// PodOf views a decoded object as a pod, when it is one.
func PodOf(o *object.Object) (*Pod, bool) {
	p, ok := o.Typed.(*corev1.Pod)
	if !ok {
		return nil, false
	}
	return &Pod{Object: o, Pod: p}, true
}

// ReadEvents reads core/v1 Events and events.k8s.io/v1 Events (alone, in a
// List, or in a stream). An event whose times contradict each other (last
// before first: a skewed clock) is an error at its line and not used.
func ReadEvents(name string, data []byte) (events []Event, errs []load.Error) {
	f := load.Parse(name, data)
	events, errs = EventsIn(f)
	errs = append(f.Errors, errs...)
	if len(events) == 0 && len(errs) == 0 {
		errs = append(errs, load.Error{File: name, Message: "no Event in the input (want the output of kubectl get events -o json)"})
	}
	return events, errs
}

// EventsIn decodes the events among a parsed stream's documents (a
// kubectl get pod,events dump holds both); other kinds are passed over.
func EventsIn(f load.File) (events []Event, errs []load.Error) {
	for _, d := range f.Documents {
		if d.Kind != "Event" {
			continue
		}
		e, err := decodeEvent(d)
		if err != nil {
			errs = append(errs, *err)
			continue
		}
		events = append(events, e)
	}
	return events, errs
}

func decodeEvent(d *load.Document) (Event, *load.Error) {
	e := Event{File: d.File, Line: d.Line, Count: 1}
	bad := func(err error) *load.Error {
		return &load.Error{File: d.File, Line: d.Line, Message: "Event: " + err.Error()}
	}
	switch {
	case d.APIVersion == "v1":
		var ev corev1.Event
		if err := exactjson.Unmarshal(d.JSON, &ev); err != nil {
			return e, bad(err)
		}
		e.Reason, e.Message, e.Type = ev.Reason, ev.Message, ev.Type
		e.Object = object.Ref{APIVersion: ev.InvolvedObject.APIVersion, Kind: ev.InvolvedObject.Kind, Namespace: ev.InvolvedObject.Namespace, Name: ev.InvolvedObject.Name}
		e.UID, e.FieldPath = string(ev.InvolvedObject.UID), ev.InvolvedObject.FieldPath
		e.First, e.Last = ev.FirstTimestamp.Time, ev.LastTimestamp.Time
		if ev.Count > 1 {
			e.Count = int(ev.Count)
		}
		// Events written through the new API show in core/v1 with
		// eventTime and series instead.
		if e.First.IsZero() {
			e.First = ev.EventTime.Time
		}
		if ev.Series != nil {
			e.Count = max(e.Count, int(ev.Series.Count))
			e.Last = ev.Series.LastObservedTime.Time
		}
		if e.Last.IsZero() {
			e.Last = e.First
		}
	case strings.HasPrefix(d.APIVersion, "events.k8s.io/"):
		var ev eventsv1.Event
		if err := exactjson.Unmarshal(d.JSON, &ev); err != nil {
			return e, bad(err)
		}
		e.Reason, e.Message, e.Type = ev.Reason, ev.Note, ev.Type
		e.Object = object.Ref{APIVersion: ev.Regarding.APIVersion, Kind: ev.Regarding.Kind, Namespace: ev.Regarding.Namespace, Name: ev.Regarding.Name}
		e.UID, e.FieldPath = string(ev.Regarding.UID), ev.Regarding.FieldPath
		e.First, e.Last = ev.EventTime.Time, ev.EventTime.Time
		if e.First.IsZero() {
			e.First, e.Last = ev.DeprecatedFirstTimestamp.Time, ev.DeprecatedLastTimestamp.Time
		}
		if ev.DeprecatedCount > 1 {
			e.Count = int(ev.DeprecatedCount)
		}
		if ev.Series != nil {
			e.Count = max(e.Count, int(ev.Series.Count))
			e.Last = ev.Series.LastObservedTime.Time
		}
	default:
		return e, bad(fmt.Errorf("unknown apiVersion %q (want v1 or events.k8s.io/v1)", d.APIVersion))
	}
	if e.Object.Namespace == "" {
		var meta struct {
			Metadata struct {
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		_ = exactjson.Unmarshal(d.JSON, &meta)
		e.Object.Namespace = meta.Metadata.Namespace
	}
	e.Container = containerOf(e.FieldPath)
	if e.Last.Before(e.First) {
		return e, &load.Error{File: d.File, Line: d.Line, Message: fmt.Sprintf("Event %s about %s: last seen %s is before first seen %s (clock skew?); not used",
			e.Reason, e.Object.Name, e.Last.UTC().Format(time.RFC3339), e.First.UTC().Format(time.RFC3339))}
	}
	e.First, e.Last = e.First.UTC(), e.Last.UTC()
	return e, nil
}

// containerOf reads "spec.containers{database}" and
// "spec.initContainers{x}".
func containerOf(fieldPath string) string {
	i := strings.IndexByte(fieldPath, '{')
	if i < 0 || !strings.HasSuffix(fieldPath, "}") {
		return ""
	}
	return fieldPath[i+1 : len(fieldPath)-1]
}

// About reports whether the event is about the pod: same namespace and
// name, and the same UID when both are known (a pod of the same name that
// was deleted and created again is another pod).
func (e Event) About(p *Pod) bool {
	if e.Object.Name == "" {
		// A capture that does not name its pod: about the pods that are
		// not named either.
		return e.Object.Kind == "Pod" && p.Printed != nil && !p.Printed.Named
	}
	if e.Object.Kind != "Pod" || e.Object.Name != p.Name {
		return false
	}
	if e.Object.Namespace != "" && p.Namespace != "" && e.Object.Namespace != p.Namespace {
		return false
	}
	return e.UID == "" || p.Pod.UID == "" || e.UID == string(p.Pod.UID)
}

// Log is the text one container (or a client elsewhere) wrote.
type Log struct {
	// Container is the container it belongs to; "" when not named (the
	// pod's only container).
	Container string
	File      string
	Data      []byte
}

// Observation is everything read about one pod.
type Observation struct {
	Pod    *Pod
	Events []Event // about this pod only
	Logs   []Log   // of this pod's containers
	// Clients are logs of other programs (named by a container that is
	// not in this pod): their errors may be this pod's restarts.
	Clients []Log
	// Ignored counts events about other objects.
	Ignored int
}

// Observe gathers what is about p: its events, and the logs, split into
// its own containers' and clients'. A log without a container name belongs
// to the pod's only container (or to the first, with more).
func Observe(p *Pod, events []Event, logs []Log) *Observation {
	o := &Observation{Pod: p}
	for _, e := range events {
		if e.About(p) {
			o.Events = append(o.Events, e)
		} else {
			o.Ignored++
		}
	}
	for _, l := range logs {
		switch spec, _ := p.Container(l.Container); {
		case l.Container == "" && len(p.Pod.Spec.Containers) > 0:
			l.Container = p.Pod.Spec.Containers[0].Name
			o.Logs = append(o.Logs, l)
		case spec != nil:
			o.Logs = append(o.Logs, l)
		default:
			o.Clients = append(o.Clients, l)
		}
	}
	return o
}

// EventsOf returns the events of one container with one of the reasons.
func (o *Observation) EventsOf(container string, reasons ...string) []Event {
	var out []Event
	for _, e := range o.Events {
		if e.Container != "" && e.Container != container {
			continue
		}
		for _, r := range reasons {
			if e.Reason == r {
				out = append(out, e)
			}
		}
	}
	return out
}
