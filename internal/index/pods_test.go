package index

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/labels"

	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
)

// A selector finds the workloads whose pods it selects, with their counts
// resolved as ReplicasOf does: a Rollout's through its workloadRef
// Deployment (which is not listed itself), a Job's parallelism, a
// DaemonSet's pods per node.
func TestSelectedPodSets(t *testing.T) {
	ix := build(t, workloadRef+`---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
---
apiVersion: batch/v1
kind: Job
metadata: {name: migrate, namespace: shop}
spec:
  parallelism: 3
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: m, image: migrate}]}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: shop}
spec:
  template:
    metadata: {labels: {app: agent}}
    spec: {hostNetwork: true, containers: [{name: a, image: agent}]}
`)
	got := ix.Selected("shop", labels.Everything())
	if len(got) != 3 {
		t.Fatalf("got %d pod sets, want the Rollout, the Job and the DaemonSet: %+v", len(got), got)
	}
	r, job, ds := got[0], got[1], got[2]
	if r.Kind != "Rollout" || r.Replicas.Min != 2 || r.Replicas.Max != 100 || !r.Scalable || r.Containers[0].Image != "nginx" {
		t.Errorf("Rollout %+v", r)
	}
	if job.Kind != "Job" || job.Replicas.Min != 3 || job.Scalable {
		t.Errorf("Job %+v", job)
	}
	if ds.Kind != "DaemonSet" || !ds.PerNode || !ds.HostNetwork || ds.Scalable {
		t.Errorf("DaemonSet %+v", ds)
	}
	sel, _ := labels.Parse("app=web")
	if got := ix.Selected("shop", sel); len(got) != 1 || got[0].Name != "migrate" {
		t.Errorf("app=web selects %+v, want the Job only", got)
	}
	if got := ix.Selected("other", labels.Everything()); len(got) != 0 {
		t.Errorf("another namespace: %+v", got)
	}
}

// An answer about pod sets is stale when a workload it would select is
// added after the question, and only then.
func TestPodSetAnswersGoStale(t *testing.T) {
	f := load.Parse("i.yaml", []byte(`apiVersion: apps/v1
kind: Deployment
metadata: {name: a}
spec: {template: {metadata: {labels: {app: a}}, spec: {containers: [{name: c}]}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: b}
spec: {template: {metadata: {labels: {app: b}}, spec: {containers: [{name: c}]}}}
`))
	var objs []*object.Object
	for _, d := range f.Documents {
		o, err := object.Decode(d)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o)
	}
	ix := New()
	ix.Add(objs[0], 0, Everywhere, true)
	selA, _ := labels.Parse("app=a")
	selB, _ := labels.Parse("app=b")
	onA, onB := &Recorder{}, &Recorder{}
	ix.View(Everywhere, onA).Selected("", selA)
	ix.View(Everywhere, onB).Selected("default", selB)
	ix.Add(objs[1], 1, Everywhere, true)
	ix.Freeze()
	if onA.Stale(ix) {
		t.Error("the answer for app=a changed, though no workload with app=a was added")
	}
	if !onB.Stale(ix) {
		t.Error("the answer for app=b did not change, though b was added")
	}
	if got := onB.Asked(); len(got) != 1 || got[0] != PodSets {
		t.Errorf("asked %v", got)
	}
}

// Pod sets and listed objects answer only the objects of a scope that sees
// them: a budget rendered with one chart does not count the Deployment of
// the same labels that another chart renders.
func TestPodSetsKeepToTheirScope(t *testing.T) {
	f := load.Parse("scoped.yaml", []byte(`apiVersion: apps/v1
kind: Deployment
metadata: {name: a}
spec: {replicas: 3, template: {metadata: {labels: {app: db}}, spec: {containers: [{name: c}]}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: b}
spec: {replicas: 1, template: {metadata: {labels: {app: db}}, spec: {containers: [{name: c}]}}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: a}
spec: {maxUnavailable: 1, selector: {matchLabels: {app: db}}}
`))
	var objs []*object.Object
	for _, d := range f.Documents {
		o, err := object.Decode(d)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o)
	}
	ix := New()
	chartA, chartB := ix.Apart(), ix.Apart()
	ix.Add(objs[0], 0, chartA, true)
	ix.Add(objs[1], 1, chartB, true)
	ix.Add(objs[2], 2, chartA, true)
	ix.Freeze()
	sel, _ := labels.Parse("app=db")
	if got := ix.View(chartA, nil).Selected("default", sel); len(got) != 1 || got[0].Name != "a" || got[0].Replicas.Min != 3 {
		t.Errorf("chart A's budget selects %+v, want Deployment a only", got)
	}
	if got := ix.View(chartB, nil).InNamespace("PodDisruptionBudget", "default"); len(got) != 0 {
		t.Errorf("chart B sees chart A's budget: %v", got)
	}
	if got := ix.View(Everywhere, nil).Selected("default", sel); len(got) != 2 {
		t.Errorf("everywhere selects %d pod sets, want both", len(got))
	}
}

// The pod sets of a namespace are kept by scope, and an answer merges the
// scopes its asker sees back into input order, whatever order the
// workloads were added in: a tree sees its own, those above and below
// it, not a sibling's; Everywhere sees every tree (more trees than the
// merge picks among, so they are sorted).
func TestPodSetsOfManyTreesInInputOrder(t *testing.T) {
	ix := New()
	root := ix.Tree("/r")
	trees := []Scope{root, ix.Tree("/r/a"), ix.Tree("/r/a/base"), ix.Tree("/r/b")}
	for i := range 12 {
		trees = append(trees, ix.Tree(fmt.Sprintf("/r/c/%d", i)))
	}
	// Ordinals 0..63 spread over the trees, added from the last.
	var src strings.Builder
	for i := range 64 {
		fmt.Fprintf(&src, "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d%d, namespace: shop}\n"+
			"spec: {template: {metadata: {labels: {app: db}}, spec: {containers: [{name: c}]}}}\n", i)
	}
	objs := decodeAll(t, src.String())
	scopeOf := func(i int) Scope { return trees[(i*7)%len(trees)] }
	for i := len(objs) - 1; i >= 0; i-- {
		ix.Add(objs[i], Ordinal(i), scopeOf(i), false)
	}
	ix.Freeze()
	sel, _ := labels.Parse("app=db")
	for _, asker := range []Scope{Everywhere, root, trees[1], trees[2], trees[3], trees[5]} {
		var want []string
		for i := range objs {
			if ix.sees(asker, scopeOf(i)) {
				want = append(want, fmt.Sprintf("d%d", i))
			}
		}
		var got []string
		for _, ps := range ix.View(asker, nil).Selected("shop", sel) {
			got = append(got, ps.Name)
		}
		if !slices.Equal(got, want) {
			t.Errorf("scope %+v selects\n%v\nwant\n%v", ix.scopes[asker], got, want)
		}
	}
}

// A workload added in a sibling tree does not change what a tree was
// answered, so its check is not done again.
func TestPodSetInSiblingTreeIsNotStale(t *testing.T) {
	objs := decodeAll(t, `apiVersion: apps/v1
kind: Deployment
metadata: {name: a}
spec: {template: {metadata: {labels: {app: a}}, spec: {containers: [{name: c}]}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: a}
spec: {template: {metadata: {labels: {app: a}}, spec: {containers: [{name: c}]}}}
`)
	ix := New()
	a, b := ix.Tree("/r/a"), ix.Tree("/r/b")
	ix.Add(objs[0], 0, a, false)
	sel, _ := labels.Parse("app=a")
	rec := &Recorder{}
	if got := ix.View(a, rec).Selected("", sel); len(got) != 1 {
		t.Fatalf("got %+v", got)
	}
	ix.Add(objs[1], 1, b, false)
	ix.Freeze()
	if rec.Stale(ix) {
		t.Error("stale after a workload of a sibling tree was added")
	}
	if got := ix.View(ix.Tree("/r"), nil).Selected("", sel); len(got) != 2 {
		t.Errorf("the root sees %d pod sets, want both trees'", len(got))
	}
}
