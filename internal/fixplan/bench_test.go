package fixplan

import (
	"path/filepath"
	"testing"

	"backfire.dev/backfire/internal/helm"
	"backfire.dev/backfire/internal/testutil"
)

// BenchmarkPlanExamples: scan, compose, edit and rescan the examples
// (nothing written).
func BenchmarkPlanExamples(b *testing.B) {
	dir := filepath.Join(testutil.RepoRoot(b), "examples")
	for b.Loop() {
		if _, err := Plan(options(dir)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPlanChart: plan the fix of Bitnami's PostgreSQL chart in place
// (scan, route through its values with trial renders, edit, render and
// rescan a copy; nothing written). The trial renders are reported per op.
func BenchmarkPlanChart(b *testing.B) {
	chart := testutil.Corpus(b, "bitnami-postgresql")
	o := options(chart)
	o.Helm = &helm.Options{}
	renders := 0
	for b.Loop() {
		p, err := Plan(o)
		if err != nil || len(p.Fixed) == 0 {
			b.Fatalf("%v, fixed %d", err, len(p.Fixed))
		}
		renders += p.TrialRenders
	}
	b.ReportMetric(float64(renders)/float64(b.N), "renders/op")
}
