package fix

import (
	"encoding/json"
	"reflect"
	"testing"
)

var patchCases = []string{
	`{"spec":{"template":{"spec":{"containers":[{"name":"app","livenessProbe":{"timeoutSeconds":5,"failureThreshold":3}}]}}}}`,
	`{"a":null,"b":true,"c":false,"d":[],"e":{},"f":[1,-2,0.5,1e3,-0.0,1E-2,12345678901234567890],"g":"x y"}`,
	` { "a" : [ 1 , { "b" : "c" } ] } `,
	`{"a":1,"a":2}`,
	`{"s":"caf\u00e9"}`, `{"s":"a\nb"}`, `{"s":"\ud800"}`, "{\"s\":\"\xff\"}",
	`{"n":1e400}`, `{"n":01}`, `{"n":1.}`, `{"n":.5}`, `{"n":-}`, `{"n":+1}`, `{"n":0x10}`,
	`{"a":1,}`, `{"a" 1}`, `{"a":[1,]}`, `{a:1}`, `{"a":1}x`, `{"a":tru}`, `{"a":nul}`,
	`null`, `[]`, `"x"`, ``, `{`, `{"a":{"b":[`,
	// Keys spelled like the common ones, and not quite.
	`{"name":"name","initialDelaySeconds":1,"initialDelaySecondsX":2,"cp":3,"cpu":"1"}`,
	`{"spe\"c":1}`, `{"spec\u0000":1}`, "{\"spec\x01\":1}", `{"spec`, `{"spec"`, `{"spec":`,
}

// TestDecodePatchIsEncodingJSON: the same map and the same error as
// json.Unmarshal, on every patch.
func TestDecodePatchIsEncodingJSON(t *testing.T) {
	for _, c := range patchCases {
		checkDecodePatch(t, []byte(c))
	}
}

func checkDecodePatch(t *testing.T, b []byte) {
	t.Helper()
	var want map[string]any
	werr := json.Unmarshal(b, &want)
	got, err := DecodePatch(b)
	if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
		t.Fatalf("%q: error %v, encoding/json's %v", b, err, werr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: %#v, encoding/json's %#v", b, got, want)
	}
}

func FuzzDecodePatch(f *testing.F) {
	for _, c := range patchCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkDecodePatch(t, b) })
}
