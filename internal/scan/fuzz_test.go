package scan

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzScan runs the whole pipeline, every rule included, over one stream:
// decoding, indexing and rules must survive any input that parses.
//
//	go test ./internal/scan -run '^$' -fuzz FuzzScan -fuzztime 5m
func FuzzScan(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "examples", "*.yaml"))
	more, _ := filepath.Glob(filepath.Join("..", "rules", "*", "testdata", "*", "*", "*.yaml"))
	for _, p := range append(files, more...) {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nspec: {strategy: {canary: {steps: [{setWeight: 100}], trafficRouting: {}}}, rollbackWindow: {revisions: 3}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := Run(Options{Paths: []string{"-"}, Stdin: bytes.NewReader(data)})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range res.Errors {
			if strings.Contains(e.Message, "internal error") {
				t.Fatal(e.Error())
			}
		}
		for _, fd := range res.Findings {
			if fd.Line < 1 || fd.Rule == "" || fd.Message == "" {
				t.Fatalf("bad finding %+v", fd)
			}
		}
	})
}
