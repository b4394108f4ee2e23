package webhook

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"backfire.dev/backfire/internal/cluster/clustertest"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/testutil"
)

// deployedWebhook is the ValidatingWebhookConfiguration of deploy/, as a
// cluster admin applies it.
func deployedWebhook(t *testing.T) *admissionregistrationv1.ValidatingWebhookConfiguration {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "deploy", "webhook.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	if err := yaml.UnmarshalStrict(data, &vwc); err != nil {
		t.Fatal(err)
	}
	return &vwc
}

// warningLog collects the warnings the API server passes on, as kubectl
// prints them.
type warningLog struct {
	mu   sync.Mutex
	list []string
}

func (w *warningLog) HandleWarningHeader(_ int, _, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

func (w *warningLog) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	l := w.list
	w.list = nil
	return l
}

// running is one webhook server on the envtest serving address; stop
// may be called more than once.
type running struct {
	stop func()
}

func startWebhook(t *testing.T, env *clustertest.Env, wh *envtest.WebhookInstallOptions, policy Policy) *running {
	t.Helper()
	cc, err := NewClusterContext(env.Config, "envtest")
	if err != nil {
		t.Fatal(err)
	}
	judge, err := NewJudge(nil, rules.Options{}, cc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, ServeOptions{
			Addr:       net.JoinHostPort(wh.LocalServingHost, strconv.Itoa(wh.LocalServingPort)),
			HealthAddr: "127.0.0.1:0",
			CertFile:   filepath.Join(wh.LocalServingCertDir, "tls.crt"),
			KeyFile:    filepath.Join(wh.LocalServingCertDir, "tls.key"),
			Handler:    HandlerOptions{Judge: judge, Policy: policy},
			Cluster:    cc,
			Ready:      func() { close(ready) },
		})
	}()
	select {
	case <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("webhook server: %v", err)
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("webhook server did not start in 30 s")
	}
	syncCtx, stopSync := context.WithTimeout(ctx, 30*time.Second)
	defer stopSync()
	if !cc.WaitForSync(syncCtx) {
		cancel()
		t.Fatal("cluster caches did not sync in 30 s")
	}
	var once sync.Once
	return &running{stop: func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("webhook server: %v", err)
			}
		})
	}}
}

func objectFrom(t *testing.T, data []byte, namespace string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &u.Object); err != nil {
		t.Fatal(err)
	}
	u.SetNamespace(namespace)
	unstructured.RemoveNestedField(u.Object, "status")
	return u
}

var (
	statefulSets = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}
	deployments  = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	rollouts     = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"}
	budgets      = schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}
)

func hasPrefix(ws []string, prefix string) bool {
	return slices.ContainsFunc(ws, func(w string) bool { return strings.HasPrefix(w, prefix) })
}

func hasSubstring(ws []string, s string) bool {
	return slices.ContainsFunc(ws, func(w string) bool { return strings.Contains(w, s) })
}

// The acceptance test: the API server itself calls the webhook of deploy/
// (failurePolicy Ignore, so a webhook that did not answer would let
// everything through and the denials below would fail).
func TestAdmissionThroughTheAPIServer(t *testing.T) {
	env, wh := clustertest.WithWebhooks(t, []*admissionregistrationv1.ValidatingWebhookConfiguration{deployedWebhook(t)})
	ns := env.FreshNamespace(t, "admission")
	warnings := &warningLog{}
	cfg := rest.CopyConfig(env.Config)
	cfg.WarningHandler = warnings
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	bad := objectFrom(t, fixture(t, "bad-statefulset.yaml"), ns)

	t.Run("deny mode refuses the seed 003 StatefulSet", func(t *testing.T) {
		w := startWebhook(t, env, wh, Policy{Mode: Deny, FailOn: finding.Error})
		defer w.stop()
		_, err := dyn.Resource(statefulSets).Namespace(ns).Create(ctx, bad, metav1.CreateOptions{})
		if err == nil {
			t.Fatal("created; want refused by the webhook")
		}
		msg := err.Error()
		for _, want := range []string{`admission webhook "validate.backfire.dev" denied the request`, "BF101 liveness-fails-during-recovery",
			"spec.template.spec.containers[0].livenessProbe", "fix: "} {
			if !strings.Contains(msg, want) {
				t.Errorf("refusal lacks %q:\n%s", want, msg)
			}
		}
		if ws := warnings.take(); !hasPrefix(ws, "BF103 warning") {
			t.Errorf("the refusal's warnings %q lack BF103 (below --fail-on)", ws)
		}
		healthy := objectFrom(t, fixture(t, "healthy-deployment.yaml"), ns)
		if _, err := dyn.Resource(deployments).Namespace(ns).Create(ctx, healthy, metav1.CreateOptions{}); err != nil {
			t.Fatalf("healthy Deployment refused: %v", err)
		}
		if ws := warnings.take(); len(ws) > 0 {
			t.Errorf("healthy Deployment warned: %q", ws)
		}
	})

	t.Run("warn mode admits it with warnings", func(t *testing.T) {
		w := startWebhook(t, env, wh, Policy{Mode: Warn, FailOn: finding.Error})
		defer func() { w.stop() }()
		if _, err := dyn.Resource(statefulSets).Namespace(ns).Create(ctx, bad, metav1.CreateOptions{}); err != nil {
			t.Fatalf("refused in warn mode: %v", err)
		}
		ws := warnings.take()
		for _, want := range []string{"BF101 error", "BF102 error", "BF103 warning", "BF201 error", "BF301"} {
			if !hasPrefix(ws, want) {
				t.Errorf("warnings lack %q: %q", want, ws)
			}
		}
		checkWarnings(t, ws)

		// Cross-object context from the informers: the Rollout's
		// ScaledObject and AnalysisTemplate are in the cluster only.
		for _, u := range splitYAML(t, fixture(t, "rollout-context.yaml"), ns) {
			env.Create(t, u)
		}
		w.stop()
		w = startWebhook(t, env, wh, Policy{Mode: Warn, FailOn: finding.Error}) // a fresh cache holds them once synced
		ro := objectFrom(t, fixture(t, "rollout.yaml"), ns)
		if _, err := dyn.Resource(rollouts).Namespace(ns).Create(ctx, ro, metav1.CreateOptions{}); err != nil {
			t.Fatalf("Rollout refused in warn mode: %v", err)
		}
		ws = warnings.take()
		// BF401 needs the ScaledObject's range (min 8): alone, the Rollout
		// runs one pod and no rollback jumps.
		if !hasPrefix(ws, "BF401 error") || !hasSubstring(ws, "2 pods sized for 8 to 200 replicas") || !hasPrefix(ws, "BF402 warning") {
			t.Errorf("the Rollout was not judged with its ScaledObject and AnalysisTemplate from the cluster: %q", ws)
		}
	})

	t.Run("a budget is judged against the cluster's Deployment", func(t *testing.T) {
		// The healthy Deployment (6 replicas) was created above; a fresh
		// cache holds it once synced.
		w := startWebhook(t, env, wh, Policy{Mode: Warn, FailOn: finding.Error})
		defer w.stop()
		pdb := objectFrom(t, fixture(t, "budget.yaml"), ns)
		if _, err := dyn.Resource(budgets).Namespace(ns).Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
			t.Fatalf("budget refused in warn mode: %v", err)
		}
		if ws := warnings.take(); !hasPrefix(ws, "BF303 warning") || !hasSubstring(ws, "minAvailable 6 of") {
			t.Errorf("the budget was not judged with the Deployment from the cluster: %q", ws)
		}
	})

	t.Run("deny mode does not refuse an unrelated edit of an old bad object", func(t *testing.T) {
		w := startWebhook(t, env, wh, Policy{Mode: Deny, FailOn: finding.Error})
		defer w.stop()
		stored, err := dyn.Resource(statefulSets).Namespace(ns).Get(ctx, bad.GetName(), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		labels := stored.GetLabels()
		labels["team"] = "storage"
		stored.SetLabels(labels)
		if _, err := dyn.Resource(statefulSets).Namespace(ns).Update(ctx, stored, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("relabelling the old StatefulSet was refused: %v", err)
		}
		if ws := warnings.take(); !hasPrefix(ws, "BF101 error (already there before this update)") {
			t.Errorf("the old findings were not reported: %q", ws)
		}
	})

	// deploy/deny/'s failurePolicy, with no webhook running: the API server
	// refuses what the webhook did not answer, and a namespace labelled
	// backfire.dev/webhook=disabled is the way out (docs/webhook.md).
	t.Run("deny mode's Fail refuses while the webhook is down, except where exempt", func(t *testing.T) {
		hooks := schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"}
		setPolicy := func(p admissionregistrationv1.FailurePolicyType) {
			patch := []byte(`[{"op":"replace","path":"/webhooks/0/failurePolicy","value":"` + string(p) + `"}]`)
			if _, err := dyn.Resource(hooks).Patch(ctx, deployedWebhook(t).Name, types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		setPolicy(admissionregistrationv1.Fail)
		defer setPolicy(admissionregistrationv1.Ignore)
		down := objectFrom(t, fixture(t, "healthy-deployment.yaml"), ns)
		down.SetName("while-down")
		var err error
		for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
			// The API server reads the configuration from its cache.
			if _, err = dyn.Resource(deployments).Namespace(ns).Create(ctx, down, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
				break
			}
		}
		if err == nil || !strings.Contains(err.Error(), `failed calling webhook "validate.backfire.dev"`) {
			t.Fatalf("created while the webhook was down under Fail: %v", err)
		}
		namespaces := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
		label := []byte(`{"metadata":{"labels":{"backfire.dev/webhook":"disabled"}}}`)
		if _, err := dyn.Resource(namespaces).Patch(ctx, ns, types.MergePatchType, label, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
			if _, err = dyn.Resource(deployments).Namespace(ns).Create(ctx, down, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err == nil {
				break
			}
		}
		if err != nil {
			t.Errorf("refused in a namespace labelled backfire.dev/webhook=disabled: %v", err)
		}
	})
}

func splitYAML(t *testing.T, data []byte, namespace string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split(string(data), "\n---\n") {
		u := objectFrom(t, []byte(doc), namespace)
		if u.GetKind() != "" {
			out = append(out, u)
		}
	}
	return out
}
