package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/testutil"
)

// copyExamples copies examples/ into a temporary directory.
func copyExamples(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	entries, _ := filepath.Glob(filepath.Join(examples(t), "*.yaml"))
	for _, e := range entries {
		data, err := os.ReadFile(e)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(e)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestFixDiffWritesNothing(t *testing.T) {
	dir := copyExamples(t)
	before, _ := os.ReadFile(filepath.Join(dir, "registry-database.yaml"))
	out, stderr, code := execute(t, "", "fix", "--diff", dir)
	if code != exitFindings {
		t.Fatalf("exit %d, want %d (BF402 is left); stderr %s", code, exitFindings, stderr)
	}
	for _, want := range []string{
		"+          tcpSocket:\n+            port: 5432\n",
		"-      - setWeight: 100\n",
		"10 would be fixed, 1 left\n",
		"  left BF402 ",
		"placeholder " + filepath.Join(dir, "registry-database.yaml") + " spec.template.spec.containers[database].resources.requests.cpu = 500m",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	after, _ := os.ReadFile(filepath.Join(dir, "registry-database.yaml"))
	if string(before) != string(after) {
		t.Error("--diff changed a file")
	}
}

func TestFixWritesThenNothingLeftToChange(t *testing.T) {
	dir := copyExamples(t)
	out, stderr, code := execute(t, "", "fix", dir)
	if code != exitFindings || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if !strings.Contains(out, "fixed "+filepath.Join(dir, "registry-database.yaml")+" (BF101, BF102, BF103, BF201, BF301, BF601)") {
		t.Errorf("output:\n%s", out)
	}
	out, _, code = execute(t, "", "fix", dir)
	if code != exitFindings || !strings.HasPrefix(out, "0 fixed, 1 left\n") {
		t.Errorf("second run: exit %d\n%s", code, out)
	}
	// scan agrees: only the finding fix cannot make is left.
	out, _, _ = execute(t, "", "scan", "--format", "json", dir)
	if strings.Count(out, `"rule": "BF`) != 1 || !strings.Contains(out, `"rule": "BF402"`) {
		t.Errorf("scan after fix:\n%s", out)
	}
}

func TestFixRuleFilterAndUsage(t *testing.T) {
	dir := copyExamples(t)
	out, _, code := execute(t, "", "fix", "--diff", "--rule", "BF104", dir)
	if code != exitClean || !strings.Contains(out, "1 would be fixed, 0 left") || strings.Contains(out, "tcpSocket") {
		t.Errorf("--rule BF104: exit %d\n%s", code, out)
	}
	if _, stderr, code := execute(t, "", "fix", "--rule", testutil.UnknownRule, dir); code != exitUsage || !strings.Contains(stderr, "unknown rule") {
		t.Errorf("unknown rule: exit %d, %s", code, stderr)
	}
	if _, _, code := execute(t, "", "fix"); code != exitUsage {
		t.Errorf("no path: exit %d", code)
	}
}

func TestFixReadOnlyFileIsAnError(t *testing.T) {
	dir := copyExamples(t)
	p := filepath.Join(dir, "registry-database.yaml")
	if err := os.Chmod(p, 0o444); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := execute(t, "", "fix", dir)
	if code != exitUsage || !strings.Contains(stderr, p+": read-only") {
		t.Errorf("exit %d, stderr %s", code, stderr)
	}
	// What was not written is not called fixed: the database's findings
	// are left, the other files' fixed.
	if strings.Contains(out, "fixed "+p) || !strings.Contains(out, "4 fixed, 7 left\n") || !strings.Contains(out, "not written: "+p+": read-only") {
		t.Errorf("the summary counts a refused write as fixed:\n%s", out)
	}
}

// The chart is copied: fix edits the database template's literal
// liveness handler in place.
func TestFixHarborValuesOut(t *testing.T) {
	chart := filepath.Join(t.TempDir(), "harbor")
	if err := os.CopyFS(chart, os.DirFS(testutil.Corpus(t, "harbor-helm"))); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "backfire-values.yaml")
	stdout, stderr, code := execute(t, "", "fix", "--values-out", out, chart)
	template := filepath.Join(chart, "templates", "database", "database-ss.yaml")
	// BF601 is left: harbor-db stops with SIGTERM, and no value of the
	// chart reaches the database container's lifecycle.
	if code != exitFindings || !strings.Contains(stdout, "19 fixed, 1 left\n") || !strings.Contains(stdout, "  left BF601 ") || !strings.Contains(stdout, "fixed "+out) || !strings.Contains(stdout, "fixed "+template) {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	// The resources the chart prints from a map it does not set are
	// written under that map's key (the route is named).
	if !strings.Contains(stdout, "database.internal.resources, because database.internal.resources is printed into spec.template.spec.containers[database].resources") {
		t.Errorf("the route of BF201 is not said:\n%s", stdout)
	}
	data, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(data), "database:\n  internal:\n    livenessProbe:\n      failureThreshold: 6 # backfire fix: BF101, BF102, BF103\n      timeoutSeconds: 3 # backfire fix: BF101, BF102, BF103\n") {
		t.Errorf("values file (%v):\n%s", err, data)
	}
	if data, err := os.ReadFile(template); err != nil || !strings.Contains(string(data), "        livenessProbe:\n          tcpSocket:\n            port: 5432\n") {
		t.Errorf("template (%v):\n%s", err, data)
	}
	// scan with the values agrees that only BF601 is left.
	stdout, _, _ = execute(t, "", "scan", "--values", out, "--format", "json", chart)
	if n, left := strings.Count(stdout, `"rule": "BF`), strings.Count(stdout, `"rule": "BF601"`); n != 1 || left != 1 {
		t.Errorf("scan with the new values reports %d findings, want BF601 alone", n)
	}
}
