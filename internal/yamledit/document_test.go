package yamledit

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"backfire.dev/backfire/internal/benchcorpus"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/testutil"
)

// editBothWays edits the document at pos of data alone (editStreamWith)
// and as the whole stream (editWhole), and fails unless both give the
// same bytes, the same notes and fail alike, or the stream fails to
// decode before any edit and only the document alone is edited.
func editBothWays(t *testing.T, what string, data []byte, pos load.Position, patch map[string]any) {
	t.Helper()
	var aloneNotes, wholeNotes []string
	alone, aerr := editStreamWith(data, pos, patch, Options{Notes: &aloneNotes})
	whole, werr := editWhole(data, pos, patch, Options{Notes: &wholeNotes})
	if aerr == nil && werr != nil {
		// The whole stream can fail on another document that yaml.v3
		// cannot decode (a template's "{{x}}" is a flow mapping keyed by
		// a mapping); the document alone is still edited, and rightly:
		// the stream fails so before any edit.
		if _, _, err := documents(data, pos, false); err == nil {
			t.Fatalf("%s: the whole stream fails with %v, though it decodes before the edit", what, werr)
		}
		return
	}
	if (aerr == nil) != (werr == nil) || aerr != nil && aerr.Error() != werr.Error() {
		t.Fatalf("%s: the document alone fails with %v, the whole stream with %v", what, aerr, werr)
	}
	if string(alone) != string(whole) {
		t.Fatalf("%s: the document alone and the whole stream edit differently\nalone: %q\nwhole: %q", what, alone, whole)
	}
	if fmt.Sprint(aloneNotes) != fmt.Sprint(wholeNotes) {
		t.Fatalf("%s: notes %q, the whole stream's %q", what, aloneNotes, wholeNotes)
	}
}

// Every document of the benchmark corpus's multi-document files and of
// the repository's manifests, patched in its metadata, its spec and a
// deletion: editing its document alone is editing the stream.
func TestEditingOneDocumentIsEditingTheStream(t *testing.T) {
	dir := t.TempDir()
	if _, err := benchcorpus.Generate(dir, 2); err != nil {
		t.Fatal(err)
	}
	patches := []map[string]any{
		{"metadata": map[string]any{"labels": map[string]any{"edited": "yes"}}},
		{"spec": map[string]any{"replicas": 3.0, "minReadySeconds": 10.0}},
		{"metadata": map[string]any{"annotations": nil}},
	}
	edits, cut := 0, 0
	testutil.EachYAML(t, []string{dir, "../../testdata", "../../examples"}, func(path string, data []byte) {
		docs := load.Parse(path, data).Documents
		for i, d := range docs {
			if i >= 25 { // the file's whole-stream edits are the slow reference
				break
			}
			pos, ok := d.Locate("")
			if !ok {
				continue
			}
			if start, end, ok := documentAround(data, pos.Line); ok && (start > 0 || end < len(data)) {
				cut++
			}
			for _, p := range patches {
				editBothWays(t, fmt.Sprintf("%s document %d", path, i), data, pos, p)
				edits++
			}
		}
	})
	t.Logf("%d edits, %d documents cut out of their stream", edits/len(patches)*len(patches), cut)
	if cut < 200 {
		t.Errorf("only %d documents were cut out of a stream of several: the fast path is not taken", cut)
	}
}

// The markers and the streams that are edited whole.
func TestDocumentAround(t *testing.T) {
	src := "a: 1\n---\nb: 2\n...\nc: 3\n--- |\n  text\n---\n"
	for _, c := range []struct {
		line       int
		start, end int
	}{
		{1, 0, 5},   // the first document, before any marker
		{3, 5, 18},  // from its "---" through the "..." that ends it
		{5, 18, 23}, // after "...", up to the next marker
		{6, 23, 36}, // a marker line holding the document's value
	} {
		start, end, ok := documentAround([]byte(src), c.line)
		if !ok || start != c.start || end != c.end {
			t.Errorf("line %d: [%d, %d) %v, want [%d, %d)", c.line, start, end, ok, c.start, c.end)
		}
	}
	for _, notMarker := range []string{"----\n", "---x\n", " ---\n", "...x\n"} {
		if _, end, _ := documentAround([]byte("a: 1\n"+notMarker+"b: 2\n"), 1); end != 5+len(notMarker)+5 {
			t.Errorf("%q was taken for a marker", notMarker)
		}
	}
	if _, _, ok := documentAround([]byte("%YAML 1.2\n---\na: 1\n"), 3); ok {
		t.Error("a stream with a directive must be edited whole")
	}
}

// A file of many documents: fixing each costs what its own document does,
// not what the stream does: the last of 100 documents, about 1 ms (the
// whole stream, edited and verified, took 30 ms).
func BenchmarkEditManyDocuments(b *testing.B) {
	dir := b.TempDir()
	if _, err := benchcorpus.Generate(dir, 1); err != nil {
		b.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	data, err := os.ReadFile(files[0])
	if err != nil {
		b.Fatal(err)
	}
	docs := load.Parse(files[0], data).Documents
	last, _ := docs[len(docs)-1].Locate("")
	patch := map[string]any{"metadata": map[string]any{"labels": map[string]any{"edited": "yes"}}}
	for b.Loop() {
		if _, err := editStreamWith(data, last, patch, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzEditOneDocument: whatever the stream and the document edited,
// editing the document alone is editing the stream.
//
//	go test ./internal/yamledit -run '^$' -fuzz FuzzEditOneDocument -fuzztime 1m
func FuzzEditOneDocument(f *testing.F) {
	f.Add("a: 1\n---\nkind: Pod\nspec:\n  x: 1\n...\nb: 2\n", 1, `{"spec":{"x":2}}`)
	f.Add("--- |\n  text\n---\nspec: {x: 1}\n---\n# c\nz: 3\n", 1, `{"spec":{"y":[1,2]}}`)
	f.Add("a: &x {b: 1}\n---\nc: *x\n---\nspec:\n  containers:\n  - name: a\n    image: i\n", 2, `{"spec":{"containers":[{"name":"a","image":"j"}]}}`)
	f.Add("a: 1\r\n---\r\nspec:\r\n  x: 1\r\n", 1, `{"spec":{"x":null}}`)
	f.Add("a: \"multi\n---\nline\"\n---\nspec: {x: 1}\n", 1, `{"spec":{"x":2}}`)
	f.Fuzz(func(t *testing.T, src string, i int, patchText string) {
		var patch map[string]any
		if json.Unmarshal([]byte(patchText), &patch) != nil {
			return
		}
		docs := load.Parse("in.yaml", []byte(src)).Documents
		if i < 0 || i >= len(docs) {
			return
		}
		pos, ok := docs[i].Locate("")
		if !ok {
			return
		}
		editBothWays(t, "fuzz", []byte(src), pos, patch)
	})
}
