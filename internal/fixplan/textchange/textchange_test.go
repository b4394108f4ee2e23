package textchange

import (
	"strings"
	"testing"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fixplan"
	"backfire.dev/backfire/internal/result"
)

func changes(hs []hunk) []result.TextChange {
	var out []result.TextChange
	for _, h := range hs {
		out = append(out, h.change)
	}
	return out
}

// Applying the hunks of old -> new to old gives new, whatever the edge:
// first and last lines, a last line without a newline, wide characters.
func TestHunksApplyBackToTheNewText(t *testing.T) {
	for _, c := range []struct{ name, old, new string }{
		{"replace", "a\nb\nc\n", "a\nB\nc\n"},
		{"insert first", "a\nb\n", "x\na\nb\n"},
		{"insert last", "a\nb\n", "a\nb\nx\ny\n"},
		{"delete", "a\nb\nc\nd\n", "a\nd\n"},
		{"no final newline, last line changed", "a\nb", "a\nB\nc"},
		{"no final newline, lines added before it", "a\nb", "a\nx\nb"},
		{"final newline removed", "a\nb\n", "a\nb"},
		{"wide characters", "é: 𝄞\nb: 1\n", "é: 𝄞\nb: 2\nc: 3"},
		{"several hunks", "k: 1\nx: 1\ny: 1\nz: 1\nw: 1\n", "k: 2\nx: 1\ny: 2\nz: 1\nw: 1\nv: 0\n"},
	} {
		hs := hunksOf("f.yaml", []byte(c.old), []byte(c.new))
		if len(hs) == 0 {
			t.Errorf("%s: no hunks", c.name)
			continue
		}
		got, err := Apply([]byte(c.old), changes(hs))
		if err != nil || string(got) != c.new {
			t.Errorf("%s: applied %q (%v), want %q; changes %+v", c.name, got, err, c.new, changes(hs))
		}
	}
}

func TestANewFileIsOneInsertionAtLineOne(t *testing.T) {
	hs := hunksOf("p.yaml", nil, []byte("kind: X\n"))
	want := result.TextChange{File: "p.yaml", StartLine: 1, EndLine: 1, EndColumn: 1, Text: "kind: X\n", NewFile: true}
	if len(hs) != 1 || hs[0].change != want {
		t.Fatalf("hunks %+v", hs)
	}
	if got, err := Apply(nil, changes(hs)); err != nil || string(got) != "kind: X\n" {
		t.Errorf("applied to an empty file: %q %v", got, err)
	}
}

func TestApplyRejectsBadRegions(t *testing.T) {
	for _, tc := range []result.TextChange{
		{StartLine: 0, EndLine: 1, EndColumn: 1},
		{StartLine: 1, EndLine: 5, EndColumn: 1},
		{StartLine: 1, EndLine: 1, EndColumn: 9},
		{StartLine: 2, EndLine: 1, EndColumn: 1},
	} {
		if _, err := Apply([]byte("a\nb\n"), []result.TextChange{tc}); err == nil {
			t.Errorf("%+v applied", tc)
		}
	}
	if _, err := Apply([]byte("a\nb\nc\n"), []result.TextChange{
		{StartLine: 1, EndLine: 3, EndColumn: 1}, {StartLine: 2, EndLine: 3, EndColumn: 1},
	}); err == nil {
		t.Error("overlapping regions applied")
	}
}

// Each finding gets the hunks of its own object's document, not those of
// the other object in the same file; a whole-file span gets every hunk.
func TestByFindingSplitsAFileByDocument(t *testing.T) {
	old := "kind: A\nx: 1\n---\nkind: B\ny: 1\n"
	nw := "kind: A\nx: 2\nz: 0\n---\nkind: B\ny: 2\n"
	p := &fixplan.FixPlan{
		Files: []*fixplan.File{{Path: "m.yaml", Old: []byte(old), New: []byte(nw)}, {Path: "values.yaml", Old: []byte("a: 1\nk: 0\nb: 1\n"), New: []byte("a: 2\nk: 0\nb: 2\nc: 3\n")}},
		Fixed: []finding.Finding{{Fingerprint: "a"}, {Fingerprint: "b"}, {Fingerprint: "c"}, {Fingerprint: "d"}},
		Spans: map[string][]fixplan.Span{
			"a\x00": {{File: "m.yaml", From: 1, To: 2}},
			"b\x00": {{File: "m.yaml", From: 3, To: -1}},
			"c\x00": {{File: "values.yaml"}},
			"d\x00": {{File: "values.yaml", Wrote: []int{4}}}, // the key c
		},
	}
	got := ByFinding(p)
	check := func(fp string, wantText ...string) {
		t.Helper()
		var texts []string
		for _, tc := range got[fp+"\x00"] {
			texts = append(texts, tc.File+":"+tc.Text)
		}
		if strings.Join(texts, "|") != strings.Join(wantText, "|") {
			t.Errorf("%s: %q, want %q", fp, texts, wantText)
		}
	}
	check("a", "m.yaml:x: 2\nz: 0\n")
	check("b", "m.yaml:y: 2\n")
	check("c", "values.yaml:a: 2\n", "values.yaml:b: 2\nc: 3\n")
	check("d", "values.yaml:b: 2\nc: 3\n")
	var all []result.TextChange
	all = append(all, got["a\x00"]...)
	all = append(all, got["b\x00"]...)
	if b, err := Apply([]byte(old), all); err != nil || string(b) != nw {
		t.Errorf("both objects' changes give %q (%v)", b, err)
	}
}
