package load

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"
)

const deployment = `# leading comment
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - name: app
        image: nginx
        livenessProbe:
          httpGet: {path: /healthz, port: 8080}
          timeoutSeconds: 1
      - name: sidecar
        image: busybox
`

func parseOne(t *testing.T, src string) *Document {
	t.Helper()
	f := Parse("x.yaml", []byte(src))
	if len(f.Errors) > 0 {
		t.Fatalf("errors: %v", f.Errors)
	}
	if len(f.Documents) != 1 {
		t.Fatalf("got %d documents, want 1", len(f.Documents))
	}
	return f.Documents[0]
}

func TestLocate(t *testing.T) {
	d := parseOne(t, deployment)
	cases := []struct {
		path      string
		line, col int
		exact     bool
	}{
		{"", 2, 1, true},
		{"metadata.name", 5, 3, true},
		{"spec.template.spec.containers[0]", 10, 9, true},
		{"spec.template.spec.containers[0].livenessProbe", 12, 9, true},
		{"spec.template.spec.containers[0].livenessProbe.timeoutSeconds", 14, 11, true},
		{"spec.template.spec.containers[0].livenessProbe.httpGet.port", 13, 37, true},
		{"spec.template.spec.containers[1].image", 16, 9, true},
		// Absent fields point at the deepest ancestor that exists.
		{"spec.template.spec.containers[1].livenessProbe", 15, 9, false},
		{"spec.template.spec.containers[0].livenessProbe.periodSeconds", 12, 9, false},
		{"spec.template.spec.containers[5]", 9, 7, false},
	}
	for _, c := range cases {
		pos, exact := d.Locate(c.path)
		if pos.Line != c.line || pos.Column != c.col || exact != c.exact {
			t.Errorf("Locate(%q) = %d:%d exact=%v, want %d:%d exact=%v", c.path, pos.Line, pos.Column, exact, c.line, c.col, c.exact)
		}
	}
	// A Locator answers the same, in any order and asked twice.
	loc := d.Locator()
	for _, k := range []int{3, 0, 5, 2, 6, 1, 4, 0} {
		c := cases[k]
		pos, exact := loc.Locate(c.path)
		if pos.Line != c.line || pos.Column != c.col || exact != c.exact {
			t.Errorf("Locator.Locate(%q) = %d:%d exact=%v, want %d:%d exact=%v", c.path, pos.Line, pos.Column, exact, c.line, c.col, c.exact)
		}
	}
}

func TestMultiDocumentLinesCountFromStreamStart(t *testing.T) {
	src := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n# values file\nreplicas: 3\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: b\n...\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: c\n"
	f := Parse("s.yaml", []byte(src))
	if len(f.Errors) > 0 {
		t.Fatal(f.Errors)
	}
	if len(f.Documents) != 3 || f.Skipped != 1 {
		t.Fatalf("documents %d skipped %d, want 3 and 1", len(f.Documents), f.Skipped)
	}
	for i, want := range []int{3, 11, 17} {
		if pos, _ := f.Documents[i].Locate("metadata.name"); pos.Line != want {
			t.Errorf("document %d: metadata.name at line %d, want %d", i, pos.Line, want)
		}
	}
}

func TestListIsSplitIntoItems(t *testing.T) {
	src := `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: a}
- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: b
- {notAnObject: true}
`
	f := Parse("l.yaml", []byte(src))
	if len(f.Errors) > 0 || len(f.Documents) != 2 || f.Skipped != 1 {
		t.Fatalf("errors %v documents %d skipped %d", f.Errors, len(f.Documents), f.Skipped)
	}
	if f.Documents[1].Kind != "Deployment" {
		t.Errorf("kind %q", f.Documents[1].Kind)
	}
	if pos, _ := f.Documents[1].Locate("metadata.name"); pos.Line != 10 {
		t.Errorf("item name at line %d, want 10", pos.Line)
	}
}

func TestConversion(t *testing.T) {
	src := `apiVersion: v1
kind: X
base: &base {a: 1, b: two}
merged:
  <<: *base
  b: three
octal: 0644
hex: 0x1F
float: 1.5
yes: yes
quoted: "5"
nothing: ~
multi: |
  line "one"
  	tab
`
	d := parseOne(t, src)
	want := `{"apiVersion":"v1","kind":"X","base":{"a":1,"b":"two"},"merged":{"b":"three","a":1},"octal":420,"hex":31,"float":1.5,"yes":"yes","quoted":"5","nothing":null,"multi":"line \"one\"\n\ttab\n"}`
	if string(d.JSON) != want {
		t.Errorf("JSON\n got %s\nwant %s", d.JSON, want)
	}
}

// Each bad input is an error with the file and, where there is one, the
// line; the documents around it are still read.
func TestBadInput(t *testing.T) {
	good := "apiVersion: v1\nkind: Pod\nmetadata: {name: ok}\n"
	cases := []struct {
		name, src string
		line      int
		msg       string
		docs      int
	}{
		{"malformed", good + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: [}\n---\n" + good, 7, "invalid YAML", 2},
		{"bad indentation", "apiVersion: v1\nkind: Pod\n metadata: x\n  y: z\n---\n" + good, 3, "invalid YAML", 1},
		{"duplicate key", good + "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  name: b\n", 9, `key "name" already defined at line 8`, 1},
		{"invalid utf-8", good + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: \xff\xfe}\n", 7, "invalid UTF-8", 1},
		{"infinity", "apiVersion: v1\nkind: Pod\nspec: {x: .inf}\n", 3, "cannot be represented in JSON", 0},
		{"tab indentation", "apiVersion: v1\nkind: Pod\nmetadata:\n\tname: x\n", 4, "invalid YAML", 0},
		{"unclosed flow", good + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: x\n", 7, "invalid YAML", 1},
		{"unknown anchor", "apiVersion: v1\nkind: Pod\nmetadata: *nope\n", 1, "unknown anchor", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := Parse("bad.yaml", []byte(c.src))
			if len(f.Errors) != 1 {
				t.Fatalf("errors %v, want one", f.Errors)
			}
			e := f.Errors[0]
			if e.File != "bad.yaml" || e.Line != c.line || !strings.Contains(e.Message, c.msg) {
				t.Errorf("error %q, want line %d containing %q", e.Error(), c.line, c.msg)
			}
			if len(f.Documents) != c.docs {
				t.Errorf("%d documents still read, want %d", len(f.Documents), c.docs)
			}
		})
	}
}

func TestBinaryAndEmpty(t *testing.T) {
	f := Parse("img.yaml", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"))
	if len(f.Errors) != 1 || !strings.Contains(f.Errors[0].Message, "binary") {
		t.Errorf("binary: %v", f.Errors)
	}
	for _, src := range []string{"", "   \n\n", "# only a comment\n", "---\n---\n"} {
		f := Parse("e.yaml", []byte(src))
		if len(f.Errors) != 0 || len(f.Documents) != 0 {
			t.Errorf("%q: errors %v documents %d", src, f.Errors, len(f.Documents))
		}
		if !f.Empty {
			t.Errorf("%q: not reported empty", src)
		}
	}
}

// A "billion laughs" document is refused quickly and in little memory.
func TestAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\na0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i < 10; i++ {
		b.WriteString("a" + itoa(i) + ": &a" + itoa(i) + " [")
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + itoa(i-1))
		}
		b.WriteString("]\n")
	}
	start := time.Now()
	f := Parse("bomb.yaml", []byte(b.String()))
	if len(f.Errors) != 1 || !strings.Contains(f.Errors[0].Message, "excessive aliasing") {
		t.Fatalf("errors %v", f.Errors)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d) // a generous bound: it takes milliseconds
	}
}

func TestDeepNesting(t *testing.T) {
	src := "apiVersion: v1\nkind: X\nd: " + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + "\n"
	f := Parse("deep.yaml", []byte(src))
	if len(f.Errors) != 1 {
		t.Fatalf("errors %v", f.Errors)
	}
}

func TestJSONInput(t *testing.T) {
	src := "{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"Pod\",\n  \"metadata\": {\"name\": \"j\"}\n}\n"
	d := parseOne(t, src)
	if pos, _ := d.Locate("metadata.name"); pos.Line != 4 {
		t.Errorf("line %d", pos.Line)
	}
}

func TestPositionAtOffset(t *testing.T) {
	d := parseOne(t, deployment)
	i := bytes.Index(d.JSON, []byte(`"timeoutSeconds":1`))
	if pos := d.PositionAt(int64(i + len(`"timeoutSeconds":`))); pos.Line != 14 {
		t.Errorf("line %d, want 14", pos.Line)
	}
}

func itoa(i int) string { return string(rune('0' + i)) }

// ParseDocuments keeps each document's own lines, as a producer that
// prints them under their own headers (helm template) shows them: a
// position or an error counts from the document's first line, and Index
// is the document's place in the list.
func TestParseDocuments(t *testing.T) {
	f := ParseDocuments("chart/templates/app.yaml", [][]byte{
		[]byte("# only a comment"),
		[]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v"),
		[]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: a: b"),
		[]byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: s"),
	})
	if len(f.Documents) != 2 || len(f.Errors) != 1 {
		t.Fatalf("%d documents and %d errors, want 2 and 1: %v", len(f.Documents), len(f.Errors), f.Errors)
	}
	cm, s := f.Documents[0], f.Documents[1]
	if cm.Index != 1 || s.Index != 3 || cm.Line != 1 || s.Line != 1 {
		t.Errorf("indexes %d, %d and lines %d, %d; want 1, 3 and 1, 1", cm.Index, s.Index, cm.Line, s.Line)
	}
	if pos, _ := cm.Locate("data.k"); pos.Line != 6 || pos.Column != 3 {
		t.Errorf("data.k at %v, want 6:3 of its own document", pos)
	}
	if e := f.Errors[0]; e.File != "chart/templates/app.yaml" || e.Line != 3 {
		t.Errorf("error %v, want line 3 of the third document", e)
	}
	if f.Empty {
		t.Error("a stream with documents is not empty")
	}
	if empty := ParseDocuments("x", [][]byte{[]byte("# nothing")}); !empty.Empty || len(empty.Documents) != 0 {
		t.Errorf("comments only: %+v", empty)
	}
}

// Stream hands over the documents Parse keeps, in order, each with how
// far the parser has read: increasing, at the end of the document's
// chunk (of a List's item, for an item), the whole stream at the last.
func TestStreamEqualsParse(t *testing.T) {
	src := "\xef\xbb\xbfapiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n# only a comment\n---\napiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Service, metadata: {name: b}}\n- {apiVersion: v1, kind: Service, metadata: {name: c}}\n...\napiVersion: v1\nkind: Pod\nmetadata: {name: d}\n"
	want := Parse("s.yaml", []byte(src))
	var got []*Document
	var reads []int
	f := Stream("s.yaml", []byte(src), func(d *Document, read int) {
		got = append(got, d)
		reads = append(reads, read)
	})
	if len(f.Documents) != 0 || len(got) != len(want.Documents) || len(got) != 4 {
		t.Fatalf("streamed %d documents (kept %d), parsed %d", len(got), len(f.Documents), len(want.Documents))
	}
	for i := range got {
		if string(got[i].JSON) != string(want.Documents[i].JSON) || got[i].Line != want.Documents[i].Line {
			t.Errorf("document %d: %s at line %d, want %s at line %d", i, got[i].JSON, got[i].Line, want.Documents[i].JSON, want.Documents[i].Line)
		}
	}
	if reads[0] != strings.Index(src, "---\n# only") || reads[1] != strings.Index(src, "- {apiVersion: v1, kind: Service, metadata: {name: c}}") ||
		reads[2] != strings.Index(src, "...") || reads[3] != len(src) {
		t.Errorf("read offsets %v (stream of %d bytes)", reads, len(src))
	}
}

// An object's type is read from the keys "apiVersion" and "kind" exactly,
// as kubectl reads it; a key that differs from one of them only in case,
// which the API server reads as the type (case-insensitively), is an error
// at that key and the document is not scanned. The rest of the file is.
func TestTypeKeyInAnotherCase(t *testing.T) {
	for _, c := range []struct {
		name, in   string
		line, col  int
		wantSkip   int
		wantObject string // the kind of the one document read, if any
	}{
		{"Kind beside kind", "apiVersion: apps/v1\nkind: Deployment\nKind: StatefulSet\nmetadata: {name: db}\n", 3, 1, 0, ""},
		{"KIND alone", "apiVersion: apps/v1\nKIND: StatefulSet\n", 2, 1, 0, ""},
		{"apiversion beside apiVersion", "apiVersion: apps/v1\napiversion: v1\nkind: Deployment\n", 2, 1, 0, ""},
		{"Kelvin sign", "apiVersion: v1\n\u212aind: Pod\n", 2, 1, 0, ""},
		{"JSON", `{"apiVersion": "v1", "kind": "Pod", "Kind": "Service"}`, 1, 37, 0, ""},
		{"List item", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  Kind: Pod\n- apiVersion: v1\n  kind: Service\n", 5, 3, 0, "Service"},
		{"JSON List", `{"apiVersion": "v1", "Kind": "List", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Pod"}]}`, 1, 22, 0, ""},
		// Not an object for any reader: no apiVersion in any case.
		{"values file", "Kind: web\nreplicas: 2\n", 0, 0, 1, ""},
		// kubectl's GetKind reads only a string.
		{"kind not a string", "apiVersion: v1\nkind: 1\n", 0, 0, 1, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := Parse("a.yaml", []byte(c.in))
			if c.line == 0 {
				if len(f.Errors) != 0 {
					t.Fatalf("errors %v", f.Errors)
				}
			} else if len(f.Errors) != 1 || f.Errors[0].Line != c.line || f.Errors[0].Column != c.col || !strings.Contains(f.Errors[0].Message, "only in case") {
				t.Fatalf("errors %+v, want one at %d:%d", f.Errors, c.line, c.col)
			}
			var kinds []string
			for _, d := range f.Documents {
				kinds = append(kinds, d.Kind)
			}
			if want := strings.Fields(c.wantObject); !slices.Equal(kinds, want) || f.Skipped != c.wantSkip {
				t.Fatalf("documents %v skipped %d, want %v and %d", kinds, f.Skipped, want, c.wantSkip)
			}
		})
	}
}

// The object of an admission request is typed by its exact keys too: the
// API server has decoded it already, into a type (whose JSON has no other
// case) or, for a custom resource, into an Unstructured (exact keys).
func TestParseJSONReadsTypeKeysExactly(t *testing.T) {
	f := ParseJSON("req", []byte(`{"apiVersion": "v1", "kind": "Pod", "Kind": "Service"}`))
	if len(f.Documents) != 1 || f.Documents[0].Kind != "Pod" {
		t.Fatalf("documents %+v", f.Documents)
	}
}
