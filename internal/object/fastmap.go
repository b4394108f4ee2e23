package object

import (
	"reflect"
	"unsafe"

	jsoniter "github.com/json-iterator/go"
	"github.com/modern-go/reflect2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// stringMaps decodes map[string]string (labels, annotations, selectors,
// node selectors, a ConfigMap's data) and resource lists directly:
// json-iterator's own map decoder goes through reflection for every key
// and value (a new key and value boxed, then reflect's map assignment),
// a twentieth of a scan's CPU. It keeps that decoder's results (TestExactMapDecodeIsJSONIterator):
// null gives a nil map, an object adds its pairs to the map already there
// (a second `labels:` key merges into the first) or a new one, a value is
// read by ReadString (null gives ""), the last of two equal keys wins.
type stringMaps struct{ jsoniter.DummyExtension }

func (*stringMaps) CreateDecoder(typ reflect2.Type) jsoniter.ValDecoder {
	switch typ.Type1() {
	case reflect.TypeFor[map[string]string]():
		return stringMapDecoder{}
	case reflect.TypeFor[corev1.ResourceList]():
		return resourceListDecoder{}
	}
	return nil
}

type stringMapDecoder struct{}

func (stringMapDecoder) Decode(ptr unsafe.Pointer, iter *jsoniter.Iterator) {
	m := (*map[string]string)(ptr)
	if iter.ReadNil() {
		*m = nil
		return
	}
	if *m == nil {
		*m = map[string]string{}
	}
	mm := *m
	iter.ReadMapCB(func(iter *jsoniter.Iterator, key string) bool {
		mm[key] = iter.ReadString()
		return iter.Error == nil
	})
}

// resourceListDecoder decodes a container's requests and limits the same
// way: json-iterator gives each quantity to resource.Quantity's own
// UnmarshalJSON with the value's bytes, its error reported on the
// iterator.
type resourceListDecoder struct{}

func (resourceListDecoder) Decode(ptr unsafe.Pointer, iter *jsoniter.Iterator) {
	m := (*corev1.ResourceList)(ptr)
	if iter.ReadNil() {
		*m = nil
		return
	}
	if *m == nil {
		*m = corev1.ResourceList{}
	}
	mm := *m
	iter.ReadMapCB(func(iter *jsoniter.Iterator, key string) bool {
		var q resource.Quantity
		iter.WhatIsNext() // past the spaces, as json-iterator's unmarshaler decoder
		if err := q.UnmarshalJSON(iter.SkipAndReturnBytes()); err != nil {
			iter.ReportError("unmarshalerDecoder", err.Error())
			return false
		}
		mm[corev1.ResourceName(key)] = q
		return iter.Error == nil
	})
}

func init() { exact.RegisterExtension(&stringMaps{}) }
