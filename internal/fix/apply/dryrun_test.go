package apply

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"backfire.dev/backfire/internal/cluster/clustertest"
	"backfire.dev/backfire/internal/config"
	"backfire.dev/backfire/internal/load"
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
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(d.JSON); err != nil {
			errs = append(errs, err)
			continue
		}
		// One namespace for all: fixtures share names across files, and
		// a dry run stores nothing.
		if u.GetNamespace() != "" && !strings.HasPrefix(u.GetNamespace(), "kube-") {
			u.SetNamespace("fix-dry-run")
		}
		errs = append(errs, env.DryRun(t, u))
	}
	return errs
}
