// Package clustertest runs a real kube-apiserver and etcd for tests
// (controller-runtime's envtest), with the CRDs of the kinds backfire reads,
// and applies manifests to it. The binaries come from KUBEBUILDER_ASSETS, or
// from hack/test-assets.sh when it is not set. The tests that use it run
// when testutil.HeavyTests is on (hack/test.sh turns it on, so CI never
// skips them); a plain go test ./... skips them.
package clustertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/testutil"
)

// Env is a running control plane and an admin client for it.
type Env struct {
	env     *envtest.Environment
	Config  *rest.Config // cluster admin (system:masters)
	Dynamic dynamic.Interface
	Typed   kubernetes.Interface
	mapper  meta.RESTMapper
	fresh   int // namespaces made by FreshNamespace
}

var shared struct {
	mu  sync.Mutex
	env *Env
	err error // a failed start is not retried: every later test reports it
}

// Shared starts the package's control plane on first use; StopShared (from
// TestMain or a cleanup) stops it, and a later Shared starts a new one (as
// `go test -count=N` needs).
func Shared(t testing.TB) *Env {
	t.Helper()
	testutil.Heavy(t, "a kube-apiserver and etcd")
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.env == nil && shared.err == nil {
		shared.env, shared.err = start(testutil.RepoRoot(t))
	}
	if shared.err != nil {
		t.Fatalf("test control plane: %v", shared.err)
	}
	return shared.env
}

// StopShared stops the control plane if Shared started one.
func StopShared() {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.env != nil {
		if err := shared.env.env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the test control plane:", err)
		}
		shared.env = nil
	}
}

func start(root string) (*Env, error) {
	// envtest logs through controller-runtime's logger; without one it
	// prints a warning with a stack trace.
	logf.SetLogger(logr.Discard())
	assets, err := assetsDir(root)
	if err != nil {
		return nil, err
	}
	crds, err := crdPaths(root)
	if err != nil {
		return nil, err
	}
	te := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     crds,
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := te.Start()
	if err != nil {
		return nil, err
	}
	e := &Env{env: te, Config: cfg}
	if e.Dynamic, err = dynamic.NewForConfig(cfg); err == nil {
		e.Typed, err = kubernetes.NewForConfig(cfg)
	}
	if err != nil {
		_ = te.Stop()
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		_ = te.Stop()
		return nil, err
	}
	e.mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	return e, nil
}

// assetsDir finds kube-apiserver and etcd: KUBEBUILDER_ASSETS, else the
// project's script that builds and caches them.
func assetsDir(root string) (string, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir, nil
	}
	cmd := exec.Command(filepath.Join(root, "hack", "test-assets.sh"))
	cmd.Dir = root
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("hack/test-assets.sh: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// crdPaths are the Argo Rollouts CRDs of the module version whose Go types
// backfire decodes, and minimal CRDs for KEDA's ScaledObject, Istio's
// DestinationRule, Argo CD's Application and Flagger's Canary and
// MetricTemplate.
func crdPaths(root string) ([]string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/argoproj/argo-rollouts")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("locating the argo-rollouts module: %w", err)
	}
	argo := filepath.Join(strings.TrimSpace(string(out)), "manifests", "crds")
	return []string{
		filepath.Join(argo, "rollout-crd.yaml"),
		filepath.Join(argo, "analysis-template-crd.yaml"),
		filepath.Join(argo, "cluster-analysis-template-crd.yaml"),
		filepath.Join(root, "internal", "cluster", "clustertest", "testdata", "crds", "keda-scaledobjects.yaml"),
		filepath.Join(root, "internal", "cluster", "clustertest", "testdata", "crds", "istio-destinationrules.yaml"),
		filepath.Join(root, "internal", "cluster", "clustertest", "testdata", "crds", "argocd-applications.yaml"),
		filepath.Join(root, "internal", "cluster", "clustertest", "testdata", "crds", "flagger-canaries.yaml"),
		filepath.Join(root, "internal", "cluster", "clustertest", "testdata", "crds", "flagger-metrictemplates.yaml"),
	}, nil
}

// ListOnly returns the client configuration of a user whom RBAC allows
// nothing but to get and list one resource in one namespace (and what every
// authenticated user may: discovery), once the authorizer applies it.
func (e *Env) ListOnly(t testing.TB, user, namespace string, resource schema.GroupVersionResource) *rest.Config {
	t.Helper()
	ctx := context.Background()
	rbac := e.Typed.RbacV1()
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{resource.Group}, Resources: []string{resource.Resource}, Verbs: []string{"get", "list"}}},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	// Already there when `go test -count=N` runs the test again on the
	// package's control plane.
	if _, err := rbac.Roles(namespace).Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if _, err := rbac.RoleBindings(namespace).Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	u, err := e.env.AddUser(envtest.User{Name: user}, &rest.Config{QPS: 1000, Burst: 2000})
	if err != nil {
		t.Fatal(err)
	}
	cfg := u.Config()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The authorizer learns of new bindings through a watch.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		_, err := dyn.Resource(resource).Namespace(namespace).List(ctx, metav1.ListOptions{Limit: 1})
		if err == nil {
			return cfg
		}
		if !apierrors.IsForbidden(err) || time.Now().After(deadline) {
			t.Fatalf("user %s listing %s in %s: %v", user, resource.Resource, namespace, err)
		}
	}
}

// Apply creates the objects of the YAML files, and their namespaces.
func (e *Env) Apply(t testing.TB, paths ...string) {
	t.Helper()
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f := load.Parse(p, data)
		if len(f.Errors) > 0 {
			t.Fatalf("%s: %v", p, f.Errors)
		}
		for _, d := range f.Documents {
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(d.JSON); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			e.Create(t, u)
		}
	}
}

// Create creates one object, and its namespace if that does not exist. An
// object that exists already is left as it is: tests create the same
// objects each time, and `go test -count=N` runs them again on the
// package's control plane.
func (e *Env) Create(t testing.TB, u *unstructured.Unstructured) {
	t.Helper()
	ctx := context.Background()
	gvk := u.GroupVersionKind()
	m, err := e.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		t.Fatalf("%s %s: %v", gvk, u.GetName(), err)
	}
	var client dynamic.ResourceInterface = e.Dynamic.Resource(m.Resource)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		ns := u.GetNamespace()
		if ns == "" {
			ns = metav1.NamespaceDefault
		}
		e.Namespace(t, ns)
		client = e.Dynamic.Resource(m.Resource).Namespace(ns)
	}
	created, err := client.Create(ctx, u, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return
	}
	if err != nil {
		t.Fatalf("create %s %s: %v", gvk.Kind, u.GetName(), err)
	}
	// A manifest that carries a status (a dump of a live object) gets it
	// through the status subresource, as a controller would have written it.
	if status, ok := u.Object["status"]; ok {
		created.Object["status"] = status
		if _, err := client.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("update status of %s %s: %v", gvk.Kind, u.GetName(), err)
		}
	}
}

// FreshNamespace creates a namespace of its own for one run of a test
// ("owned-1", "owned-2", ...): namespaces are never deleted here (envtest
// runs no namespace controller), and `go test -count=N` runs tests again.
func (e *Env) FreshNamespace(t testing.TB, prefix string) string {
	t.Helper()
	e.fresh++
	name := fmt.Sprintf("%s-%d", prefix, e.fresh)
	e.Namespace(t, name)
	return name
}

// Namespace creates a namespace unless it exists.
func (e *Env) Namespace(t testing.TB, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := e.Typed.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// RemoveCRD deletes a CustomResourceDefinition and waits until discovery no
// longer serves its group version.
func (e *Env) RemoveCRD(t testing.TB, name, groupVersion string) {
	t.Helper()
	ctx := context.Background()
	crds := e.Dynamic.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	if err := crds.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		_, err := dc.ServerResourcesForGroupVersion(groupVersion)
		if apierrors.IsNotFound(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is still served after deleting CRD %s: %v", groupVersion, name, err)
		}
	}
}

// DryRun asks the API server to validate the creation of one object
// without storing it (server-side dry run: admission and validation run,
// nothing is persisted), and returns what it says.
func (e *Env) DryRun(t testing.TB, u *unstructured.Unstructured) error {
	t.Helper()
	gvk := u.GroupVersionKind()
	m, err := e.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return err
	}
	var client dynamic.ResourceInterface = e.Dynamic.Resource(m.Resource)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		ns := u.GetNamespace()
		if ns == "" {
			ns = metav1.NamespaceDefault
		}
		e.Namespace(t, ns)
		client = e.Dynamic.Resource(m.Resource).Namespace(ns)
	}
	_, err = client.Create(context.Background(), u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	return err
}
