package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"backfire.dev/backfire/internal/benchcorpus"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/redact"
	"backfire.dev/backfire/internal/result"
	"backfire.dev/backfire/internal/scan"
	"backfire.dev/backfire/internal/testutil"
)

// jsonEncodeFinding is how the report wrote a finding before
// result.FindingEncoder: the reference it must match byte for byte.
func jsonEncodeFinding(f *finding.Finding) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent(indent(2), "  ")
	if err := enc.Encode(f); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// benchcorpusFindings scans a generated corpus of files times 100
// documents (benchcorpus.Generate or GenerateRollouts).
func benchcorpusFindings(t testing.TB, generate func(string, int) (int64, error), files int) []finding.Finding {
	t.Helper()
	dir := t.TempDir()
	if _, err := generate(dir, files); err != nil {
		t.Fatal(err)
	}
	res, err := scan.Run(scan.Options{Paths: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	return res.Findings
}

// repoInputs are the repository's inputs, relative to its root: the
// examples and the corpus, and the rules' and the scan's test manifests.
func repoInputs(t *testing.T) []string {
	t.Helper()
	paths := []string{"examples", "testdata"}
	more, err := filepath.Glob("internal/rules/*/testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range append(more, "internal/scan/testdata", "internal/fixcompose/testdata", "internal/webhook/testdata") {
		if _, err := os.Stat(dir); err == nil {
			paths = append(paths, dir)
		}
	}
	return paths
}

// result.FindingEncoder writes every finding the rules produce as
// encoding/json did: those of the repository's inputs (charts and
// overlays rendered, suppressed findings too) and of the generated corpus,
// the same redacted, and the same read back from the report (where the
// evidence holds float64, []any and map[string]any). One encoder writes
// them all, as in a spill, so that what it keeps between findings is
// tested too.
func TestFindingEncoderMatchesEncodingJSON(t *testing.T) {
	t.Chdir(testutil.RepoRoot(t))
	res := scanRepo(t, repoInputs(t)...)
	fs := res.Findings
	for _, s := range res.Suppressed {
		fs = append(fs, s.Finding)
	}
	fs = append(fs, benchcorpusFindings(t, benchcorpus.Generate, 100)...)
	fs = append(fs, benchcorpusFindings(t, benchcorpus.GenerateRollouts, 5)...)

	var buf bytes.Buffer
	enc := result.NewFindingEncoder(&buf)
	compared := 0
	check := func(what string, f *finding.Finding) {
		t.Helper()
		compared++
		want, err := jsonEncodeFinding(f)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		buf.Reset()
		if err := enc.Encode(f); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got := buf.Bytes(); !bytes.Equal(got, want) {
			i := 0
			for i < len(got) && i < len(want) && got[i] == want[i] {
				i++
			}
			t.Errorf("%s: differs at byte %d:\n got %q\nwant %q", what, i, got[max(0, i-60):min(len(got), i+60)], want[max(0, i-60):min(len(want), i+60)])
		}
	}
	var patches, evidence, values, fallback int
	for i := range fs {
		f := &fs[i]
		what := f.Rule + " in " + f.File
		check(what, f)
		r := *f
		redact.Finding(&r)
		check(what+", redacted", &r)
		b, _ := jsonEncodeFinding(f)
		var back finding.Finding
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		check(what+", read back", &back)
		if f.Fix != nil && len(f.Fix.Patch) > 0 {
			patches++
		}
		if len(f.Evidence) > 0 {
			evidence++
		}
		if f.ValuesSource != "" {
			values++
		}
		for _, v := range f.Evidence {
			switch v.(type) {
			case nil, string, bool, int, int32, int64, uint64, float64, []string:
			default:
				fallback++ // a type left to encoding/json
			}
		}
	}
	t.Logf("%d findings, %d encodings compared: %d with a patch, %d with evidence (%d values of other types), %d from chart values", len(fs), compared, patches, evidence, fallback, values)
	if len(fs) < 1000 || patches == 0 || evidence == 0 || fallback == 0 || values == 0 {
		t.Errorf("the scans gave too little to compare: %d findings, %d patches, %d evidence (%d of other types), %d from values", len(fs), patches, evidence, fallback, values)
	}
}

// BenchmarkFindingEncoder compares encoding/json's way with the
// hand-written encoder on the generated corpus's findings, one finding an
// operation.
func BenchmarkFindingEncoder(b *testing.B) {
	fs := benchcorpusFindings(b, benchcorpus.Generate, 10)
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		var tmp, out bytes.Buffer
		enc := json.NewEncoder(&tmp)
		enc.SetEscapeHTML(false)
		enc.SetIndent(indent(2), "  ")
		i := 0
		for b.Loop() {
			tmp.Reset()
			out.Reset()
			if err := enc.Encode(&fs[i%len(fs)]); err != nil {
				b.Fatal(err)
			}
			out.Write(bytes.TrimSuffix(tmp.Bytes(), []byte("\n")))
			i++
		}
	})
	b.Run("FindingEncoder", func(b *testing.B) {
		b.ReportAllocs()
		var out bytes.Buffer
		enc := result.NewFindingEncoder(&out)
		i := 0
		for b.Loop() {
			out.Reset()
			if err := enc.Encode(&fs[i%len(fs)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

// BenchmarkSpillAdd spills the generated corpus's findings one object's
// worth (a finding) at a time, as a scan does.
func BenchmarkSpillAdd(b *testing.B) {
	fs := benchcorpusFindings(b, benchcorpus.Generate, 10)
	sp, err := result.NewSpill()
	if err != nil {
		b.Fatal(err)
	}
	defer sp.Close()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		sp.Add(uint64(i), fs[i%len(fs):i%len(fs)+1])
		i++
	}
	if err := sp.Err(); err != nil {
		b.Fatal(err)
	}
}
