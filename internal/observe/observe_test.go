package observe

import (
	"strings"
	"testing"
	"time"

	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
)

const coreEvents = `{
    "apiVersion": "v1",
    "items": [
        {
            "apiVersion": "v1",
            "count": 42,
            "eventTime": null,
            "firstTimestamp": "2026-11-12T04:53:01Z",
            "involvedObject": {"apiVersion": "v1", "fieldPath": "spec.containers{database}", "kind": "Pod", "name": "db-0", "namespace": "registry", "uid": "u-1"},
            "kind": "Event",
            "lastTimestamp": "2026-11-12T08:50:03Z",
            "message": "Container database failed liveness probe, will be restarted",
            "metadata": {"name": "db-0.1879c2f1b2d05e7f", "namespace": "registry"},
            "reason": "Killing",
            "type": "Normal"
        },
        {
            "apiVersion": "v1",
            "count": 1,
            "firstTimestamp": "2026-11-12T08:00:00Z",
            "involvedObject": {"kind": "Pod", "name": "db-0", "namespace": "registry", "uid": "u-2"},
            "kind": "Event",
            "lastTimestamp": "2026-11-12T08:00:00Z",
            "message": "Started container database",
            "metadata": {"name": "db-0.aa", "namespace": "registry"},
            "reason": "Started",
            "type": "Normal"
        }
    ],
    "kind": "List",
    "metadata": {"resourceVersion": ""}
}`

const newEvents = `apiVersion: v1
items:
- apiVersion: events.k8s.io/v1
  eventTime: "2026-11-12T09:58:12.310000Z"
  kind: Event
  metadata:
    name: mongo-0.18a0f1e2d3c4b5a6
    namespace: catalog
  note: Container mongod failed startup probe, will be restarted
  reason: Killing
  regarding:
    fieldPath: spec.containers{mongod}
    kind: Pod
    name: mongo-0
    namespace: catalog
  series:
    count: 7
    lastObservedTime: "2026-11-12T10:29:40.120000Z"
  type: Normal
kind: List
metadata:
  resourceVersion: ""
`

func TestCoreV1Events(t *testing.T) {
	evs, errs := ReadEvents("events.json", []byte(coreEvents))
	if len(errs) > 0 || len(evs) != 2 {
		t.Fatalf("events %d, errors %v", len(evs), errs)
	}
	k := evs[0]
	if k.Reason != "Killing" || k.Count != 42 || k.Container != "database" || k.Instant() ||
		!k.First.Equal(time.Date(2026, 11, 12, 4, 53, 1, 0, time.UTC)) || !k.Last.Equal(time.Date(2026, 11, 12, 8, 50, 3, 0, time.UTC)) {
		t.Errorf("Killing event read as %+v", k)
	}
	if k.Line < 4 || k.File != "events.json" {
		t.Errorf("event position %s:%d", k.File, k.Line)
	}
	if !evs[1].Instant() {
		t.Errorf("a count-1 event is one instant")
	}
}

func TestEventsV1Series(t *testing.T) {
	evs, errs := ReadEvents("events.yaml", []byte(newEvents))
	if len(errs) > 0 || len(evs) != 1 {
		t.Fatalf("events %d, errors %v", len(evs), errs)
	}
	e := evs[0]
	if e.Count != 7 || e.Message != "Container mongod failed startup probe, will be restarted" || e.Container != "mongod" ||
		e.Object.Name != "mongo-0" || !e.Last.Equal(time.Date(2026, 11, 12, 10, 29, 40, 120e6, time.UTC)) {
		t.Errorf("read as %+v", e)
	}
}

func TestClockSkewIsAnErrorAtTheEvent(t *testing.T) {
	skewed := strings.Replace(coreEvents, `"lastTimestamp": "2026-11-12T08:50:03Z"`, `"lastTimestamp": "2026-11-12T03:00:00Z"`, 1)
	evs, errs := ReadEvents("events.json", []byte(skewed))
	if len(evs) != 1 || len(errs) != 1 || !strings.Contains(errs[0].Message, "clock skew") || errs[0].Line < 4 {
		t.Fatalf("events %d, errors %v", len(evs), errs)
	}
}

func TestTruncatedEventsAreAnErrorWithALine(t *testing.T) {
	_, errs := ReadEvents("events.json", []byte(coreEvents[:len(coreEvents)/2]))
	if len(errs) == 0 || errs[0].File != "events.json" || errs[0].Line < 1 {
		t.Fatalf("errors %v", errs)
	}
}

func TestNoEventsIsAnError(t *testing.T) {
	if _, errs := ReadEvents("e.json", []byte(`{"apiVersion":"v1","kind":"List","items":[]}`)); len(errs) != 1 {
		t.Fatalf("errors %v", errs)
	}
	if _, errs := ReadEvents("e.json", []byte(`{"apiVersion":"v2","kind":"Event","metadata":{"name":"x"}}`)); len(errs) != 1 || !strings.Contains(errs[0].Message, "apiVersion") {
		t.Fatalf("errors %v", errs)
	}
}

func pod(t *testing.T, yaml string) *Pod {
	t.Helper()
	f := load.Parse("pod.yaml", []byte(yaml))
	if len(f.Errors) > 0 {
		t.Fatal(f.Errors)
	}
	o, err := object.Decode(f.Documents[0])
	if err != nil {
		t.Fatal(err)
	}
	p, ok := PodOf(o)
	if !ok {
		t.Fatal("not a pod")
	}
	return p
}

const podYAML = `apiVersion: v1
kind: Pod
metadata: {name: db-0, namespace: registry, uid: u-1}
spec:
  containers: [{name: database, image: postgres:16}]
status:
  containerStatuses: [{name: database, restartCount: 3, image: postgres:16, imageID: x, ready: false}]
`

func TestObserveKeepsThisPodsEventsAndSplitsClients(t *testing.T) {
	p := pod(t, podYAML)
	evs, _ := ReadEvents("events.json", []byte(coreEvents))
	other := evs[0]
	other.Object.Name = "registry-core-1"
	obs := Observe(p, append(evs, other), []Log{{File: "db.log"}, {Container: "registry-core", File: "core.log"}})
	// The second event names another UID: a pod of the same name that
	// was deleted and created again.
	if len(obs.Events) != 1 || obs.Ignored != 2 {
		t.Errorf("events %d, ignored %d", len(obs.Events), obs.Ignored)
	}
	if len(obs.Logs) != 1 || obs.Logs[0].Container != "database" || len(obs.Clients) != 1 {
		t.Errorf("logs %+v, clients %+v", obs.Logs, obs.Clients)
	}
	if got := obs.EventsOf("database", "Killing"); len(got) != 1 {
		t.Errorf("EventsOf: %d", len(got))
	}
	c, st := p.Container("database")
	if c == nil || st == nil || st.RestartCount != 3 || p.StatusPath("database") != "status.containerStatuses[0]" {
		t.Errorf("container %v status %v path %s", c, st, p.StatusPath("database"))
	}
	if line, _ := p.Line("status.containerStatuses[0].restartCount"); line != 7 {
		t.Errorf("restartCount at line %d, want 7", line)
	}
}

// TestEventFieldsAreReadAsKubernetesReadsThem: field names match exactly,
// as the API server decodes them. A capitalized `Reason` beside `reason`
// is a field Kubernetes drops, and the namespace of an event whose
// involved object names none comes from the event's own metadata.
func TestEventFieldsAreReadAsKubernetesReadsThem(t *testing.T) {
	const ev = `apiVersion: v1
kind: Event
metadata: {name: db-0.1, namespace: registry}
involvedObject: {kind: Pod, name: db-0, fieldPath: "spec.containers{database}"}
reason: Killing
Reason: Started
message: Container database failed liveness probe, will be restarted
firstTimestamp: "2026-11-12T04:53:01Z"
lastTimestamp: "2026-11-12T04:53:01Z"
`
	evs, errs := ReadEvents("event.yaml", []byte(ev))
	if len(errs) > 0 || len(evs) != 1 {
		t.Fatalf("events %d, errors %v", len(evs), errs)
	}
	if evs[0].Reason != "Killing" {
		t.Errorf("reason %q: the capitalized key Kubernetes drops was read", evs[0].Reason)
	}
	if evs[0].Object.Namespace != "registry" {
		t.Errorf("namespace %q, want the event's own registry", evs[0].Object.Namespace)
	}
}
