package probes_test

import (
	"path/filepath"
	"sync"
	"testing"

	"backfire.dev/backfire/internal/benchcorpus"
	"backfire.dev/backfire/internal/classify"
	"backfire.dev/backfire/internal/testutil"
)

// The rules read exec probes through classify.Probes, which remembers an
// answer by a key of what the classification reads. Every answer it gives
// over the benchmark corpus and every manifest of the repository (testdata/,
// examples/, Helm charts rendered) must equal the answer read afresh: a
// field missing from the key would make some container get another's.
func TestProbeCacheAnswersAsReadAfresh(t *testing.T) {
	var mu sync.Mutex
	hits, wrong := 0, 0
	classify.Probes.Audit(func(cached, fresh classify.ProbeQuery) {
		mu.Lock()
		defer mu.Unlock()
		hits++
		if cached != fresh && wrong < 10 {
			t.Errorf("remembered %+v, read afresh %+v", cached, fresh)
		}
		if cached != fresh {
			wrong++
		}
	})
	defer classify.Probes.Audit(nil)

	dir := t.TempDir()
	if _, err := benchcorpus.Generate(dir, 20); err != nil {
		t.Fatal(err)
	}
	scanProbes(t, dir)
	// 400 StatefulSets run one of four exec liveness probes, which the
	// rules read once per object (podfacts.ProbeQuery): all but the first
	// of each command, 396, come from memory, fewer only when scans race.
	if hits < 350 {
		t.Fatalf("the cache gave %d answers over the generated corpus's 400 StatefulSets: it does not remember their probes", hits)
	}
	root := testutil.RepoRoot(t)
	for _, p := range []string{filepath.Join(root, "testdata"), filepath.Join(root, "examples")} {
		before := hits
		scanProbes(t, p)
		t.Logf("%s: %d answers given from the cache", p, hits-before)
	}
}
