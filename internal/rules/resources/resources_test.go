package resources_test

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"backfire.dev/backfire/internal/catalog"
	"backfire.dev/backfire/internal/config"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/rules/resources"
	"backfire.dev/backfire/internal/ruletest"
	"backfire.dev/backfire/internal/scan"
)

func TestBF203OffUnlessEnabled(t *testing.T) {
	file := filepath.Join("testdata", "BF203", "positive", "postgres-equal-memory.yaml")
	run := func(cfg *config.Config) int {
		res, err := scan.Run(scan.Options{Paths: []string{file}, Catalog: catalog.Family("resources"), Rules: rules.Options{Config: cfg}})
		if err != nil {
			t.Fatal(err)
		}
		return len(ruletest.Of(res, "BF203"))
	}
	if n := run(&config.Config{}); n != 0 {
		t.Errorf("BF203 reported %d findings without being enabled", n)
	}
	if n := run(&config.Config{Enable: []string{"BF203"}}); n != 1 {
		t.Errorf("BF203 enabled: %d findings, want 1", n)
	}
}

// The severity follows the classification: a database is an error (BF201)
// or a warning (BF202); a stateful or multi-worker pod is one step lower.
func TestSeverityByClassification(t *testing.T) {
	for _, tc := range []struct {
		rule *rules.Rule
		file string
		want string
	}{
		{resources.BF201, "BF201/positive/postgres-statefulset-empty-resources.yaml", "error"},
		{resources.BF201, "BF201/positive/redis-deployment-with-init.yaml", "error"},
		{resources.BF201, "BF201/positive/stateful-not-database.yaml", "warning"},
		{resources.BF202, "BF202/positive/database-cpu-limit.yaml", "warning"},
		{resources.BF202, "BF202/positive/gunicorn-workers-900m.yaml", "info"},
		{resources.BF301, "BF301/positive/stateful-app-master-selector.yaml", "warning"},
	} {
		res := ruletest.Scan(t, []*rules.Rule{tc.rule}, nil, filepath.Join("testdata", tc.file))
		got := ruletest.Of(res, tc.rule.ID)
		if len(got) != 1 || got[0].Severity.String() != tc.want {
			t.Errorf("%s on %s: %v, want one %s", tc.rule.ID, tc.file, got, tc.want)
		}
	}
}

// BF201's fix must go to the container that holds the data: a patch that
// gives requests to a sidecar makes the pod Burstable, which silences the
// finding, while the container that mounts the volume keeps cpu.weight 1.
// After every positive fixture's fix, each container that mounts a volume
// claim, and the container the finding names, has cpu and memory requests.
func TestBF201FixRequestsTheDataContainer(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "BF201", "positive", "*.yaml"))
	for _, file := range files {
		res := ruletest.Scan(t, []*rules.Rule{resources.BF201}, nil, file)
		for _, f := range ruletest.Of(res, "BF201") {
			for _, o := range res.Objects {
				if o.Ref != f.Object {
					continue
				}
				out, err := strategicpatch.StrategicMergePatch(o.Doc.JSON, f.Fix.Patch, o.Typed)
				if err != nil {
					t.Fatalf("%s: %v", file, err)
				}
				typed := reflect.New(reflect.TypeOf(o.Typed).Elem()).Interface()
				if err := json.Unmarshal(out, typed); err != nil {
					t.Fatal(err)
				}
				patched := &object.Object{Typed: typed}
				tmpl := patched.PodTemplate()
				claims := map[string]bool{}
				for _, n := range patched.ClaimTemplates() {
					claims[n] = true
				}
				for _, v := range tmpl.Spec.Volumes {
					if v.PersistentVolumeClaim != nil || v.Ephemeral != nil {
						claims[v.Name] = true
					}
				}
				for _, c := range tmpl.Containers() {
					holds := c.Name == f.Container
					for _, m := range c.VolumeMounts {
						holds = holds || claims[m.Name]
					}
					req := c.Resources.Requests
					if holds && (req.Cpu().IsZero() || req.Memory().IsZero()) {
						t.Errorf("%s: after the fix %s, container %s, which holds the data, has no cpu or memory request", file, f.Fix.Patch, c.Name)
					}
				}
			}
		}
	}
}
