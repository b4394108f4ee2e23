// Command rich writes the benchmarks' richer corpus into a new directory:
// canary Rollouts shaped like seed 000 with their ScaledObjects,
// AnalysisTemplates and Services (internal/benchcorpus, 5,000 objects in
// 50 files), and copies of the Helm chart and the Kustomize overlays of
// testdata/corpus, so that the whole-process benchmark also renders
// charts and builds overlays in-process.
//
//	go run ./hack/bench/rich OUTDIR
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"backfire.dev/backfire/internal/benchcorpus"
)

// copies of each chart and overlay tree.
const copies = 10

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run ./hack/bench/rich OUTDIR")
		os.Exit(2)
	}
	out := os.Args[1]
	if err := write(out); err != nil {
		fmt.Fprintln(os.Stderr, "rich:", err)
		os.Exit(1)
	}
}

func write(out string) error {
	rollouts := filepath.Join(out, "rollouts")
	if err := os.MkdirAll(rollouts, 0o755); err != nil {
		return err
	}
	if _, err := benchcorpus.GenerateRollouts(rollouts, 50); err != nil {
		return err
	}
	corpus := filepath.Join("testdata", "corpus")
	for i := range copies {
		for _, tree := range []string{"harbor-helm", "rollouts-demo"} {
			dst := filepath.Join(out, fmt.Sprintf("%s-%02d", tree, i))
			if err := os.CopyFS(dst, os.DirFS(filepath.Join(corpus, tree))); err != nil {
				return err
			}
		}
	}
	return nil
}
