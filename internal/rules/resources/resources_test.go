package resources_test

import (
	"backfire.dev/backfire/internal/catalog"
	"path/filepath"
	"testing"

	"backfire.dev/backfire/internal/config"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/rules/resources"
	"backfire.dev/backfire/internal/rules/rulestest"
	"backfire.dev/backfire/internal/scan"
)

func TestBF203OffUnlessEnabled(t *testing.T) {
	file := filepath.Join("testdata", "BF203", "positive", "postgres-equal-memory.yaml")
	run := func(cfg *config.Config) int {
		res, err := scan.Run(scan.Options{Paths: []string{file}, Catalog: catalog.Family("resources"), Rules: rules.Options{Config: cfg}})
		if err != nil {
			t.Fatal(err)
		}
		return len(rulestest.Of(res, "BF203"))
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
		res := rulestest.Scan(t, []*rules.Rule{tc.rule}, nil, filepath.Join("testdata", tc.file))
		got := rulestest.Of(res, tc.rule.ID)
		if len(got) != 1 || got[0].Severity.String() != tc.want {
			t.Errorf("%s on %s: %v, want one %s", tc.rule.ID, tc.file, got, tc.want)
		}
	}
}
