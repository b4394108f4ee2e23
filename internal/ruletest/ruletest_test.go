package ruletest_test

import (
	"backfire.dev/backfire/internal/rules"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"backfire.dev/backfire/internal/rules/probes"
	"backfire.dev/backfire/internal/ruletest"
	"backfire.dev/backfire/internal/testutil"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	failed []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.failed = append(r.failed, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}
func (r *recorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }
func (r *recorder) Helper()           {}

// checkFix runs CheckFix on a recorder, in its own goroutine so that a
// Fatalf ends only that goroutine.
func checkFix(t *testing.T, patch string) []string {
	t.Helper()
	file := filepath.Join(testutil.RepoRoot(t), "internal", "rules", "probes", "testdata", "BF102", "positive", "httpget-timeout-unset.yaml")
	res := ruletest.Scan(t, []*rules.Rule{probes.BF102}, nil, file)
	got := ruletest.Of(res, "BF102")
	if len(got) != 1 {
		t.Fatalf("%d BF102 findings on the fixture, want 1", len(got))
	}
	f := got[0]
	if patch != "" {
		fx := *f.Fix
		fx.Patch = json.RawMessage(patch)
		f.Fix = &fx
	}
	rec := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		ruletest.CheckFix(rec, probes.BF102, res, f)
	}()
	<-done
	return rec.failed
}

// A fix that sets timeoutSeconds to 1 moves BF102's path from livenessProbe
// to livenessProbe.timeoutSeconds without fixing anything: the harness must
// still see the rule fire on the same container.
func TestCheckFixCatchesAFixThatMovesThePath(t *testing.T) {
	if failed := checkFix(t, ""); len(failed) != 0 {
		t.Fatalf("the rule's own fix fails the check: %v", failed)
	}
	broken := `{"spec":{"template":{"spec":{"containers":[{"name":"app","livenessProbe":{"timeoutSeconds":1}}]}}}}`
	if failed := checkFix(t, broken); len(failed) == 0 {
		t.Fatal("a fix that leaves timeoutSeconds at 1 passed the fix check")
	}
}
