package object

import (
	"reflect"
	"unsafe"

	jsoniter "github.com/json-iterator/go"
	"github.com/modern-go/reflect2"
)

// stringMaps decodes map[string]string (labels, annotations, selectors,
// node selectors, a ConfigMap's data) directly: json-iterator's own map
// decoder goes through reflection for every key and value (a new key and
// value boxed, then reflect's map assignment), a twentieth of a scan's
// CPU. It keeps that decoder's results (TestExactMapDecodeIsJSONIterator):
// null gives a nil map, an object adds its pairs to the map already there
// (a second `labels:` key merges into the first) or a new one, a value is
// read by ReadString (null gives ""), the last of two equal keys wins.
type stringMaps struct{ jsoniter.DummyExtension }

func (*stringMaps) CreateDecoder(typ reflect2.Type) jsoniter.ValDecoder {
	if typ.Type1() == reflect.TypeFor[map[string]string]() {
		return stringMapDecoder{}
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

func init() { exact.RegisterExtension(&stringMaps{}) }
