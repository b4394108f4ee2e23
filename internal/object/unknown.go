package object

import (
	"fmt"
	"reflect"
	"strings"
	"sync"

	kjson "sigs.k8s.io/json"

	"backfire.dev/backfire/internal/load"
)

// dropped turns the unknown fields the strict decode listed into input
// errors, for those that differ only in case from a field of the type at
// their place: Kubernetes drops them (fieldValidation Warn, the API
// server's default, drops them with a warning; Strict, kubectl's default,
// refuses the object), and an author who wrote `TcpSocket` meant
// `tcpSocket`. Other unknown fields are left alone: the types of the
// custom resources backfire reads hold only the fields the rules read.
func dropped(o *Object, target any, unknown []error) []load.Error {
	var out []load.Error
	for _, u := range unknown {
		fe, ok := u.(kjson.FieldError)
		if !ok {
			continue
		}
		path := fe.FieldPath()
		segs := load.SplitPath(path)
		if len(segs) == 0 || segs[len(segs)-1].IsIndex {
			continue
		}
		// The path is split at dots and brackets, which a key may hold:
		// only a path that leads to the key as split is reported.
		pos, exact := o.Doc.Locate(path)
		if !exact {
			continue
		}
		known, ok := foldedField(reflect.TypeOf(target), segs)
		if !ok {
			continue
		}
		out = append(out, load.Error{
			File: o.Doc.File, Line: pos.Line, Column: pos.Column,
			Message: fmt.Sprintf("%s: unknown field %q, dropped by Kubernetes, which reads field names case-sensitively (the field is %q)", o.Ref, path, known),
		})
	}
	return out
}

// foldedField follows segs through the Go type t (json field names,
// slice and map elements) to the struct that holds the last one, and
// returns the name of the field there that equals it but for case.
func foldedField(t reflect.Type, segs []load.Segment) (string, bool) {
	for _, s := range segs[:len(segs)-1] {
		t = indirect(t)
		switch {
		case s.IsIndex && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
			t = t.Elem()
		case !s.IsIndex && t.Kind() == reflect.Map:
			t = t.Elem()
		case !s.IsIndex && t.Kind() == reflect.Struct:
			ft, ok := jsonFields(t)[s.Key]
			if !ok {
				return "", false
			}
			t = ft
		default:
			return "", false
		}
	}
	t = indirect(t)
	if t.Kind() != reflect.Struct {
		return "", false
	}
	key := segs[len(segs)-1].Key
	for name := range jsonFields(t) {
		if name != key && strings.EqualFold(name, key) {
			return name, true
		}
	}
	return "", false
}

func indirect(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

var fieldsCache sync.Map // reflect.Type -> map[string]reflect.Type

// jsonFields returns the fields encoding/json decodes into a struct, by
// JSON name, embedded structs without a name of their own (`json:",inline"`)
// included.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if m, ok := fieldsCache.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	m := map[string]reflect.Type{}
	addFields(m, t, 0)
	fieldsCache.Store(t, m)
	return m
}

func addFields(m map[string]reflect.Type, t reflect.Type, depth int) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			if et := indirect(f.Type); et.Kind() == reflect.Struct && depth < 10 {
				addFields(m, et, depth+1)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, ok := m[name]; !ok {
			m[name] = f.Type
		}
	}
}
