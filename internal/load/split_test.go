package load

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// parseUnsplit parses data as Parse did before Lists were split: every
// document whole.
func parseUnsplit(name string, data []byte) File {
	f := File{Name: name}
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		f.Errors = append(f.Errors, Error{File: name, Message: "not UTF-8 text"})
		return f
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	index := 0
	for _, ch := range splitDocuments(data) {
		for _, piece := range splitJSONStream(ch) {
			root, err := decodeOne(piece.data)
			if err != nil {
				f.Errors = append(f.Errors, yamlError(f.Name, piece.line, err))
				index++
				continue
			}
			if root.Kind == 0 || len(root.Content) == 0 || isNull(root.Content[0]) {
				continue
			}
			shift(&root, piece.line-1, max(piece.col-1, 0))
			f.addDocument(&root, index, 0)
			index++
		}
	}
	return f
}

// sameDocuments compares two parses document by document: JSON, line and
// the position of every key and value.
func sameDocuments(t *testing.T, src string, got, want File) {
	t.Helper()
	if len(got.Documents) != len(want.Documents) || got.Skipped != want.Skipped {
		t.Fatalf("%q: %d documents (%d skipped, errors %v), want %d (%d skipped, errors %v)", src,
			len(got.Documents), got.Skipped, got.Errors, len(want.Documents), want.Skipped, want.Errors)
	}
	for i := range got.Documents {
		g, w := got.Documents[i], want.Documents[i]
		if string(g.JSON) != string(w.JSON) || g.Line != w.Line || g.Index != w.Index || !slices.Equal(g.marks, w.marks) {
			t.Errorf("%q: document %d: %s at %d (index %d) marks %v\nwant %s at %d (index %d) marks %v", src, i,
				g.JSON, g.Line, g.Index, g.marks, w.JSON, w.Line, w.Index, w.marks)
		}
	}
}

// The items of a List are parsed one at a time, and give exactly what
// parsing the List whole gives: the same objects, lines and columns, in
// the shapes kubectl writes and in the awkward ones a line scanner could
// get wrong (quoted scalars that go on at column 0, block scalars whose
// lines start with "- ", comments between items).
func TestListItemsParsedAloneEqualTheWholeList(t *testing.T) {
	for _, src := range []string{
		"apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: a}\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: b\nmetadata:\n  resourceVersion: \"\"\n",
		"apiVersion: v1\nitems:\n  - apiVersion: v1\n    kind: ConfigMap\n    metadata: {name: a}\n  - apiVersion: v1\n    kind: ConfigMap\n    metadata: {name: b}\nkind: List\n",
		"apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n  data:\n    q: \"a quoted scalar\n- that goes on at column 0\"\n    s: 'and a single one\nkind: also at 0'\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: b}\n",
		"apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n  data:\n    script: |\n      - not an item\n      # not a comment\n       'not a quote\n    other: >-\n      - nor this\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: b}\n",
		"apiVersion: v1\nkind: List\n# a comment\nitems:\n# before the first\n- apiVersion: v1 # trailing\n  kind: Pod\n  metadata: {name: \"a # b\"}\n# between\n\n- {apiVersion: v1, kind: Pod, metadata: {name: c}}\n- notAnObject: true\n-\n- - nested\n",
		"apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: it's}\n  spec:\n    containers:\n    - name: x\n      args: [\"a]\", 'b''s', c]\n      command:\n      - sh\n      - -c\n      - echo it's fine: \"yes\"\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: d}\n",
		"apiVersion: v1\nkind: List\nitems:\n- &a {apiVersion: v1, kind: Pod, metadata: {name: a}}\n- *a\n",
		"kind: DeploymentList\napiVersion: apps/v1\nitems:\n-   apiVersion: apps/v1\n    kind: Deployment\n    metadata: {name: a}\n",
		"apiVersion: v1\nkind: NotAList\nitems:\n- apiVersion: v1\n  kind: Pod\n",
		"---\napiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: a}\n---\napiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: b}\n",
		`{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}}, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b]\"}"}}]}`,
		"{\n  \"apiVersion\": \"v1\",\n  \"items\": [\n    {\n      \"apiVersion\": \"v1\",\n      \"kind\": \"Pod\",\n      \"metadata\": {\"name\": \"a\"}\n    },\n    {\"apiVersion\": \"v1\", \"kind\": \"Service\", \"metadata\": {\"name\": \"b\"}}\n  ],\n  \"kind\": \"List\"\n}\n",
		"{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [{\"apiVersion\": \"v1\", \"kind\": \"Pod\"}]}\n{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"x\"}}]}",
	} {
		got := Parse("l.yaml", []byte(src))
		want := parseUnsplit("l.yaml", []byte(src))
		if len(want.Errors) > 0 {
			t.Fatalf("%q: the whole parse fails: %v", src, want.Errors)
		}
		if len(got.Errors) > 0 {
			t.Errorf("%q: errors %v", src, got.Errors)
		}
		sameDocuments(t, src, got, want)
	}
}

// Objects written one after another in a JSON file are all read, each
// at its own line and column, as kubectl reads them; anything else after
// a document's end is an error instead of being dropped.
func TestConcatenatedJSONObjectsAreAllRead(t *testing.T) {
	src := "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"}}\n" +
		"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"b\"}}{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\"}}\n"
	f := Parse("c.json", []byte(src))
	if len(f.Errors) > 0 || len(f.Documents) != 3 {
		t.Fatalf("errors %v, %d documents, want 3", f.Errors, len(f.Documents))
	}
	want := []Position{{1, 51}, {2, 51}, {2, 113}}
	for i, d := range f.Documents {
		if pos, _ := d.Locate("metadata.name"); pos != want[i] || d.Index != i {
			t.Errorf("document %d (index %d): name at %v, want %v", i, d.Index, pos, want[i])
		}
	}
	for _, bad := range []string{
		"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\"} trailing words\n",
		"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\"}\nkind: Pod\n",
		"[1]\n[2, \n",
	} {
		f := Parse("bad.json", []byte(bad))
		if len(f.Errors) == 0 || f.Errors[0].Line == 0 {
			t.Errorf("%q: errors %v, documents %d; want an error with its line", bad, f.Errors, len(f.Documents))
		}
	}
}

// A List of many items is read one item at a time: each item is handed
// over when it is converted, with the offset it ends at, so that a scan
// can release what it has read (before, every item waited for the whole
// List to be parsed and carried the List's end).
func TestLargeListStreamsItemByItem(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: List\nitems:\n")
	var ends []int
	for i := range 50 {
		fmt.Fprintf(&b, "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: c%d\n  data:\n    k: \"v\"\n", i)
		ends = append(ends, b.Len())
	}
	b.WriteString("metadata:\n  resourceVersion: \"\"\n")
	var reads []int
	Stream("big.yaml", []byte(b.String()), func(d *Document, read int) { reads = append(reads, read) })
	if len(reads) != 50 {
		t.Fatalf("%d items streamed, want 50", len(reads))
	}
	for i := range 49 {
		if reads[i] != ends[i] {
			t.Fatalf("item %d handed over at offset %d, want %d (its end)", i, reads[i], ends[i])
		}
	}
}

// A List with a key given twice (a second "items", or a second "kind"
// or "spec" after the items) is refused at the second key's line, as any
// document with a key given twice is: kubectl would apply the last one,
// and scanning the first gave no finding and exit 0. Every shape: block
// YAML read item by item, flow YAML and JSON read whole, JSON read item by
// item, and the duplicate before, after and inside the List around the
// items.
func TestListWithAKeyGivenTwiceIsRefused(t *testing.T) {
	pod := "- apiVersion: v1\n  kind: Pod\n  metadata: {name: a}\n"
	jpod := `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}}`
	cases := []struct {
		name, src string
		line      int
		key       string
	}{
		{"yaml, second items", "apiVersion: v1\nkind: List\nitems:\n" + pod + "items:\n" + pod, 7, "items"},
		{"yaml, second empty items", "apiVersion: v1\nkind: List\nitems:\n" + pod + "items: []\n", 7, "items"},
		{"yaml, second items before", "apiVersion: v1\nkind: List\nitems: []\nitems:\n" + pod, 4, "items"},
		{"yaml, kind and spec after the items", "apiVersion: v1\nkind: List\nitems:\n" + pod + "kind: Deployment\nspec: {}\n", 7, "kind"},
		{"yaml, twice in the List's metadata", "apiVersion: v1\nkind: List\nmetadata:\n  name: a\n  name: b\nitems:\n" + pod, 5, "name"},
		{"yaml, twice in a mapping merged into the List's metadata", "apiVersion: v1\nkind: List\nmetadata:\n  <<: {name: a, name: b}\nitems:\n" + pod, 4, "name"},
		{"yaml, flow items", "apiVersion: v1\nkind: List\nitems: [{apiVersion: v1, kind: Pod}]\nitems: []\n", 4, "items"},
		{"json, second items", "{\n\"apiVersion\": \"v1\",\n\"kind\": \"List\",\n\"items\": [" + jpod + "],\n\"items\": []\n}\n", 5, "items"},
		{"json, kind after the items", "{\n\"apiVersion\": \"v1\",\n\"kind\": \"List\",\n\"items\": [\n" + jpod + "\n],\n\"kind\": \"Deployment\"\n}\n", 7, "kind"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, parse := range []func(string, []byte) File{Parse, parseUnsplit} {
				f := parse("list.yaml", []byte(c.src))
				if len(f.Errors) != 1 || len(f.Documents) != 0 {
					t.Fatalf("%d documents, errors %v; want one error and no document", len(f.Documents), f.Errors)
				}
				e := f.Errors[0]
				if e.Line != c.line || !strings.Contains(e.Message, `key "`+c.key+`" already defined`) {
					t.Errorf("error %q, want line %d, key %q", e.Error(), c.line, c.key)
				}
			}
		})
	}
}
