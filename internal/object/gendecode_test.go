package object

import (
	"io"
	"reflect"
	"strings"
	"testing"

	jsoniter "github.com/json-iterator/go"
	"k8s.io/apimachinery/pkg/util/intstr"

	"backfire.dev/backfire/internal/benchcorpus"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/testutil"
)

// generatedCases are documents written to reach the corners of
// json-iterator's decoders: nulls, duplicate keys, keys in another case,
// values of the wrong type, broken syntax.
var generatedCases = map[string]string{
	"empty":           `{}`,
	"null":            `null`,
	"type meta":       `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"a","namespace":"b"}}`,
	"unknown":         `{"spec":{"replicas":1,"replica":2}}`,
	"other case":      `{"spec":{"Replicas":1}}`,
	"other case meta": `{"Metadata":{"name":"a"}}`,
	"replicas twice":  `{"spec":{"replicas":1,"replicas":3}}`,
	"replicas null":   `{"spec":{"replicas":1,"replicas":null}}`,
	"replicas big":    `{"spec":{"replicas":3000000000}}`,
	"replicas float":  `{"spec":{"replicas":1.5}}`,
	"replicas string": `{"spec":{"replicas":"1"}}`,
	"replicas neg":    `{"spec":{"replicas":-1}}`,
	"replicas exp":    `{"spec":{"replicas":1e2}}`,
	"int64":           `{"spec":{"template":{"spec":{"activeDeadlineSeconds":9223372036854775807}}}}`,
	"int64 over":      `{"spec":{"template":{"spec":{"activeDeadlineSeconds":9223372036854775808}}}}`,
	"bool":            `{"spec":{"paused":true,"paused":null}}`,
	"bool string":     `{"spec":{"paused":"true"}}`,
	"string null":     `{"metadata":{"name":"a","name":null}}`,
	"string number":   `{"metadata":{"name":1}}`,
	"struct null":     `{"spec":{"strategy":{"type":"Recreate"},"strategy":null}}`,
	"struct twice":    `{"spec":{"strategy":{"type":"RollingUpdate"},"strategy":{"rollingUpdate":{"maxSurge":1}}}}`,
	"struct list":     `{"spec":{"strategy":[]}}`,
	"struct string":   `{"spec":{"strategy":"x"}}`,
	"pointer twice":   `{"spec":{"strategy":{"rollingUpdate":{"maxSurge":1}},"strategy":{"rollingUpdate":{"maxUnavailable":"25%"}}}}`,
	"pointer null":    `{"spec":{"strategy":{"rollingUpdate":{"maxSurge":1}},"strategy":{"rollingUpdate":null}}}`,
	"intstr":          `{"spec":{"strategy":{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":0}}}}`,
	"intstr bad":      `{"spec":{"strategy":{"rollingUpdate":{"maxSurge":true}}}}`,
	"intstr spaced":   `{"spec":{"template":{"spec":{"containers":[{"name":"a","livenessProbe":{"httpGet":{"port":  8080 }}}]}}}}`,
	"intstr null":     `{"spec":{"template":{"spec":{"containers":[{"name":"a","livenessProbe":{"httpGet":{"port":null}}}]}}}}`,
	"time":            `{"metadata":{"creationTimestamp":"2024-01-02T03:04:05Z"}}`,
	"time null":       `{"metadata":{"creationTimestamp":null}}`,
	"time bad":        `{"metadata":{"creationTimestamp":"yesterday"}}`,
	"quantity":        `{"spec":{"template":{"spec":{"containers":[{"name":"a","resources":{"limits":{"cpu":"1","memory":"1Gi"}}}]}}}}`,
	"slice null":      `{"spec":{"template":{"spec":{"containers":null}}}}`,
	"slice empty":     `{"spec":{"template":{"spec":{"containers":[]}}}}`,
	"slice twice":     `{"spec":{"template":{"spec":{"containers":[{"name":"a","image":"x"},{"name":"b","image":"y"},{"name":"c"}],"containers":[{"name":"d"}],"containers":[{"name":"e"},{"name":"f"}]}}}}`,
	"slice shrink":    `{"spec":{"template":{"spec":{"containers":[{"name":"a","ports":[{"containerPort":1},{"containerPort":2}]}],"containers":[{"ports":[{"name":"p"}]}]}}}}`,
	"slice then []":   `{"spec":{"template":{"spec":{"containers":[{"name":"a"}],"containers":[],"containers":[{}]}}}}`,
	"slice object":    `{"spec":{"template":{"spec":{"containers":{"name":"a"}}}}}`,
	"slice no comma":  `{"spec":{"template":{"spec":{"containers":[{"name":"a"} {"name":"b"}]}}}}`,
	"slice bracket":   `{"spec":{"template":{"spec":{"containers":[{"name":"a"} [{"name":"b"}]]}}}}`,
	"slice null elem": `{"spec":{"template":{"spec":{"containers":[{"name":"a"} null],"volumes":[]}}}}`,
	"slice comma":     `{"spec":{"template":{"spec":{"containers":,{"name":"a"}]}}}}`,
	"slice of null":   `{"spec":{"template":{"spec":{"containers":[null,{"name":"a"}]}}}}`,
	"strings":         `{"spec":{"template":{"spec":{"containers":[{"name":"a","args":["x",null,"y"],"command":[]}]}}}}`,
	"strings number":  `{"spec":{"template":{"spec":{"containers":[{"name":"a","args":[1]}]}}}}`,
	"pointers":        `{"spec":{"template":{"spec":{"securityContext":{"runAsUser":0,"runAsNonRoot":true,"runAsUser":null},"securityContext":{"fsGroup":1}}}}}`,
	"embedded":        `{"spec":{"template":{"spec":{"containers":[{"name":"a","readinessProbe":{"exec":{"command":["x"]},"periodSeconds":3,"tcpSocket":{"port":"http"}}}]}}}}`,
	"embedded case":   `{"spec":{"template":{"spec":{"containers":[{"name":"a","readinessProbe":{"exec":{},"Exec":null}}]}}}}`,
	"inline key":      `{"spec":{"template":{"spec":{"containers":[{"name":"a","readinessProbe":{"ProbeHandler":{}}}]}}}}`,
	"volume":          `{"spec":{"template":{"spec":{"volumes":[{"name":"v","configMap":{"name":"c","items":[{"key":"k","path":"p","mode":420}]}},{"name":"w","emptyDir":{"sizeLimit":"1Gi"}}]}}}}`,
	"env":             `{"spec":{"template":{"spec":{"containers":[{"name":"a","env":[{"name":"A","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}},{"name":"B","valueFrom":{"secretKeyRef":{"name":"s","key":"k","optional":true}}}]}]}}}}`,
	"no field struct": `{"spec":{"template":{"spec":{"volumes":[{"name":"v","emptyDir":{}}]}}}}`,
	"escaped key":     `{"metadata":{"na\u006de":"a"}}`,
	"escaped quote":   `{"metadata":{"na\"me":"a"}}`,
	"escaped value":   `{"metadata":{"name":"a\nb\u00e9"}}`,
	"empty key":       `{"metadata":{"":{"name":"a"}}}`,
	"null key":        `{"metadata":{null:"a"}}`,
	"number key":      `{"metadata":{1:"a"}}`,
	"no colon":        `{"metadata":{"name" "a"}}`,
	"trailing comma":  `{"metadata":{"name":"a",}}`,
	"unclosed":        `{"metadata":{"name":"a"`,
	"unclosed list":   `{"spec":{"template":{"spec":{"containers":[{"name":"a"}`,
	"unclosed key":    `{"metadata":{"name`,
	"cut value":       `{"spec":{"replicas":`,
	"cut null":        `{"spec":{"replicas":nu`,
	"cut list":        `{"spec":{"template":{"spec":{"containers":[`,
	"bytes left":      `{"metadata":{}}}`,
	"spaces":          " { \"metadata\" : { \"name\" : \"a\" } , \"spec\" : { \"replicas\" : 2 } } ",
	"service":         `{"spec":{"type":"ClusterIP","ports":[{"name":"http","port":80,"targetPort":"http","protocol":"TCP"}],"selector":{"a":"b"},"sessionAffinityConfig":{"clientIP":{"timeoutSeconds":10}}}}`,
	"service bad":     `{"spec":{"ports":[{"port":"80"}]}}`,
	"statefulset":     `{"spec":{"serviceName":"s","volumeClaimTemplates":[{"metadata":{"name":"d"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}],"updateStrategy":{"rollingUpdate":{"partition":0}}}}`,
	"selector":        `{"spec":{"selector":{"matchLabels":{"a":"b"},"matchExpressions":[{"key":"k","operator":"In","values":["v"]}]}}}`,
	"status":          `{"status":{"replicas":1,"conditions":[{"type":"Available","status":"True","lastUpdateTime":"2024-01-02T03:04:05Z"}]}}`,
	"managed fields":  `{"metadata":{"managedFields":[{"manager":"m","fieldsV1":{"f:spec":{}}}],"ownerReferences":[{"apiVersion":"v1","kind":"K","name":"n","uid":"u","controller":true}]}}`,
	"deep":            `{"metadata":{"managedFields":[{"fieldsV1":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}]}}`,
	"deep lists":      `{"spec":{"template":{"spec":{"containers":[{"name":"a","livenessProbe":{"httpGet":{"port":` + strings.Repeat("[", 9995) + strings.Repeat("]", 9995) + `}}}]}}}}`,
}

// TestGeneratedDecodeIsJSONIterator: the generated decoders take a
// document exactly when json-iterator's reflective exact decode takes it,
// and give the same value, for every modelled kind.
func TestGeneratedDecodeIsJSONIterator(t *testing.T) {
	for name, doc := range generatedCases {
		for kind, mk := range decoders {
			sameAsReference(t, name+" as "+kind, []byte(doc), mk)
		}
	}
	n := 0
	eachDocument(t, func(p string, d *load.Document) {
		if mk, ok := decoders[group(d.APIVersion)+"/"+d.Kind]; ok {
			sameAsReference(t, p, d.JSON, mk)
			n++
		}
	})
	if n < 2000 {
		t.Errorf("compared only %d documents", n)
	}
}

// eachDocument calls f on each document of the shared benchmark's corpus
// and of the repository's manifests.
func eachDocument(t *testing.T, f func(path string, d *load.Document)) {
	t.Helper()
	dir := t.TempDir()
	if _, err := benchcorpus.Generate(dir, 20); err != nil {
		t.Fatal(err)
	}
	testutil.EachYAML(t, []string{dir, "../../testdata", "../../examples", "testdata"}, func(p string, data []byte) {
		for _, d := range load.Parse(p, data).Documents {
			f(p, d)
		}
	})
}

// FuzzGeneratedDecode: whatever the bytes, the generated decoders take
// what json-iterator's reflective exact decode takes and give the same
// value, for every modelled kind.
//
//	go test ./internal/object -run '^$' -fuzz FuzzGeneratedDecode -fuzztime 1m
func FuzzGeneratedDecode(f *testing.F) {
	for _, doc := range generatedCases {
		if len(doc) < 4096 {
			f.Add([]byte(doc))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for kind, mk := range decoders {
			sameAsReference(t, kind, data, mk)
		}
	})
}

// FuzzReadObject: readObject reads what the iterator's ReadObjectCB reads:
// the same keys, the same result and error, and leaves the iterator
// where ReadObjectCB leaves it.
//
//	go test ./internal/object -run '^$' -fuzz FuzzReadObject -fuzztime 1m
func FuzzReadObject(f *testing.F) {
	for _, doc := range generatedCases {
		if len(doc) < 4096 {
			f.Add([]byte(doc), true)
		}
	}
	f.Add([]byte(` {"a" : 1 , "b\"":null,"":{}} x`), false)
	f.Add([]byte(`{"a\u0062":1, "c`), false)
	f.Fuzz(func(t *testing.T, data []byte, stop bool) {
		read := func(useCB bool) (keys []string, ok bool, rest string, err error) {
			iter := jsoniter.ParseBytes(reference, data)
			cb := func(iter *jsoniter.Iterator, key string) bool {
				keys = append(keys, key)
				iter.Skip()
				return !stop || len(keys) < 2
			}
			if useCB {
				ok = iter.ReadObjectCB(cb)
			} else {
				ok = readObject(iter, func(iter *jsoniter.Iterator, key []byte) bool { return cb(iter, string(key)) })
			}
			err = iter.Error
			if err == nil {
				rest = string(iter.SkipAndReturnBytes())
			}
			return keys, ok, rest, iter.Error
		}
		k1, ok1, r1, e1 := read(true)
		k2, ok2, r2, e2 := read(false)
		if !reflect.DeepEqual(k1, k2) || ok1 != ok2 || (e1 == nil) != (e2 == nil) || (e1 == io.EOF) != (e2 == io.EOF) || r1 != r2 {
			t.Fatalf("ReadObjectCB read %q %v %v %q, readObject %q %v %v %q from %q", k1, ok1, e1, r1, k2, ok2, e2, r2, data)
		}
	})
}

// FuzzIntOrString: whatever the value's bytes, decodeIntOrString's own
// reading gives what IntOrString's UnmarshalJSON gives, over any value
// already there.
//
//	go test ./internal/object -run '^$' -fuzz FuzzIntOrString -fuzztime 1m
func FuzzIntOrString(f *testing.F) {
	for _, v := range []string{`80`, `0`, `00`, `-1`, `999999999`, `2147483648`, `1.5`, `1e2`, `"http"`, `""`, `"a\"b"`, `"é"`, "\"\xff\"", "\"a\tb\"", `"`, `null`, `true`, `"25%"`} {
		f.Add([]byte(v), int32(7), "s")
	}
	f.Fuzz(func(t *testing.T, value []byte, i int32, s string) {
		if len(value) == 0 {
			return // UnmarshalJSON panics on no bytes; Skip gives none only with an error
		}
		got := intstr.IntOrString{Type: intstr.Int, IntVal: i, StrVal: s}
		want := got
		if !plainIntOrString(&got, value) {
			return
		}
		if err := want.UnmarshalJSON(value); err != nil {
			t.Fatalf("%q: read as %#v, UnmarshalJSON fails: %v", value, got, err)
		}
		if got != want {
			t.Fatalf("%q: read as %#v, UnmarshalJSON gives %#v", value, got, want)
		}
	})
}

// TestIntOrStringFastPath: the common values take the direct reading.
func TestIntOrStringFastPath(t *testing.T) {
	for _, v := range []string{`80`, `0`, `999999999`, `"http"`, `"25%"`, `""`, `"é"`} {
		var p intstr.IntOrString
		if !plainIntOrString(&p, []byte(v)) {
			t.Errorf("%s is not read directly", v)
		}
	}
	for _, v := range []string{`00`, `-1`, `1000000000`, `1.5`, `"a\"b"`, "\"\xff\"", `null`, `"`} {
		var p intstr.IntOrString
		if plainIntOrString(&p, []byte(v)) {
			t.Errorf("%s is read directly", v)
		}
	}
}
