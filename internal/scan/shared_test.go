package scan_test

import (
	"bytes"
	"testing"

	"backfire.dev/backfire/internal/benchcorpus"
	"backfire.dev/backfire/internal/report"
	"backfire.dev/backfire/internal/scan"
	"backfire.dev/backfire/internal/testutil"
)

// What the rules share about an object (podfacts: each container's
// classification, its probes' queries, its startup judgement) is
// computed once and read by every rule that asks; a rule that read it
// afresh would find the same. The benchmark corpus (probes, servers,
// autoscalers), the Rollouts corpus and the repository's manifests
// scanned with the store and without it report the same, byte for byte.
func TestSharedAnswersAreTheFreshOnes(t *testing.T) {
	dir := t.TempDir()
	if _, err := benchcorpus.Generate(dir, 3); err != nil {
		t.Fatal(err)
	}
	rollouts := t.TempDir()
	if _, err := benchcorpus.GenerateRollouts(rollouts, 2); err != nil {
		t.Fatal(err)
	}
	root := testutil.RepoRoot(t)
	for _, paths := range [][]string{{dir}, {rollouts}, {root + "/testdata/corpus", root + "/examples"}} {
		var reports [2]bytes.Buffer
		for i, unshared := range []bool{false, true} {
			opts := scan.Options{Paths: paths}
			opts.Rules.Unshared = unshared
			res, err := scan.Run(opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Findings) == 0 {
				t.Fatalf("%v: no findings to compare", paths)
			}
			if err := report.JSON(&reports[i], res, report.JSONOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("%v: %d bytes", paths, reports[0].Len())
		if !bytes.Equal(reports[0].Bytes(), reports[1].Bytes()) {
			t.Errorf("%v: the rules report otherwise when each computes afresh what they share", paths)
		}
	}
}
