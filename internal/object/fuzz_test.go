package object

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kserializer "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/client-go/kubernetes/scheme"

	"backfire.dev/backfire/internal/load"
)

// FuzzDecodeCaseSensitive: an object of a built-in kind decodes to
// exactly what the API server's JSON serializer decodes it to (k8s.io/
// apimachinery pkg/runtime/serializer/json, strict, as the API server
// runs it for fieldValidation=Strict): the same typed value, an error
// where it fails, and every field reported dropped among the unknown
// fields it lists. Its seeds (testdata/fuzz/FuzzDecodeCaseSensitive)
// write field names that differ only in case, and null, beside the real
// ones.
//
//	go test ./internal/object -run '^$' -fuzz FuzzDecodeCaseSensitive -fuzztime 5m
func FuzzDecodeCaseSensitive(f *testing.F) {
	f.Add([]byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        livenessProbe: {httpGet: {port: 80}, HttpGet: null}\n"))
	ser := kserializer.NewSerializerWithOptions(kserializer.DefaultMetaFactory, scheme.Scheme, scheme.Scheme, kserializer.SerializerOptions{Strict: true})
	f.Fuzz(func(t *testing.T, data []byte) {
		file := load.Parse("f.yaml", data)
		for _, d := range file.Documents {
			if !Modelled(d.APIVersion, d.Kind) {
				continue
			}
			gvk := schema.FromAPIVersionAndKind(d.APIVersion, d.Kind)
			if !scheme.Scheme.Recognizes(gvk) {
				continue
			}
			want, _, werr := ser.Decode(d.JSON, nil, nil)
			strict := werr != nil && runtime.IsStrictDecodingError(werr)
			o, err := Decode(d)
			if werr != nil && !strict {
				if err == nil {
					t.Fatalf("decoded what the API server cannot: %v\n%s", werr, d.JSON)
				}
				continue
			}
			if err != nil {
				if strings.Contains(err.Message, " is invalid: ") {
					continue // a probe the API server's validation refuses
				}
				t.Fatalf("refused what the API server decodes: %v\n%s", err, d.JSON)
			}
			if reflect.TypeOf(o.Typed) != reflect.TypeOf(want) {
				continue // an older version read with the current type
			}
			if !reflect.DeepEqual(o.Typed, want) {
				t.Fatalf("decoded\n%#v\nthe API server decodes\n%#v\nfrom %s", o.Typed, want, d.JSON)
			}
			for _, e := range o.Dropped {
				_, rest, _ := strings.Cut(e.Message, "unknown field ")
				path, _, _ := strings.Cut(rest, ", dropped")
				p, perr := strconv.Unquote(path)
				if perr != nil || !strict || !strings.Contains(werr.Error(), "unknown field "+strconv.Quote(p)) {
					t.Fatalf("reported %q, which the API server does not drop (%v)", e.Message, werr)
				}
			}
		}
	})
}
