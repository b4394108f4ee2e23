package index

import (
	"testing"
	"unsafe"

	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
)

// runsRedis is a filter of the tests: the workloads that run a redis
// image.
var runsRedis = RegisterPodFilter(&PodFilter{Name: "redis", Match: func(ps PodSet) bool {
	for _, c := range ps.Containers {
		if c.Image == "redis" {
			return true
		}
	}
	return false
}})

func decodeAll(t *testing.T, src string) []*object.Object {
	t.Helper()
	f := load.Parse("i.yaml", []byte(src))
	if len(f.Errors) > 0 {
		t.Fatal(f.Errors)
	}
	var objs []*object.Object
	for _, d := range f.Documents {
		o, err := object.Decode(d)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o)
	}
	return objs
}

// A scan keeps the recorded questions of most objects until it ends: a
// question stays within 64 bytes, and Compact copies them to an array of
// their size.
// The compacted questions are still asked again: a filter's answer goes
// stale when a workload it matches is added, and only then.
func TestRecorderCompact(t *testing.T) {
	if size := unsafe.Sizeof(query{}); size > 64 {
		t.Errorf("a recorded question takes %d bytes, want at most 64", size)
	}
	objs := decodeAll(t, `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec: {template: {spec: {containers: [{name: c, image: nginx}]}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: cache}
spec: {template: {spec: {containers: [{name: c, image: redis}]}}}
---
apiVersion: v1
kind: Service
metadata: {name: web}
`)
	ix := New()
	ix.Add(objs[0], 0, Everywhere, false)
	rec := &Recorder{}
	view := ix.View(Everywhere, rec)
	view.Get("Service", "", "web")
	view.Get("ConfigMap", "", "settings")
	view.PodSetsWhere(runsRedis)
	if len(rec.queries) != 3 || cap(rec.queries) == 3 {
		t.Fatalf("recorded %d questions in room for %d; the test wants 3 in more room", len(rec.queries), cap(rec.queries))
	}
	appended := &rec.queries[0]
	if !rec.Compact() {
		t.Fatal("Compact reports nothing to check")
	}
	if len(rec.queries) != 3 || cap(rec.queries) != 3 {
		t.Errorf("compacted to %d questions in room for %d, want 3 in 3", len(rec.queries), cap(rec.queries))
	}
	if &rec.queries[0] == appended {
		t.Error("the compacted questions are still in the array they were appended to, which keeps its spare room")
	}
	if got := rec.Asked(); len(got) != 3 || got[0] != "ConfigMap" || got[1] != "Service" || got[2] != PodSets {
		t.Errorf("asked %v", got)
	}

	ix.Add(objs[2], 2, Everywhere, false)
	other := &Recorder{}
	ix.View(Everywhere, other).PodSetsWhere(runsRedis)
	other.Compact()
	ix.Add(objs[1], 1, Everywhere, false)
	ix.Freeze()
	if !rec.Stale(ix) {
		t.Error("the compacted questions are not stale, though the Service they asked for was added")
	}
	if !other.Stale(ix) {
		t.Error("the filter's answer is not stale, though a workload running redis was added")
	}
	if got := ix.PodSetsWhere(runsRedis); len(got) != 1 || got[0].Name != "cache" {
		t.Errorf("the filter answers %+v, want Deployment cache", got)
	}

	unchanged := &Recorder{}
	ix.View(Everywhere, unchanged).PodSetsWhere(runsRedis)
	if unchanged.Stale(ix) {
		t.Error("a filter's answer asked of the complete index is stale")
	}
	empty := &Recorder{}
	if empty.Compact() || empty.queries != nil {
		t.Error("a recorder without questions has something to check")
	}
}

// TestRecordedQuerySize: a scan keeps about two recorded questions an
// object until it ends (300k objects: 600k), so their size is its memory.
func TestRecordedQuerySize(t *testing.T) {
	if n := unsafe.Sizeof(recorded{}); n > 48 {
		t.Errorf("a recorded question takes %d bytes, want at most 48", n)
	}
}
