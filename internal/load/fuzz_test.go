package load

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
)

// FuzzParse: any byte stream yields documents whose JSON is valid, whose
// positions resolve and whose type is the one kubectl and the API server
// read, or errors that name the file; never a panic.
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
		"apiVersion: apps/v1\nkind: Deployment\nKind: StatefulSet\n",
		"apiVersion: apps/v1\napiversion: v1\nkind: Deployment\n",
		"apiVersion: v1\n\u212aind: Pod\n",
		"{\"apiVersion\": \"v1\", \"KIND\": \"Pod\"}",
		"apiVersion: v1\nkind: 1\n",
		"apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, Kind: Pod}\n",
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
			typeAsKubernetesReadsIt(t, d)
		}
	})
}

// typeAsKubernetesReadsIt fails when a document's type is not the one
// kubectl (an Unstructured's GetAPIVersion and GetKind) and the API server
// (SimpleMetaFactory.Interpret) read from its JSON.
func typeAsKubernetesReadsIt(t *testing.T, d *Document) {
	t.Helper()
	var u unstructured.Unstructured
	if _, _, err := unstructured.UnstructuredJSONScheme.Decode(d.JSON, nil, &u); err != nil {
		t.Fatalf("%s %s: kubectl cannot decode it: %v", d.APIVersion, d.Kind, err)
	}
	if u.GetAPIVersion() != d.APIVersion || u.GetKind() != d.Kind {
		t.Fatalf("read as %s %s, kubectl reads %s %s", d.APIVersion, d.Kind, u.GetAPIVersion(), u.GetKind())
	}
	gvk, err := kjson.DefaultMetaFactory.Interpret(d.JSON)
	if err != nil {
		return // an apiVersion the API server cannot parse: it refuses the object
	}
	if gvk.Kind != d.Kind || gvk.GroupVersion() != schema.FromAPIVersionAndKind(d.APIVersion, d.Kind).GroupVersion() {
		t.Fatalf("read as %s %s, the API server reads %v", d.APIVersion, d.Kind, gvk)
	}
}

// FuzzListSplit: a document read item by item (a List) or value by value
// (JSON objects one after another) gives exactly the documents, lines and
// columns of parsing each document whole, whenever that parse succeeds;
// and a List with a key given twice (yaml.v3 decoding it into Go values
// says "already defined") is never read. More seeds are in
// testdata/fuzz/FuzzListSplit.
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
		got := Parse("f.yaml", data)
		if len(got.Errors) == 0 && listWithDuplicateKey(data) {
			t.Fatalf("a List with a key given twice was read: %d documents", len(got.Documents))
		}
		want := parseUnsplit("f.yaml", data)
		if len(want.Errors) > 0 {
			return
		}
		if len(got.Errors) > 0 {
			t.Fatalf("errors %v where the whole parse has none", got.Errors)
		}
		sameDocuments(t, string(data), got, want)
	})
}

// listWithDuplicateKey reports whether a document of data is a List (an
// apiVersion, a kind ending in "List") with a key given twice in a
// mapping: of the List around its items, or of an item that is an object
// (an item without apiVersion and kind is skipped, as a document without
// them is). Only plain scalar keys are compared, merge keys left out, and
// aliases not followed: what the loader must refuse at least.
func listWithDuplicateKey(data []byte) bool {
	for _, ch := range splitDocuments(data) {
		for _, piece := range splitJSONStream(ch) {
			root, err := decodeOne(piece.data)
			if err != nil || root.Kind != yaml.DocumentNode || len(root.Content) == 0 {
				continue
			}
			top := root.Content[0]
			if top.Kind != yaml.MappingNode || scalarField(top, "apiVersion") == "" || !strings.HasSuffix(scalarField(top, "kind"), "List") {
				continue
			}
			if repeatsKey(top, false) {
				return true
			}
			for i := 0; i+1 < len(top.Content); i += 2 {
				k, v := top.Content[i], top.Content[i+1]
				if k.Kind == yaml.ScalarNode && k.Value == "items" && v.Kind == yaml.SequenceNode {
					for _, item := range v.Content {
						if scalarField(item, "apiVersion") != "" && scalarField(item, "kind") != "" && repeatsKey(item, true) {
							return true
						}
					}
				} else if repeatsKey(v, true) {
					return true
				}
			}
		}
	}
	return false
}

// repeatsKey reports whether a mapping of n (n itself only when deep is
// false) has a plain scalar key twice.
func repeatsKey(n *yaml.Node, deep bool) bool {
	if n.Kind == yaml.MappingNode {
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind == yaml.ScalarNode && k.Tag != "!!merge" && k.Value != "<<" {
				if seen[k.Value] {
					return true
				}
				seen[k.Value] = true
			}
		}
	}
	if !deep {
		return false
	}
	for _, c := range n.Content {
		if repeatsKey(c, true) {
			return true
		}
	}
	return false
}

// scalarField is a mapping's value at key, when it is a scalar.
func scalarField(m *yaml.Node, key string) string {
	v := field(m, key)
	if v == nil {
		return ""
	}
	v = deref(v)
	if v.Kind != yaml.ScalarNode {
		return ""
	}
	return v.Value
}
