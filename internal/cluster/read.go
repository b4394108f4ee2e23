// Package cluster reads the objects the rules need from a live cluster,
// read-only: discovery, then a paginated list of each kind. Each object is
// rendered as YAML the way `kubectl get -o yaml` shows it and parsed like a
// file, so findings carry the line and column kubectl shows.
package cluster

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/pager"
	"sigs.k8s.io/yaml"

	"backfire.dev/backfire/internal/load"
)

// DefaultPageSize is the number of objects asked for per list call.
const DefaultPageSize = 500

// Options say which cluster to read and what.
type Options struct {
	Config *rest.Config
	// Context names the cluster in file names: cluster://<Context>/...
	Context string
	// Namespace limits the namespaced kinds to one namespace; "" reads all
	// namespaces. Cluster-scoped kinds are read either way.
	Namespace string
	// Kinds to list; nil means DefaultKinds.
	Kinds []Kind
	// PageSize is the list call's limit; 0 means DefaultPageSize.
	PageSize int64
	// Progress, when set, is told each time a kind has been listed: done
	// of total. It is called from the listing goroutines.
	Progress func(done, total int)
}

// Snapshot is what the cluster yielded. Errors and notes never stop the
// other kinds from being read.
type Snapshot struct {
	// Files holds one parsed stream per object, named
	// cluster://<context>/<namespace>/<Kind>/<name>.
	Files []load.File
	// Errors are kinds that could not be read (an RBAC denial, a server
	// error): the scan is incomplete.
	Errors []load.Error
	// Notes are kinds the cluster does not serve (their CRD is not
	// installed): there is nothing of them to scan.
	Notes []string
}

// Read lists every kind of opts.Kinds. It only ever sends GET requests.
func Read(ctx context.Context, opts Options) Snapshot {
	src := "cluster://" + opts.Context
	fail := func(format string, args ...any) Snapshot {
		return Snapshot{Errors: []load.Error{{File: src, Message: fmt.Sprintf(format, args...)}}}
	}
	kinds := opts.Kinds
	if kinds == nil {
		kinds = DefaultKinds
	}
	if opts.PageSize <= 0 {
		opts.PageSize = DefaultPageSize
	}
	cfg := rest.CopyConfig(opts.Config)
	cfg.Wrap(readOnly)
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fail("%v", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fail("%v", err)
	}
	// One cheap call first, so that an unreachable server is one error
	// rather than one per kind.
	if _, err := dc.ServerVersion(); err != nil {
		return fail("cannot reach the API server: %v", err)
	}

	var res Snapshot
	served := map[schema.GroupVersion]map[string]bool{}
	var listed []Kind
	for _, k := range kinds {
		gv := k.GroupVersion()
		if _, ok := served[gv]; !ok {
			resources, err := dc.ServerResourcesForGroupVersion(gv.String())
			switch {
			case apierrors.IsNotFound(err):
				served[gv] = map[string]bool{}
			case err != nil:
				res.Errors = append(res.Errors, load.Error{File: src, Message: fmt.Sprintf("discover %s: %v", gv, err)})
				served[gv] = nil
			default:
				served[gv] = map[string]bool{}
				for _, r := range resources.APIResources {
					served[gv][r.Name] = true
				}
			}
		}
		switch names := served[gv]; {
		case names == nil: // discovery failed: already reported
		case !names[k.Resource]:
			why := ""
			if k.custom() {
				why = " (its CRD is not installed)"
			}
			res.Notes = append(res.Notes, fmt.Sprintf("%s: the cluster does not serve %s/%s%s; %ss not scanned", src, k.Name(), k.Version, why, k.Kind))
		default:
			listed = append(listed, k)
		}
	}

	// Kinds are listed concurrently (the client's QPS limit still holds)
	// and reported in table order.
	perKind := make([]Snapshot, len(listed))
	var wg sync.WaitGroup
	var done atomic.Int64
	for i, k := range listed {
		wg.Go(func() {
			perKind[i] = readKind(ctx, dyn, k, src, &opts)
			if opts.Progress != nil {
				opts.Progress(int(done.Add(1)), len(listed))
			}
		})
	}
	wg.Wait()
	for _, r := range perKind {
		res.Files = append(res.Files, r.Files...)
		res.Errors = append(res.Errors, r.Errors...)
	}
	return res
}

func readKind(ctx context.Context, dyn dynamic.Interface, k Kind, src string, opts *Options) Snapshot {
	var client dynamic.ResourceInterface = dyn.Resource(k.GroupVersionResource)
	where := "in all namespaces"
	if k.Namespaced && opts.Namespace != "" {
		client = dyn.Resource(k.GroupVersionResource).Namespace(opts.Namespace)
		where = "in namespace " + opts.Namespace
	} else if !k.Namespaced {
		where = "(cluster-scoped)"
	}
	p := pager.New(func(ctx context.Context, lo metav1.ListOptions) (runtime.Object, error) {
		return client.List(ctx, lo)
	})
	p.PageSize = opts.PageSize
	var res Snapshot
	each := func(o runtime.Object) error {
		u, ok := o.(*unstructured.Unstructured)
		if !ok {
			return fmt.Errorf("unexpected list item %T", o)
		}
		if !k.ownedElsewhere(u) {
			res.Files = append(res.Files, Render(opts.Context, k, u))
		}
		return nil
	}
	// Page by page, so that memory holds the objects kept, not every pod
	// of the cluster. A continue token that expires during a long list
	// (etcd compacted its revision) costs one fresh start.
	err := p.EachListItem(ctx, metav1.ListOptions{}, each)
	if apierrors.IsResourceExpired(err) {
		res = Snapshot{}
		err = p.EachListItem(ctx, metav1.ListOptions{}, each)
	}
	if err != nil {
		return Snapshot{Errors: []load.Error{{File: src, Message: fmt.Sprintf("list %s %s: %v", k.Name(), where, err)}}}
	}
	return res
}

// Render turns a live object into the stream that is scanned: its YAML as
// `kubectl get -o yaml` prints it (keys sorted, managedFields hidden), with
// status cut down to status.replicas. The rules read the desired state, and
// the replica count running now (an autoscaler's current choice); status
// sorts after spec and metadata, so every line a finding names is the line
// kubectl shows.
func Render(contextName string, k Kind, u *unstructured.Unstructured) load.File {
	obj := u.DeepCopy()
	unstructured.RemoveNestedField(obj.Object, "metadata", "managedFields")
	replicas, hasReplicas, _ := unstructured.NestedInt64(obj.Object, "status", "replicas")
	unstructured.RemoveNestedField(obj.Object, "status")
	if hasReplicas && replicas > 0 {
		_ = unstructured.SetNestedField(obj.Object, replicas, "status", "replicas")
	}
	if obj.GetAPIVersion() == "" || obj.GetKind() == "" {
		obj.SetAPIVersion(k.GroupVersion().String())
		obj.SetKind(k.Kind)
	}
	name := FileName(contextName, obj.GetNamespace(), k.Kind, obj.GetName())
	data, err := yaml.Marshal(obj.Object)
	if err != nil {
		return load.File{Name: name, Errors: []load.Error{{File: name, Message: err.Error()}}}
	}
	f := load.Parse(name, data)
	for _, d := range f.Documents {
		d.Origin = load.Origin{Kind: load.LiveObject, Text: "live object in context " + contextName + "; lines as kubectl get -o yaml prints it"}
	}
	return f
}

// FileName names a live object: cluster://<context>/<namespace>/<Kind>/<name>,
// without the namespace for cluster-scoped kinds.
func FileName(contextName, namespace, kind, name string) string {
	if namespace == "" {
		return fmt.Sprintf("cluster://%s/%s/%s", contextName, kind, name)
	}
	return fmt.Sprintf("cluster://%s/%s/%s/%s", contextName, namespace, kind, name)
}

// readOnly refuses every request that is not a read: a scan must never
// change the cluster, whatever a library above it tries.
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
