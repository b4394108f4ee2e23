package kustomize

import (
	"backfire.dev/backfire/internal/exactjson"
	"backfire.dev/backfire/internal/lazyregexp"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/source"
)

// sourceFiles reads and parses each resource file of a build once, and
// indexes its documents by kind and name.
type sourceFiles struct {
	parsed map[string]map[string][]sourceDoc // file -> kind -> documents
}

type sourceDoc struct {
	doc             *load.Document
	name, namespace string
}

func newSourceFiles() *sourceFiles { return &sourceFiles{parsed: map[string]map[string][]sourceDoc{}} }

func (s *sourceFiles) byKind(file string) map[string][]sourceDoc {
	kinds, ok := s.parsed[file]
	if ok {
		return kinds
	}
	kinds = map[string][]sourceDoc{}
	if data, err := source.ReadRegular(file, maxFile); err == nil {
		for _, d := range load.Parse(file, data).Documents {
			name, ns := identity(d)
			kinds[d.Kind] = append(kinds[d.Kind], sourceDoc{d, name, ns})
		}
	}
	s.parsed[file] = kinds
	return kinds
}

// match finds the document of file that built became: same kind, and the
// same name, or a name the build prefixed or suffixed. Two candidates (one
// name in two namespaces) are told apart by namespace; if they cannot be,
// there is no match.
func (s *sourceFiles) match(file string, built *load.Document) *load.Document {
	name, ns := identity(built)
	var exact, affixed []sourceDoc
	for _, c := range s.byKind(file)[built.Kind] {
		switch {
		case c.name == name:
			exact = append(exact, c)
		case c.name != "" && strings.Contains(name, c.name):
			affixed = append(affixed, c)
		}
	}
	for _, cands := range [][]sourceDoc{exact, affixed} {
		if len(cands) == 1 {
			return cands[0].doc
		}
		var same []sourceDoc
		for _, c := range cands {
			if c.namespace == ns {
				same = append(same, c)
			}
		}
		if len(same) == 1 {
			return same[0].doc
		}
		if len(cands) > 1 {
			return nil
		}
	}
	return nil
}

func identity(d *load.Document) (name, namespace string) {
	var o struct {
		Metadata struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	_ = exactjson.Unmarshal(d.JSON, &o)
	return o.Metadata.Name, o.Metadata.Namespace
}

// traceTo moves a finding at path of the built document to the source
// document when the build left that field as it was written: the deepest
// part of path present in the built object (the field, or the ancestor a
// defaulted field hangs from) must hold the same value in both. List
// items are matched by their merge key (a container by name), since a
// patch that adds an item moves the others.
func traceTo(built, src *load.Document, path string) load.Trace {
	var b, s any
	if json.Unmarshal(built.JSON, &b) != nil || json.Unmarshal(src.JSON, &s) != nil {
		return load.Trace{}
	}
	segs := load.SplitPath(path)
	for len(segs) > 0 {
		if _, ok := load.ValueAt(b, segs); ok {
			break
		}
		segs = segs[:len(segs)-1]
	}
	srcSegs, ok := sourcePath(b, s, segs)
	if !ok {
		return load.Trace{}
	}
	bv, _ := load.ValueAt(b, segs)
	sv, ok := load.ValueAt(s, srcSegs)
	if !ok || !reflect.DeepEqual(bv, sv) {
		return load.Trace{}
	}
	// The rest of path (a defaulted field) hangs from the same place.
	rest := load.SplitPath(path)[len(segs):]
	pos, _ := src.Locate(joinPath(append(srcSegs, rest...)))
	return load.Trace{File: src.File, Line: pos.Line, Column: pos.Column}
}

// sourcePath rewrites the list indexes of a built object's path to the
// source's: an item with a merge key is the source's item with the same
// key; any other keeps its index.
func sourcePath(built, src any, segs []load.Segment) ([]load.Segment, bool) {
	out := slices.Clone(segs)
	for i, s := range segs {
		if !s.IsIndex {
			continue
		}
		item, _ := load.ValueAt(built, segs[:i+1])
		m, isMap := item.(map[string]any)
		list, _ := load.ValueAt(src, out[:i])
		items, isList := list.([]any)
		if !isMap || !isList {
			continue
		}
		for _, key := range mergeKeys {
			v, ok := m[key]
			if !ok {
				continue
			}
			j := slices.IndexFunc(items, func(c any) bool {
				cm, ok := c.(map[string]any)
				return ok && reflect.DeepEqual(cm[key], v)
			})
			if j < 0 {
				return nil, false
			}
			out[i].Index = j
			break
		}
	}
	return out, true
}

// joinPath writes segments back the way field.Path prints them.
func joinPath(segs []load.Segment) string {
	var b strings.Builder
	for _, s := range segs {
		switch {
		case s.IsIndex:
			fmt.Fprintf(&b, "[%d]", s.Index)
		case identifier().MatchString(s.Key):
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.Key)
		default:
			fmt.Fprintf(&b, "[%s]", s.Key)
		}
	}
	return b.String()
}

// diff lists the fields where the built object differs from its source,
// as field paths; lists of different lengths count as one change.
func diff(built, src *load.Document) []string {
	var b, s any
	if json.Unmarshal(built.JSON, &b) != nil || json.Unmarshal(src.JSON, &s) != nil {
		return nil
	}
	var out []string
	diffValues(b, s, "", &out)
	return out
}

// identifier is a map key a field path writes after a dot.
var identifier = lazyregexp.New(`^[A-Za-z_][A-Za-z0-9_-]*$`)

func diffValues(b, s any, path string, out *[]string) {
	if reflect.DeepEqual(b, s) {
		return
	}
	bm, bok := b.(map[string]any)
	sm, sok := s.(map[string]any)
	if bok && sok {
		keys := make([]string, 0, len(bm)+len(sm))
		for k := range bm {
			keys = append(keys, k)
		}
		for k := range sm {
			if _, ok := bm[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			p := path + "[" + k + "]"
			if identifier().MatchString(k) {
				p = strings.TrimPrefix(path+"."+k, ".")
			}
			diffValues(bm[k], sm[k], p, out)
		}
		return
	}
	bl, bok := b.([]any)
	sl, sok := s.([]any)
	if bok && sok && len(bl) == len(sl) {
		for i := range bl {
			diffValues(bl[i], sl[i], fmt.Sprintf("%s[%d]", path, i), out)
		}
		return
	}
	*out = append(*out, path)
}
