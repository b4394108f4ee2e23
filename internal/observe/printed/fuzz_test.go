package printed

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzRead: any text is read into pods and events whose lines are lines of
// the input, or counted as skipped; building the pods gives errors with a
// file and a line, never a panic.
//
//	go test ./internal/observe/printed -run '^$' -fuzz FuzzRead -fuzztime 5m
func FuzzRead(f *testing.F) {
	f.Add([]byte(describe137))
	f.Add([]byte("  Last State:     Terminated\n  Reason:       OOMKilled\n  Exit Code:    137\n"))
	f.Add([]byte("NAME   READY   STATUS   RESTARTS   AGE\nx-0    0/1     Error    4 (57s ago)   3m\n"))
	f.Add([]byte("LASTSEEN   FIRSTSEEN   COUNT     NAME      KIND      SUBOBJECT   TYPE      REASON   SOURCE   MESSAGE\n1h 1h 2 a Pod spec.containers{a} Warning Unhealthy {kubelet x} Liveness probe failed:\n"))
	for _, glob := range []string{"../../diagnose/testdata/captures/*.txt", "../../../examples/diagnose/describe.txt", "../../rules/restarts/testdata/*/*/*.txt"} {
		files, _ := filepath.Glob(glob)
		for _, p := range files {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := Read("fuzz.txt", data)
		lines := strings.Count(string(data), "\n") + 1
		for _, p := range c.Pods {
			if p.Line < 0 || p.Line > lines {
				t.Fatalf("pod at line %d of %d", p.Line, lines)
			}
			for _, e := range p.Events {
				if e.Line < 1 || e.Line > lines {
					t.Fatalf("event at line %d of %d", e.Line, lines)
				}
			}
		}
		pods, events, errs := c.Observe()
		for _, e := range errs {
			if e.File != "fuzz.txt" || e.Message == "" {
				t.Fatalf("bad error %+v", e)
			}
		}
		for _, p := range pods {
			if p.Printed == nil || p.Doc == nil || p.Name == "" {
				t.Fatalf("pod without what was printed: %+v", p)
			}
		}
		for _, e := range events {
			if e.Last.Before(e.First) {
				t.Fatalf("event last before first: %+v", e)
			}
		}
	})
}
