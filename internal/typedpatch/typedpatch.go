// Package typedpatch applies a strategic merge patch to an object's typed
// value (a *appsv1.StatefulSet, ...) rather than to its document: the
// value a decode of the patched document would give, without writing the
// document and decoding it again. The scan patches every object whose
// fixes depend on each other's (package fixcompose) only to run a few
// rules on it again; splicing the document and decoding it cost more than
// those rules.
//
// It does what strategicpatch's mergeMap does, for the shapes the rules'
// fixes take: a map merges into the struct or map it names, a scalar or a
// list the field replaces is set as a decode of it would set it, null
// zeroes the field (the key is deleted, and a missing key decodes to the
// zero value), and a list merged by key merges each item into the item of
// the same key, when every item of the list has a key of its own and the
// patch's items come in the list's order (the merge keeps the list's order
// then). Anything else (a directive, a field the type lacks, a key the
// list lacks, a list merged by another strategy, a value a decode would
// reject) is refused, and the caller patches the document instead.
package typedpatch

import (
	"encoding"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"

	"backfire.dev/backfire/internal/jsonenc"
)

// Apply returns a copy of typed (a pointer to a generated API type) with
// patch applied, and false where it leaves the patch to the document (see
// the package comment). typed itself is not changed: the copy is made
// along the patch's paths, each struct, list and map the patch changes
// copied before it is changed (copyOnWrite), and shares the rest with
// typed, which a deep copy of the whole object cost more than the patch.
// Neither is to be changed afterwards.
func Apply(typed any, patch map[string]any) (any, bool) {
	if _, ok := typed.(runtime.Object); !ok || typed == nil {
		return nil, false
	}
	v := reflect.ValueOf(typed)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil, false
	}
	out := reflect.New(v.Elem().Type())
	out.Elem().Set(v.Elem())
	if !mergeStruct(out.Elem(), patch) {
		return nil, false
	}
	return out.Interface(), true
}

// copyOnWrite replaces the pointer, slice or map fv, shared with the
// original object, by a shallow copy of it, to be changed in its place.
func copyOnWrite(fv reflect.Value) {
	if fv.IsNil() {
		return
	}
	switch fv.Kind() {
	case reflect.Pointer:
		nv := reflect.New(fv.Type().Elem())
		nv.Elem().Set(fv.Elem())
		fv.Set(nv)
	case reflect.Slice:
		nv := reflect.MakeSlice(fv.Type(), fv.Len(), fv.Len())
		reflect.Copy(nv, fv)
		fv.Set(nv)
	case reflect.Map:
		nv := reflect.MakeMapWithSize(fv.Type(), fv.Len())
		iter := fv.MapRange()
		for iter.Next() {
			nv.SetMapIndex(iter.Key(), iter.Value())
		}
		fv.Set(nv)
	}
}

// mergeStruct merges patch into the struct v, field by field.
func mergeStruct(v reflect.Value, patch map[string]any) bool {
	fs := fieldsOf(v.Type())
	for k, pv := range patch {
		f, ok := fs[k]
		if !ok || !f.ok {
			return false // a directive, a field the type lacks, or one encoded as a string
		}
		fv, ok := fieldByIndex(v, f.index)
		if !ok || !setField(fv, pv, f) {
			return false
		}
	}
	return true
}

// fieldByIndex is v.FieldByIndex, false through a nil embedded pointer;
// an embedded pointer it goes through is copied first (copyOnWrite).
func fieldByIndex(v reflect.Value, index []int) (reflect.Value, bool) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			copyOnWrite(v)
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, true
}

// setField sets the field fv, of the struct field f, from the patch's
// value pv as mergeMap merges it.
func setField(fv reflect.Value, pv any, f field) bool {
	if pv == nil {
		fv.SetZero()
		return true
	}
	switch p := pv.(type) {
	case map[string]any:
		if !f.mergesMaps {
			return false
		}
		return mergeValue(fv, p)
	case []any:
		if f.mergeKey != "" {
			return mergeList(fv, p, f.mergeKey)
		}
		if f.mergesLists {
			return false // a list of scalars merged, or no key to merge by
		}
		return decodeValue(fv, pv)
	}
	return decodeValue(fv, pv)
}

// mergeValue merges the patch's map into fv: a struct field by field, a
// map key by key (made when it is nil: a decode of `{}` makes one), a nil
// pointer into a new value (what the patch sets where the document has
// nothing, its nulls dropped, decodes to that).
func mergeValue(fv reflect.Value, patch map[string]any) bool {
	t := fv.Type()
	if decodesItself(t) {
		return false // its document form is its own; merged as JSON, not as fields
	}
	switch t.Kind() {
	case reflect.Pointer:
		if t.Elem().Kind() != reflect.Struct && t.Elem().Kind() != reflect.Map {
			return false
		}
		if fv.IsNil() {
			fv.Set(reflect.New(t.Elem()))
		} else {
			copyOnWrite(fv)
		}
		return mergeValue(fv.Elem(), patch)
	case reflect.Struct:
		return mergeStruct(fv, patch)
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return false
		}
		if fv.IsNil() {
			fv.Set(reflect.MakeMapWithSize(t, len(patch)))
		} else {
			copyOnWrite(fv)
		}
		for k, pv := range patch {
			if strings.HasPrefix(k, "$") {
				return false
			}
			key := reflect.ValueOf(k).Convert(t.Key())
			if pv == nil {
				fv.SetMapIndex(key, reflect.Value{})
				continue
			}
			ev := reflect.New(t.Elem()).Elem()
			if old := fv.MapIndex(key); old.IsValid() {
				ev.Set(old)
			}
			var ok bool
			if m, isMap := pv.(map[string]any); isMap {
				ok = mergeValue(ev, m)
			} else {
				ok = decodeValue(ev, pv)
			}
			if !ok {
				return false
			}
			fv.SetMapIndex(key, ev)
		}
		return true
	}
	return false
}

// mergeList merges the patch's items into the list fv by the string field
// named mergeKey, as itemEdits of package fix does on the document: every
// item of the list has a key of its own, and each patch item names one of
// them, after the one the item before it named.
func mergeList(fv reflect.Value, patch []any, mergeKey string) bool {
	t := fv.Type()
	if t.Kind() != reflect.Slice || t.Elem().Kind() != reflect.Struct || fv.Len() == 0 {
		return false
	}
	kf, ok := fieldsOf(t.Elem())[mergeKey]
	if !ok || !kf.ok || len(kf.index) != 1 || t.Elem().Field(kf.index[0]).Type.Kind() != reflect.String {
		return false
	}
	key := func(i int) string { return fv.Index(i).Field(kf.index[0]).String() }
	// A few containers are searched; thousands are indexed once.
	var byKey map[string]int
	if fv.Len() > 8 {
		byKey = make(map[string]int, fv.Len())
	}
	for i := range fv.Len() {
		k := key(i)
		if k == "" {
			return false
		}
		if byKey != nil {
			if _, dup := byKey[k]; dup {
				return false
			}
			byKey[k] = i
			continue
		}
		for j := range i {
			if key(j) == k {
				return false
			}
		}
	}
	copyOnWrite(fv)
	last := -1
	for _, item := range patch {
		m, ok := item.(map[string]any)
		if !ok {
			return false
		}
		name, ok := m[mergeKey].(string)
		if !ok {
			return false
		}
		at := -1
		if byKey != nil {
			if i, found := byKey[name]; found {
				at = i
			}
		} else {
			for i := range fv.Len() {
				if key(i) == name {
					at = i
					break
				}
			}
		}
		if at <= last {
			return false // a new item, or out of the list's order
		}
		last = at
		ev := fv.Index(at)
		fs := fieldsOf(ev.Type())
		for k, pv := range m {
			if k == mergeKey {
				continue
			}
			f, ok := fs[k]
			if !ok || !f.ok {
				return false
			}
			sub, ok := fieldByIndex(ev, f.index)
			if !ok || !setField(sub, pv, f) {
				return false
			}
		}
	}
	return true
}

// decodeValue sets fv to what decoding the JSON value pv into a new value
// of its type gives: what decoding the patched document gives at a value
// the patch replaced. It refuses what it cannot decode exactly (a float,
// an interface, a number out of range, a null in a list).
func decodeValue(fv reflect.Value, pv any) bool {
	t := fv.Type()
	if t.Kind() == reflect.Pointer {
		if pv == nil {
			return false
		}
		nv := reflect.New(t.Elem())
		if !decodeValue(nv.Elem(), pv) {
			return false
		}
		fv.Set(nv)
		return true
	}
	if decodesItself(t) {
		return decodeItself(fv, t, pv)
	}
	switch p := pv.(type) {
	case string:
		if t.Kind() != reflect.String {
			return false
		}
		fv.SetString(p)
		return true
	case bool:
		if t.Kind() != reflect.Bool {
			return false
		}
		fv.SetBool(p)
		return true
	case float64:
		return setNumber(fv, p)
	case map[string]any:
		nv := reflect.New(t).Elem()
		if !mergeValue(nv, p) {
			return false
		}
		fv.Set(nv)
		return true
	case []any:
		if t.Kind() != reflect.Slice {
			return false
		}
		nv := reflect.MakeSlice(t, len(p), len(p))
		for i, e := range p {
			if e == nil || !decodeValue(nv.Index(i), e) {
				return false
			}
		}
		fv.Set(nv)
		return true
	}
	return false
}

// setNumber sets an integer field from a JSON number, which must be a
// whole number in its range (our encoder writes one in digits, which the
// decode parses as an integer).
func setNumber(fv reflect.Value, x float64) bool {
	if x != math.Trunc(x) || math.IsInf(x, 0) {
		return false
	}
	switch fv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return setWhole(x, -(1 << 63), 1<<63, fv.OverflowInt, fv.SetInt)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return setWhole(x, 0, 1<<64, fv.OverflowUint, fv.SetUint)
	}
	return false
}

// setWhole sets the whole number x, in [lo, hi) (the range of T, where
// the conversion is defined), through set, unless the field's own kind
// overflows.
func setWhole[T int64 | uint64](x, lo, hi float64, overflows func(T) bool, set func(T)) bool {
	if x < lo || x >= hi {
		return false
	}
	n := T(x)
	if overflows(n) {
		return false
	}
	set(n)
	return true
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// decodesItself reports whether values of t decode themselves
// (intstr.IntOrString, resource.Quantity): the decoders hand them their
// JSON.
func decodesItself(t reflect.Type) bool {
	if v, ok := selfDecoding.Load(t); ok {
		return v.(bool)
	}
	pt := reflect.PointerTo(t)
	ok := pt.Implements(unmarshalerType) || pt.Implements(textUnmarshalerType)
	selfDecoding.Store(t, ok)
	return ok
}

// selfDecoding caches decodesItself: asking a type's method set is slow.
var selfDecoding sync.Map // reflect.Type -> bool

// decodeItself decodes a scalar into a new value of t by its own method,
// as the decoders do: UnmarshalJSON with the value's JSON, or
// UnmarshalText with a string's text.
func decodeItself(fv reflect.Value, t reflect.Type, pv any) bool {
	nv := reflect.New(t)
	switch u := nv.Interface().(type) {
	case json.Unmarshaler:
		switch pv.(type) {
		case string, float64, bool:
		default:
			return false
		}
		b, err := jsonenc.Marshal(pv)
		if err != nil || u.UnmarshalJSON(b) != nil {
			return false
		}
	case encoding.TextUnmarshaler:
		s, ok := pv.(string)
		if !ok || u.UnmarshalText([]byte(s)) != nil {
			return false
		}
	default:
		return false
	}
	fv.Set(nv.Elem())
	return true
}

// A field is how a struct's field is named in JSON and patched.
type field struct {
	index []int
	// ok is false for a field the decoders read otherwise (a number
	// encoded as a string), and for a name two fields claim alike.
	ok bool
	// mergesMaps: a map patches the field by merging (no "replace"
	// strategy); mergesLists: a list merges into it rather than replacing
	// it, by mergeKey when it has one.
	mergesMaps, mergesLists bool
	mergeKey                string
}

var fieldCache sync.Map // reflect.Type -> map[string]field

// fieldsOf returns the fields of the struct type t by their JSON names,
// as encoding/json resolves them: an embedded struct without a name
// promotes its fields, the shallowest field of a name wins, and among
// equally deep ones the one tagged with it, else none.
func fieldsOf(t reflect.Type) map[string]field {
	if v, ok := fieldCache.Load(t); ok {
		return v.(map[string]field)
	}
	type candidate struct {
		name   string
		depth  int
		tagged bool
		f      field
	}
	var cands []candidate
	var walk func(t reflect.Type, index []int, depth int, seen map[reflect.Type]bool)
	walk = func(t reflect.Type, index []int, depth int, seen map[reflect.Type]bool) {
		if seen[t] {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			sf := t.Field(i)
			ft := sf.Type
			if sf.Anonymous {
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if !sf.IsExported() && ft.Kind() != reflect.Struct {
					continue
				}
			} else if !sf.IsExported() {
				continue
			}
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			idx := append(append([]int(nil), index...), i)
			if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
				walk(ft, idx, depth+1, seen)
				continue
			}
			tagged := name != ""
			if !tagged {
				name = sf.Name
			}
			f := field{index: idx, ok: !hasOption(opts, "string")}
			f.mergesMaps, f.mergesLists, f.mergeKey = strategy(sf)
			cands = append(cands, candidate{name, depth, tagged, f})
		}
	}
	walk(t, nil, 0, map[reflect.Type]bool{})
	out := map[string]field{}
	best := map[string][]candidate{}
	for _, c := range cands {
		if bs := best[c.name]; len(bs) == 0 || c.depth < bs[0].depth {
			best[c.name] = []candidate{c}
		} else if c.depth == bs[0].depth {
			best[c.name] = append(bs, c)
		}
	}
	for name, bs := range best {
		var tagged []candidate
		for _, c := range bs {
			if c.tagged {
				tagged = append(tagged, c)
			}
		}
		switch {
		case len(bs) == 1:
			out[name] = bs[0].f
		case len(tagged) == 1:
			out[name] = tagged[0].f
		default:
			out[name] = field{} // claimed alike: refused
		}
	}
	v, _ := fieldCache.LoadOrStore(t, out)
	return v.(map[string]field)
}

// strategy reads a field's patch strategy from its tags, as
// strategicpatch does, the retainKeys strategy aside (it acts only with a
// directive, which Apply refuses): a map merges unless the field is
// replaced; a list merges when the field says "merge", by its merge key.
// An unknown or doubled strategy refuses both.
func strategy(sf reflect.StructField) (mergesMaps, mergesLists bool, mergeKey string) {
	var ss []string
	for s := range strings.SplitSeq(sf.Tag.Get("patchStrategy"), ",") {
		if s != "" && s != "retainKeys" {
			ss = append(ss, s)
		}
	}
	switch {
	case len(ss) == 0:
		return true, false, ""
	case len(ss) == 1 && ss[0] == "merge":
		// A list that merges without a key (of scalars) is refused by
		// mergeList's caller: mergesLists with no mergeKey.
		return true, true, sf.Tag.Get("patchMergeKey")
	}
	return false, true, ""
}

func hasOption(opts, want string) bool {
	for o := range strings.SplitSeq(opts, ",") {
		if o == want {
			return true
		}
	}
	return false
}
