package fixplan

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"backfire.dev/backfire/internal/cluster/clustertest"
	"backfire.dev/backfire/internal/config"
	"backfire.dev/backfire/internal/helm"
	"backfire.dev/backfire/internal/kustomize"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/source"
	"backfire.dev/backfire/internal/testutil"
)

func TestMain(m *testing.M) {
	code := m.Run()
	clustertest.StopShared()
	os.Exit(code)
}

// The fixed objects are accepted by the API server's own validation: each
// object of every file fix changed is created with a server-side dry run
// against a real kube-apiserver (with the Argo Rollouts CRDs). The
// unfixed objects are checked too, so that a rejection is the fix's.
func TestFixedObjectsPassServerSideDryRun(t *testing.T) {
	env := clustertest.Shared(t)
	dir := t.TempDir()
	root := testutil.RepoRoot(t)
	sources := positiveManifestFixtures(root)
	ex, _ := filepath.Glob(filepath.Join(root, "examples", "*.yaml"))
	sources = append(sources, ex...)
	files := map[string]string{}
	for _, f := range sources {
		files[filepath.Join(filepath.Base(filepath.Dir(filepath.Dir(f))), filepath.Base(f))] = f
	}
	names := copyFiles(t, dir, files)
	t.Chdir(dir)
	checked := 0
	for _, name := range names {
		o := options(name)
		o.Scan.Rules.Config = &config.Config{Enable: []string{"BF203"}}
		p, err := Plan(o)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, f := range p.Files {
			before := dryRunAll(t, env, f.Path, f.Old)
			after := dryRunAll(t, env, f.Path, f.New)
			for i, err := range after {
				if err != nil && before[i] == nil {
					t.Errorf("%s: the API server rejects the fixed object: %v", f.Path, err)
				}
				if err == nil {
					checked++
				}
			}
		}
	}
	if checked < 30 {
		t.Errorf("only %d fixed objects accepted by the dry run", checked)
	}
}

// dryRunAll dry-runs every object of a stream, in order. Objects the test
// cluster cannot serve (a kind without its CRD) count as errors on both
// sides and are skipped by the caller.
func dryRunAll(t *testing.T, env *clustertest.Env, name string, data []byte) []error {
	t.Helper()
	f := load.Parse(name, data)
	if len(f.Errors) > 0 {
		t.Fatalf("%s: %v", name, f.Errors)
	}
	var errs []error
	for _, d := range f.Documents {
		errs = append(errs, dryRunJSON(t, env, d.JSON))
	}
	return errs
}

// dryRunJSON creates one object with a server-side dry run.
func dryRunJSON(t *testing.T, env *clustertest.Env, data []byte) error {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return err
	}
	// One namespace for all: fixtures share names across files, and a dry
	// run stores nothing.
	if u.GetNamespace() != "" && !strings.HasPrefix(u.GetNamespace(), "kube-") {
		u.SetNamespace("fix-dry-run")
	}
	return env.DryRun(t, u)
}

// The Harbor chart, fixed through --values-out: the chart is rendered with
// and without the new values, and every object the values changed is
// created with a server-side dry run, before and after.
func TestHarborChartValuesPassServerSideDryRun(t *testing.T) {
	env := clustertest.Shared(t)
	dir := t.TempDir()
	chart := filepath.Join(dir, "harbor")
	if err := os.CopyFS(chart, os.DirFS(testutil.Corpus(t, "harbor-helm"))); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "backfire-values.yaml")
	o := options(chart)
	o.Helm = &helm.Options{}
	o.ValuesOut = out
	p, err := Plan(o)
	if err != nil {
		t.Fatal(err)
	}
	// The values file, and the templates whose literal handlers the fix
	// replaced (the database's exec liveness probe).
	wroteValues := false
	for _, f := range p.Files {
		switch {
		case f.Path == out:
			wroteValues = true
		case !strings.HasPrefix(f.Path, filepath.Join(chart, "templates")+string(filepath.Separator)):
			t.Errorf("fix writes %s, outside the new values file and the chart's templates", f.Path)
		}
	}
	if !wroteValues {
		t.Fatalf("fix does not write the values file %s", out)
	}
	writeAndDryRun(t, env, p, chart, []string{out})
}

// The Harbor chart, fixed in place (no --values-out): the chart's own
// values.yaml and the database template are edited; the chart is rendered
// before and after the files are written, and every object whose
// rendering differs is created with a server-side dry run, before and
// after.
func TestHarborChartInPlacePassesServerSideDryRun(t *testing.T) {
	env := clustertest.Shared(t)
	dir := t.TempDir()
	chart := filepath.Join(dir, "harbor")
	if err := os.CopyFS(chart, os.DirFS(testutil.Corpus(t, "harbor-helm"))); err != nil {
		t.Fatal(err)
	}
	o := options(chart)
	o.Helm = &helm.Options{}
	p, err := Plan(o)
	if err != nil {
		t.Fatal(err)
	}
	wrote := map[string]bool{}
	for _, f := range p.Files {
		rel, _ := filepath.Rel(chart, f.Path)
		wrote[filepath.ToSlash(rel)] = true
	}
	for _, want := range []string{"values.yaml", "templates/database/database-ss.yaml"} {
		if !wrote[want] {
			t.Errorf("fix does not write the chart's %s (writes %v)", want, wrote)
		}
	}
	accepted := writeAndDryRun(t, env, p, chart, nil)
	t.Logf("%d findings fixed, %d changed objects accepted by the dry run", len(p.Fixed), len(accepted))
}

// The chart whose probe numbers its templates write literally, fixed in
// its templates only: rendered before and after, and every changed
// object dry-run before and after.
func TestShopChartTemplatesPassServerSideDryRun(t *testing.T) {
	env := clustertest.Shared(t)
	root := testutil.RepoRoot(t)
	chart := filepath.Join(t.TempDir(), "shop")
	if err := os.CopyFS(chart, os.DirFS(filepath.Join(root, "internal", "fixplan", "testdata", "shop"))); err != nil {
		t.Fatal(err)
	}
	o := options(chart)
	o.Helm = &helm.Options{}
	p, err := Plan(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Files) != 2 || len(p.Left) > 0 {
		t.Fatalf("%d files written, left %+v; want the two templates and nothing left", len(p.Files), p.Left)
	}
	accepted := writeAndDryRun(t, env, p, chart, nil)
	if len(accepted) != 2 {
		t.Errorf("%d changed objects accepted, want the Deployment and the StatefulSet", len(accepted))
	}
	t.Logf("%d findings fixed, %d changed objects accepted by the dry run", len(p.Fixed), len(accepted))
}

// The overlay fixture, fixed with a patch file of its own: the overlay is
// built before and after, and every object the patch changed is created
// with a server-side dry run, before and after.
func TestKustomizeOverlayPassesServerSideDryRun(t *testing.T) {
	env := clustertest.Shared(t)
	root := testutil.RepoRoot(t)
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(root, "internal", "fixplan", "testdata", "overlay"))); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	for _, overlay := range []string{filepath.Join("overlays", "prod"), filepath.Join("overlays", "staging")} {
		o := options(overlay)
		o.Scan.Kustomize = kustomize.New()
		p, err := Plan(o)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Files) == 0 {
			t.Fatalf("%s: nothing to fix", overlay)
		}
		before := buildOverlay(t, overlay)
		if errs := p.Write(); len(errs) > 0 {
			t.Fatal(errs)
		}
		after := buildOverlay(t, overlay)
		assertFixedAccepted(t, p, dryRunChanged(t, env, before, after))
	}
}

// assertFixedAccepted checks that the object of every fixed finding was
// changed by the fix and accepted by the dry run.
func assertFixedAccepted(t *testing.T, p *FixPlan, accepted map[object.Ref]bool) {
	t.Helper()
	if len(p.Fixed) == 0 {
		t.Fatal("nothing fixed")
	}
	for _, f := range p.Fixed {
		if !accepted[f.Object] {
			t.Errorf("%s on %s: the fixed object is not among those changed and accepted by the dry run", f.Rule, f.Object)
		}
	}
}

// renderChart renders a chart as the fix proof does, with values files
// after the chart's own.
// writeAndDryRun renders the chart, writes the plan, renders it again
// (with values, the files --values-out wrote) and dry-runs every object
// whose rendering changed, before and after; the fixed findings' objects
// must be among them. It returns the accepted objects.
func writeAndDryRun(t *testing.T, env *clustertest.Env, p *FixPlan, chart string, values []string) map[object.Ref]bool {
	t.Helper()
	before := renderChart(t, chart, nil)
	if errs := p.Write(); len(errs) > 0 {
		t.Fatal(errs)
	}
	accepted := dryRunChanged(t, env, before, renderChart(t, chart, values))
	assertFixedAccepted(t, p, accepted)
	return accepted
}

func renderChart(t *testing.T, chart string, values []string) map[object.Ref][]byte {
	t.Helper()
	r, err := helm.New(helm.Options{ValueFiles: values})
	if err != nil {
		t.Fatal(err)
	}
	streams, errs := r.Render(source.Input{Path: chart, Explicit: true})
	if len(errs) > 0 {
		t.Fatalf("%s: %v", chart, errs)
	}
	return objects(t, streams)
}

// buildOverlay builds an overlay as `kubectl kustomize` does.
func buildOverlay(t *testing.T, dir string) map[object.Ref][]byte {
	t.Helper()
	streams, errs := kustomize.New().Render(source.Input{Path: dir, Explicit: true})
	if len(errs) > 0 {
		t.Fatalf("%s: %v", dir, errs)
	}
	return objects(t, streams)
}

// objects keys each rendered object by what findings name it by.
func objects(t *testing.T, streams []source.Stream) map[object.Ref][]byte {
	t.Helper()
	out := map[object.Ref][]byte{}
	for _, s := range streams {
		f := load.Parse(s.Name, s.Data)
		if s.Documents != nil {
			f = load.ParseDocuments(s.Name, s.Documents)
		}
		if len(f.Errors) > 0 {
			t.Fatalf("%s: %v", s.Name, f.Errors)
		}
		for _, d := range f.Documents {
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(d.JSON); err != nil {
				t.Fatalf("%s: %v", s.Name, err)
			}
			key := object.Ref{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
			if _, dup := out[key]; dup {
				t.Fatalf("%s: %s rendered twice", s.Name, key)
			}
			out[key] = d.JSON
		}
	}
	return out
}

// dryRunChanged dry-runs each object whose rendering differs after the
// fix, before and after; a rejection after the fix that was an acceptance
// before fails the test. It returns the changed objects the API server
// accepted. (A chart that generates random secrets renders them anew each
// time: they are dry-run too, which checks more, not less.)
func dryRunChanged(t *testing.T, env *clustertest.Env, before, after map[object.Ref][]byte) map[object.Ref]bool {
	t.Helper()
	if len(after) != len(before) {
		t.Errorf("the fix renders %d objects, %d before", len(after), len(before))
	}
	keys := make([]object.Ref, 0, len(after))
	for k := range after {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	accepted := map[object.Ref]bool{}
	for _, k := range keys {
		old, ok := before[k]
		if !ok {
			t.Errorf("%s: rendered only after the fix", k)
			continue
		}
		if bytes.Equal(old, after[k]) {
			continue
		}
		wasAccepted := dryRunJSON(t, env, old) == nil
		err := dryRunJSON(t, env, after[k])
		switch {
		case err != nil && wasAccepted:
			t.Errorf("%s: the API server rejects the fixed object: %v", k, err)
		case err == nil:
			accepted[k] = true
		}
	}
	return accepted
}

// The real charts of charts_test.go, fixed in place and with --values-out:
// every object whose rendering the fix changes is created with a
// server-side dry run before and after, and the objects of the fixed
// findings are among those accepted.
func TestRealChartsPassServerSideDryRun(t *testing.T) {
	env := clustertest.Shared(t)
	for _, c := range []struct{ corpus, name string }{
		{"bitnami-postgresql", "postgresql"},
		{"bitnami-mongodb", "mongodb"},
		{"elastic-elasticsearch", "elasticsearch"},
		{"prometheus-alertmanager", "alertmanager"},
	} {
		for _, out := range []string{"", "fix.yaml"} {
			t.Run(c.name+"/"+map[bool]string{true: "in-place", false: "values-out"}[out == ""], func(t *testing.T) {
				dir := t.TempDir()
				chart := filepath.Join(dir, c.name)
				if err := os.CopyFS(chart, os.DirFS(testutil.Corpus(t, c.corpus))); err != nil {
					t.Fatal(err)
				}
				o := options(chart)
				o.Helm = &helm.Options{}
				var values []string
				if out != "" {
					o.ValuesOut = filepath.Join(dir, out)
					values = []string{o.ValuesOut}
				}
				p, err := Plan(o)
				if err != nil {
					t.Fatal(err)
				}
				before := withoutTestHooks(renderChart(t, chart, nil))
				if errs := p.Write(); len(errs) > 0 {
					t.Fatal(errs)
				}
				accepted := dryRunChanged(t, env, before, withoutTestHooks(renderChart(t, chart, values)))
				assertFixedAccepted(t, p, accepted)
			})
		}
	}
}

// withoutTestHooks drops the objects of `helm test` (hooks with a name
// made at random each render), which are not installed.
func withoutTestHooks(objs map[object.Ref][]byte) map[object.Ref][]byte {
	for k, v := range objs {
		if bytes.Contains(v, []byte(`"helm.sh/hook":"test`)) {
			delete(objs, k)
		}
	}
	return objs
}
