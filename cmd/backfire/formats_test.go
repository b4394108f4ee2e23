package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/testutil"
)

func TestEveryFormatRuns(t *testing.T) {
	t.Chdir(testutil.RepoRoot(t))
	for format, want := range map[string]string{
		"short":  "examples/registry-database.yaml:52:9: error BF101 ",
		"github": "::error file=examples/registry-database.yaml,line=52,col=9,title=BF101 liveness-fails-during-recovery (StatefulSet registry/registry-database)::",
		"sarif":  `"uri": "examples/registry-database.yaml"`,
		"gitlab": `"check_name": "BF101 liveness-fails-during-recovery"`,
		"junit":  `<failure type="error" message="examples/registry-database.yaml:52:9: liveness probe exec`,
		"html":   `"StatefulSet registry/registry-database"`,
	} {
		out, stderr, code := execute(t, "", "scan", "--format", format, "examples")
		if code != exitFindings || !strings.Contains(out, want) {
			t.Errorf("--format %s: exit %d, output lacks %q\n%s\nstderr %s", format, code, want, out, stderr)
		}
	}
}

func TestShowSuppressedListsReasons(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{"web.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations: {backfire.dev/ignore: "BF102,BF104 # answers from memory"}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: app
        image: web:1
        livenessProbe: {httpGet: {path: /healthz, port: 8080}}
`})
	file := filepath.Join(dir, "web.yaml")
	out, _, _ := execute(t, "", "scan", "--show-suppressed", file)
	for _, want := range []string{
		"Suppressed by annotation\n  " + file + ":14:9  BF102 liveness-default-timeout  Deployment web: answers from memory",
		"BF901 unused-suppression", "suppresses BF104",
		"1 suppressed by annotation",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	out, _, _ = execute(t, "", "scan", "--format", "json", "--show-suppressed", file)
	doc := validateSchema(t, out)
	if s, _ := doc["suppressed"].([]any); len(s) != 1 || s[0].(map[string]any)["reason"] != "answers from memory" {
		t.Errorf("suppressed %v", doc["suppressed"])
	}
	if out, _, _ := execute(t, "", "scan", "--format", "json", file); strings.Contains(out, `"suppressed": [`) {
		t.Error("suppressed listed without --show-suppressed")
	}
}

func TestBadConfigurationIsAUsageErrorWithItsLine(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{".backfire.yaml": "severity:\n  bf102: none\n"})
	_, stderr, code := execute(t, "", "scan", "--config", filepath.Join(dir, ".backfire.yaml"), examples(t))
	if code != exitUsage || !strings.Contains(stderr, ".backfire.yaml:2:10: severity of bf102: \"none\" is not error, warning or info") {
		t.Errorf("exit %d, stderr %s", code, stderr)
	}
	// Issue 8: a lower-case override is applied.
	testutil.WriteFiles(t, dir, map[string]string{".backfire.yaml": "severity:\n  bf104: info\nignore: [ignored]\n"})
	out, _, _ := execute(t, "", "scan", "--format", "short", "--config", filepath.Join(dir, ".backfire.yaml"), examples(t))
	if !strings.Contains(out, ": info BF104 ") || strings.Contains(out, ": warning BF104 ") {
		t.Errorf("bf104: info not applied:\n%s", out)
	}
}

func TestIgnoreGlobsSkipInputs(t *testing.T) {
	dir := t.TempDir()
	src, _ := os.ReadFile(filepath.Join(examples(t), "registry-database.yaml"))
	testutil.WriteFiles(t, dir, map[string]string{
		".backfire.yaml": "ignore: [vendor]\n",
		"vendor/db.yaml": string(src),
		"deploy/db.yaml": string(src),
	})
	t.Chdir(dir)
	out, _, _ := execute(t, "", "scan", "--format", "short", ".")
	if strings.Contains(out, "vendor/") || !strings.Contains(out, "deploy/db.yaml:52:9: error BF101") {
		t.Errorf("ignore: [vendor] not applied:\n%s", out)
	}
}

func TestKubectlPluginName(t *testing.T) {
	if got := commandName("kubectl-backfire"); got != "kubectl backfire" {
		t.Errorf("commandName = %q", got)
	}
	if got := commandName("KUBECTL-BACKFIRE.EXE"); got != "kubectl backfire" {
		t.Errorf("commandName on Windows = %q", got)
	}
	if got := commandName("backfire"); got != "backfire" {
		t.Errorf("commandName = %q", got)
	}
	var out, errOut strings.Builder
	code := runAs(KubectlPlugin, []string{"scan", "--help"}, strings.NewReader(""), &out, &errOut)
	if code != 0 || !strings.Contains(out.String(), "kubectl backfire scan [PATH|-]...") {
		t.Errorf("exit %d, help:\n%s", code, out.String())
	}
}

// --diff keeps only the findings a change introduced: a finding that was
// there at the base stays silent even when an unrelated edit moved it.
func TestDiffReportsOnlyIntroducedFindings(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join(examples(t), "registry-database.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	testutil.WriteFiles(t, dir, map[string]string{"deploy/db.yaml": string(src)})
	gitRun := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	gitRun("init", "-q")
	gitRun("add", ".")
	gitRun("commit", "-q", "-m", "base")
	web := `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: registry}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: app
        image: web:1
        livenessProbe: {httpGet: {path: /healthz, port: 8080}}
---
`
	// An unrelated edit above the old findings, and a new finding.
	testutil.WriteFiles(t, dir, map[string]string{"deploy/db.yaml": web + string(src)})
	t.Chdir(filepath.Join(dir, "deploy"))
	out, stderr, code := execute(t, "", "scan", "--format", "short", "--fail-on", "warning", "--diff", "HEAD", "db.yaml")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != exitFindings || len(lines) != 1 || !strings.HasPrefix(lines[0], "db.yaml:13:") || !strings.Contains(lines[0], "BF102") {
		t.Errorf("exit %d, want only the new BF102:\n%s\nstderr %s", code, out, stderr)
	}
	all, _, _ := execute(t, "", "scan", "--format", "short", "db.yaml")
	n := len(strings.Split(strings.TrimSpace(all), "\n"))
	if n < 5 {
		t.Errorf("without --diff only %d findings", n)
	}
	// What it left out is said, not silently gone: in the text summary, and
	// on stderr for the other formats.
	hidden := fmt.Sprintf("%d findings already at HEAD (--diff) not shown", n-1)
	if !strings.Contains(stderr, hidden) {
		t.Errorf("short format: stderr %q does not say %q", stderr, hidden)
	}
	if text, _, _ := execute(t, "", "scan", "--diff", "HEAD", "db.yaml"); !strings.Contains(text, hidden) {
		t.Errorf("text summary does not say %q:\n%s", hidden, text)
	}
	if _, stderr, code := execute(t, "", "scan", "--diff", "no-such-branch", "db.yaml"); code != exitUsage || !strings.Contains(stderr, `"no-such-branch" is not a commit`) {
		t.Errorf("bad base: exit %d, %s", code, stderr)
	}
}

// A team adopting backfire accepts what it has in a baseline; CI then fails
// on new findings only. Fingerprints survive a document moving down the
// file, and the summary says how many accepted findings it left out.
func TestBaselineHidesAcceptedFindingsOnly(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join(examples(t), "registry-database.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	testutil.WriteFiles(t, dir, map[string]string{"deploy/db.yaml": string(src)})
	t.Chdir(dir)
	all, _, _ := execute(t, "", "scan", "--format", "short", "deploy")
	n := len(strings.Split(strings.TrimSpace(all), "\n"))
	out, stderr, code := execute(t, "", "scan", "--write-baseline", ".backfire-baseline.json", "deploy")
	if code != exitClean || !strings.Contains(stderr, fmt.Sprintf("wrote %d findings to .backfire-baseline.json", n)) ||
		!strings.Contains(out, fmt.Sprintf("%d findings accepted in the baseline .backfire-baseline.json (--baseline) not shown", n)) {
		t.Fatalf("write: exit %d\n%s\nstderr %s", code, out, stderr)
	}
	written, _ := os.ReadFile(".backfire-baseline.json")
	web := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: registry}\nspec:\n  replicas: 3\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n      - name: app\n        image: web:1\n        livenessProbe: {httpGet: {path: /healthz, port: 8080}}\n---\n"
	testutil.WriteFiles(t, dir, map[string]string{"deploy/db.yaml": web + string(src)})
	out, stderr, code = execute(t, "", "scan", "--format", "short", "--fail-on", "warning", "--baseline", ".backfire-baseline.json", ".")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != exitFindings || len(lines) != 1 || !strings.Contains(lines[0], "BF102") || !strings.HasPrefix(lines[0], "deploy/db.yaml:13:") {
		t.Errorf("exit %d, want only the new BF102:\n%s\nstderr %s", code, out, stderr)
	}
	// The baseline, found by the walk of ".", is not read as a manifest.
	if text, _, _ := execute(t, "", "scan", "--baseline", ".backfire-baseline.json", "."); !strings.Contains(text, "(1 file;") {
		t.Errorf("the walk read more than deploy/db.yaml:\n%s", text)
	}
	// Fixed findings are stale entries, and writing again drops them and
	// writes the same bytes for what remains.
	testutil.WriteFiles(t, dir, map[string]string{"deploy/db.yaml": web})
	if _, stderr, _ := execute(t, "", "scan", "--baseline", ".backfire-baseline.json", "deploy"); !strings.Contains(stderr, fmt.Sprintf("%d entries of .backfire-baseline.json no longer found", n)) {
		t.Errorf("stale entries not said: %s", stderr)
	}
	testutil.WriteFiles(t, dir, map[string]string{"deploy/db.yaml": string(src)})
	execute(t, "", "scan", "--write-baseline", ".backfire-baseline.json", "deploy")
	if again, _ := os.ReadFile(".backfire-baseline.json"); !bytes.Equal(again, written) {
		t.Errorf("written again, the baseline changed:\n%s\nthen\n%s", written, again)
	}
	for name, data := range map[string]string{"missing.json": "", "bad.json": "{\n  \"schema\": 3\n}\n"} {
		if data != "" {
			os.WriteFile(name, []byte(data), 0o644)
		}
		if _, stderr, code := execute(t, "", "scan", "--baseline", name, "deploy"); code != exitUsage || !strings.Contains(stderr, name) {
			t.Errorf("%s: exit %d, %s", name, code, stderr)
		}
	}
	if _, stderr, _ := execute(t, "", "scan", "--baseline", "bad.json", "deploy"); !strings.Contains(stderr, "bad.json:2:") {
		t.Errorf("no line for a bad baseline: %s", stderr)
	}
}
