package cluster

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"backfire.dev/backfire/internal/cluster/clustertest"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/scan"
	"backfire.dev/backfire/internal/testutil"
)

func TestMain(m *testing.M) {
	code := m.Run()
	clustertest.StopShared()
	os.Exit(code)
}

const ctxName = "envtest"

// exampleNamespaces are those of examples/*.yaml; other tests put their
// objects elsewhere.
var exampleNamespaces = []string{"order", "registry", "shop"}

var applyExamples sync.Once

// withExamples returns the control plane with examples/*.yaml applied.
func withExamples(t *testing.T) *clustertest.Env {
	t.Helper()
	env := clustertest.Shared(t)
	applyExamples.Do(func() {
		paths, err := filepath.Glob(filepath.Join(testutil.RepoRoot(t), "examples", "*.yaml"))
		if err != nil || len(paths) == 0 {
			t.Fatalf("examples: %v %v", paths, err)
		}
		env.Apply(t, paths...)
	})
	return env
}

func read(t *testing.T, opts Options) Snapshot {
	t.Helper()
	if opts.Context == "" {
		opts.Context = ctxName
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return Read(ctx, opts)
}

func scanFiles(t *testing.T, opts scan.Options) *scan.Result {
	t.Helper()
	res, err := scan.Run(opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// key identifies a finding independently of where its object was read.
func key(f finding.Finding) string {
	return fmt.Sprintf("%s %s %s %s/%s container=%s", f.Rule, f.Severity, f.Object.Kind, f.Object.Namespace, f.Object.Name, f.Container)
}

func inExamples(f finding.Finding) bool {
	return slices.Contains(exampleNamespaces, f.Object.Namespace)
}

func TestLiveScanFindsWhatTheFileScanFinds(t *testing.T) {
	env := withExamples(t)
	live := read(t, Options{Config: env.Config})
	if len(live.Errors) > 0 || len(live.Notes) > 0 {
		t.Fatalf("errors %v, notes %v", live.Errors, live.Notes)
	}
	fromCluster := scanFiles(t, scan.Options{Extra: live.Files})
	fromFiles := scanFiles(t, scan.Options{Paths: []string{filepath.Join(testutil.RepoRoot(t), "examples")}})
	if len(fromCluster.Errors) > 0 {
		t.Fatalf("scan errors: %v", fromCluster.Errors)
	}

	want := map[string]finding.Finding{}
	for _, f := range fromFiles.Findings {
		want[key(f)] = f
	}
	// The examples are the two seed incidents: an empty comparison would
	// prove nothing.
	seeds := map[string]bool{}
	for _, f := range want {
		seeds[f.Object.String()] = true
	}
	if !seeds["StatefulSet registry/registry-database"] || !seeds["Rollout order/order-front-api"] {
		t.Fatalf("the file scan of examples/ has no finding on one of the seeds: %v", slices.Sorted(maps.Keys(want)))
	}
	got := map[string]finding.Finding{}
	for _, f := range fromCluster.Findings {
		if !inExamples(f) {
			continue
		}
		got[key(f)] = f
		wantFile := FileName(ctxName, f.Object.Namespace, f.Object.Kind, f.Object.Name)
		if f.File != wantFile || f.Line < 1 || f.Column < 1 {
			t.Errorf("%s: at %s:%d:%d, want %s with a line and column", key(f), f.File, f.Line, f.Column, wantFile)
		}
		if !strings.Contains(f.Origin, "live object in context "+ctxName) {
			t.Errorf("%s: origin %q does not say the object is live", key(f), f.Origin)
		}
	}
	for k, f := range want {
		if g, ok := got[k]; !ok {
			t.Errorf("the live scan misses %s", k)
		} else if g.Message != f.Message {
			// The examples write out every value the rules read, so the
			// API server's defaulting must not change what is said.
			t.Errorf("%s: message differs\n file: %s\n live: %s", k, f.Message, g.Message)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("the live scan adds %s", k)
		}
	}
	t.Logf("%d findings in %d live objects", len(got), len(live.Files))
}

// The finding's position is in the object as kubectl get -o yaml shows it
// (managedFields hidden, status kept), rendered here independently.
func TestFindingPointsAtTheLineOfTheLiveObject(t *testing.T) {
	env := withExamples(t)
	res := scanFiles(t, scan.Options{Extra: read(t, Options{Config: env.Config, Namespace: "registry"}).Files})
	var bf102 *finding.Finding
	for i, f := range res.Findings {
		if f.Rule == "BF102" && f.Object.Name == "registry-database" {
			bf102 = &res.Findings[i]
		}
	}
	if bf102 == nil {
		t.Fatalf("no BF102 finding for registry-database in %d findings", len(res.Findings))
	}
	if want := "spec.template.spec.containers[0].livenessProbe.timeoutSeconds"; bf102.Path != want {
		t.Fatalf("path %s, want %s", bf102.Path, want)
	}

	sts, err := env.Typed.AppsV1().StatefulSets("registry").Get(context.Background(), "registry-database", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(sts)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := obj["status"]; !ok {
		t.Fatal("the live object has no status: the rendering would not be kubectl's")
	}
	delete(obj["metadata"].(map[string]any), "managedFields")
	obj["apiVersion"], obj["kind"] = "apps/v1", "StatefulSet"
	rendered, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(rendered), "\n")
	if bf102.Line > len(lines) {
		t.Fatalf("line %d beyond the %d-line rendering", bf102.Line, len(lines))
	}
	line := lines[bf102.Line-1]
	indent := len(line) - len(strings.TrimLeft(line, " "))
	if strings.TrimSpace(line) != "timeoutSeconds: 1" || bf102.Column != indent+1 {
		t.Fatalf("%d:%d is %q in\n%s", bf102.Line, bf102.Column, line, rendered)
	}
	// The enclosing key must be the liveness probe, not the readiness
	// probe's timeoutSeconds: 1.
	for i := bf102.Line - 2; i >= 0; i-- {
		l := lines[i]
		if ind := len(l) - len(strings.TrimLeft(l, " ")); ind < indent {
			if strings.TrimSpace(l) != "livenessProbe:" {
				t.Fatalf("line %d is under %q, not livenessProbe", bf102.Line, l)
			}
			break
		}
	}
}

// Pods, ReplicaSets and Jobs made by a controller (a ReplicationController
// too) are scanned through that
// controller; the ones made by hand are scanned themselves.
func TestOwnedObjectsAreScannedThroughTheirOwner(t *testing.T) {
	env := clustertest.Shared(t)
	ns := env.FreshNamespace(t, "owned")
	ctx := context.Background()
	labels := map[string]string{"app": "web"}
	podSpec := corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "registry.example.com/c:1"}}}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec}
	alwaysTmpl := *tmpl.DeepCopy()
	alwaysTmpl.Spec.RestartPolicy = corev1.RestartPolicyAlways
	controlledBy := func(apiVersion, kind string, o metav1.Object) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: o.GetName(), UID: o.GetUID(), Controller: ptr.To(true)}}
	}

	apps, core, batch := env.Typed.AppsV1(), env.Typed.CoreV1(), env.Typed.BatchV1()
	dep := must(apps.Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: alwaysTmpl},
	}, metav1.CreateOptions{}))(t)
	rs := must(apps.ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1", OwnerReferences: controlledBy("apps/v1", "Deployment", dep)},
		Spec:       appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: alwaysTmpl},
	}, metav1.CreateOptions{}))(t)
	must(apps.ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "by-hand"},
		Spec:       appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: alwaysTmpl},
	}, metav1.CreateOptions{}))(t)
	must(core.Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1-abcde", OwnerReferences: controlledBy("apps/v1", "ReplicaSet", rs)},
		Spec:       alwaysTmpl.Spec,
	}, metav1.CreateOptions{}))(t)
	must(core.Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "standalone"}, Spec: podSpec}, metav1.CreateOptions{}))(t)
	// A ReplicationController is a workload too; its pods are scanned
	// through it.
	rc := must(core.ReplicationControllers(ns).Create(ctx, &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: "legacy"},
		Spec:       corev1.ReplicationControllerSpec{Selector: labels, Template: &alwaysTmpl},
	}, metav1.CreateOptions{}))(t)
	must(core.Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "legacy-xyz12", OwnerReferences: controlledBy("v1", "ReplicationController", rc)},
		Spec:       alwaysTmpl.Spec,
	}, metav1.CreateOptions{}))(t)
	// An owner that is not a controller does not hide the pod.
	must(core.Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "referenced", OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID}}},
		Spec:       podSpec,
	}, metav1.CreateOptions{}))(t)
	cron := must(batch.CronJobs(ns).Create(ctx, &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly"},
		Spec:       batchv1.CronJobSpec{Schedule: "0 3 * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: tmpl}}},
	}, metav1.CreateOptions{}))(t)
	must(batch.Jobs(ns).Create(ctx, &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly-29000000", OwnerReferences: controlledBy("batch/v1", "CronJob", cron)},
		Spec:       batchv1.JobSpec{Template: tmpl},
	}, metav1.CreateOptions{}))(t)
	must(batch.Jobs(ns).Create(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "migrate"}, Spec: batchv1.JobSpec{Template: tmpl}}, metav1.CreateOptions{}))(t)

	res := read(t, Options{Config: env.Config, Namespace: ns})
	if len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	// Namespaces are cluster-scoped: listed whatever namespace is scanned
	// (their labels are what a NetworkPolicy's namespaceSelector matches).
	got := slices.DeleteFunc(fileNames(res.Files), func(f string) bool { return strings.Contains(f, "/Namespace/") })
	want := []string{
		"cluster://envtest/" + ns + "/Pod/referenced",
		"cluster://envtest/" + ns + "/Pod/standalone",
		"cluster://envtest/" + ns + "/Deployment/web",
		"cluster://envtest/" + ns + "/ReplicationController/legacy",
		"cluster://envtest/" + ns + "/ReplicaSet/by-hand",
		"cluster://envtest/" + ns + "/Job/migrate",
		"cluster://envtest/" + ns + "/CronJob/nightly",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("scanned\n %s\nwant\n %s", strings.Join(got, "\n "), strings.Join(want, "\n "))
	}
}

func must[T any](v T, err error) func(testing.TB) T {
	return func(t testing.TB) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// requestLog records the requests a client sends.
type requestLog struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (l *requestLog) wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			l.mu.Lock()
			l.reqs = append(l.reqs, req)
			l.mu.Unlock()
			return rt.RoundTrip(req)
		})
	})
	return cfg
}

func TestListsPageByPage(t *testing.T) {
	env := clustertest.Shared(t)
	const n = 10
	ns := env.FreshNamespace(t, "paging")
	for i := range n {
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("svc-%02d", i)},
			Spec:       corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: []corev1.ServicePort{{Port: 80}}},
		}
		must(env.Typed.CoreV1().Services(ns).Create(context.Background(), svc, metav1.CreateOptions{}))(t)
	}
	var log requestLog
	services := DefaultKinds[slices.IndexFunc(DefaultKinds, func(k Kind) bool { return k.Kind == "Service" })]
	res := read(t, Options{Config: log.wrap(env.Config), Namespace: ns, Kinds: []Kind{services}, PageSize: 3})
	if len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	if len(res.Files) != n {
		t.Fatalf("%d services read, want %d", len(res.Files), n)
	}
	for i, f := range res.Files {
		if want := fmt.Sprintf("cluster://envtest/%s/Service/svc-%02d", ns, i); f.Name != want || len(f.Documents) != 1 {
			t.Errorf("file %d is %s with %d documents, want %s with one", i, f.Name, len(f.Documents), want)
		}
	}
	var pages, continued int
	for _, r := range log.reqs {
		if r.Method != http.MethodGet {
			t.Errorf("%s %s: a scan only reads", r.Method, r.URL)
		}
		if r.URL.Path != "/api/v1/namespaces/"+ns+"/services" {
			continue
		}
		pages++
		if r.URL.Query().Get("limit") != "3" {
			t.Errorf("list without the page size: %s", r.URL)
		}
		if r.URL.Query().Get("continue") != "" {
			continued++
		}
	}
	if pages != 4 || continued != 3 {
		t.Fatalf("%d list calls, %d with a continue token; want 4 pages of at most 3 for %d services", pages, continued, n)
	}
}

func TestKindsTheClusterDoesNotServeAreNotes(t *testing.T) {
	env := withExamples(t)
	deployments := DefaultKinds[slices.IndexFunc(DefaultKinds, func(k Kind) bool { return k.Kind == "Deployment" })]
	kinds := []Kind{
		{GroupVersionResource: gvr("example.com", "v1", "widgets"), Kind: "Widget", Namespaced: true},
		// The group is served; this resource of it is not.
		{GroupVersionResource: gvr("argoproj.io", "v1alpha1", "gadgets"), Kind: "Gadget", Namespaced: true},
		// A built-in group: a Kubernetes version without the kind, not a CRD.
		{GroupVersionResource: gvr("apps", "v1", "gizmos"), Kind: "Gizmo", Namespaced: true},
		deployments,
	}
	res := read(t, Options{Config: env.Config, Namespace: "shop", Kinds: kinds})
	if len(res.Errors) > 0 {
		t.Fatalf("a missing CRD is not an error: %v", res.Errors)
	}
	want := []string{
		"cluster://envtest: the cluster does not serve widgets.example.com/v1 (its CRD is not installed); Widgets not scanned",
		"cluster://envtest: the cluster does not serve gadgets.argoproj.io/v1alpha1 (its CRD is not installed); Gadgets not scanned",
		"cluster://envtest: the cluster does not serve gizmos.apps/v1; Gizmos not scanned",
	}
	if !slices.Equal(res.Notes, want) {
		t.Fatalf("notes\n %s\nwant\n %s", strings.Join(res.Notes, "\n "), strings.Join(want, "\n "))
	}
	if len(res.Files) != 1 || res.Files[0].Name != "cluster://envtest/shop/Deployment/catalog-web" {
		t.Fatalf("the served kinds must still be read: %v", fileNames(res.Files))
	}
}

func fileNames(fs []load.File) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Name)
	}
	return out
}

// A user allowed to list only StatefulSets in one namespace gets one error
// per denied kind, and its StatefulSets are still scanned.
func TestRBACDenialsAreErrorsPerKind(t *testing.T) {
	env := withExamples(t)
	const ns, user = "registry", "backfire-restricted"
	statefulSets := DefaultKinds[slices.IndexFunc(DefaultKinds, func(k Kind) bool { return k.Kind == "StatefulSet" })]
	cfg := env.ListOnly(t, user, ns, statefulSets.GroupVersionResource)
	res := read(t, Options{Config: cfg, Namespace: ns})
	if got := fileNames(res.Files); !slices.Equal(got, []string{"cluster://envtest/registry/StatefulSet/registry-database"}) {
		t.Fatalf("read %v, want the StatefulSet registry-database; errors: %v", got, res.Errors)
	}
	if len(res.Notes) > 0 {
		t.Errorf("notes: %v", res.Notes)
	}
	denied := map[string]bool{}
	for _, e := range res.Errors {
		if e.File != "cluster://envtest" || !strings.Contains(e.Message, "is forbidden: User \""+user+"\" cannot list resource") {
			t.Errorf("not an RBAC denial of the user: %v", e)
			continue
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(e.Message, "list "), " ")
		denied[name] = true
	}
	for _, k := range DefaultKinds {
		if k.Kind != statefulSets.Kind && !denied[k.Name()] {
			t.Errorf("no error for %s", k.Name())
		}
	}
	if len(res.Errors) != len(DefaultKinds)-1 {
		t.Errorf("%d errors, want one per denied kind (%d):\n%v", len(res.Errors), len(DefaultKinds)-1, res.Errors)
	}
	for _, want := range []string{
		`list rollouts.argoproj.io in namespace registry: rollouts.argoproj.io is forbidden: User "backfire-restricted" cannot list resource "rollouts" in API group "argoproj.io" in the namespace "registry"`,
		`list clusteranalysistemplates.argoproj.io (cluster-scoped): clusteranalysistemplates.argoproj.io is forbidden: User "backfire-restricted" cannot list resource "clusteranalysistemplates" in API group "argoproj.io" at the cluster scope`,
	} {
		if !slices.ContainsFunc(res.Errors, func(e load.Error) bool { return e.Message == want }) {
			t.Errorf("no error reads %q", want)
		}
	}

	// What was read is scanned, with the same findings as the file.
	live := scanFiles(t, scan.Options{Extra: res.Files})
	file := scanFiles(t, scan.Options{Paths: []string{filepath.Join(testutil.RepoRoot(t), "examples", "registry-database.yaml")}})
	var got, want []string
	for _, f := range live.Findings {
		got = append(got, key(f))
	}
	for _, f := range file.Findings {
		want = append(want, key(f))
	}
	// Findings come in line order, and the lines are the rendering's.
	slices.Sort(got)
	slices.Sort(want)
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Fatalf("findings\n %s\nwant\n %s", strings.Join(got, "\n "), strings.Join(want, "\n "))
	}
}

func TestUnreachableServerIsOneError(t *testing.T) {
	cfg := &rest.Config{Host: "https://127.0.0.1:1", Timeout: 5 * time.Second}
	res := read(t, Options{Config: cfg})
	if len(res.Errors) != 1 || !strings.HasPrefix(res.Errors[0].Message, "cannot reach the API server: ") || len(res.Files) > 0 {
		t.Fatalf("errors %v, %d files", res.Errors, len(res.Files))
	}
}

func TestReadOnlyRefusesWrites(t *testing.T) {
	var sent []string
	rt := readOnly(roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		sent = append(sent, req.Method)
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
	}))
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		req, _ := http.NewRequest(m, "https://cluster.example/api/v1/namespaces/x/pods", nil)
		if _, err := rt.RoundTrip(req); err == nil || !strings.Contains(err.Error(), "refused "+m) {
			t.Errorf("%s: %v", m, err)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, "https://cluster.example/api/v1/pods", nil)
	if _, err := rt.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sent, []string{http.MethodGet}) {
		t.Fatalf("sent %v, want only the GET", sent)
	}
}

func TestConnectHonoursKubeconfigAndContext(t *testing.T) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: "https://cluster.example:6443"}
	kc.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "t"}
	kc.Contexts["prod"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u", Namespace: "payments"}
	kc.Contexts["dev"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	kc.CurrentContext = "prod"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct{ context, wantContext, wantNamespace string }{
		{"", "prod", "payments"},
		{"dev", "dev", "default"},
	} {
		tgt, err := Connect(path, tc.context)
		if err != nil {
			t.Fatal(err)
		}
		if tgt.Context != tc.wantContext || tgt.Namespace != tc.wantNamespace || tgt.Config.Host != "https://cluster.example:6443" {
			t.Errorf("--context %q: context %q namespace %q host %q", tc.context, tgt.Context, tgt.Namespace, tgt.Config.Host)
		}
		if tgt.Config.QPS != QPS || tgt.Config.Burst != Burst || tgt.Config.Timeout != RequestTimeout {
			t.Errorf("client limits QPS %v burst %d timeout %v", tgt.Config.QPS, tgt.Config.Burst, tgt.Config.Timeout)
		}
	}
	if _, err := Connect(path, "staging"); err == nil || !strings.Contains(err.Error(), "staging") {
		t.Errorf("an unknown context: %v", err)
	}
}

// A Flagger Canary and its MetricTemplate are read from the cluster, and
// the live scan finds on them what the file scan finds (BF411).
func TestLiveScanReadsFlaggerCanaries(t *testing.T) {
	env := clustertest.Shared(t)
	path := filepath.Join(testutil.RepoRoot(t), "internal", "rules", "flagger", "testdata", "BF411", "positive", "flagger-docs-newrelic-nginx-ingress.yaml")
	env.Apply(t, path)
	live := read(t, Options{Config: env.Config})
	if len(live.Errors) > 0 || len(live.Notes) > 0 {
		t.Fatalf("errors %v, notes %v", live.Errors, live.Notes)
	}
	names := fileNames(live.Files)
	for _, want := range []string{"cluster://envtest/test/Canary/podinfo", "cluster://envtest/ingress-nginx/MetricTemplate/newrelic-error-rate"} {
		if !slices.Contains(names, want) {
			t.Errorf("the live read lacks %s", want)
		}
	}
	fromCluster := scanFiles(t, scan.Options{Extra: live.Files})
	fromFile := scanFiles(t, scan.Options{Paths: []string{path}})
	want := map[string]bool{}
	for _, f := range fromFile.Findings {
		if f.Rule == "BF411" {
			want[key(f)] = true
		}
	}
	if len(want) == 0 {
		t.Fatal("the file scan of the fixture has no BF411: the comparison would prove nothing")
	}
	for _, f := range fromCluster.Findings {
		delete(want, key(f))
	}
	for k := range want {
		t.Errorf("the live scan misses %s", k)
	}
}
