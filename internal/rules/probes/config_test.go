package probes_test

import (
	"path/filepath"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/config"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/rules/probes"
	"backfire.dev/backfire/internal/ruletest"
	"backfire.dev/backfire/internal/scan"
	"backfire.dev/backfire/internal/testutil"
)

func scanWith(t *testing.T, cfg *config.Config, r *rules.Rule, file string) []finding.Finding {
	t.Helper()
	res, err := scan.Run(scan.Options{Paths: []string{file}, Catalog: []*rules.Rule{r}, Rules: rules.Options{Config: cfg}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	return ruletest.Of(res, r.ID)
}

// The startup budget that downgrades BF101 is a threshold of .backfire.yaml.
func TestBF101StartupBudgetThreshold(t *testing.T) {
	// startupProbe pg_isready, 30 x 10 = 300 s.
	file := filepath.Join("testdata", "BF101", "positive", "startup-querying-short-budget.yaml")
	for _, tt := range []struct {
		budget int
		want   finding.Severity
	}{{0, finding.Error}, {600, finding.Error}, {301, finding.Error}, {300, finding.Warning}, {120, finding.Warning}} {
		cfg := &config.Config{Thresholds: config.Thresholds{StartupBudgetSeconds: tt.budget}}
		fs := scanWith(t, cfg, probes.BF101, file)
		if len(fs) != 1 {
			t.Fatalf("budget %d: %d findings, want 1", tt.budget, len(fs))
		}
		if fs[0].Severity != tt.want {
			t.Errorf("budget %d: severity %s, want %s", tt.budget, fs[0].Severity, tt.want)
		}
	}
}

// How few pods are few is a threshold of .backfire.yaml.
func TestBF104FewReplicasThreshold(t *testing.T) {
	// spec.replicas 2.
	file := filepath.Join("testdata", "BF104", "positive", "deployment-two-replicas.yaml")
	for _, tt := range []struct {
		few  int
		want int
	}{{0, 1}, {3, 1}, {2, 1}, {1, 0}} {
		cfg := &config.Config{Thresholds: config.Thresholds{FewReplicas: tt.few}}
		if got := len(scanWith(t, cfg, probes.BF104, file)); got != tt.want {
			t.Errorf("fewReplicas %d: %d findings, want %d", tt.few, got, tt.want)
		}
	}
	// The canary of the KEDA-scaled Rollout has 2 pods at the first step.
	canary := filepath.Join("testdata", "BF104", "positive", "rollout-keda-canary.yaml")
	if got := len(scanWith(t, &config.Config{Thresholds: config.Thresholds{FewReplicas: 1}}, probes.BF104, canary)); got != 0 {
		t.Errorf("fewReplicas 1: the 2-pod canary was reported")
	}
}

// An object the API server rejects is an input error with file and line;
// the objects beside it are still scanned.
func TestRejectedObjectIsAnErrorAndTheRestIsScanned(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{"two.yaml": `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: rejected}
spec:
  template:
    spec:
      containers:
      - name: postgres
        image: postgres:16
        livenessProbe:
          exec: {command: [pg_isready]}
          successThreshold: 2
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: scanned}
spec:
  template:
    spec:
      containers:
      - name: postgres
        image: postgres:16
        livenessProbe:
          exec: {command: [pg_isready]}
`})
	res, err := scan.Run(scan.Options{Paths: []string{filepath.Join(dir, "two.yaml")}, Catalog: []*rules.Rule{probes.BF101}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) != 1 || res.Errors[0].Line != 12 || !strings.Contains(res.Errors[0].Message, "successThreshold: Invalid value: 2: must be 1") {
		t.Errorf("errors %v, want one at line 12 saying successThreshold must be 1", res.Errors)
	}
	fs := ruletest.Of(res, "BF101")
	if len(fs) != 1 || fs[0].Object.Name != "scanned" {
		t.Errorf("findings %v, want BF101 on the valid StatefulSet only", fs)
	}
}
