package termination_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/config"
	"backfire.dev/backfire/internal/fixplan"
	"backfire.dev/backfire/internal/model/rollout"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/scan"
)

// The stop fix composes with the others on one object: Harbor's database
// draws BF101 (its psql liveness probe), BF201 (no resources) and BF601
// (SIGTERM, a smart shutdown) on the same container. backfire fix merges
// the three patches, each field from the rule that owns it, and the rescan
// of the fixed file finds none of them.
func TestStopFixComposesWithBF101AndBF201(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("testdata", "BF601", "positive", "harbor-database-smart-shutdown.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "database.yaml")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	opts := fixplan.Options{Scan: scan.Options{Paths: []string{file},
		Rules: rules.Options{Config: &config.Config{}, RolloutsVersion: rollout.DefaultVersion}}}
	p, err := fixplan.Plan(opts)
	if err != nil {
		t.Fatal(err)
	}
	var fixed []string
	for _, f := range p.Fixed {
		fixed = append(fixed, f.Rule)
	}
	for _, want := range []string{"BF101", "BF201", "BF601"} {
		if !slices.Contains(fixed, want) {
			t.Errorf("%s is not among the fixed %v", want, fixed)
		}
	}
	if len(p.Left) > 0 {
		t.Errorf("left: %+v", p.Left)
	}
	if len(p.Files) != 1 {
		t.Fatalf("%d files changed, want the one", len(p.Files))
	}
	out := string(p.Files[0].New)
	for _, want := range []string{
		"tcpSocket:\n            port: 5432", // BF101: liveness only checks that it runs
		"- kill -INT 1",                      // BF601: a fast shutdown before the SIGTERM
		"requests:\n            cpu: 500m",   // BF201: the container is no longer BestEffort
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the fixed file lacks %q:\n%s", want, out)
		}
	}
	if errs := p.Write(); len(errs) > 0 {
		t.Fatal(errs)
	}
	again, err := fixplan.Plan(opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Files) > 0 || len(again.Fixed) > 0 {
		var left []string
		for _, f := range again.Fixed {
			left = append(left, f.Rule)
		}
		t.Errorf("the fixed file still draws %v", left)
	}
}
