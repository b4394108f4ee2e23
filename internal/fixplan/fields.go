package fixplan

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode"

	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
)

// Field paths of decoded objects: the edits a fix makes to an object, the
// block each belongs to, and how list items are named and paired.

// namedPath writes a field path of o with its list items named
// ("spec.template.spec.containers[postgresql].livenessProbe").
func namedPath(o *object.Object, path string) string {
	var doc any
	if json.Unmarshal(o.Doc.JSON, &doc) != nil {
		return path
	}
	return namedPathIn(doc, path)
}

// namedPathIn is namedPath for a decoded object.
func namedPathIn(doc any, path string) string {
	var b strings.Builder
	v := doc
	for _, s := range load.SplitPath(path) {
		if l, ok := v.([]any); ok && s.IsIndex && s.Index < len(l) {
			v = l[s.Index]
			if n, ok := itemNameOf(v); ok {
				b.WriteString("[" + n + "]")
			} else {
				b.WriteString("[" + strconv.Itoa(s.Index) + "]")
			}
			continue
		}
		m, _ := v.(map[string]any)
		v = m[s.Key]
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.Key)
	}
	return b.String()
}

// indexPath resolves list items named in a path ("containers[db]") to
// their indexes in doc.
func indexPath(doc any, named string) ([]load.Segment, bool) {
	var out []load.Segment
	v := doc
	for _, s := range load.SplitPath(named) {
		switch x := v.(type) {
		case map[string]any:
			if s.IsIndex {
				return nil, false
			}
			out = append(out, s)
			v = x[s.Key]
		case []any:
			idx := -1
			for i, it := range x {
				if n, ok := itemNameOf(it); ok && n == s.Key {
					idx = i
				}
			}
			if s.IsIndex {
				idx = s.Index
			}
			if idx < 0 || idx >= len(x) {
				return nil, false
			}
			out = append(out, load.Segment{Index: idx, IsIndex: true})
			v = x[idx]
		default:
			out = append(out, s)
			v = nil
		}
	}
	return out, true
}

// fieldEdit is one field a fix changes: set, added, or deleted.
type fieldEdit struct {
	path     []load.Segment
	old, new any
	had, has bool // the field is in the object before, after
}

// diffValues lists the fields where want differs from before.
func diffValues(before, want any, path []load.Segment, out *[]fieldEdit) {
	bm, bok := before.(map[string]any)
	wm, wok := want.(map[string]any)
	if bok && wok {
		keys := map[string]bool{}
		for k := range bm {
			keys[k] = true
		}
		for k := range wm {
			keys[k] = true
		}
		for _, k := range sortedKeys(keys) {
			p := append(append([]load.Segment(nil), path...), load.Segment{Key: k})
			bv, had := bm[k]
			wv, has := wm[k]
			switch {
			case had && has:
				diffValues(bv, wv, p, out)
			case had:
				*out = append(*out, fieldEdit{path: p, old: bv, had: true})
			default:
				*out = append(*out, fieldEdit{path: p, new: wv, has: true})
			}
		}
		return
	}
	bl, bok := before.([]any)
	wl, wok := want.([]any)
	if bok && wok && len(bl) == len(wl) {
		// Named items (containers) are paired by name: a strategic merge
		// patch may give them back in another order.
		pair := pairByName(bl, wl)
		if pair == nil && sameNames(bl, wl) {
			pair = make([]int, len(bl))
			for i := range pair {
				pair[i] = i
			}
		}
		if pair != nil {
			for i := range bl {
				p := append(append([]load.Segment(nil), path...), load.Segment{Index: i, IsIndex: true})
				diffValues(bl[i], wl[pair[i]], p, out)
			}
			return
		}
	}
	if !fix.Equal(before, want) {
		*out = append(*out, fieldEdit{path: path, old: before, new: want, had: true, has: true})
	}
}

// alignTo returns want with the named items of its lists in the order
// before has them.
func alignTo(before, want any) any {
	switch w := want.(type) {
	case map[string]any:
		b, _ := before.(map[string]any)
		out := make(map[string]any, len(w))
		for k, v := range w {
			out[k] = alignTo(b[k], v)
		}
		return out
	case []any:
		b, ok := before.([]any)
		if !ok || len(b) != len(w) {
			return w
		}
		pair := pairByName(b, w)
		out := make([]any, len(w))
		for i := range w {
			j := i
			if pair != nil {
				j = pair[i]
			}
			out[i] = alignTo(b[i], w[j])
		}
		return out
	}
	return want
}

// pairByName pairs the items of two lists of named items with unique
// names, the same in both: pair[i] is the index in b of a's item i. It is
// nil for any other lists.
func pairByName(a, b []any) []int {
	at := map[string]int{}
	for i, it := range b {
		n, ok := itemNameOf(it)
		if !ok {
			return nil
		}
		if _, dup := at[n]; dup {
			return nil
		}
		at[n] = i
	}
	pair := make([]int, len(a))
	seen := map[string]bool{}
	for i, it := range a {
		n, ok := itemNameOf(it)
		j, found := at[n]
		if !ok || !found || seen[n] {
			return nil
		}
		seen[n] = true
		pair[i] = j
	}
	return pair
}

// sameNames reports whether two lists hold named items with the same
// names in the same order (containers after a patch that merged them).
func sameNames(a, b []any) bool {
	for i := range a {
		an, aok := itemNameOf(a[i])
		bn, bok := itemNameOf(b[i])
		if aok != bok || an != bn {
			return false
		}
	}
	return true
}

func itemNameOf(v any) (string, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return "", false
	}
	n, ok := m["name"].(string)
	return n, ok
}

// pathString writes a path the way field.Path prints it.
func pathString(segs []load.Segment) string {
	var b strings.Builder
	for i, s := range segs {
		switch {
		case s.IsIndex:
			b.WriteString("[" + strconv.Itoa(s.Index) + "]")
		case identifier(s.Key):
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.Key)
		default:
			b.WriteString("[" + s.Key + "]")
		}
	}
	return b.String()
}

func identifier(k string) bool {
	if k == "" {
		return false
	}
	for i, r := range k {
		if !(r == '_' || r == '-' && i > 0 || unicode.IsLetter(r) || unicode.IsDigit(r) && i > 0) {
			return false
		}
	}
	return true
}

// containerLists are the lists of containers in a pod spec.
var containerListKeys = map[string]bool{"containers": true, "initContainers": true, "ephemeralContainers": true}

// blockOf is the block a field belongs to: a container's field (its
// livenessProbe, its resources), or the mapping that holds the field.
func blockOf(path []load.Segment) []load.Segment {
	for i := 0; i+2 < len(path); i++ {
		if !path[i].IsIndex && containerListKeys[path[i].Key] && path[i+1].IsIndex {
			return path[:i+3]
		}
	}
	if len(path) > 1 {
		return path[:len(path)-1]
	}
	return path
}

// containerOf is the path of the container item a path is under, or nil.
func containerOf(path []load.Segment) []load.Segment {
	for i := 0; i+1 < len(path); i++ {
		if !path[i].IsIndex && containerListKeys[path[i].Key] && path[i+1].IsIndex {
			return path[:i+2]
		}
	}
	return nil
}

// relKey turns the part of path below base into a dotted values key: ""
// and false when it holds a list index (a values key cannot address it).
func relKey(path, base []load.Segment) (string, bool) {
	var parts []string
	for _, s := range path[len(base):] {
		if s.IsIndex || strings.Contains(s.Key, ".") {
			return "", false
		}
		parts = append(parts, s.Key)
	}
	return strings.Join(parts, "."), true
}

func hasPrefix(path, prefix []load.Segment) bool {
	if len(path) < len(prefix) {
		return false
	}
	for i := range prefix {
		if path[i] != prefix[i] {
			return false
		}
	}
	return true
}

// segmentLeaves lists the paths of the scalars under v.
func segmentLeaves(v any, base []load.Segment) [][]load.Segment {
	var out [][]load.Segment
	var walk func(v any, p []load.Segment)
	walk = func(v any, p []load.Segment) {
		switch x := v.(type) {
		case map[string]any:
			for _, k := range sortedKeys(x) {
				walk(x[k], append(append([]load.Segment(nil), p...), load.Segment{Key: k}))
			}
		case []any:
			for i, c := range x {
				walk(c, append(append([]load.Segment(nil), p...), load.Segment{Index: i, IsIndex: true}))
			}
		default:
			out = append(out, p)
		}
	}
	walk(v, base)
	return out
}
