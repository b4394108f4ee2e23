package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/testutil"
)

// TestReadmeShowsTheRealOutput keeps "What it looks like" true: each text
// block is lines of `scan examples/` (the block after "--explain" of
// `scan --explain examples/`), in order, a line ending in " ..." standing for
// any line that begins so and "  ..." for any lines; and the line count it
// promises is the default's.
func TestReadmeShowsTheRealOutput(t *testing.T) {
	root := testutil.RepoRoot(t)
	t.Chdir(root)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := string(readme)
	start := strings.Index(section, "## What it looks like")
	end := strings.Index(section, "## Using it")
	if start < 0 || end < start {
		t.Fatal("README has no \"What it looks like\" section before \"Using it\"")
	}
	section = section[start:end]
	brief, _, _ := execute(t, "", "scan", "examples/")
	explained, _, _ := execute(t, "", "scan", "--explain", "examples/")
	m := regexp.MustCompile(`in (\d+) lines`).FindStringSubmatch(section)
	if m == nil {
		t.Fatal("README no longer says how many lines the default output has")
	}
	if n, _ := strconv.Atoi(m[1]); n != strings.Count(brief, "\n") {
		t.Errorf("README says %d lines, scan examples/ prints %d", n, strings.Count(brief, "\n"))
	}
	blocks := regexp.MustCompile("(?s)(.{0,300})```text\n(.*?)```").FindAllStringSubmatch(section, -1)
	if len(blocks) < 3 {
		t.Fatalf("README shows %d text blocks, want 3", len(blocks))
	}
	for i, b := range blocks {
		out := brief
		if strings.Contains(b[1], "--explain") {
			out = explained
		}
		lines := strings.Split(out, "\n")
		at := 0
		for _, want := range strings.Split(strings.TrimSuffix(b[2], "\n"), "\n") {
			if strings.TrimSpace(want) == "..." {
				continue
			}
			prefix, cut := strings.CutSuffix(want, " ...")
			found := false
			for ; at < len(lines); at++ {
				if lines[at] == want || cut && strings.HasPrefix(lines[at], prefix) {
					found, at = true, at+1
					break
				}
			}
			if !found {
				t.Errorf("README block %d: line not in the output, or out of order:\n%s\noutput:\n%s", i+1, want, out)
				break
			}
		}
	}
}
