package typedpatch

import (
	"math"
	"reflect"
	"testing"
)

// setNumber sets an integer of any size or sign only from a whole number
// in its range, as a decode of the number would.
func TestSetNumberTakesWholeNumbersInRange(t *testing.T) {
	for _, c := range []struct {
		into any
		x    float64
		want any // nil: refused
	}{
		{int8(0), 127, int8(127)},
		{int8(0), -128, int8(-128)},
		{int8(0), 128, nil},
		{int32(0), 3000000000, nil},
		{int64(0), -(1 << 63), int64(math.MinInt64)},
		{int64(0), 1 << 63, nil},
		{int(0), 1.5, nil},
		{int(0), math.Inf(1), nil},
		{uint8(0), 255, uint8(255)},
		{uint8(0), 256, nil},
		{uint16(0), -1, nil},
		{uint64(0), 1 << 63, uint64(1 << 63)},
		{uint64(0), 1 << 64, nil},
		{"", 1, nil},
	} {
		fv := reflect.New(reflect.TypeOf(c.into)).Elem()
		ok := setNumber(fv, c.x)
		switch {
		case c.want == nil && ok:
			t.Errorf("%T from %v: set %v, want refused", c.into, c.x, fv.Interface())
		case c.want != nil && (!ok || fv.Interface() != c.want):
			t.Errorf("%T from %v: %v (set %v), want %v", c.into, c.x, fv.Interface(), ok, c.want)
		}
	}
}
