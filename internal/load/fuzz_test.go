package load

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: any byte stream yields documents whose JSON is valid and whose
// positions resolve, or errors that name the file; never a panic.
//
//	go test ./internal/load -run '^$' -fuzz FuzzParse -fuzztime 5m
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		deployment,
		"apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: a}}\n",
		"a: &x [1, *x]\n",
		"apiVersion: v1\nkind: X\nm: {<<: [{a: 1}, {b: 2}], c: 3}\n",
		"--- !!binary aGVsbG8=\n...\n---\n",
		"apiVersion: v1\nkind: X\n? [complex]\n: key\n",
		"{\"apiVersion\": \"v1\", \"kind\": \"Pod\"}",
		"apiVersion: v1\nkind: X\nv: 0o777\nw: 1_000\nx: -.inf\n",
	} {
		f.Add([]byte(s))
	}
	examples, _ := filepath.Glob(filepath.Join("..", "..", "examples", "*.yaml"))
	for _, p := range examples {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file := Parse("fuzz.yaml", data)
		for _, e := range file.Errors {
			if e.File != "fuzz.yaml" || e.Message == "" || e.Line < 0 {
				t.Fatalf("bad error %+v", e)
			}
		}
		for _, d := range file.Documents {
			if !json.Valid(d.JSON) {
				t.Fatalf("invalid JSON %q", d.JSON)
			}
			loc := d.Locator()
			for _, p := range []string{"", "metadata.name", "spec.template.spec.containers[0].livenessProbe", "items[3]", "a[b].c[0][1]", "[", "]", "spec.template.spec.containers[1].livenessProbe", "items[1]", "items[-1]", "items[0]"} {
				pos, exact := d.Locate(p)
				if lp, lexact := loc.Locate(p); lp != pos || lexact != exact {
					t.Fatalf("Locator.Locate(%q) = %v %v, Locate %v %v", p, lp, lexact, pos, exact)
				}
			}
			d.PositionAt(int64(len(d.JSON) / 2))
		}
	})
}

// FuzzListSplit: a document read item by item (a List) or value by value
// (JSON objects one after another) gives exactly the documents, lines and
// columns of parsing each document whole, whenever that parse succeeds.
//
//	go test ./internal/load -run '^$' -fuzz FuzzListSplit -fuzztime 5m
func FuzzListSplit(f *testing.F) {
	for _, s := range []string{
		"apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: a}\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: b\nmetadata:\n  resourceVersion: \"\"\n",
		"apiVersion: v1\nitems:\n  - apiVersion: v1\n    kind: ConfigMap\n    data: {q: \"x\n  - y\"}\n  - apiVersion: v1\n    kind: ConfigMap\nkind: List\n",
		"apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  data:\n    script: |\n      - no\n    s: 'a\nkind: b'\n- apiVersion: v1\n  kind: ConfigMap\n",
		"{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [{\"apiVersion\": \"v1\", \"kind\": \"Pod\"}, {\"apiVersion\": \"v1\", \"kind\": \"Pod\"}]}\n{\"a\": 1}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want := parseUnsplit("f.yaml", data)
		if len(want.Errors) > 0 {
			return
		}
		got := Parse("f.yaml", data)
		if len(got.Errors) > 0 {
			t.Fatalf("errors %v where the whole parse has none", got.Errors)
		}
		sameDocuments(t, string(data), got, want)
	})
}
