package main

import (
	"fmt"
	"os"
	"os/exec"
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

// --diff's standard output is the diff alone (the summary goes to
// standard error), and changes pending exit 3, before findings left.
func TestFixDiffWritesNothing(t *testing.T) {
	dir := copyExamples(t)
	before, _ := os.ReadFile(filepath.Join(dir, "registry-database.yaml"))
	out, stderr, code := execute(t, "", "fix", "--diff", dir)
	if code != exitPending {
		t.Fatalf("exit %d, want %d (changes pending; BF402 is left too); stderr %s", code, exitPending, stderr)
	}
	for _, want := range []string{
		"+          tcpSocket:\n+            port: 5432\n",
		"-      - setWeight: 100\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("diff lacks %q:\n%s", want, out)
		}
	}
	for _, want := range []string{
		"10 would be fixed, 1 left\n",
		"  left BF402 ",
		"placeholder " + filepath.Join(dir, "registry-database.yaml"),
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("summary on standard error lacks %q:\n%s", want, stderr)
		}
		if strings.Contains(out, want) {
			t.Errorf("summary line %q on standard output, in the diff", want)
		}
	}
	for _, l := range strings.SplitAfter(out, "\n") {
		if l != "" && !strings.HasPrefix(l, "---") && !strings.HasPrefix(l, "+++") && !strings.HasPrefix(l, "@@") && !strings.ContainsAny(l[:1], " +-") {
			t.Errorf("standard output holds a line that is not the diff's: %q", l)
		}
	}
	after, _ := os.ReadFile(filepath.Join(dir, "registry-database.yaml"))
	if string(before) != string(after) {
		t.Error("--diff changed a file")
	}
	// Once fixed, --diff has nothing to change: 1 for the finding left.
	if _, _, code := execute(t, "", "fix", dir); code != exitFindings {
		t.Fatalf("fix: exit %d", code)
	}
	out, stderr, code = execute(t, "", "fix", "--diff", dir)
	if code != exitFindings || out != "" || !strings.HasPrefix(stderr, "0 would be fixed, 1 left\n") {
		t.Errorf("--diff after fix: exit %d, stdout %q, stderr %q", code, out, stderr)
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
	out, stderr, code := execute(t, "", "fix", "--diff", "--rule", "BF104", dir)
	if code != exitPending || !strings.Contains(stderr, "1 would be fixed, 0 left") || strings.Contains(out, "tcpSocket") {
		t.Errorf("--rule BF104: exit %d\n%s\n%s", code, out, stderr)
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
	chart := copyCorpusChart(t, "harbor-helm", "harbor")
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

// A fix that replaces the liveness handler keeps the user's own numbers
// where they are more tolerant than its own (failureThreshold 10 and
// timeoutSeconds 15 stay), and on seed 003's database, whose numbers are
// the defaults', still writes its 3 s and 6.
func TestFixKeepsTheUsersMoreTolerantProbe(t *testing.T) {
	dir := copyExamples(t)
	p := filepath.Join(dir, "registry-database.yaml")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	seed := filepath.Join(t.TempDir(), "seed003.yaml")
	if err := os.WriteFile(seed, data, 0o644); err != nil {
		t.Fatal(err)
	}
	const was = "          timeoutSeconds: 1\n          failureThreshold: 3\n          successThreshold: 1\n        readinessProbe:"
	if !strings.Contains(string(data), was) {
		t.Fatal("the example's liveness probe changed; update the test")
	}
	strict := strings.Replace(string(data), was, "          timeoutSeconds: 15\n          failureThreshold: 10\n          successThreshold: 1\n        readinessProbe:", 1)
	if err := os.WriteFile(p, []byte(strict), 0o644); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{
		p:    "          tcpSocket:\n            port: 5432\n          initialDelaySeconds: 300\n          periodSeconds: 10\n          timeoutSeconds: 15\n          failureThreshold: 10\n",
		seed: "          tcpSocket:\n            port: 5432\n          initialDelaySeconds: 300\n          periodSeconds: 10\n          timeoutSeconds: 3\n          failureThreshold: 6\n",
	} {
		if _, stderr, code := execute(t, "", "fix", "--rule", "BF101", file); code == exitUsage {
			t.Fatalf("%s: exit %d: %s", file, code, stderr)
		}
		got, _ := os.ReadFile(file)
		if !strings.Contains(string(got), want) {
			t.Errorf("%s: liveness probe after fix lacks\n%s\n%s", filepath.Base(file), want, got)
		}
	}
}

// copyCorpusChart copies a chart of the test corpus into a temporary
// directory.
func copyCorpusChart(t *testing.T, corpus, name string) string {
	t.Helper()
	chart := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(chart, os.DirFS(testutil.Corpus(t, corpus))); err != nil {
		t.Fatal(err)
	}
	return chart
}

// The request sizes fix writes into a chart's values are placeholders:
// the summary names each with its line and what to measure, and
// --fail-on-placeholder makes them fail CI.
func TestFixSaysEachPlaceholderInChartValues(t *testing.T) {
	chart := copyCorpusChart(t, "prometheus-alertmanager", "alertmanager")
	values := filepath.Join(chart, "values.yaml")
	out, stderr, code := execute(t, "", "fix", chart)
	if code != exitClean {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	data, _ := os.ReadFile(values)
	lines := strings.Split(string(data), "\n")
	for field, what := range map[string]string{
		"resources.requests.cpu = 250m":     "observed CPU use",
		"resources.requests.memory = 256Mi": "observed memory",
	} {
		i := strings.Index(out, " "+field+": ")
		if i < 0 {
			t.Errorf("the summary does not name %s:\n%s", field, out)
			continue
		}
		line := out[strings.LastIndex(out[:i], "\n")+1 : i+strings.IndexByte(out[i:], '\n')]
		var n int
		at := strings.Fields(line)[1]
		if !strings.HasPrefix(at, values+":") || !strings.Contains(line, what) {
			t.Errorf("placeholder line %q: want %s:LINE and %q", line, values, what)
			continue
		}
		fmt.Sscan(at[len(values)+1:], &n)
		if n < 1 || n > len(lines) || !strings.Contains(lines[n-1], "# placeholder") {
			t.Errorf("%q: line %d of values.yaml is not the placeholder", line, n)
		}
	}
	chart = copyCorpusChart(t, "prometheus-alertmanager", "alertmanager")
	if out, _, code := execute(t, "", "fix", "--fail-on-placeholder", chart); code != exitFindings || !strings.Contains(out, "0 left\n") {
		t.Errorf("--fail-on-placeholder: exit %d, want %d\n%s", code, exitFindings, out)
	}
}

// A read-only values.yaml is said to be read-only, with the keys that
// would fix the findings and --values-out, never "the chart's values do
// not reach": they do. --values-out then fixes them.
func TestFixReadOnlyChartValuesOffersValuesOut(t *testing.T) {
	chart := copyCorpusChart(t, "prometheus-alertmanager", "alertmanager")
	values := filepath.Join(chart, "values.yaml")
	if err := os.Chmod(values, 0o444); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := execute(t, "", "fix", chart)
	if code != exitFindings || !strings.Contains(out, "0 fixed, 3 left\n") {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "  left ") {
			continue
		}
		if strings.Contains(l, "do not reach") || !strings.Contains(l, values+" is read-only") || !strings.Contains(l, "the values keys ") || !strings.Contains(l, "pass --values-out FILE") {
			t.Errorf("the reason does not say the values file is read-only and offer --values-out: %s", l)
		}
	}
	vo := filepath.Join(t.TempDir(), "fix.yaml")
	if out, stderr, code := execute(t, "", "fix", "--values-out", vo, chart); code != exitClean || !strings.Contains(out, "3 fixed, 0 left\n") {
		t.Errorf("--values-out: exit %d\n%s\n%s", code, out, stderr)
	}
}

// A chart packaged as .tgz is not written into: its findings are left
// with the reason and --values-out, exit 1 (it was "not a directory",
// exit 2), and --values-out fixes them.
func TestFixPackagedChartOffersValuesOut(t *testing.T) {
	src := copyCorpusChart(t, "prometheus-alertmanager", "alertmanager")
	archive := filepath.Join(t.TempDir(), "alertmanager-1.0.0.tgz")
	tar := exec.Command("tar", "czf", archive, "-C", filepath.Dir(src), "alertmanager")
	if out, err := tar.CombinedOutput(); err != nil {
		t.Skipf("tar: %v %s", err, out)
	}
	before, _ := os.ReadFile(archive)
	out, stderr, code := execute(t, "", "fix", archive)
	if code != exitFindings || !strings.Contains(out, "0 fixed, 3 left\n") || strings.Contains(out, "\n  values ") {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "  left ") && (!strings.Contains(l, archive+" is a packaged chart") || !strings.Contains(l, "pass --values-out FILE")) {
			t.Errorf("the reason does not say the chart is packaged and offer --values-out: %s", l)
		}
	}
	vo := filepath.Join(t.TempDir(), "fix.yaml")
	if out, stderr, code := execute(t, "", "fix", "--values-out", vo, archive); code != exitClean || !strings.Contains(out, "3 fixed, 0 left\n") {
		t.Errorf("--values-out: exit %d\n%s\n%s", code, out, stderr)
	}
	if after, _ := os.ReadFile(archive); string(after) != string(before) {
		t.Error("fix changed the archive")
	}
}

// A chart whose values.yaml writes its probes in flow style ({...}) is
// fixed: the probe a fix annotates is rewritten in block style, its own
// comments kept, and a note says so (the edit used to put its comment
// inside the braces, and fix stopped: "the edited file does not parse").
func TestFixFlowStyleValues(t *testing.T) {
	dir := t.TempDir()
	files(t, dir, map[string]string{
		"c/Chart.yaml": "apiVersion: v2\nname: db\nversion: 0.1.0\n",
		"c/values.yaml": "# Database settings\nimage: postgres:16\ndb:\n" +
			"  livenessProbe: {exec: {command: [pg_isready, -h, 127.0.0.1]}, initialDelaySeconds: 30, periodSeconds: 10, timeoutSeconds: 1, failureThreshold: 3}  # keep it short\n" +
			"  readinessProbe: {exec: {command: [pg_isready, -h, 127.0.0.1]}, periodSeconds: 5, timeoutSeconds: 1}\n",
		"c/templates/sts.yaml": "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: db\nspec:\n  template:\n    spec:\n      containers:\n      - name: postgres\n        image: {{ .Values.image }}\n" +
			"        livenessProbe:\n          {{- toYaml .Values.db.livenessProbe | nindent 10 }}\n        readinessProbe:\n          {{- toYaml .Values.db.readinessProbe | nindent 10 }}\n",
	})
	chart := filepath.Join(dir, "c")
	out, stderr, code := execute(t, "", "fix", chart)
	values := filepath.Join(chart, "values.yaml")
	if code == exitUsage || !strings.Contains(out, "fixed "+values) ||
		!strings.Contains(out, "  note "+values+":4: db.livenessProbe was a flow mapping ({...}); rewritten in block style") {
		t.Fatalf("exit %d, stdout %s, stderr %s", code, out, stderr)
	}
	after, _ := os.ReadFile(values)
	for _, want := range []string{"  livenessProbe:  # keep it short\n", "    timeoutSeconds: 3  # backfire fix: BF101, BF102\n    failureThreshold: 6"} {
		if !strings.Contains(string(after), want) {
			t.Errorf("values.yaml lacks %q:\n%s", want, after)
		}
	}
	rescan, _, _ := execute(t, "", "scan", "--format", "short", chart)
	if strings.Contains(rescan, "BF101") || strings.Contains(rescan, "BF102") {
		t.Errorf("still found after the fix:\n%s", rescan)
	}
}
