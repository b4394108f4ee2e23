package scan

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/benchcorpus"
	"backfire.dev/backfire/internal/catalog"
	"backfire.dev/backfire/internal/config"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/redact"
	"backfire.dev/backfire/internal/report"
	"backfire.dev/backfire/internal/result"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/source"
)

// The scan checks objects before the index is complete and drops them;
// these tests hold it to what checking every object against the complete
// index gives (the oracle below: every file read, every object kept, one
// index, then the rules), on the rules' fixtures laid out so that the
// objects a rule looks up come after, before, or in the same file as the
// object it checks.

// oracle scans paths the simple way, keeping everything: one index of
// every object, each in the scope of its file's directory.
func oracle(t *testing.T, paths []string) *Result {
	t.Helper()
	cfg := &rules.Options{Config: &config.Config{}}
	enabled, err := rules.Enabled(catalog.All(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	inputs, errs := source.Discover(paths)
	res := &Result{Errors: errs}
	ix := index.New()
	var objs []*object.Object
	var scopes []index.Scope
	for _, in := range inputs {
		data, err := os.ReadFile(in.Path)
		if err != nil {
			t.Fatal(err)
		}
		f := load.Parse(in.Path, data)
		res.Summary.Files++
		res.Summary.Documents += len(f.Documents)
		res.Summary.Skipped += f.Skipped
		res.Errors = append(res.Errors, f.Errors...)
		scope := ix.Tree(filepath.Dir(in.Path))
		for _, d := range f.Documents {
			o, err := object.Decode(d)
			if err != nil {
				res.Errors = append(res.Errors, *err)
				continue
			}
			ix.Add(o, index.Ordinal(len(objs)), scope, true)
			objs = append(objs, o)
			scopes = append(scopes, scope)
		}
	}
	ix.Freeze()
	res.Summary.Objects = len(objs)
	var out rules.Outcome
	for i, o := range objs {
		r := rules.RunObject(o, ix.View(scopes[i], nil), enabled, cfg)
		out.Findings = append(out.Findings, r.Findings...)
		out.Suppressed = append(out.Suppressed, r.Suppressed...)
		out.Errors = append(out.Errors, r.Errors...)
	}
	res.Errors = append(res.Errors, out.Errors...)
	files := sourceLines{}
	for _, r := range out.Findings {
		res.Findings = append(res.Findings, locate(r, files, locators{}))
	}
	fix.Agree(res.Findings)
	for i := range res.Findings {
		redact.Finding(&res.Findings[i])
	}
	rules.Sort(res.Findings)
	for _, s := range out.Suppressed {
		f := locate(s.Reported, files, locators{})
		redact.Finding(&f)
		res.Suppressed = append(res.Suppressed, result.Suppressed{Finding: f, Reason: s.Reason})
	}
	res.Count()
	return res
}

func jsonOf(t *testing.T, r *Result) string {
	t.Helper()
	var b bytes.Buffer
	if err := report.JSON(&b, r, report.JSONOptions{ShowSuppressed: true}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// layouts writes the documents of one fixture file into dir in five ways:
// one file as written; one document per file, in order; one per file in
// reverse order (so that what an object refers to is read first, or last,
// whichever it was not before); one per directory, each below the one
// before (nested: the documents still answer each other); and one per
// directory, side by side (apart: they do not).
func layouts(t *testing.T, fixture string) map[string]string {
	data, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	docs := splitDocs(string(data))
	out := map[string]string{}
	for _, name := range []string{"together", "forward", "reverse", "nested", "apart"} {
		dir := filepath.Join(t.TempDir(), name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if name == "together" {
			writeFile(t, filepath.Join(dir, "all.yaml"), string(data))
		}
		sub := dir
		for i, d := range docs {
			n := i
			if name == "reverse" {
				n = len(docs) - 1 - i
			}
			switch name {
			case "forward", "reverse":
				writeFile(t, filepath.Join(dir, fmt.Sprintf("doc-%03d.yaml", n)), d)
			case "nested", "apart":
				if name == "nested" {
					sub = filepath.Join(sub, fmt.Sprintf("d%03d", n))
				} else {
					sub = filepath.Join(dir, fmt.Sprintf("d%03d", n))
				}
				if err := os.MkdirAll(sub, 0o755); err != nil {
					t.Fatal(err)
				}
				writeFile(t, filepath.Join(sub, "doc.yaml"), d)
			}
		}
		out[name] = dir
	}
	return out
}

func splitDocs(s string) []string {
	var docs []string
	for _, d := range strings.Split("\n"+s, "\n---") {
		if strings.TrimSpace(d) != "" {
			docs = append(docs, strings.TrimPrefix(d, "\n"))
		}
	}
	return docs
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func ruleFixtures(t *testing.T) []string {
	files, err := filepath.Glob("../rules/*/testdata/*/*/*.yaml")
	if err != nil || len(files) < 100 {
		t.Fatalf("%d rule fixtures (%v)", len(files), err)
	}
	return files
}

func TestStreamingScanEqualsCheckingAgainstTheCompleteIndex(t *testing.T) {
	rechecked, multi, scoped := 0, 0, 0
	for _, fixture := range ruleFixtures(t) {
		oracles := map[string]string{}
		for name, dir := range layouts(t, fixture) {
			o := oracle(t, []string{dir})
			want := jsonOf(t, o)
			var said []string
			for _, f := range o.Findings {
				said = append(said, f.Rule+" "+f.Object.String()+" "+f.Message)
			}
			slices.Sort(said)
			oracles[name] = strings.Join(said, "\n")
			for _, tune := range []tuning{{window: window}, {window: 1}} {
				for _, spill := range []bool{false, true} {
					res, s, err := run(Options{Paths: []string{dir}, Spill: spill}, tune)
					if err != nil {
						t.Fatal(err)
					}
					got := jsonOf(t, res)
					res.Spill.Close()
					if got != want {
						t.Errorf("%s laid out %s (window %d, spill %v): the scan differs from the oracle\n got: %s\nwant: %s", fixture, name, tune.window, spill, got, want)
					}
					rechecked += s.rechecked
				}
			}
			if len(splitDocs(mustRead(t, fixture))) > 1 {
				multi++
			}
		}
		if oracles["apart"] != oracles["nested"] {
			scoped++
		}
	}
	// The layouts must exercise checking again: objects whose autoscaler,
	// ConfigMap, template or Deployment comes later; and scopes: objects
	// side by side that no longer answer each other.
	if rechecked == 0 || multi == 0 || scoped == 0 {
		t.Errorf("rechecked %d objects over %d multi-document layouts, %d fixtures depend on the scope: the test does not exercise the recheck and the scopes", rechecked, multi, scoped)
	}
}

// Without the recheck, some layout gives other findings: the test above
// can fail.
func TestStreamingScanNeedsTheRecheck(t *testing.T) {
	for _, fixture := range ruleFixtures(t) {
		dir := layouts(t, fixture)["reverse"]
		want := jsonOf(t, oracle(t, []string{dir}))
		res, _, err := run(Options{Paths: []string{dir}}, tuning{window: window, noRecheck: true})
		if err != nil {
			t.Fatal(err)
		}
		if jsonOf(t, res) != want {
			return
		}
	}
	t.Error("no fixture's findings depend on the recheck")
}

// The findings do not depend on how many cores read the files.
func TestStreamingScanOnOneCore(t *testing.T) {
	dir := filepath.Join("..", "..", "examples")
	want := jsonOf(t, oracle(t, []string{dir}))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	res, err := Run(Options{Paths: []string{dir}, Spill: true})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Spill.Close()
	if got := jsonOf(t, res); got != want {
		t.Errorf("on one core the scan differs from the oracle:\n got: %s\nwant: %s", got, want)
	}
	if res.Spill.Len() == 0 {
		t.Error("nothing spilled")
	}
	var n int
	res.EachSeverity(func(finding.Severity) { n++ })
	if n != res.Spill.Len() || n == 0 {
		t.Errorf("severities of %d findings, spill holds %d", n, res.Spill.Len())
	}
}

func mustRead(t *testing.T, path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// A file that vanishes before its objects can be read again is an error
// at the file, and its first findings stand.
func TestFileChangedBeforeTheRecheck(t *testing.T) {
	dir := layouts(t, "../rules/probes/testdata/BF104/positive/hpa-min-two.yaml")["forward"]
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if len(files) != 2 {
		t.Fatalf("%d files, want the workload then its autoscaler", len(files))
	}
	// On one core the files are read in order: the workload is checked
	// before its autoscaler is known, and must be checked again.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	res, s, err := run(Options{Paths: []string{dir}}, tuning{window: window, beforeRecheck: func() {
		if err := os.Remove(files[0]); err != nil {
			t.Fatal(err)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if s.rechecked != 0 || len(res.Errors) != 1 || res.Errors[0].File != files[0] || res.Errors[0].Message != changedWhileScanned {
		t.Errorf("rechecked %d, errors %v", s.rechecked, res.Errors)
	}
}

// A large file whose objects are checked again (here every object is
// dropped, and each is there twice, so every namespace-wide answer
// changes) is read again a few times, not once for each dropped object a
// rule needs (a Service its StatefulSet's): that cost a parse of the whole
// file per question, minutes for a 30 MB file. The findings are still the
// oracle's.
func TestRecheckReadsALargeFileAFewTimes(t *testing.T) {
	src := t.TempDir()
	if _, err := benchcorpus.Generate(src, 15); err != nil {
		t.Fatal(err)
	}
	parts, _ := filepath.Glob(filepath.Join(src, "*.yaml"))
	var all strings.Builder
	for range 2 {
		for _, p := range parts {
			all.WriteString(mustRead(t, p))
			all.WriteString("---\n")
		}
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "all.yaml"), all.String())
	want := jsonOf(t, oracle(t, []string{dir}))

	rereads := func(tune tuning) (int, int) {
		n := 0
		tune.window = 1
		tune.reread = func(string) { n++ }
		res, s, err := run(Options{Paths: []string{dir}}, tune)
		if err != nil {
			t.Fatal(err)
		}
		if got := jsonOf(t, res); got != want {
			t.Fatalf("noDefer %v: the scan differs from the oracle\n got: %s\nwant: %s", tune.noDefer, got, want)
		}
		return n, s.rechecked
	}
	n, rechecked := rereads(tuning{})
	if n > deferredRounds+1 {
		t.Errorf("the file was read again %d times for %d objects checked again", n, rechecked)
	}
	// Without deferring, each needed object costs a reading: the bound
	// above is one the scan could miss.
	undeferred, _ := rereads(tuning{noDefer: true})
	t.Logf("read again %d times deferring, %d times not, for %d objects checked again", n, undeferred, rechecked)
	if undeferred <= deferredRounds+1 {
		t.Errorf("without deferring the file was read again %d times: the test does not exercise the deferring", undeferred)
	}
}
