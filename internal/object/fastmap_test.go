package object

import (
	"reflect"
	"testing"

	jsoniter "github.com/json-iterator/go"

	"backfire.dev/backfire/internal/benchcorpus"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/testutil"
)

// reference is the exact decode without the direct map decoder: what it
// replaced.
var reference = jsoniter.Config{
	EscapeHTML:             true,
	SortMapKeys:            true,
	ValidateJsonRawMessage: true,
	CaseSensitive:          true,
	DisallowUnknownFields:  true,
}.Froze()

// sameAsReference checks that the exact decode takes a document exactly
// when json-iterator's own map decoder would, and gives the same value.
func sameAsReference(t *testing.T, name string, data []byte, mk func() any) {
	t.Helper()
	got, want := mk(), mk()
	gerr, gpanic := unmarshal(exact, data, got)
	werr, wpanic := unmarshal(reference, data, want)
	if gpanic != wpanic {
		t.Fatalf("%s: the direct decode panics %v, json-iterator's %v:\n%s", name, gpanic, wpanic, data)
	}
	if gpanic {
		return // both: a type's UnmarshalJSON given the nothing a cut document ends with
	}
	if (gerr == nil) != (werr == nil) {
		t.Fatalf("%s: the direct map decode says %v, json-iterator's %v:\n%s", name, gerr, werr, data)
	}
	if gerr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: the direct map decode gives\n%#v\njson-iterator's\n%#v", name, got, want)
	}
}

func TestExactMapDecodeIsJSONIterator(t *testing.T) {
	pod := decoders["/Pod"]
	for name, doc := range map[string]string{
		"null":       `{"metadata":{"labels":null}}`,
		"empty":      `{"metadata":{"labels":{}}}`,
		"pairs":      `{"metadata":{"labels":{"a":"1","b":"2"},"annotations":{"x":""}}}`,
		"merged":     `{"metadata":{"labels":{"a":"1","c":"1"},"labels":{"b":"2","a":"3"}}}`,
		"then null":  `{"metadata":{"labels":{"a":"1"},"labels":null}}`,
		"null value": `{"metadata":{"labels":{"a":null}}}`,
		"number":     `{"metadata":{"labels":{"a":1}}}`,
		"list":       `{"metadata":{"labels":["a"]}}`,
		"string":     `{"metadata":{"labels":"a"}}`,
		"no colon":   `{"metadata":{"labels":{"a" "1"}}}`,
		"unclosed":   `{"metadata":{"labels":{"a":"1"`,
		"selector":   `{"spec":{"nodeSelector":{"k":"v"},"containers":[{"name":"a"}]}}`,
		"resources":  `{"spec":{"containers":[{"name":"a","resources":{"requests":{"cpu":"50m","memory":"64Mi"},"limits":{"memory":128974848,"cpu":null}}}]}}`,
		"res merged": `{"spec":{"overhead":{"cpu":"1","memory":"1Gi"},"overhead":{"cpu":"2"}}}`,
		"res null":   `{"spec":{"overhead":{"cpu":"1"},"overhead":null}}`,
		"res bad":    `{"spec":{"overhead":{"cpu":"1x"}}}`,
		"res list":   `{"spec":{"overhead":{"cpu":[1]}}}`,
		"res object": `{"spec":{"overhead":{"cpu":{"a":1}}}}`,
		"res bool":   `{"spec":{"overhead":{"cpu":true}}}`,
		"res empty":  `{"spec":{"overhead":{}}}`,
	} {
		sameAsReference(t, name, []byte(doc), pod)
	}
	cm := decoders["/ConfigMap"]
	sameAsReference(t, "configmap", []byte(`{"data":{"a":"b","c":"d"},"binaryData":{"x":"aGVsbG8="}}`), cm)

	// The shared benchmark's corpus and the repository's manifests.
	dir := t.TempDir()
	if _, err := benchcorpus.Generate(dir, 20); err != nil {
		t.Fatal(err)
	}
	n := 0
	testutil.EachYAML(t, []string{dir, "../../testdata", "../../examples", "testdata"}, func(p string, data []byte) {
		for _, d := range load.Parse(p, data).Documents {
			if mk, ok := decoders[group(d.APIVersion)+"/"+d.Kind]; ok {
				sameAsReference(t, p, d.JSON, mk)
				n++
			}
		}
	})
	if n < 2000 {
		t.Errorf("compared only %d documents", n)
	}
}

// FuzzExactMapDecode: whatever the document, the direct map decode takes
// what json-iterator's own took and gives the same value.
//
//	go test ./internal/object -run '^$' -fuzz FuzzExactMapDecode -fuzztime 1m
func FuzzExactMapDecode(f *testing.F) {
	f.Add([]byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, labels: {a: b}, annotations: {x: null}}\nspec:\n  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n    spec:\n      nodeSelector: {k: v}\n      containers:\n      - name: app\n"))
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, labels: {}}\ndata: {a: b, c: 1}\n"))
	f.Add([]byte("apiVersion: v1\nkind: Service\nmetadata: {name: s, labels: null}\nspec: {selector: {a: b}}\n"))
	f.Add([]byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  overhead: {cpu: 1}\n  containers:\n  - name: a\n    resources: {requests: {cpu: 50m, memory: 64Mi}, limits: {memory: 1e3, cpu: null}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, d := range load.Parse("f.yaml", data).Documents {
			if mk, ok := decoders[group(d.APIVersion)+"/"+d.Kind]; ok {
				sameAsReference(t, "f.yaml", d.JSON, mk)
			}
		}
	})
}

// unmarshal decodes data with cfg, reporting a panic rather than making it.
func unmarshal(cfg jsoniter.API, data []byte, v any) (err error, panicked bool) {
	defer func() {
		if recover() != nil {
			panicked = true
		}
	}()
	return cfg.Unmarshal(data, v), false
}
