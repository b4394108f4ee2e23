package fix

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// randomValue makes a value of the kinds patches hold, and of a few kinds
// they may not (ints, nil maps, strings that are not UTF-8), which equal
// and clone must treat as their encoding does.
func randomValue(r *rand.Rand, depth int) any {
	k := r.IntN(12)
	if depth > 3 {
		k = r.IntN(7)
	}
	switch k {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return []float64{0, math.Copysign(0, -1), 1, 3, 0.1, 1e21, 1e-7}[r.IntN(7)]
	case 3:
		return []string{"", "a", "b", "\xff", "\xfe", "é", "<>"}[r.IntN(7)]
	case 4:
		return r.IntN(4) // an int encodes like the float of its value
	case 5:
		return map[string]any(nil)
	case 6:
		return []any(nil)
	case 7, 8, 9:
		m := map[string]any{}
		for range r.IntN(4) {
			m[[]string{"a", "b", "c", "\xff", "\xfe"}[r.IntN(5)]] = randomValue(r, depth+1)
		}
		return m
	default:
		l := make([]any, r.IntN(3))
		for i := range l {
			l[i] = randomValue(r, depth+1)
		}
		return l
	}
}

func encodes(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestEqualAndCloneAgreeWithEncoding checks the structural equal and clone
// against what they replace: comparing encodings, and encoding and
// decoding again.
func TestEqualAndCloneAgreeWithEncoding(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pairs, same := 0, 0
	for range 200000 {
		a, b := randomValue(r, 0), randomValue(r, 0)
		if r.IntN(3) == 0 {
			b = cloneJSON(a) // often equal, so that both answers are tried
		}
		want := encodes(a) == encodes(b)
		if got := equal(a, b); got != want {
			t.Fatalf("equal(%#v, %#v) = %v, their encodings say %v", a, b, got, want)
		}
		pairs++
		if want {
			same++
		}
		if got, want := clone(a), cloneJSON(a); !reflect.DeepEqual(got, want) {
			t.Fatalf("clone(%#v) = %#v, encoding and decoding gives %#v", a, got, want)
		}
	}
	if same == 0 || same == pairs {
		t.Fatalf("%d of %d pairs equal: the test tries only one answer", same, pairs)
	}
}

// TestCloneDoesNotShare: a clone is changed without changing the original.
func TestCloneDoesNotShare(t *testing.T) {
	orig := map[string]any{"a": []any{map[string]any{"b": 1.0}}}
	c := clone(orig).(map[string]any)
	c["a"].([]any)[0].(map[string]any)["b"] = 2.0
	if orig["a"].([]any)[0].(map[string]any)["b"] != 1.0 {
		t.Fatal("the clone shares its nested map with the original")
	}
}
