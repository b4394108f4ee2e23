// Package printed reads what kubectl prints for people, the way on-call
// engineers paste it into tickets and issues: kubectl describe pod (the
// container blocks and the Events table, in the layouts of kubectl 1.0 to
// today), kubectl get events and kubectl events tables, kubectl get pods
// rows, and fragments of these (one Liveness line, a few Events rows, an
// event message on its own). It keeps what each line holds and where, and
// never fills in what the capture does not show: see docs/diagnose.md for
// the formats, checked in kubectl's printers.
package printed

import (
	"time"
)

// Capture is what one stream of printed text held.
type Capture struct {
	Name string
	Pods []*Pod
	// Events not tied to a pod the capture names (Events rows or event
	// messages on their own).
	Loose []Event
	// Skipped counts lines that were not read: prose around the paste,
	// "<SNIP>", lines of a table or section this reader does not use.
	Skipped int
	// Unread lists lines that looked like kubectl output but could not be
	// read (a mangled row), for the errors.
	Unread []Line
}

// Line is one line of the input, numbered from 1.
type Line struct {
	N    int
	Text string
}

// Pod is one pod as far as the capture shows it.
type Pod struct {
	Name, Namespace string
	Line            int
	NamespaceLine   int
	// Forms lists what was read of it: "kubectl describe pod", "kubectl
	// get pods", "Events table", "kubectl get events".
	Forms      []string
	Status     Field // the pod's Status: (Running, Pending) or a row's STATUS
	Reason     Field
	Message    Field
	QoS        Field
	StartTime  Field
	Node       Field
	Controller Field // Controlled By:
	// NodeSelectors are "key=value" lines under Node-Selectors.
	NodeSelectors []Field
	Containers    []*Container
	Events        []Event
	// Row is the pod's kubectl get pods row, when there is one; Readings
	// are its earlier rows (kubectl get pods -w prints one per change).
	Row      *Row
	Readings []Row
	// EventsNone: describe printed "Events: <none>".
	EventsNone bool
}

// Field is one printed value and its line; Line 0 means not printed.
type Field struct {
	Value string
	Line  int
}

func (f Field) Set() bool { return f.Line > 0 }

// Container is one container block, or the lines of one that a fragment
// holds (then Name may be "").
type Container struct {
	Name string
	Line int
	Init bool
	// Complete: the block was printed up to its Environment or Mounts
	// lines, which describe prints after the probes, so a probe or limit
	// it does not show is absent, not cut off (kubectl 1.0 printed neither
	// probes nor these lines).
	Complete     bool
	Image        Field
	Command      []Field
	Args         []Field
	Ports        Field
	State        State
	LastState    State
	Ready        Field
	RestartCount Field
	Limits       map[string]Field
	Requests     map[string]Field
	Liveness     *Probe
	Readiness    *Probe
	Startup      *Probe
	// fragment: read from lines pasted without the container's header.
	fragment bool
}

// State is a printed container state: "State:" or "Last State:" and the
// lines under it.
type State struct {
	Kind     Field // Running, Waiting, Terminated
	Reason   Field
	Message  Field
	ExitCode Field
	Signal   Field
	Started  Field
	Finished Field
}

func (s State) Set() bool { return s.Kind.Set() }

// Probe is a Liveness, Readiness or Startup line:
// "exec [/docker-healthcheck.sh] delay=300s timeout=1s period=10s #success=1 #failure=3".
type Probe struct {
	Line int
	Text string
	// Handler is exec, http-get, tcp-socket, grpc or unknown; Target is
	// what follows it: the command in brackets, the URL, host:port.
	Handler, Target string
	// Delay, Timeout, Period, Success, Failure are in seconds and counts;
	// a setting the line does not print (kubectl before 1.2 printed only
	// delay and timeout) is -1.
	Delay, Timeout, Period, Success, Failure int
}

// Event is one event as printed: a row of an Events table, or a message.
type Event struct {
	Line   int
	Type   string
	Reason string
	// Object is the involved object when the row names it ("pod/x" in
	// kubectl get events), Kind and Name split.
	Kind, Name, Namespace string
	// FieldPath is the SubObjectPath column, or the prefix kubectl 1.35
	// writes before the message ("spec.containers{web}: ").
	FieldPath string
	From      string
	Message   string
	// Wrapped counts the lines the message continued on.
	Wrapped int
	Count   int
	// First and Last: absolute times (kubectl 1.0 printed RFC 1123), or
	// ages when FirstAge/LastAge are set.
	First, Last       time.Time
	FirstAge, LastAge *Age
	// Timeless: an event message without its row.
	Timeless bool
	// Inline: the message was quoted in a line of prose.
	Inline bool
}

// Row is a kubectl get pods row.
type Row struct {
	Line     int
	Ready    string
	Status   string
	Restarts int
	// LastRestart is the "(57s ago)" kubectl 1.22 and later print after
	// the count: the age of the newest container termination.
	LastRestart *Age
	Age         *Age
}
