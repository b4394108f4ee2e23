package scan

import (
	"testing"

	"backfire.dev/backfire/internal/benchcorpus"
)

// The Rollouts corpus reaches the cross-object rules (a Rollout sized by
// its ScaledObject, judged by its AnalysisTemplate) without input errors.
func TestRolloutsCorpusExercisesCrossObjectRules(t *testing.T) {
	dir := t.TempDir()
	if _, err := benchcorpus.GenerateRollouts(dir, 1); err != nil {
		t.Fatal(err)
	}
	res, err := Run(Options{Paths: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) > 0 {
		t.Fatalf("input errors: %v", res.Errors)
	}
	if res.Summary.Objects != 100 {
		t.Errorf("objects = %d, want 100", res.Summary.Objects)
	}
	byRule := map[string]int{}
	for _, f := range res.Findings {
		byRule[f.Rule]++
	}
	for _, id := range []string{"BF401", "BF402"} {
		if byRule[id] == 0 {
			t.Errorf("no %s finding on the Rollouts corpus; findings by rule: %v", id, byRule)
		}
	}
}

// BenchmarkScanRollouts5k is the whole scan of 5,000 objects in 50 files:
// 1,000 canary Rollouts with their ScaledObjects, AnalysisTemplates and
// Services.
func BenchmarkScanRollouts5k(b *testing.B) {
	dir := b.TempDir()
	n, err := benchcorpus.GenerateRollouts(dir, 50)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(n)
	b.ReportAllocs()
	defer reportCPU(b)()
	var findings int
	for b.Loop() {
		res, err := Run(Options{Paths: []string{dir}})
		if err != nil || len(res.Errors) > 0 {
			b.Fatal(err, res.Errors)
		}
		findings = len(res.Findings)
	}
	b.ReportMetric(float64(findings), "findings")
}
