package webhook

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"backfire.dev/backfire/internal/cluster"
	"backfire.dev/backfire/internal/object"
)

// ContextKinds are the kinds the rules consult about another object: the
// analysis templates of a Rollout, the autoscalers that own a workload's
// replicas, the Services and Ingresses in front of it, the Deployment
// behind a Rollout's workloadRef, and the Rollouts that run a Deployment's
// template; the workloads whose pods a disruption budget, a network policy
// or a DestinationRule selects, the other budgets and policies beside it,
// and the Namespaces whose labels a policy selects.
var ContextKinds = []string{
	"Deployment", "StatefulSet", "DaemonSet", "CronJob", "Service", "Ingress",
	"HorizontalPodAutoscaler", "Rollout", "AnalysisTemplate", "ClusterAnalysisTemplate", "ScaledObject",
	"PodDisruptionBudget", "NetworkPolicy", "DestinationRule", "Namespace", "Canary", "MetricTemplate",
}

// ClusterContext keeps the context kinds of a cluster in informer caches,
// decoded once per change rather than once per request. It only lists and
// watches.
type ClusterContext struct {
	factory dynamicinformer.DynamicSharedInformerFactory
	synced  []cache.InformerSynced
	gaps    []string

	mu sync.RWMutex
	// byNamespace holds the decoded objects; "" is cluster-scoped.
	byNamespace map[string]map[objectKey]*object.Object
	// snapshot caches Objects' answer per namespace until a change.
	snapshot map[string][]*object.Object
}

type objectKey struct{ kind, name string }

// NewClusterContext discovers which context kinds the cluster serves and
// prepares an informer for each; Start runs them.
func NewClusterContext(cfg *rest.Config, contextName string) (*ClusterContext, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(readOnly)
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	c := &ClusterContext{
		factory:     dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0),
		byNamespace: map[string]map[objectKey]*object.Object{},
		snapshot:    map[string][]*object.Object{},
	}
	for _, k := range cluster.DefaultKinds {
		if !slices.Contains(ContextKinds, k.Kind) {
			continue
		}
		res, err := dc.ServerResourcesForGroupVersion(k.GroupVersion().String())
		served := err == nil && slices.ContainsFunc(res.APIResources, func(r metav1.APIResource) bool { return r.Name == k.Resource })
		switch {
		case err != nil && !apierrors.IsNotFound(err):
			return nil, fmt.Errorf("discover %s: %w", k.GroupVersion(), err)
		case !served:
			c.gaps = append(c.gaps, fmt.Sprintf("the cluster does not serve %s/%s, so no %s was consulted", k.Name(), k.Version, k.Kind))
			continue
		}
		inf := c.factory.ForResource(k.GroupVersionResource).Informer()
		// The cache keeps what the rules read, not managedFields.
		if err := inf.SetTransform(dropManagedFields); err != nil {
			return nil, err
		}
		kind := k
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { c.put(contextName, kind, o) },
			UpdateFunc: func(_, o any) { c.put(contextName, kind, o) },
			DeleteFunc: func(o any) { c.remove(kind, o) },
		}); err != nil {
			return nil, err
		}
		c.synced = append(c.synced, inf.HasSynced)
	}
	return c, nil
}

// Start runs the informers until ctx ends.
func (c *ClusterContext) Start(ctx context.Context) { c.factory.Start(ctx.Done()) }

// Synced reports whether every informer has listed its kind once.
func (c *ClusterContext) Synced() bool {
	for _, s := range c.synced {
		if !s() {
			return false
		}
	}
	return true
}

// WaitForSync blocks until the caches are synced or ctx ends.
func (c *ClusterContext) WaitForSync(ctx context.Context) bool {
	return cache.WaitForCacheSync(ctx.Done(), c.synced...)
}

// Gaps says which kinds the cluster does not serve, and that the caches
// are still filling before the first sync.
func (c *ClusterContext) Gaps() []string {
	if !c.Synced() {
		return append(slices.Clip(c.gaps), "the cluster's objects were still being read when this object was judged")
	}
	return c.gaps
}

// Unserved names the context kinds the cluster does not serve.
func (c *ClusterContext) Unserved() []string { return c.gaps }

// Objects returns the cached objects of a namespace and the cluster-scoped
// ones. The slice is shared until the next change: callers must not modify
// it.
func (c *ClusterContext) Objects(namespace string) []*object.Object {
	c.mu.RLock()
	objs, ok := c.snapshot[namespace]
	c.mu.RUnlock()
	if ok {
		return objs
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if objs, ok := c.snapshot[namespace]; ok {
		return objs
	}
	objs = make([]*object.Object, 0, len(c.byNamespace[namespace])+len(c.byNamespace[""]))
	for _, o := range c.byNamespace[namespace] {
		objs = append(objs, o)
	}
	if namespace != "" {
		for _, o := range c.byNamespace[""] {
			objs = append(objs, o)
		}
	}
	// In a stable order, so that an answer does not depend on map order
	// (the rules name autoscalers and templates in index order).
	slices.SortFunc(objs, func(a, b *object.Object) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name))
	})
	c.snapshot[namespace] = objs
	return objs
}

func (c *ClusterContext) put(contextName string, k cluster.Kind, v any) {
	u, ok := v.(*unstructured.Unstructured)
	if !ok {
		return
	}
	f := cluster.Render(contextName, k, u)
	if len(f.Documents) != 1 {
		return
	}
	o, err := object.Decode(f.Documents[0])
	if err != nil {
		return // a stored object the types cannot read: the rules cannot use it either
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ns := c.byNamespace[u.GetNamespace()]
	if ns == nil {
		ns = map[objectKey]*object.Object{}
		c.byNamespace[u.GetNamespace()] = ns
	}
	ns[objectKey{k.Kind, u.GetName()}] = o
	c.invalidate(u.GetNamespace())
}

func (c *ClusterContext) remove(k cluster.Kind, v any) {
	if d, ok := v.(cache.DeletedFinalStateUnknown); ok {
		v = d.Obj
	}
	u, ok := v.(*unstructured.Unstructured)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.byNamespace[u.GetNamespace()], objectKey{k.Kind, u.GetName()})
	c.invalidate(u.GetNamespace())
}

// invalidate drops the snapshots a change in namespace ns affects: its
// own, or every one for a cluster-scoped object.
func (c *ClusterContext) invalidate(ns string) {
	if ns == "" {
		clear(c.snapshot)
		return
	}
	delete(c.snapshot, ns)
}

func dropManagedFields(v any) (any, error) {
	if u, ok := v.(*unstructured.Unstructured); ok {
		u.SetManagedFields(nil)
	}
	return v, nil
}

// readOnly refuses every request that is not a read (list and watch are
// GETs): the webhook never changes the cluster.
func readOnly(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			return nil, fmt.Errorf("backfire reads clusters only: refused %s %s", req.Method, req.URL.Path)
		}
		return rt.RoundTrip(req)
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
