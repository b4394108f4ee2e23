package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"backfire.dev/backfire/internal/benchcorpus"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/result"
	"backfire.dev/backfire/internal/scan"
)

var updateCorpusGolden = flag.Bool("update-corpus-golden", false, "rewrite testdata/benchcorpus.json")

// benchcorpusFiles is small enough to commit the report of: 200 objects.
const benchcorpusFiles = 2

// scanBenchcorpus writes the generated benchmark corpus, scans it as
// `backfire scan --format json .` does from inside it, and returns the JSON.
func scanBenchcorpus(t *testing.T, spill bool) []byte {
	t.Helper()
	dir := t.TempDir()
	if _, err := benchcorpus.Generate(dir, benchcorpusFiles); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	res, err := scan.Run(scan.Options{Paths: []string{"."}, Spill: spill})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Spill.Close()
	if spill && (res.Spill == nil || res.Spill.Len() == 0 || len(res.Findings) != 0) {
		t.Fatalf("asked to spill, the scan spilled %v and kept %d findings", res.Spill, len(res.Findings))
	}
	var buf bytes.Buffer
	if err := JSON(&buf, res, JSONOptions{}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// The speed work must not change a byte of the findings: the JSON report
// of the generated corpus is compared with the one committed before it,
// and it is the same on one core, and written from spilled findings.
func TestBenchcorpusReportUnchanged(t *testing.T) {
	golden := filepath.Join(mustGetwd(t), "testdata", "benchcorpus.json")
	got := scanBenchcorpus(t, false)
	if *updateCorpusGolden {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the JSON report of the benchmark corpus changed (%d bytes, golden %d); first difference at byte %d",
			len(got), len(want), firstDiff(got, want))
	}
	if !bytes.Contains(want, []byte(`"rule": "BF101"`)) {
		t.Error("the golden has no BF101 finding: the corpus no longer exercises the rules")
	}

	if spilled := scanBenchcorpus(t, true); !bytes.Equal(spilled, got) {
		t.Errorf("the report from spilled findings differs at byte %d", firstDiff(spilled, got))
	}
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	if one := scanBenchcorpus(t, true); !bytes.Equal(one, got) {
		t.Errorf("the report on one core differs at byte %d", firstDiff(one, got))
	}
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// The streaming writer writes what one json.Encoder would have written for
// the whole document, on a result with findings, errors and suppressed
// findings (the corpus, the suppression rule's fixtures, and an input
// error with characters an HTML-escaping encoder would change).
func TestJSONStreamsTheEncodersBytes(t *testing.T) {
	res := scanRepo(t, append(corpusPaths, "internal/rules/suppression/testdata/BF901")...)
	res.Errors = append(res.Errors, load.Error{File: "bad.yaml", Line: 3, Message: "mapping <values> & more are not allowed"})
	if len(res.Findings) == 0 || len(res.Errors) == 0 || len(res.Suppressed) == 0 {
		t.Fatalf("the input should have findings (%d), errors (%d) and suppressed findings (%d)",
			len(res.Findings), len(res.Errors), len(res.Suppressed))
	}
	for _, opts := range []JSONOptions{{}, {ShowSuppressed: true}} {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(jsonDocument(res, opts)); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := JSON(&got, res, opts); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("ShowSuppressed=%v: streamed JSON differs from the encoder's at byte %d", opts.ShowSuppressed, firstDiff(got.Bytes(), want.Bytes()))
		}
	}
	empty := &result.Result{}
	var got bytes.Buffer
	if err := JSON(&got, empty, JSONOptions{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(got.Bytes(), []byte(`"findings": [],`)) || !json.Valid(got.Bytes()) {
		t.Errorf("an empty result is not written with empty lists:\n%s", got.Bytes())
	}
}
