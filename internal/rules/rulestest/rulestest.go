// Package rulestest runs a rule over its fixtures: every file in
// testdata/<ID>/positive must make the rule fire, every file in
// testdata/<ID>/negative must not, each file's report must match its golden
// file, and every fix the rule proposes must apply and silence it.
package rulestest

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/report"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/scan"
)

// Update rewrites golden files: go test ./internal/rules/... -update
var Update = flag.Bool("update", false, "rewrite golden files")

// Scan runs only the given rules over files (or "-" with stdin).
func Scan(t testing.TB, rs []*rules.Rule, stdin []byte, paths ...string) *scan.Result {
	t.Helper()
	opts := scan.Options{Paths: paths, Catalog: rs, KeepObjects: true}
	if stdin != nil {
		opts.Stdin = bytes.NewReader(stdin)
	}
	res, err := scan.Run(opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Of returns the findings of one rule.
func Of(res *scan.Result, id string) []finding.Finding {
	var out []finding.Finding
	for _, f := range res.Findings {
		if f.Rule == id {
			out = append(out, f)
		}
	}
	return out
}

// Fixtures checks rule r against testdata/<ID>/{positive,negative}/*.yaml
// of the calling package. Rules that read other objects get them from the
// same fixture file; extra lists rules the fixtures also need (none, usually).
func Fixtures(t *testing.T, r *rules.Rule) {
	t.Helper()
	for _, kind := range []string{"positive", "negative"} {
		files, _ := filepath.Glob(filepath.Join("testdata", r.ID, kind, "*.yaml"))
		if len(files) < 3 {
			t.Errorf("%s: %d %s fixtures, want at least 3", r.ID, len(files), kind)
		}
		for _, file := range files {
			t.Run(kind+"/"+strings.TrimSuffix(filepath.Base(file), ".yaml"), func(t *testing.T) {
				res := Scan(t, []*rules.Rule{r}, nil, file)
				if len(res.Errors) > 0 {
					t.Fatalf("fixture does not load: %v", res.Errors)
				}
				got := Of(res, r.ID)
				if kind == "positive" && len(got) == 0 {
					t.Fatalf("%s did not fire", r.ID)
				}
				if kind == "negative" && len(got) > 0 {
					t.Fatalf("%s fired on a negative fixture: %s", r.ID, got[0].Message)
				}
				Golden(t, strings.TrimSuffix(file, ".yaml")+".golden", res)
				for _, f := range got {
					CheckFix(t, r, res, f)
				}
			})
		}
	}
}

// Golden compares the text report of res with a golden file.
func Golden(t *testing.T, path string, res *scan.Result) {
	t.Helper()
	var b bytes.Buffer
	if err := report.Text(&b, res, report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if *Update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no golden file (run with -update): %v", err)
	}
	if !bytes.Equal(want, b.Bytes()) {
		t.Errorf("report differs from %s (run with -update if intended):\n--- got\n%s\n--- want\n%s", path, b.String(), want)
	}
}

// CheckFix applies f's strategic merge patch to the object it targets, with
// the upstream patch code, checks that every probe still has exactly one
// handler, and scans the patched input again: r must no longer report the
// same object and container, wherever in it (a fix may move the path: BF102
// points at timeoutSeconds once it is set).
func CheckFix(t testing.TB, r *rules.Rule, res *scan.Result, f finding.Finding) {
	t.Helper()
	if f.Fix == nil {
		t.Errorf("%s finding has no fix", r.ID)
		return
	}
	if f.Fix.Type != finding.StrategicMergePatch {
		return
	}
	target := f.Object
	if f.Fix.Target != nil {
		target = *f.Fix.Target
	}
	var docs [][]byte
	patched := false
	for _, o := range res.Objects {
		doc := o.Doc.JSON
		if o.Ref == target && !patched {
			if o.Typed == nil {
				t.Fatalf("fix targets %s, a kind without a typed model", target)
			}
			out, err := strategicpatch.StrategicMergePatch(doc, f.Fix.Patch, o.Typed)
			if err != nil {
				t.Fatalf("fix does not apply: %v\npatch: %s", err, f.Fix.Patch)
			}
			checkOneHandler(t, out)
			doc, patched = out, true
		}
		docs = append(docs, doc)
	}
	if !patched {
		t.Fatalf("fix target %s not found", target)
	}
	again := Scan(t, []*rules.Rule{r}, bytes.Join(docs, []byte("\n---\n")), "-")
	if len(again.Errors) > 0 {
		t.Fatalf("patched object does not load: %v", again.Errors)
	}
	for _, g := range Of(again, r.ID) {
		if g.Object == f.Object && g.Container == f.Container {
			t.Errorf("%s still fires after its fix %s: %s", r.ID, f.Fix.Patch, g.Message)
		}
	}
}

func checkOneHandler(t testing.TB, patched []byte) {
	t.Helper()
	var generic map[string]any
	if err := json.Unmarshal(patched, &generic); err != nil {
		t.Fatal(err)
	}
	walkProbes(generic, func(name string, p map[string]any) {
		n := 0
		for _, h := range []string{"exec", "httpGet", "tcpSocket", "grpc"} {
			if v, ok := p[h]; ok && v != nil {
				n++
			}
		}
		if n != 1 {
			t.Errorf("after the fix, %s has %d handlers, want exactly 1: %v", name, n, p)
		}
	})
}

func walkProbes(v any, fn func(string, map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if strings.HasSuffix(k, "Probe") {
				if p, ok := val.(map[string]any); ok {
					fn(k, p)
					continue
				}
			}
			walkProbes(val, fn)
		}
	case []any:
		for _, e := range x {
			walkProbes(e, fn)
		}
	}
}
