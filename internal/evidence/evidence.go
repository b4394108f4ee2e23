// Package evidence turns a rule's typed evidence (one struct per rule, in
// each family's evidence.go) into what findings carry, and describes those
// types for the JSON schema and the rule pages, so that the output, the
// schema and the docs come from one definition and cannot drift.
//
// A field's JSON name and omitempty come from its json tag, its meaning
// from its doc tag. Optional values are pointers with omitempty: present
// (zero included) or absent, never a different type.
package evidence

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
)

// Map returns the evidence as the finding's map, keyed by JSON name, with
// the Go values kept (an int stays an int): encoding it gives the same
// JSON as encoding the struct. A map is returned as it is; nil gives nil.
func Map(v any) map[string]any {
	switch m := v.(type) {
	case nil:
		return nil
	case map[string]any:
		return m
	}
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return nil
		}
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		panic(fmt.Sprintf("evidence: %T is not a struct", v))
	}
	fs := cachedFields(rv.Type())
	out := make(map[string]any, len(fs))
	for _, f := range fs {
		fv := rv.FieldByIndex(f.index)
		if f.omitEmpty && isEmpty(fv) {
			continue
		}
		if fv.Kind() == reflect.Pointer {
			if fv.IsNil() {
				out[f.name] = nil
				continue
			}
			fv = fv.Elem()
		}
		out[f.name] = fv.Interface()
	}
	return out
}

// jsonType is the type a present value has: an omitted nil pointer is
// absent, never null, so an optional pointer's JSON type is its element's.
func (f field) jsonType() reflect.Type {
	if f.omitEmpty && f.typ.Kind() == reflect.Pointer {
		return f.typ.Elem()
	}
	return f.typ
}

type field struct {
	name      string
	index     []int
	omitEmpty bool
	doc       string
	typ       reflect.Type
}

// fieldCache holds each evidence type's fields: Map runs once per finding.
var fieldCache sync.Map // reflect.Type -> []field

func cachedFields(t reflect.Type) []field {
	if fs, ok := fieldCache.Load(t); ok {
		return fs.([]field)
	}
	fs := fields(t)
	fieldCache.Store(t, fs)
	return fs
}

func fields(t reflect.Type) []field {
	var out []field
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = sf.Name
		}
		out = append(out, field{name: name, index: sf.Index, omitEmpty: strings.Contains(opts, "omitempty"), doc: sf.Tag.Get("doc"), typ: sf.Type})
	}
	return out
}

// Schema returns the JSON schema (draft-04 subset: type, properties,
// required, items, additionalProperties) of one evidence type.
func Schema(t reflect.Type) map[string]any {
	return typeSchema(t)
}

func typeSchema(t reflect.Type) map[string]any {
	nullable := false
	for t.Kind() == reflect.Pointer {
		t, nullable = t.Elem(), true
	}
	var s map[string]any
	switch t.Kind() {
	case reflect.Bool:
		s = map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		s = map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		s = map[string]any{"type": "number"}
	case reflect.String:
		s = map[string]any{"type": "string"}
	case reflect.Slice, reflect.Array:
		s = map[string]any{"type": "array", "items": typeSchema(t.Elem())}
	case reflect.Map:
		s = map[string]any{"type": "object", "additionalProperties": typeSchema(t.Elem())}
	case reflect.Struct:
		props := map[string]any{}
		var required []string
		for _, f := range fields(t) {
			props[f.name] = typeSchema(f.jsonType())
			if !f.omitEmpty {
				required = append(required, f.name)
			}
		}
		s = map[string]any{"type": "object", "additionalProperties": false, "properties": props}
		if len(required) > 0 {
			sort.Strings(required)
			s["required"] = required
		}
	default:
		panic(fmt.Sprintf("evidence: no JSON schema for %s", t))
	}
	if nullable {
		s["type"] = []string{s["type"].(string), "null"}
	}
	return s
}

// Table returns the Markdown table of one evidence type: key, JSON type,
// whether it is always present, and what it means.
func Table(t reflect.Type) string {
	var b strings.Builder
	b.WriteString("| key | type | present | meaning |\n|---|---|---|---|\n")
	for _, f := range fields(t) {
		present := "always"
		if f.omitEmpty {
			present = "optional"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", f.name, jsonType(f.jsonType()), present, strings.ReplaceAll(f.doc, "|", "\\|"))
	}
	return b.String()
}

func jsonType(t reflect.Type) string {
	s := typeSchema(t)
	typ := fmt.Sprint(s["type"])
	if ts, ok := s["type"].([]string); ok {
		typ = strings.Join(ts, " or ")
	}
	if typ == "array" {
		return "array of " + jsonType(t.Elem())
	}
	return typ
}

// isEmpty is encoding/json's omitempty test: false, 0, nil, and empty
// strings, slices and maps.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Pointer, reflect.Interface:
		return v.IsNil()
	}
	return v.IsZero()
}
