package fix

import (
	"math"
	"unicode/utf8"
)

// The agreement rewrites only the patches that differ from their part of
// the composition (Agree), and most do not: a fix whose fields no other
// fix on the object sets is its own part. What follows answers that
// without building the projection, and, where no two fixes share a
// field, without composing at all. Each answer is true only where the
// general path (compose, project, compare) is certain to find the patch
// unchanged; anything unsure goes the general way.

// disjoint reports whether no two of the decoded patches (owns[k] where
// decoded[k]) set a common field, a probe or a container's resources
// counting as one field (the agreement takes them whole), and each patch
// is its own projection once composed with fields of others: then none
// disagrees with the composition and it need not be made.
func disjoint(owns []map[string]any, decoded []bool) bool {
	for a := range owns {
		if !decoded[a] {
			continue
		}
		if !selfProjecting(owns[a]) {
			return false
		}
		for b := a + 1; b < len(owns); b++ {
			if decoded[b] && overlap(owns[a], owns[b]) {
				return false
			}
		}
	}
	return true
}

// overlap reports whether patches a and b may set a common field: they
// share a key whose values may (valueOverlap).
func overlap(a, b map[string]any) bool {
	for k, av := range a {
		if bv, ok := b[k]; ok && valueOverlap(k, av, bv) {
			return true
		}
	}
	return false
}

// valueOverlap reports whether a and b, two patches' values of the key k,
// may set a common field: unless both are maps (or both named lists,
// merged item by item) that set none, or k is a probe or resources, taken
// whole. Named lists longer than a few are left to the general path.
func valueOverlap(k string, a, b any) bool {
	if isProbe(k) || k == "resources" {
		return true
	}
	switch x := a.(type) {
	case map[string]any:
		if y, ok := b.(map[string]any); ok && x != nil && y != nil {
			return overlap(x, y)
		}
	case []any:
		if y, ok := b.([]any); ok && len(x) <= maxScanned && len(y) <= maxScanned && NamedList(x) && NamedList(y) {
			return itemsOverlap(x, y)
		}
	}
	return true
}

// maxScanned bounds the named lists valueOverlap matches item by item.
const maxScanned = 16

// itemsOverlap reports whether an item of x and the item of y of the same
// name may set a common field other than the name they share.
func itemsOverlap(x, y []any) bool {
	for _, xi := range x {
		xm := xi.(map[string]any)
		name, _ := ItemName(xm)
		for _, yi := range y {
			ym := yi.(map[string]any)
			if n, _ := ItemName(ym); n != name {
				continue
			}
			for k, xv := range xm {
				if yv, ok := ym[k]; ok && k != "name" && valueOverlap(k, xv, yv) {
					return true
				}
			}
		}
	}
	return false
}

// selfProjecting reports whether v holds only what a clone copies as it
// is (plain) and named lists whose names are each once: the projection of
// such a patch onto a composition that adds only others' fields to it is
// the patch itself.
func selfProjecting(v any) bool { return plainWith(v, namesOnce) }

// namesOnce reports whether a named list names each item once (any other
// list passes).
func namesOnce(x []any) bool {
	if !NamedList(x) {
		return true
	}
	for i := range x {
		n, _ := ItemName(x[i])
		for j := range i {
			if m, _ := ItemName(x[j]); m == n {
				return false
			}
		}
	}
	return true
}

// plain reports whether clone(v) is v itself, structurally: v holds only
// the types json.Unmarshal makes, strings and keys valid UTF-8, finite
// numbers, no nil map or list.
func plain(v any) bool { return plainWith(v, nil) }

// plainWith is plain, with every list also passing list when it is set.
func plainWith(v any, list func([]any) bool) bool {
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return false
		}
		for k, c := range x {
			if !utf8.ValidString(k) || !plainWith(c, list) {
				return false
			}
		}
		return true
	case []any:
		if x == nil {
			return false
		}
		for _, c := range x {
			if !plainWith(c, list) {
				return false
			}
		}
		return list == nil || list(x)
	}
	return plainScalar(v)
}

func plainScalar(v any) bool {
	switch x := v.(type) {
	case nil, bool:
		return true
	case float64:
		return !math.IsNaN(x) && !math.IsInf(x, 0)
	case string:
		return utf8.ValidString(x)
	}
	return false
}

// agrees reports whether pr.project(own, composed) certainly equals own,
// walking both as project does without building the projection.
func (pr projector) agrees(own, composed map[string]any) bool {
	if own == nil {
		return false // projected, a nil map becomes an empty one
	}
	for k, ov := range own {
		if !utf8.ValidString(k) {
			return false
		}
		cv, ok := composed[k]
		if !ok {
			continue // projected as it is
		}
		if isProbe(k) || k == "resources" {
			if !plain(cv) || !equal(cv, ov) {
				return false
			}
			continue
		}
		switch o := ov.(type) {
		case map[string]any:
			if c, ok := cv.(map[string]any); ok {
				if !pr.agrees(o, c) {
					return false
				}
				continue
			}
		case []any:
			if c, ok := cv.([]any); ok && NamedList(o) {
				if byName := pr.items(c); byName != nil {
					// Each item projects onto the composed items of its
					// name: the same list when each has exactly one.
					for _, oi := range o {
						name, _ := ItemName(oi)
						at := byName[name]
						if len(at) != 1 || !pr.agrees(oi.(map[string]any), c[at[0]].(map[string]any)) {
							return false
						}
					}
					continue
				}
			}
		}
		if !plain(cv) || !equal(cv, ov) {
			return false
		}
	}
	return true
}
