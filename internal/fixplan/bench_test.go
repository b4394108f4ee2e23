package fixplan

import (
	"path/filepath"
	"testing"

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
