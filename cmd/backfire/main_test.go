package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"backfire.dev/backfire/docs"
	"backfire.dev/backfire/internal/testutil"
)

func execute(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), code
}

func examples(t *testing.T) string { return filepath.Join(testutil.RepoRoot(t), "examples") }

func validateSchema(t *testing.T, out string) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if err := outputSchema(t).Validate(inst); err != nil {
		t.Fatalf("output does not validate against docs/schema/backfire-v1.json: %v", err)
	}
	return doc
}

// outputSchema compiles docs/schema/backfire-v1.json (draft-04: its
// per-rule evidence shapes are $refs to its definitions).
func outputSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(docs.SchemaV1))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft4)
	const url = "https://backfire.test/backfire-v1.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestScanExamplesJSONValidatesAgainstSchema(t *testing.T) {
	out, stderr, code := execute(t, "", "scan", "--fail-on", "warning", "--format", "json", examples(t))
	if code != exitFindings {
		t.Fatalf("exit %d, want %d (stderr %s)", code, exitFindings, stderr)
	}
	doc := validateSchema(t, out)
	if n := len(doc["findings"].([]any)); n == 0 {
		t.Fatal("no findings on examples/")
	}
}

func TestSchemaRejectsWrongOutput(t *testing.T) {
	// The schema must be able to fail: a finding without a line is invalid,
	// and so is evidence of another shape than its rule's.
	schema := outputSchema(t)
	bad := map[string]any{"schema": "backfire/v1", "errors": []any{}, "summary": map[string]any{},
		"findings": []any{map[string]any{"rule": "BF102"}}}
	if schema.Validate(bad) == nil {
		t.Fatal("schema accepted an invalid document")
	}
	out, _, _ := execute(t, "", "scan", "--format", "json", examples(t))
	validateSchema(t, out)
	for _, wrong := range []string{`"canaryPodsAtMin": 2`, `"timeToKillSeconds": 21`} {
		broken := strings.Replace(out, wrong, strings.SplitN(wrong, ":", 2)[0]+`: {"atMin": 2}`, 1)
		if broken == out {
			t.Fatalf("examples output has no %s", wrong)
		}
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(broken))
		if err != nil {
			t.Fatal(err)
		}
		if schema.Validate(inst) == nil {
			t.Errorf("schema accepted an object for %s", wrong)
		}
	}
}

func TestBF102OnExamplesWithExactLine(t *testing.T) {
	out, _, _ := execute(t, "", "scan", "--format", "json", examples(t))
	var doc struct {
		Findings []struct {
			Rule, File, Path string
			Line, Column     int
			Object           struct{ Kind, Name string }
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	for _, f := range doc.Findings {
		if f.Rule == "BF102" && f.Object.Name == "registry-database" {
			if !strings.HasSuffix(f.File, "examples/registry-database.yaml") || f.Line != 58 || f.Column != 11 ||
				f.Path != "spec.template.spec.containers[0].livenessProbe.timeoutSeconds" {
				t.Errorf("BF102 at %s:%d:%d %s, want examples/registry-database.yaml:58:11 on timeoutSeconds", f.File, f.Line, f.Column, f.Path)
			}
			return
		}
	}
	t.Fatal("no BF102 on registry-database")
}

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	warnOnly := write("warn.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: web\n    image: nginx\n    livenessProbe:\n      httpGet: {path: /, port: 80}\n")
	clean := write("clean.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
	broken := write("broken.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: [}\n")
	cases := []struct {
		name string
		args []string
		want int
	}{
		{"clean", []string{"scan", clean}, exitClean},
		{"warning below fail-on error", []string{"scan", warnOnly}, exitClean},
		{"warning at fail-on warning", []string{"scan", "--fail-on", "warning", warnOnly}, exitFindings},
		{"fail-on none", []string{"scan", "--fail-on", "none", "--format", "json", examples(t)}, exitClean},
		{"input error wins", []string{"scan", "--fail-on", "warning", warnOnly, broken}, exitUsage},
		{"missing path", []string{"scan", filepath.Join(dir, "nope.yaml")}, exitUsage},
		{"no path", []string{"scan"}, exitUsage},
		{"bad format", []string{"scan", "--format", "xml", clean}, exitUsage},
		{"bad fail-on", []string{"scan", "--fail-on", "fatal", clean}, exitUsage},
		{"bad rollouts version", []string{"scan", "--rollouts-version", "banana", clean}, exitUsage},
		{"unknown flag", []string{"scan", "--nope", clean}, exitUsage},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, stderr, code := execute(t, "", c.args...); code != c.want {
				t.Errorf("exit %d, want %d; stderr: %s", code, c.want, stderr)
			}
		})
	}
}

func TestStdinAndErrorsStillScanTheRest(t *testing.T) {
	in := "apiVersion: v1\nkind: Pod\nmetadata: {name: [}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: web\n    image: nginx\n    livenessProbe:\n      httpGet: {path: /, port: 80}\n"
	out, _, code := execute(t, in, "scan", "--format", "json", "-")
	if code != exitUsage {
		t.Fatalf("exit %d", code)
	}
	doc := validateSchema(t, out)
	errs := doc["errors"].([]any)
	if len(errs) != 1 || errs[0].(map[string]any)["file"] != "<stdin>" || errs[0].(map[string]any)["line"] != float64(3) {
		t.Errorf("errors %v", errs)
	}
	// The good document after the broken one was scanned: some finding
	// (whichever rules the catalog holds) is on it, and none elsewhere.
	findings := doc["findings"].([]any)
	if len(findings) == 0 {
		t.Error("the good document after the broken one was not scanned: no findings")
	}
	for _, f := range findings {
		f := f.(map[string]any)
		if f["object"].(map[string]any)["name"] != "p" || f["file"] != "<stdin>" || f["line"].(float64) < 5 {
			t.Errorf("a finding outside the good document: %v", f)
		}
	}
	_, stderr, _ := execute(t, in, "scan", "-")
	if !strings.Contains(stderr, "<stdin>:3") {
		t.Errorf("text mode does not report the error on stderr: %q", stderr)
	}
}

func TestEmptyInput(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.yaml")
	os.WriteFile(empty, nil, 0o644)
	if _, stderr, code := execute(t, "", "scan", empty); code != exitUsage || !strings.Contains(stderr, "empty input") {
		t.Errorf("explicit empty file: exit %d, stderr %q", code, stderr)
	}
	// Met on a directory walk, an empty file is nothing to scan, not an error.
	if _, stderr, code := execute(t, "", "scan", dir); code != exitClean {
		t.Errorf("empty file in a directory: exit %d, stderr %q", code, stderr)
	}
	if _, _, code := execute(t, "", "scan", "-"); code != exitUsage {
		t.Errorf("empty stdin: exit %d", code)
	}
}

func TestRulesAndExplain(t *testing.T) {
	out, _, code := execute(t, "", "rules", "--format", "json")
	var infos []ruleInfo
	if code != 0 || json.Unmarshal([]byte(out), &infos) != nil || len(infos) == 0 {
		t.Fatalf("rules: exit %d, %s", code, out)
	}
	for _, r := range infos {
		doc, _, code := execute(t, "", "explain", strings.ToLower(r.ID))
		if code != 0 || !strings.Contains(doc, r.ID) {
			t.Errorf("explain %s: exit %d, page %q", r.ID, code, doc)
		}
	}
	if _, _, code := execute(t, "", "explain", testutil.UnknownRule); code != exitUsage {
		t.Errorf("explain unknown: exit %d", code)
	}
}

func TestVersion(t *testing.T) {
	out, _, code := execute(t, "", "version")
	if code != 0 || !strings.Contains(out, "backfire ") || !strings.Contains(out, "v1.10.2") {
		t.Errorf("version: %d %q", code, out)
	}
}
