package webhook

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"backfire.dev/backfire/internal/cluster"
	"backfire.dev/backfire/internal/object"
)

func kindNamed(t *testing.T, name string) cluster.Kind {
	t.Helper()
	for _, k := range cluster.DefaultKinds {
		if k.Kind == name {
			return k
		}
	}
	t.Fatalf("no kind %s", name)
	return cluster.Kind{}
}

func names(objs []*object.Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.Kind+" "+o.Namespace+"/"+o.Name)
	}
	return out
}

// The informers' events keep the decoded objects current, and a change
// drops the snapshots it affects: a cluster-scoped object every one.
func TestClusterContextFollowsChanges(t *testing.T) {
	c := &ClusterContext{byNamespace: map[string]map[objectKey]*object.Object{}, snapshot: map[string][]*object.Object{}}
	hpa := kindNamed(t, "HorizontalPodAutoscaler")
	cat := kindNamed(t, "ClusterAnalysisTemplate")
	mk := func(apiVersion, kind, ns, name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind,
			"metadata": map[string]any{"name": name, "managedFields": []any{map[string]any{"manager": "kubectl"}}}}}
		if ns != "" {
			u.SetNamespace(ns)
		}
		return u
	}
	a := mk("autoscaling/v2", "HorizontalPodAutoscaler", "shop", "web")
	c.put("test", hpa, a)
	if got := names(c.Objects("shop")); !slices.Equal(got, []string{"HorizontalPodAutoscaler shop/web"}) {
		t.Fatalf("shop: %v", got)
	}
	if got := c.Objects("other"); len(got) != 0 {
		t.Fatalf("other: %v", names(got))
	}
	c.put("test", cat, mk("argoproj.io/v1alpha1", "ClusterAnalysisTemplate", "", "success-rate"))
	for _, ns := range []string{"shop", "other"} {
		if got := names(c.Objects(ns)); !slices.Contains(got, "ClusterAnalysisTemplate /success-rate") {
			t.Errorf("%s after a cluster-scoped add: %v", ns, got)
		}
	}
	c.remove(hpa, cache.DeletedFinalStateUnknown{Key: "shop/web", Obj: a})
	if got := names(c.Objects("shop")); !slices.Equal(got, []string{"ClusterAnalysisTemplate /success-rate"}) {
		t.Errorf("shop after the delete: %v", got)
	}
	// An object the types cannot read is left out, not an error.
	bad := mk("autoscaling/v2", "HorizontalPodAutoscaler", "shop", "bad")
	bad.Object["spec"] = map[string]any{"maxReplicas": "many"}
	c.put("test", hpa, bad)
	if got := names(c.Objects("shop")); slices.Contains(got, "HorizontalPodAutoscaler shop/bad") {
		t.Errorf("an undecodable object was cached: %v", got)
	}
	if v, _ := dropManagedFields(a); len(v.(*unstructured.Unstructured).GetManagedFields()) != 0 {
		t.Error("managedFields kept in the cache")
	}
}
