package index

import (
	"testing"

	"backfire.dev/backfire/internal/object"
)

func build(t *testing.T, src string) *Index {
	t.Helper()
	return Build(decodeAll(t, src))
}

const workloadRef = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: r, namespace: shop}
spec:
  workloadRef: {apiVersion: apps/v1, kind: Deployment, name: web}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 0
  template:
    spec:
      containers: [{name: app, image: nginx}]
---
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: by-keda, namespace: shop}
spec:
  scaleTargetRef: {name: web}
  minReplicaCount: 4
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: by-hpa, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: argoproj.io/v1alpha1, kind: Rollout, name: r}
  minReplicas: 2
  maxReplicas: 50
`

func TestWorkloadRef(t *testing.T) {
	ix := build(t, workloadRef)
	r, d := ix.Get("Rollout", "shop", "r"), ix.Get("Deployment", "shop", "web")
	tmpl, why := ix.PodTemplate(r)
	if tmpl == nil || tmpl.Owner != d || why != "" {
		t.Fatalf("template %v owner %v (%s)", tmpl, tmpl.Owner, why)
	}
	if by := ix.RunBy(d); by != 1 {
		t.Errorf("RunBy %v", by)
	}
	// The KEDA ScaledObject targets the Deployment (kind defaults to
	// Deployment), the HPA the Rollout: both own the Rollout's count.
	rep := ix.ReplicasOf(r)
	if len(rep.ScaledBy) != 2 || rep.Min != 2 || rep.Max != 100 || rep.Set {
		t.Errorf("replicas %+v, want 2..100 from two scalers", rep)
	}
}

func TestUnresolvedAndDefaults(t *testing.T) {
	ix := build(t, `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: r}
spec:
  workloadRef: {apiVersion: apps/v1, kind: Deployment, name: missing}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: default}
spec: {template: {spec: {containers: [{name: c}]}}}
`)
	if tmpl, why := ix.PodTemplate(ix.Get("Rollout", "", "r")); tmpl != nil || why == "" {
		t.Errorf("unresolved workloadRef: %v %q", tmpl, why)
	}
	// No namespace and "default" are the same place.
	d := ix.Get("Deployment", "", "d")
	if d == nil {
		t.Fatal("namespace-less lookup missed the default namespace")
	}
	if rep := ix.ReplicasOf(d); rep.Min != 1 || rep.Max != 1 || rep.Set {
		t.Errorf("unset replicas %+v, want the default 1", rep)
	}
}

// Scopes: a tree sees the trees above and below it, not beside it; an
// apart scope sees only itself; Everywhere sees and is seen by all.
func TestScopes(t *testing.T) {
	ix := New()
	web, webBase, api, root := ix.Tree("/r/apps/web"), ix.Tree("/r/apps/web/base"), ix.Tree("/r/apps/api"), ix.Tree("/r")
	webby := ix.Tree("/r/apps/webby")
	chart, other := ix.Apart(), ix.Apart()
	if ix.Tree("/r/apps/web") != web {
		t.Error("one directory, two scopes")
	}
	for _, c := range []struct {
		a, b Scope
		want bool
	}{
		{web, webBase, true}, {webBase, web, true}, {web, root, true}, {root, api, true},
		{web, api, false}, {webBase, api, false}, {web, webby, false},
		{chart, chart, true}, {chart, other, false}, {chart, web, false}, {web, chart, false},
		{Everywhere, chart, true}, {chart, Everywhere, true}, {api, Everywhere, true},
	} {
		if got := ix.sees(c.a, c.b); got != c.want {
			t.Errorf("%v (%+v) sees %v (%+v): %v, want %v", c.a, ix.scopes[c.a], c.b, ix.scopes[c.b], got, c.want)
		}
	}
}

// A list grows by an eighth, keeping its order, so that what it leaves
// unused stays small.
func TestInsertGrowsByAnEighth(t *testing.T) {
	var list []entry
	for _, o := range []Ordinal{5, 1, 9, 3, 7, 2, 8, 0, 6, 4} {
		list = insert(list, entry{ord: o})
	}
	for i := 10; i < 1000; i++ {
		list = insert(list, entry{ord: Ordinal(i)})
		if cap(list) > len(list)+len(list)/8+1 {
			t.Fatalf("%d entries in a list of %d", len(list), cap(list))
		}
	}
	for i, e := range list {
		if e.ord != Ordinal(i) {
			t.Fatalf("entry %d is %d", i, e.ord)
		}
	}
}

// Objects that share a key, added out of input order from several trees:
// Get answers each scope with the first, in input order, that it sees,
// as a list of the key's objects sorted by ordinal would.
func TestGetAnswersTheFirstSeenOfAKeyAddedOutOfOrder(t *testing.T) {
	var src string
	for range 4 {
		src += "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: ns}\n---\n"
	}
	objs := decodeAll(t, src)
	ix := New()
	root, a, b, c := ix.Tree("/r"), ix.Tree("/r/a"), ix.Tree("/r/b"), ix.Tree("/s")
	// Added as files are read: ordinal 7 (tree a) first, then 3 (b),
	// then 9 (root), then 1 (elsewhere).
	ix.Add(objs[0], 7, a, true)
	ix.Add(objs[1], 3, b, true)
	ix.Add(objs[2], 9, root, true)
	ix.Add(objs[3], 1, c, true)
	ix.Freeze()
	for _, tc := range []struct {
		scope Scope
		want  *object.Object
	}{
		{a, objs[0]}, {b, objs[1]}, {root, objs[1]}, {c, objs[3]}, {Everywhere, objs[3]},
	} {
		if got := ix.View(tc.scope, nil).Get("ConfigMap", "ns", "c"); got != tc.want {
			t.Errorf("scope %d: got %p, want %p", tc.scope, got, tc.want)
		}
	}
	if got := ix.Get("ConfigMap", "ns", "d"); got != nil {
		t.Errorf("a key never added: got %p", got)
	}
	rec := &Recorder{}
	ix.View(a, rec).Get("ConfigMap", "ns", "c")
	if rec.Stale(ix) {
		t.Error("an answer of the complete index is stale")
	}
}
