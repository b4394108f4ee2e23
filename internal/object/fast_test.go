package object

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	kjson "sigs.k8s.io/json"

	"backfire.dev/backfire/internal/load"
)

// sameAsStrict checks, for one document of a modelled kind, that the exact
// decode (decodeExact) gives what the strict one does whenever it
// decodes, and that it decodes nothing the strict one would find an
// unknown field or an error in. It reports whether the exact decode
// took the document.
func sameAsStrict(t *testing.T, d *load.Document) bool {
	t.Helper()
	mk, ok := decoders[group(d.APIVersion)+"/"+d.Kind]
	if !ok {
		return false
	}
	fast := mk()
	if !decodeExact(d.JSON, fast) {
		return false
	}
	strict := mk()
	unknown, err := kjson.UnmarshalStrict(d.JSON, strict, kjson.DisallowUnknownFields)
	if err != nil || len(unknown) > 0 {
		t.Fatalf("%s:%d: the exact decode took what the strict one refuses (%v) or drops fields of (%v):\n%s", d.File, d.Line, err, unknown, d.JSON)
	}
	if !reflect.DeepEqual(fast, strict) {
		t.Fatalf("%s:%d: the exact decode gives\n%#v\nthe strict one\n%#v", d.File, d.Line, fast, strict)
	}
	return true
}

// Every document of the repository's manifests decodes by the exact
// decode to what the strict decode gives, and most take it (else the
// fast path is dead code).
func TestExactDecodeIsTheStrictOne(t *testing.T) {
	var took, modelled int
	for _, root := range []string{"../../testdata", "../../examples", "testdata"} {
		err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, d := range load.Parse(p, data).Documents {
				if Modelled(d.APIVersion, d.Kind) {
					modelled++
				}
				if sameAsStrict(t, d) {
					took++
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d of %d documents of modelled kinds decoded exactly", took, modelled)
	if modelled == 0 || took*2 < modelled {
		t.Errorf("only %d of %d documents of modelled kinds took the exact decode", took, modelled)
	}
}

// What the exact decode must leave to the strict one: a field written in
// another case (json-iterator would bind it), an unknown field, a value of
// the wrong type, a \u escape and invalid UTF-8.
func TestExactDecodeLeavesTheRest(t *testing.T) {
	for name, doc := range map[string]string{
		"case":    `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"a","livenessProbe":{"Exec":{"command":["x"]}}}]}}`,
		"unknown": `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containerz":[]}}`,
		"type":    `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"a","livenessProbe":{"timeoutSeconds":"5"}}]}}`,
		"float":   `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"a","livenessProbe":{"timeoutSeconds":5.5}}]}}`,
		"escape":  `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p\ud800"}}`,
		"utf8":    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\xff\"}}",
	} {
		mk := decoders["/Pod"]
		if decodeExact([]byte(doc), mk()) {
			t.Errorf("%s: decoded exactly: %s", name, doc)
		}
	}
	ok := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"Exec":"x"}},"spec":{"containers":[{"name":"a"}]}}`
	if !decodeExact([]byte(ok), decoders["/Pod"]()) {
		t.Errorf("a plain Pod (a label key in any case) was not decoded exactly")
	}
}

// FuzzDecodeExact: whatever the document, the exact decode gives what the
// strict one does, or leaves it to it.
//
//	go test ./internal/object -run '^$' -fuzz FuzzDecodeExact -fuzztime 5m
func FuzzDecodeExact(f *testing.F) {
	f.Add([]byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, labels: {a: b}}\nspec:\n  replicas: 3\n  template:\n    spec:\n      containers:\n      - name: app\n        resources: {limits: {cpu: 500m}}\n        ports: [{containerPort: 80, name: http}]\n        livenessProbe: {httpGet: {port: http}, timeoutSeconds: 5}\n"))
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\nbinaryData: {x: aGVsbG8=}\n"))
	f.Add([]byte("apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: r}\nspec:\n  strategy:\n    canary:\n      steps: [{setWeight: 20}, {pause: {duration: 1h}}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, d := range load.Parse("f.yaml", data).Documents {
			if strings.Contains(d.Kind, "\x00") {
				continue
			}
			sameAsStrict(t, d)
		}
	})
}
