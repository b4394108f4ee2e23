package index

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
)

// Compact labels answer as the map they were made from: every label of
// it and a few others, every kind of selector, and nil and empty maps,
// which Map gives back as they were.
func TestCompactLabels(t *testing.T) {
	long := strings.Repeat("k", 300) // lengths of more than one byte
	sets := []map[string]string{
		nil,
		{},
		{"app": "web"},
		{"app": "web", "tier": "front", "app.kubernetes.io/name": "svc-00001", "z": ""},
		{"": "empty key", "b": "2", "a": "1", "c": "=,!()"},
		{long: long + "v", "app": long, "é": "ü"},
	}
	probes := []string{"", "a", "b", "c", "app", "ap", "apq", "tier", "z", "zz", "app.kubernetes.io/name", long, long + "v", "é", "~"}
	var selectors []labels.Selector
	for _, s := range []string{
		"", "app", "!app", "app=web", "app!=web", "app in (web, api)", "app notin (web)",
		"app=web,tier=front", "tier=front,app=web", "z", "z=", "!z", "b>1", "b<3", "a<1",
		"app.kubernetes.io/name=svc-00001",
	} {
		sel, err := labels.Parse(s)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		selectors = append(selectors, sel)
	}
	selectors = append(selectors, labels.Everything(), labels.Nothing(),
		labels.SelectorFromValidatedSet(labels.Set{long: long + "v"}), labels.SelectorFromValidatedSet(labels.Set{"": "empty key"}),
		labels.SelectorFromValidatedSet(labels.Set{"é": "ü"}), labels.SelectorFromValidatedSet(labels.Set{"app": long}))

	for _, m := range sets {
		c := compactLabels(m)
		if got := c.Map(); !reflect.DeepEqual(got, m) || (got == nil) != (m == nil) {
			t.Errorf("%v: Map gives %#v", m, got)
		}
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		for _, k := range append(keys, probes...) {
			want, wantOK := m[k]
			if got, ok := c.Lookup(k); got != want || ok != wantOK {
				t.Errorf("%v: Lookup(%q) = %q, %v, want %q, %v", m, k, got, ok, want, wantOK)
			}
			if c.Has(k) != wantOK || c.Get(k) != want {
				t.Errorf("%v: Has(%q) = %v, Get = %q, want %v, %q", m, k, c.Has(k), c.Get(k), wantOK, want)
			}
		}
		for _, sel := range selectors {
			if got, want := sel.Matches(&c), sel.Matches(labels.Set(m)); got != want {
				t.Errorf("%v: %q matches %v, want %v", m, sel, got, want)
			}
		}
	}
	if compactLabels(map[string]string{}) == compactLabels(nil) {
		t.Error("an empty map compacts as nil does")
	}
}

// The pod sets an answer returns carry their labels as a map again, the
// Deployment's for a Rollout with workloadRef.
func TestPodSetLabels(t *testing.T) {
	ix := build(t, `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: r}
spec:
  workloadRef: {apiVersion: apps/v1, kind: Deployment, name: web}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec: {template: {metadata: {labels: {app: web, tier: front}}, spec: {containers: [{name: c, image: nginx}]}}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec: {serviceName: db, template: {metadata: {labels: {}}, spec: {containers: [{name: c, image: redis}]}}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: once}
spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}
`)
	got := ix.Selected("", labels.Everything())
	if len(got) != 3 {
		t.Fatalf("got %+v, want the Rollout, the StatefulSet and the Job", got)
	}
	if r := got[0]; r.Name != "r" || !reflect.DeepEqual(r.Labels, map[string]string{"app": "web", "tier": "front"}) || r.Containers[0].Image != "nginx" {
		t.Errorf("Rollout %+v", r)
	}
	if db := got[1]; db.Labels == nil || len(db.Labels) != 0 {
		t.Errorf("StatefulSet's labels %#v, want an empty map", db.Labels)
	}
	if job := got[2]; job.Labels != nil {
		t.Errorf("Job's labels %#v, want nil", job.Labels)
	}
	if got := ix.ServedBy("", "db"); len(got) != 1 || got[0].Labels == nil {
		t.Errorf("ServedBy gives %+v", got)
	}
	if got := ix.PodSetsWhere(runsRedis); len(got) != 1 || got[0].Name != "db" || got[0].Labels == nil {
		t.Errorf("PodSetsWhere gives %+v", got)
	}
	sel, _ := labels.Parse("tier=front")
	if got := ix.Selected("default", sel); len(got) != 1 || got[0].Name != "r" {
		t.Errorf("tier=front selects %+v, want the Rollout", got)
	}
	if got := ix.Selected("default", labels.Nothing()); len(got) != 0 {
		t.Errorf("nothing selects %+v", got)
	}
}

// TestCompactLabelsPastKeyTable: once the table of label keys is full,
// keys are written out in the labels, and both kinds read back alike.
func TestCompactLabelsPastKeyTable(t *testing.T) {
	var kept []podLabels
	var sets []map[string]string
	for i := range maxLabelKeys + 10 {
		m := map[string]string{"app": "web", fmt.Sprintf("key-%d", i): fmt.Sprint(i)}
		sets = append(sets, m)
		kept = append(kept, compactLabels(m))
	}
	for i, c := range kept {
		if got := c.Map(); !reflect.DeepEqual(got, sets[i]) {
			t.Fatalf("labels %d: Map gives %v, want %v", i, got, sets[i])
		}
		if v, ok := c.Lookup(fmt.Sprintf("key-%d", i)); !ok || v != fmt.Sprint(i) {
			t.Fatalf("labels %d: Lookup gives %q %v", i, v, ok)
		}
	}
	if labelKeys.id("never-seen-key") != -1 {
		t.Errorf("the table numbers keys past %d", maxLabelKeys)
	}
}
