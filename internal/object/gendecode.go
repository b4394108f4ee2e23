package object

import (
	"encoding/json"
	"unicode/utf8"
	"unsafe"

	jsoniter "github.com/json-iterator/go"
	"github.com/modern-go/reflect2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

//go:generate go run ./decodegen -o decode_gen.go

// The direct struct decoders of decode_gen.go replace json-iterator's
// reflective struct decoder on the exact configuration: it finds each key
// by a map lookup, then reaches the field through a chain of decoder
// interfaces and unsafe offsets; a generated decoder switches on the key
// and calls the field's decoder directly. Each does what json-iterator's
// does (TestGeneratedDecodeIsJSONIterator), with these helpers, each the
// twin of a json-iterator decoder.
type generated struct{ jsoniter.DummyExtension }

func (*generated) CreateDecoder(typ reflect2.Type) jsoniter.ValDecoder {
	if f, ok := generatedDecoders[typ.Type1()]; ok {
		return decodeFunc(f)
	}
	return nil
}

type decodeFunc func(unsafe.Pointer, *jsoniter.Iterator)

func (f decodeFunc) Decode(p unsafe.Pointer, iter *jsoniter.Iterator) { f(p, iter) }

func init() { exact.RegisterExtension(&generated{}) }

// unknownField fails the decode on a key that names no field (the
// generalStructDecoder with DisallowUnknownFields).
func unknownField(iter *jsoniter.Iterator, field []byte) bool {
	iter.ReportError("ReadObject", "found unknown field: "+string(field))
	return false
}

// decodeNoField decodes a struct without fields: only null or {}.
func decodeNoField(iter *jsoniter.Iterator) {
	readObject(iter, unknownField)
}

// decodePointer is json-iterator's OptionalDecoder: null sets the pointer
// nil, a value is decoded into what it points to, new if it was nil.
func decodePointer[T any](p **T, iter *jsoniter.Iterator, elem func(*T, *jsoniter.Iterator)) {
	if iter.ReadNil() {
		*p = nil
		return
	}
	if *p == nil {
		v := new(T)
		elem(v, iter)
		*p = v
		return
	}
	elem(*p, iter)
}

// decodeSlice is json-iterator's sliceDecoder: null gives nil, [] an empty
// slice, and each element is decoded into the slice grown by one the way
// reflect2 grows it, so that a list written twice under one key is
// decoded over the elements the first one left within the capacity.
func decodeSlice[T any](p *[]T, iter *jsoniter.Iterator, elem func(*T, *jsoniter.Iterator)) {
	if iter.ReadNil() {
		*p = nil
		return
	}
	if iter.WhatIsNext() != jsoniter.ArrayValue {
		iter.ReportError("decode slice", "expect [ or n")
		return
	}
	if !iter.ReadArray() {
		*p = []T{}
		return
	}
	for n := 1; ; n++ {
		*p = grow(*p, n)
		elem(&(*p)[n-1], iter)
		// What follows an element is a comma or the end: ReadArray
		// alone would also take a '[' or a null there.
		if iter.WhatIsNext() != jsoniter.InvalidValue {
			iter.ReportError("decode slice", "expect , or ]")
			return
		}
		if !iter.ReadArray() {
			return
		}
	}
}

// grow is reflect2's UnsafeGrow: within the capacity the slice is
// lengthened over what is there, past it copied into a new array twice as
// large (a quarter larger from 1024 on).
func grow[T any](s []T, n int) []T {
	if n <= cap(s) {
		return s[:n]
	}
	c := cap(s)
	if c == 0 {
		c = n
	}
	for c < n {
		if c < 1024 {
			c += c
		} else {
			c += c / 4
		}
	}
	g := make([]T, n, c)
	copy(g, s)
	return g
}

// unmarshalJSON is json-iterator's unmarshalerDecoder: the type's own
// UnmarshalJSON with the value's bytes.
func unmarshalJSON[P json.Unmarshaler](p P, iter *jsoniter.Iterator) {
	iter.WhatIsNext() // past the spaces
	if err := p.UnmarshalJSON(iter.SkipAndReturnBytes()); err != nil {
		iter.ReportError("unmarshalerDecoder", err.Error())
	}
}

// unmarshalInPlace is unmarshalJSON for the types whose UnmarshalJSON
// neither keeps nor changes the bytes it is given (resource.Quantity,
// metav1.Time): it gives them the value's bytes in the input rather than
// the copy SkipAndReturnBytes makes of them.
func unmarshalInPlace[P json.Unmarshaler](p P, iter *jsoniter.Iterator) {
	iter.WhatIsNext() // past the spaces
	if err := p.UnmarshalJSON(skipInPlace(iter)); err != nil {
		iter.ReportError("unmarshalerDecoder", err.Error())
	}
}

// skipInPlace is SkipAndReturnBytes without the copy: the bytes Skip
// passed over, in the iterator's buffer.
func skipInPlace(iter *jsoniter.Iterator) []byte {
	it := (*iterFields)(unsafe.Pointer(iter))
	if it.reader() != nil {
		return iter.SkipAndReturnBytes()
	}
	start := *it.head()
	iter.Skip()
	return (*it.buf())[start:*it.head()]
}

// decodeIntOrString is unmarshalJSON for a port or a surge: IntOrString's
// UnmarshalJSON gives a string to encoding/json, which checks and decodes
// it by reflection; a string without escapes or a small integer, nearly
// every one, is read here to what that gives (FuzzIntOrString).
func decodeIntOrString(p *intstr.IntOrString, iter *jsoniter.Iterator) {
	iter.WhatIsNext() // past the spaces
	value := skipInPlace(iter)
	if plainIntOrString(p, value) {
		return
	}
	if err := p.UnmarshalJSON(value); err != nil {
		iter.ReportError("unmarshalerDecoder", err.Error())
	}
}

// plainIntOrString sets p from value as IntOrString's UnmarshalJSON does
// when value is a string of valid UTF-8 without escapes or control
// characters, or an integer of at most nine digits without a sign or a
// leading zero; it reports whether it did.
func plainIntOrString(p *intstr.IntOrString, value []byte) bool {
	if n := len(value); n >= 2 && value[0] == '"' && value[n-1] == '"' {
		s := value[1 : n-1]
		for _, c := range s {
			if c == '"' || c == '\\' || c < ' ' {
				return false
			}
		}
		if !utf8.Valid(s) {
			return false
		}
		p.Type, p.StrVal = intstr.String, string(s)
		return true
	}
	if len(value) == 0 || len(value) > 9 || (value[0] == '0' && len(value) > 1) {
		return false
	}
	n := int32(0)
	for _, c := range value {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int32(c-'0')
	}
	p.Type, p.IntVal = intstr.Int, n
	return true
}

// readVal leaves a value to json-iterator's own decoder of its type.
func readVal[T any](p *T, iter *jsoniter.Iterator) { iter.ReadVal(p) }

func readString[T ~string](p *T, iter *jsoniter.Iterator) { *p = T(iter.ReadString()) }

func readBool[T ~bool](p *T, iter *jsoniter.Iterator) {
	if !iter.ReadNil() {
		*p = T(iter.ReadBool())
	}
}

//lint:ignore U1000 decodegen writes it for an int field; none of today's types has one.
func readInt[T ~int](p *T, iter *jsoniter.Iterator) {
	if !iter.ReadNil() {
		*p = T(iter.ReadInt64())
	}
}

func readInt32[T ~int32](p *T, iter *jsoniter.Iterator) {
	if !iter.ReadNil() {
		*p = T(iter.ReadInt32())
	}
}

func readInt64[T ~int64](p *T, iter *jsoniter.Iterator) {
	if !iter.ReadNil() {
		*p = T(iter.ReadInt64())
	}
}

func decodeStringMap(p *map[string]string, iter *jsoniter.Iterator) {
	stringMapDecoder{}.Decode(unsafe.Pointer(p), iter)
}

func decodeResourceList(p *corev1.ResourceList, iter *jsoniter.Iterator) {
	resourceListDecoder{}.Decode(unsafe.Pointer(p), iter)
}
