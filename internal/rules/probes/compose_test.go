package probes_test

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

// BF105's fix composes with BF101's, BF201's and BF601's on one container:
// Bitnami's PostgreSQL with its startup probe enabled and no resources.
// BF101's fix makes the liveness probe a tcpSocket check, BF105's raises
// the startup probe's failureThreshold to cover the recovery threshold,
// BF201's sets requests, BF601's adds a fast-shutdown preStop; backfire fix
// merges the four patches and the rescan of the fixed file finds none.
func TestStartupFixComposesWithBF101AndBF201(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("testdata", "compose", "bitnami-postgresql-startup-no-resources.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "postgresql.yaml")
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
	slices.Sort(fixed)
	if want := []string{"BF101", "BF105", "BF201", "BF601"}; !slices.Equal(fixed, want) {
		t.Errorf("fixed %v, want %v", fixed, want)
	}
	if len(p.Left) > 0 || len(p.Files) != 1 {
		t.Fatalf("left %+v, %d files changed", p.Left, len(p.Files))
	}
	out := string(p.Files[0].New)
	for _, want := range []string{
		"failureThreshold: 57", // BF105: 30 + 57 x 10 = 600 s, the threshold
		"tcpSocket:",           // BF101: liveness only checks that it runs
		"- kill -INT 1",        // BF601: a fast shutdown before the SIGTERM
		"requests:",            // BF201
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the fixed file lacks %q", want)
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
