package object

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"

	jsoniter "github.com/json-iterator/go"
)

// exact is json-iterator set to decode only what the case-sensitive strict
// decode (sigs.k8s.io/json) decodes the same way: every key of a struct
// must name one of its fields exactly, else the decode fails (an unknown
// field, or a field written in another case, which json-iterator would
// otherwise bind case-insensitively, and its small structs by a 32-bit
// hash of the name alone). Decode then falls back to the strict decode,
// which lists the unknown fields and gives the API server's errors. A
// document whose keys all name fields exactly, the usual one, is decoded
// about twice as fast.
var exact = jsoniter.Config{
	EscapeHTML:             true,
	SortMapKeys:            true,
	ValidateJsonRawMessage: true,
	CaseSensitive:          true,
	DisallowUnknownFields:  true,
}.Froze()

// decodeExact decodes data into target when every key of it names a
// field exactly and nothing in it could decode otherwise than under
// encoding/json's rules; it reports whether it did (target is then to be
// thrown away when it did not: it may be half filled).
func decodeExact(data []byte, target any) bool {
	if !plain(data) || !exactType(reflect.TypeOf(target)) {
		return false
	}
	return exact.Unmarshal(data, target) == nil
}

// plain reports whether data holds only what both decoders read alike:
// valid UTF-8 (encoding/json replaces invalid bytes, json-iterator keeps
// them) and no \u escape (lone surrogates are replaced differently).
func plain(data []byte) bool {
	return utf8.Valid(data) && !bytes.Contains(data, []byte(`\u`))
}

var exactTypes sync.Map // reflect.Type -> bool

// exactType reports whether the decoders agree on every value of t: it
// holds no interface (encoding/json's fork keeps integers as int64 there,
// json-iterator makes them float64) and no float (their parsing of long
// decimals may round apart); a type that decodes itself (UnmarshalJSON,
// UnmarshalText) is decoded by its own method either way.
func exactType(t reflect.Type) bool {
	if v, ok := exactTypes.Load(t); ok {
		return v.(bool)
	}
	ok := agrees(t, map[reflect.Type]bool{})
	exactTypes.Store(t, ok)
	return ok
}

var (
	unmarshaler     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func agrees(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return true
	}
	seen[t] = true
	if t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface {
		pt := reflect.PointerTo(t)
		if pt.Implements(unmarshaler) || pt.Implements(textUnmarshaler) {
			return true
		}
	}
	switch t.Kind() {
	case reflect.Interface, reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128,
		reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return false
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return agrees(t.Elem(), seen)
	case reflect.Map:
		return agrees(t.Key(), seen) && agrees(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() && !f.Anonymous {
				continue
			}
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			if strings.Contains(tag, ",string") {
				return false // a number written as a string
			}
			if !agrees(f.Type, seen) {
				return false
			}
		}
	}
	return true
}
