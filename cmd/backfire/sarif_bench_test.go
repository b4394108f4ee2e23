package main

import (
	"io"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/testutil"
)

// BenchmarkSARIF measures what --sarif-fixes costs on top of a SARIF scan:
// it plans the fixes (a second scan), proves them (a rescan of the new
// contents) and diffs the changed files.
func BenchmarkSARIF(b *testing.B) {
	b.Chdir(testutil.RepoRoot(b))
	for _, c := range []struct {
		name string
		args []string
	}{
		{"examples", []string{"scan", "--format", "sarif", "examples"}},
		{"examples/fixes", []string{"scan", "--format", "sarif", "--sarif-fixes", "examples"}},
		{"harbor-chart", []string{"scan", "--format", "sarif", testutil.Corpus(b, "harbor-helm")}},
		{"harbor-chart/fixes", []string{"scan", "--format", "sarif", "--sarif-fixes", testutil.Corpus(b, "harbor-helm")}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if code := run(c.args, strings.NewReader(""), io.Discard, io.Discard); code != exitFindings {
					b.Fatalf("exit %d", code)
				}
			}
		})
	}
}
