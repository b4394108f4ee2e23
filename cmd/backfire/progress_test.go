package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/progress"
	"backfire.dev/backfire/internal/testutil"
)

// TestMain lets a test run this binary as backfire itself (to run it on
// a terminal), with the progress bar's delay off.
func TestMain(m *testing.M) {
	if os.Getenv("BACKFIRE_TEST_AS_MAIN") == "1" {
		progress.Delay = 0
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// On a terminal (a pseudo-terminal made by script(1)) a scan of a tree and
// fix's proofs draw a bar on stderr, named by its stage; off a terminal
// (a pipe, as in CI) stderr holds no bar, and the report is the same.
func TestProgressOnlyOnATerminal(t *testing.T) {
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("no script(1) (util-linux) to make a terminal")
	}
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join(examples(t), "registry-database.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for i := range 40 {
		files[filepath.Join("tree", "db-"+strconv.Itoa(i)+".yaml")] = strings.ReplaceAll(string(src), "registry-database", "db-"+strconv.Itoa(i))
	}
	testutil.WriteFiles(t, dir, files)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	onTerminal := func(args ...string) string {
		t.Helper()
		// script runs the command on a new pseudo-terminal and copies what
		// the terminal shows to its stdout; stdout of backfire goes to a
		// file, so what remains is stderr.
		line := self + " " + strings.Join(args, " ") + " >" + filepath.Join(dir, "stdout")
		cmd := exec.Command("script", "-qefc", line, "/dev/null")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "BACKFIRE_TEST_AS_MAIN=1")
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	term := onTerminal("scan", "--format", "short", "tree")
	if !strings.Contains(term, "scanning") || !strings.Contains(term, "/40)") {
		t.Errorf("no progress bar on the terminal: %q", term)
	}
	report, err := os.ReadFile(filepath.Join(dir, "stdout"))
	if err != nil || strings.Contains(string(report), "scanning") || strings.Count(string(report), "\n") < 40 {
		t.Errorf("stdout on a terminal run: %v %q", err, report)
	}

	fix := onTerminal("fix", "--diff", "tree")
	if !strings.Contains(fix, "scanning") || !strings.Contains(fix, "proving the fixes") {
		t.Errorf("fix on a terminal shows no proof's progress: %q", fix)
	}

	// Off a terminal: the same scan, stderr a pipe.
	cmd := exec.Command(self, "scan", "--format", "short", "tree")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "BACKFIRE_TEST_AS_MAIN=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, _ := cmd.Output()
	if stderr.Len() != 0 {
		t.Errorf("stderr off a terminal: %q", stderr.String())
	}
	if string(out) != string(report) {
		t.Error("the report differs between a terminal and a pipe")
	}
}
