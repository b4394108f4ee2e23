package jsonenc

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// marshalEqual fails the test when Marshal and json.Marshal differ on v.
func marshalEqual(t *testing.T, v any) {
	t.Helper()
	want, werr := json.Marshal(v)
	got, gerr := Marshal(v)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("%#v: error %v, encoding/json's %v", v, gerr, werr)
	}
	if werr == nil && !bytes.Equal(got, want) {
		t.Fatalf("%#v:\n got %s\nwant %s", v, got, want)
	}
}

// Hand-made values at the edges: every escape, HTML, invalid UTF-8, the
// separators JavaScript reads as line ends, floats at the exponent
// cut-offs, empty and nil maps and lists, types left to encoding/json.
func TestMarshalMatchesEncodingJSON(t *testing.T) {
	strs := []string{"", "plain", `"quoted"\`, "\b\f\n\r\t\x00\x1f\x7f", "<a href='x'>&amp;</a>",
		"bad \xff utf-8 \xc3", "line\u2028sep\u2029", "ſ K é 日本", strings.Repeat("x", 300)}
	floats := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 1e-6, 9.99e-7, 1e20, 1e21, 123456789012345678, 1.5e300, -2.5e-300, math.MaxFloat64, math.SmallestNonzeroFloat64}
	var values []any
	for _, s := range strs {
		values = append(values, s, map[string]any{s: s}, map[string]string{s: s}, []any{s})
	}
	for _, f := range floats {
		values = append(values, f, map[string]any{"f": f})
	}
	values = append(values, nil, true, false, 3, int32(-7), int64(math.MaxInt64), []any{}, []any(nil),
		map[string]any{}, map[string]any(nil), map[string]string(nil),
		map[string]any{"b": 1.0, "a": []any{nil, map[string]any{"z": "y", "exec": nil}}},
		map[string]any{"nan": math.NaN()}, map[string]any{"inf": math.Inf(1)},
		map[string]any{"struct": struct{ A int }{1}}, []any{uint8(3), float32(0.1)}, json.RawMessage(`{"a":1}`))
	// More keys than appendMap sorts on its stack.
	wide, wideStrings := map[string]any{}, map[string]string{}
	for i := range 40 {
		wide[strings.Repeat("k", 40-i)+string(rune('A'+i))] = i
		wideStrings[string(rune('z'-i%26))+strings.Repeat("<", i)] = "v"
	}
	values = append(values, wide, wideStrings)
	deep := any("leaf")
	for range 150 {
		deep = map[string]any{"d": deep}
	}
	values = append(values, deep)
	for _, v := range values {
		marshalEqual(t, v)
	}
}

// Random patch-shaped values, in the thousands.
func TestMarshalRandomValues(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "B", "<", "&", "\"", "\\", "\n", "\x01", "é", "\u2028", "\xff", "name", "livenessProbe"}
	var gen func(depth int) any
	gen = func(depth int) any {
		n := r.IntN(10)
		if depth > 4 {
			n %= 5
		}
		switch n {
		case 0:
			return nil
		case 1:
			return r.IntN(2) == 0
		case 2:
			return float64(r.IntN(1000)) - 500
		case 3:
			return r.NormFloat64() * math.Pow(10, float64(r.IntN(50)-25))
		case 4:
			var b strings.Builder
			for range r.IntN(6) {
				b.WriteString(alphabet[r.IntN(len(alphabet))])
			}
			return b.String()
		case 5, 6:
			l := make([]any, r.IntN(4))
			for i := range l {
				l[i] = gen(depth + 1)
			}
			return l
		default:
			m := map[string]any{}
			for range r.IntN(5) {
				m[alphabet[r.IntN(len(alphabet))]+alphabet[r.IntN(len(alphabet))]] = gen(depth + 1)
			}
			return m
		}
	}
	for range 5000 {
		marshalEqual(t, gen(0))
	}
}

// FuzzMarshal holds Marshal to json.Marshal on whatever JSON decodes into,
// and AppendString to encoding/json with HTML escaping on and off.
func FuzzMarshal(f *testing.F) {
	for _, s := range []string{`{"spec":{"template":{"spec":{"containers":[{"name":"db","livenessProbe":{"exec":null,"tcpSocket":{"port":5432}}}]}}}}`,
		`["<&>", "\u2028", 1e21, 1e-7, -0, true, null, {}]`, `"\ud800"`, `1.0000000000000002`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		marshalEqual(t, s)
		var noHTML bytes.Buffer
		enc := json.NewEncoder(&noHTML)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		if got := AppendString(nil, s, false); !bytes.Equal(got, bytes.TrimSuffix(noHTML.Bytes(), []byte("\n"))) {
			t.Fatalf("%q without HTML escaping: got %s, want %s", s, got, noHTML.Bytes())
		}
		var v any
		if json.Unmarshal([]byte(s), &v) == nil {
			marshalEqual(t, v)
		}
	})
}

// Append writes what Marshal returns after what b holds, a value left to
// encoding/json included.
func TestAppendIsMarshalAppended(t *testing.T) {
	for _, v := range []any{
		nil, "a<b", 3, 1.5, []any{true, nil}, map[string]any{"b": 1, "a": map[string]string{"x": "y"}},
		struct{ N int }{2}, map[string]any{"t": struct{ S string }{"s"}},
	} {
		want, werr := Marshal(v)
		got, gerr := Append([]byte("prefix "), v)
		if string(got) != "prefix "+string(want) || (werr == nil) != (gerr == nil) {
			t.Errorf("%#v: Append %q (%v), Marshal %q (%v)", v, got, gerr, want, werr)
		}
	}
}

// A container's patch, as fix writes one for each finding.
func BenchmarkMarshalPatch(b *testing.B) {
	v := map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{
		map[string]any{"name": "app", "livenessProbe": map[string]any{"timeoutSeconds": 5.0, "failureThreshold": 3.0, "periodSeconds": 10.0}},
	}}}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Marshal(v); err != nil {
			b.Fatal(err)
		}
	}
}
