package result_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/result"
)

// oldEncode is how findings were encoded before FindingEncoder wrote them
// by hand, and what the JSON report still writes for a value: the
// reference the encoder must match byte for byte.
func oldEncode(f *finding.Finding) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("    ", "  ")
	if err := enc.Encode(f); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// differ encodes findings with one FindingEncoder, as a spill does, so
// that state kept between findings is tested too.
type differ struct {
	buf bytes.Buffer
	enc *result.FindingEncoder
	n   int
}

func newDiffer() *differ {
	d := &differ{}
	d.enc = result.NewFindingEncoder(&d.buf)
	return d
}

// check reports where the encoder and encoding/json disagree on f: bytes,
// or one failing where the other does not.
func (d *differ) check(t testing.TB, name string, f *finding.Finding) {
	t.Helper()
	d.n++
	want, wantErr := oldEncode(f)
	before := d.buf.Len()
	gotErr := d.enc.Encode(f)
	got := d.buf.Bytes()[before:]
	switch {
	case (wantErr == nil) != (gotErr == nil):
		t.Errorf("%s: error %v, encoding/json's %v", name, gotErr, wantErr)
	case gotErr != nil && len(got) > 0:
		t.Errorf("%s: failed (%v) and still wrote %q", name, gotErr, got)
	case !bytes.Equal(got, want):
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		from := max(0, i-60)
		t.Errorf("%s: differs at byte %d:\n got %q\nwant %q", name, i, got[from:min(len(got), i+60)], want[from:min(len(want), i+60)])
	}
}

type band struct {
	From  int32 `json:"replicasFrom"`
	Short bool  `json:"short"`
	Note  string
	skip  int
}

type mode string

// spaced has a MarshalJSON whose output encoding/json compacts.
type spaced struct{}

func (spaced) MarshalJSON() ([]byte, error) {
	return []byte(" { \"b\" : [ 1 , 2 ] , \"a\" : \"<&>\u2028\" , \"e\" : { } , \"l\" : [ ] } "), nil
}

type failing struct{}

func (failing) MarshalJSON() ([]byte, error) { return nil, errors.New("no") }

type invalid struct{}

func (invalid) MarshalJSON() ([]byte, error) { return []byte(`{"a":}`), nil }

type text struct{ s string }

func (t text) MarshalText() ([]byte, error) { return []byte(t.s), nil }

// nested returns n maps inside each other around leaf.
func nested(n int, leaf any) any {
	v := leaf
	for range n {
		v = map[string]any{"k": v}
	}
	return v
}

// deepPatch is a patch of n nested lists.
func deepPatch(n int) json.RawMessage {
	return json.RawMessage(strings.Repeat("[", n) + strings.Repeat("]", n))
}

// Every kind of value a finding may hold, where encoding/json's rules
// are easy to get subtly wrong: escapes, null against empty, numbers at
// the format cutoffs, RawMessage re-indented, and values only encoding/json
// knows how to write.
func TestFindingEncoderEdgeCases(t *testing.T) {
	var all strings.Builder
	for c := range 0x80 {
		all.WriteByte(byte(c))
	}
	texts := []string{
		"", all.String(), "<a href=\"x\">&amp;</a>", "\u2028\u2029 \u2027\u202a",
		"\xff", "a\xffb", "\xe2\x80", "\xe2\x80\xa8\xe2", "\xed\xa0\x80", "\xf4\x90\x80\x80",
		"é ü 日本 😀", "\x7f", "\\\"", "\ufffd", "tab\tnl\ncr\rbs\bff\f",
	}
	base := func() finding.Finding {
		return finding.Finding{
			Rule: "BF101", Slug: "probe-timeout", Severity: finding.Error,
			Object: object.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "web"},
			File:   "a.yaml", Line: 3, Column: 5, Message: "m", Mechanism: []string{"one", "two"},
		}
	}
	cases := map[string]finding.Finding{
		"zero":            {},
		"base":            base(),
		"all severities":  {Severity: 17},
		"empty mechanism": {Mechanism: []string{}},
		"negative line":   {Line: -1, Column: math.MinInt},
		"every field": {
			Rule: "r", Slug: "s", Severity: finding.Info, Object: object.Ref{Name: "n"},
			Container: "c", File: "f", Line: math.MaxInt, Column: 1, Path: "p", Message: "m",
			Mechanism: []string{""}, Evidence: map[string]any{"a": 1}, Assumptions: []string{"x", "y"},
			Fix: &finding.Fix{
				Description: "d", Type: finding.StrategicMergePatch, Patch: json.RawMessage(`{"a":1}`),
				Target: &object.Ref{APIVersion: "v", Kind: "k", Name: "t"}, Placeholders: []string{"p.q"},
				Own: json.RawMessage(`not written`),
			},
			Origin: "helm", ValuesSource: "values.yaml:1 a.b", Fingerprint: "abc",
			OutputLine: true, ValuesAt: &finding.Place{File: "v"}, Stream: "s",
		},
		"empty evidence, assumptions":   {Evidence: map[string]any{}, Assumptions: []string{}},
		"fix, empty":                    {Fix: &finding.Fix{}},
		"fix, empty patch":              {Fix: &finding.Fix{Patch: json.RawMessage{}, Placeholders: []string{}}},
		"fix, target without namespace": {Fix: &finding.Fix{Target: &object.Ref{Kind: "Rollout"}}},
	}
	for i, s := range texts {
		f := base()
		f.Rule, f.Slug, f.Container, f.File, f.Path, f.Message = s, s, s, s, s, s
		f.Object = object.Ref{APIVersion: s, Kind: s, Namespace: s, Name: s}
		f.Mechanism, f.Assumptions = []string{s, s}, []string{s}
		f.Origin, f.ValuesSource, f.Fingerprint = s, s, s
		f.Evidence = map[string]any{s: s, "list": []string{s}, "any": []any{s, map[string]any{s: s}}}
		f.Fix = &finding.Fix{Description: s, Type: s, Placeholders: []string{s}, Target: &object.Ref{Name: s}}
		cases[fmt.Sprintf("text %d", i)] = f
	}
	patches := []string{
		`{}`, `[]`, `null`, `1`, `"x"`, ` true `, "\n\t{ \"a\" : [ 1 , { } , [ ] , [ [ ] ] ] ,\r\n \"b\" : { \"c\" : null } }\n",
		`{"spec":{"template":{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"100m"}}}]}}}}`,
		`["é\u00e9\u2028","<&>",` + "\"\u2028\xff\"" + `,"a\"b\\","{[,:]}"]`,
		`[[[],{}],[{"a":[]}]]`, `-1.5e+10`, `{"":""}`, " [\n\t ] ", "{\r\n}", `[ "\\" , "\"" , "\u0041" ]`,
		string(deepPatch(100)), string(deepPatch(10001)),
		`{`, `{"a":1}x`, `{"a":1,}`, `[1 2]`, "\"\x01\"", `nul`, ` `,
	}
	for i, p := range patches {
		f := base()
		f.Fix = &finding.Fix{Description: "d", Type: "t", Patch: json.RawMessage(p)}
		cases[fmt.Sprintf("patch %d", i)] = f
	}
	cycle := map[string]any{}
	cycle["self"] = cycle
	var nilMap map[string]any
	var nilAny []any
	var nilStrings []string
	var nilInt *int
	one := 1
	values := map[string]any{
		"nil": nil, "true": true, "false": false,
		"int": -1, "int8": int8(math.MinInt8), "int16": int16(math.MaxInt16), "int32": int32(math.MinInt32),
		"int64": int64(math.MinInt64), "uint": uint(math.MaxUint), "uint8": uint8(255), "uint16": uint16(65535),
		"uint32": uint32(math.MaxUint32), "uint64": uint64(math.MaxUint64), "uintptr": uintptr(7),
		"f 0": 0.0, "f -0": math.Copysign(0, -1), "f 0.1": 0.1, "f 1e21": 1e21, "f 1e20": 1e20,
		"f 999999999999999999999": 999999999999999999999.0, "f 1e-6": 1e-6, "f 1e-7": 1e-7,
		"f -1e-7": -1e-7, "f 1.5e-10": 1.5e-10, "f 1e100": 1e100, "f 1e-100": 1e-100, "f max": math.MaxFloat64,
		"f min": math.SmallestNonzeroFloat64, "f 123456789.125": 123456789.125, "f 1": 1.0, "f -2.5": -2.5,
		"f32 0.1": float32(0.1), "f32 1e21": float32(1e21), "f32 1e20": float32(1e20), "f32 1e-7": float32(1e-7),
		"f32 1e-6": float32(1e-6), "f32 max": float32(math.MaxFloat32), "f32 -0": float32(math.Copysign(0, -1)),
		"f32 16777217": float32(16777217),
		"nil map":      nilMap, "nil any": nilAny, "nil strings": nilStrings, "nil *int": nilInt, "*int": &one,
		"empty map": map[string]any{}, "empty any": []any{}, "empty strings": []string{},
		"strings": []string{"a", "", "<>"},
		"any":     []any{1, "a", nil, 2.5, []any{}, []any{[]any{}}, map[string]any{}, []string{}, map[string]any{"z": 1, "a": []any{true}}},
		"map":     map[string]any{"b": 1, "a": map[string]any{"y": nil, "x": []string{}}, "": "", "\u2028<": "k", "é": 1, "Z": 2},
		"struct":  band{From: 2, Short: true, Note: "<n>", skip: 1}, "*struct": &band{}, "structs": []band{{From: 1}, {}},
		"named string": mode("m\u2028"), "severity": finding.Warning, "raw": json.RawMessage(` [ 1 , {"a" : 2} ] `),
		"number": json.Number("12.50"), "spaced": spaced{}, "text": text{"<\u2029>"}, "bytes": []byte("hi\x00"),
		"map[string]int": map[string]int{"b": 2, "a": 1}, "map[int]string": map[int]string{10: "x", 9: "y", -1: "z"},
		"map[text]int": map[text]int{{"b"}: 1, {"a"}: 2}, "[]int": []int{}, "[2]int": [2]int{1, 2},
		"ref": object.Ref{Kind: "k"}, "any in any": any(map[string]any{"a": any([]any{})}),
		"deep": nested(100, []any{1, map[string]any{}}), "deep list": []any{nested(70, "x")},
		"deep strings": nested(80, []string{"a"}),
	}
	for name, v := range values {
		f := base()
		f.Evidence = map[string]any{"a": 1, name: v, "z": "last"}
		cases["evidence "+name] = f
	}
	// Values encoding/json refuses: the encoder must fail too.
	bad := map[string]any{
		"NaN": math.NaN(), "+Inf": math.Inf(1), "-Inf": math.Inf(-1), "f32 NaN": float32(math.NaN()),
		"f32 Inf": float32(math.Inf(1)), "NaN in list": []any{1, math.NaN()}, "NaN deep": nested(90, math.Inf(1)),
		"chan": make(chan int), "func": func() {}, "complex": complex(1, 2), "cycle": cycle,
		"failing": failing{}, "invalid": invalid{},
	}
	for name, v := range bad {
		f := base()
		f.Evidence = map[string]any{"a": 1, name: v}
		if _, err := oldEncode(&f); err == nil {
			t.Fatalf("encoding/json writes %s", name)
		}
		cases["bad "+name] = f
	}
	d := newDiffer()
	for name, f := range cases {
		d.check(t, name, &f)
		// Alone, with no state left by earlier findings.
		newDiffer().check(t, name+" (alone)", &f)
	}
}

// fuzzFinding builds a finding from fuzzed text, numbers and patch, with
// the text in every string field and evidence of each type the rules use.
func fuzzFinding(s, k string, i int64, u uint64, x float64, patch []byte) finding.Finding {
	f := finding.Finding{
		Rule: s, Slug: k, Severity: finding.Severity(i % 5), Container: s, File: k, Line: int(i), Column: int(u),
		Path: s, Message: s + k, Origin: k, ValuesSource: s, Fingerprint: k,
		Object: object.Ref{APIVersion: s, Kind: k, Namespace: s, Name: k},
	}
	if i%3 != 0 {
		f.Mechanism = []string{s, k}
	}
	if i%2 == 0 {
		f.Assumptions = []string{k}
	}
	f.Evidence = map[string]any{
		s: k, k: s, "i": i, "i32": int32(i), "u": u, "x": x, "x32": float32(x), "b": i > 0,
		"list": []string{s, k}, "any": []any{x, s, map[string]any{k: i, s: []any{}}},
	}
	// The patch, when it is JSON, as evidence too: nested maps and lists of
	// any shape, as a report read back holds.
	var parsed any
	if json.Unmarshal(patch, &parsed) == nil {
		f.Evidence["parsed"] = parsed
	}
	if u%4 != 0 {
		f.Fix = &finding.Fix{Description: s, Type: k, Patch: patch, Placeholders: []string{s}}
		if u%3 == 0 {
			f.Fix.Target = &object.Ref{Kind: k, Name: s}
		}
	}
	return f
}

func FuzzFindingEncoder(f *testing.F) {
	f.Add("web", "BF101", int64(3), uint64(1), 0.5, []byte(`{"spec":{"replicas":2}}`))
	f.Add("<\u2028>\t\"\\", "\xff\x00", int64(-1), uint64(7), 1e21, []byte(" [ {} , [ ] , \"\u2029\" ] "))
	f.Add("", "", int64(0), uint64(0), 1e-7, []byte(nil))
	f.Add("a", "a", int64(math.MinInt64), uint64(math.MaxUint64), math.Copysign(0, -1), []byte(`{"a":`))
	f.Add("b", "c", int64(2), uint64(2), math.NaN(), []byte(`1`))
	f.Add("d", "e", int64(5), uint64(5), -2.5e-9, []byte(`{"a":[{"b":{}},[],[[1.5e300]]],"":"\u2028"}`))
	d := newDiffer()
	f.Fuzz(func(t *testing.T, s, k string, i int64, u uint64, x float64, patch []byte) {
		fd := fuzzFinding(s, k, i, u, x, patch)
		d.check(t, "fuzzed", &fd)
		d.buf.Reset()
	})
}

// Findings repeat their fixes' patches, and the encoder keeps the ones it
// wrote: a patch written again, after others and after more of them than
// the encoder keeps, is still written as encoding/json writes it, and an
// invalid one fails each time.
func TestFindingEncoderRepeatsPatches(t *testing.T) {
	d := newDiffer()
	patches := []string{`{"a":1}`, " { \"a\" : 1 } ", `{"a":1}x`, `[[],{"b":[1,2]}]`, `{"a":1}`, `{"a":1}x`}
	for round := range 3 {
		for i, p := range patches {
			f := finding.Finding{Rule: "BF101", Fix: &finding.Fix{Description: "d", Type: "t", Patch: json.RawMessage(p)}}
			d.check(t, fmt.Sprintf("round %d, patch %d", round, i), &f)
		}
		// Enough other patches, each large, to fill what the encoder keeps.
		for i := range 300 {
			p := fmt.Sprintf(`{"n":%d,"s":%q}`, i, strings.Repeat("x", 1000))
			f := finding.Finding{Rule: "BF101", Fix: &finding.Fix{Description: "d", Type: "t", Patch: json.RawMessage(p)}}
			d.check(t, fmt.Sprintf("round %d, filler %d", round, i), &f)
		}
	}
}
