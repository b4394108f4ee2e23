package fix

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/resource"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/jsonenc"
	"backfire.dev/backfire/internal/object"
)

// Change is the one patch that fixes every finding on one object: the
// findings' strategic merge patches merged with the precedence below.
type Change struct {
	Target object.Ref
	// Patch is the composed strategic merge patch, decoded.
	Patch map[string]any
	// Findings are the indexes (into the slice given to Compose) of the
	// findings this change fixes.
	Findings []int
	// Placeholders are the fields of Patch, as dotted paths with list items
	// named by their "name" ("spec.template.spec.containers[db].resources.requests.cpu"),
	// whose values the tool cannot know: a human must size them.
	Placeholders []string
	// Notes say where the precedence settled a conflict.
	Notes []string
}

// Compose merges the strategic merge patches of findings into one Change
// per target object, in a stable order. Findings without such a patch
// (manual changes) are not in any Change.
//
// The precedence, for a field that two fixes set differently:
//  1. A fix that replaces a probe's handler (it deletes the old one with
//     null, or sets a different one) owns that probe: its values win, since
//     the other fixes' numbers were computed for the check being replaced.
//  2. Otherwise the more tolerant value wins: the larger number or
//     quantity. Every probe-timing and memory rule asks for more room, so
//     the larger value satisfies each of them.
//  3. Otherwise (a string, a deletion against a value) the rule with the
//     lower ID wins.
//
// Fields that only one fix sets are all kept. The rescan of `backfire fix`
// proves the result: every composed finding must be gone.
func Compose(fs []finding.Finding) []Change {
	return compose(fs, nil, false)
}

// ComposeDecoded is Compose with patches[i] fs[i]'s patch decoded, or nil
// where it is to be decoded here. The patches are read, never changed.
func ComposeDecoded(fs []finding.Finding, patches []map[string]any) []Change {
	return compose(fs, patches, false)
}

// ComposePatchOnly is ComposeDecoded without the Changes' Notes, for the
// callers that read only their patches, findings and placeholders (the
// scan's recompute and agreement): it does not name who set each field
// two fixes set differently, the walks, encodings and prose of every
// conflict.
func ComposePatchOnly(fs []finding.Finding, patches []map[string]any) []Change {
	return compose(fs, patches, true)
}

// compose is Compose with the findings' patches already decoded, where
// patches is not nil (a nil entry is decoded here), without notes where
// quiet is set.
func compose(fs []finding.Finding, patches []map[string]any, quiet bool) []Change {
	type part struct {
		i     int
		patch map[string]any
		owns  bool
	}
	byTarget := map[object.Ref][]part{}
	var order []object.Ref
	for i, f := range fs {
		if f.Fix == nil || f.Fix.Type != finding.StrategicMergePatch || len(f.Fix.Patch) == 0 {
			continue
		}
		var p map[string]any
		if patches != nil {
			p = patches[i]
		}
		if p == nil {
			var err error
			if p, err = DecodePatch(f.Fix.Patch); err != nil {
				continue // rules build patches with json.Marshal: cannot happen
			}
		}
		t := TargetOf(f)
		if _, ok := byTarget[t]; !ok {
			order = append(order, t)
		}
		byTarget[t] = append(byTarget[t], part{i: i, patch: p, owns: ReplacesHandler(p)})
	}
	out := make([]Change, 0, len(order))
	for _, t := range order {
		parts := byTarget[t]
		sort.SliceStable(parts, func(a, b int) bool {
			if parts[a].owns != parts[b].owns {
				return parts[a].owns
			}
			return fs[parts[a].i].Rule < fs[parts[b].i].Rule
		})
		c := Change{Target: t, Patch: map[string]any{}}
		c.Findings = make([]int, 0, len(parts))
		m := merger{toOwn: make([]walk, 0, len(parts)), quiet: quiet}
		for _, p := range parts {
			c.Findings = append(c.Findings, p.i)
			m.toOwn = append(m.toOwn, walk{p.patch, "", fs[p.i].Rule})
			m.merge(c.Patch, p.patch, "", fs[p.i].Rule)
			for _, ph := range fs[p.i].Fix.Placeholders {
				// A fix has a few placeholders, most none: a map of
				// them per object cost more than the search.
				if !slices.Contains(c.Placeholders, ph) {
					c.Placeholders = append(c.Placeholders, ph)
				}
			}
		}
		sort.Ints(c.Findings)
		c.Notes = m.notes
		out = append(out, c)
	}
	return out
}

// TargetOf is the object a finding's fix applies to.
func TargetOf(f finding.Finding) object.Ref {
	if f.Fix != nil && f.Fix.Target != nil {
		return *f.Fix.Target
	}
	return f.Object
}

// probeHandlers are the keys of a probe that say what it checks.
var probeHandlers = []string{"exec", "httpGet", "tcpSocket", "grpc"}

func isProbe(key string) bool { return strings.HasSuffix(key, "Probe") }

// ReplacesHandler reports whether a patch deletes a probe handler anywhere:
// such a fix owns the probe (see Compose).
func ReplacesHandler(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			if isProbe(k) {
				if pm, ok := c.(map[string]any); ok {
					for _, h := range probeHandlers {
						if hv, ok := pm[h]; ok && hv == nil {
							return true
						}
					}
				}
			}
			if ReplacesHandler(c) {
				return true
			}
		}
	case []any:
		for _, c := range x {
			if ReplacesHandler(c) {
				return true
			}
		}
	}
	return false
}

type merger struct {
	// owned maps a probe's path to the rule whose fix replaced its handler.
	owned map[string]string
	// by maps a leaf's path to the rule that set it. Both are made with
	// their first walk: most compositions have no conflict to read them.
	by    map[string]string
	notes []string
	// toOwn and toMark are the walks of own and mark not made yet: owned
	// and by are read only where two fixes conflict, so the walks (a path
	// string for every field of every patch) are made then, in order.
	toOwn, toMark []walk
	// lists finds, by its path, the items of a named list merged so far
	// by name: each fix of an object's thousands of containers merges
	// into the one list, which is not searched item by item for each.
	lists map[string]*namedItems
	// quiet: no notes, and so no walks of who set a field (toMark, by),
	// and src's keys merged in any order (the order is the notes').
	quiet bool
}

// namedItems is a merged list whose items all have a name, and each
// name's first item.
type namedItems struct {
	list  []any
	first map[string]map[string]any
}

// named returns the items of the merged list l at path by name, nil when
// l is not a named list (NamedList).
func (m *merger) named(path string, l []any) *namedItems {
	if e := m.lists[path]; e != nil && len(e.list) == len(l) && len(l) > 0 && &e.list[0] == &l[0] {
		return e
	}
	if !NamedList(l) {
		return nil
	}
	e := &namedItems{list: l, first: make(map[string]map[string]any, len(l))}
	if m.lists == nil {
		m.lists = map[string]*namedItems{}
	}
	for _, it := range l {
		name, _ := ItemName(it)
		if _, ok := e.first[name]; !ok {
			e.first[name] = it.(map[string]any)
		}
	}
	m.lists[path] = e
	return e
}

// A walk is one call of own or mark put off.
type walk struct {
	v          any
	path, rule string
}

// ownedProbes returns owned with every put-off own walk made.
func (m *merger) ownedProbes() map[string]string {
	if m.owned == nil {
		m.owned = map[string]string{}
	}
	for _, w := range m.toOwn {
		m.own(w.v, w.path, w.rule)
	}
	m.toOwn = m.toOwn[:0]
	return m.owned
}

// setBy returns the rule that set the leaf at p, every put-off mark walk
// made first.
func (m *merger) setBy(p string) string {
	if m.by == nil {
		m.by = map[string]string{}
	}
	for _, w := range m.toMark {
		m.mark(w.v, w.path, w.rule)
	}
	m.toMark = m.toMark[:0]
	return m.by[p]
}

// merge merges src (from rule) into dst at path.
func (m *merger) merge(dst, src map[string]any, path, rule string) {
	if m.quiet {
		for k, sv := range src {
			m.mergeKey(dst, k, sv, path, rule)
		}
		return
	}
	keys := make([]string, 0, len(src))
	for k := range src {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		m.mergeKey(dst, k, src[k], path, rule)
	}
}

// mergeKey merges src's value sv of the key k into dst at path.
func (m *merger) mergeKey(dst map[string]any, k string, sv any, path, rule string) {
	p := join(path, k)
	dv, exists := dst[k]
	if !exists {
		dst[k] = clone(sv)
		if !m.quiet {
			m.toMark = append(m.toMark, walk{sv, p, rule})
		}
		return
	}
	switch s := sv.(type) {
	case map[string]any:
		if d, ok := dv.(map[string]any); ok {
			m.merge(d, s, p, rule)
			return
		}
	case []any:
		if d, ok := dv.([]any); ok && NamedList(s) {
			if items := m.named(p, d); items != nil {
				dst[k] = m.mergeNamed(items, s, p, rule)
				return
			}
		}
	}
	if equal(dv, sv) {
		return
	}
	winner, why := m.resolve(p, dv, sv, rule)
	if !m.quiet {
		m.notes = append(m.notes, fmt.Sprintf("%s: %s (%s) over %s (%s): %s", p, show(winner), m.whoSet(p, winner, dv, rule), show(other(winner, dv, sv)), m.whoLost(p, winner, dv, rule), why))
	}
	if !equal(winner, dv) {
		dst[k] = clone(sv)
		if !m.quiet {
			m.toMark = append(m.toMark, walk{sv, p, rule})
		}
	}
}

func (m *merger) whoSet(p string, winner, dv any, rule string) string {
	if equal(winner, dv) {
		return m.setBy(p)
	}
	return rule
}

func (m *merger) whoLost(p string, winner, dv any, rule string) string {
	if equal(winner, dv) {
		return rule
	}
	return m.setBy(p)
}

func other(winner, a, b any) any {
	if equal(winner, a) {
		return b
	}
	return a
}

// resolve picks between the value already merged (from a fix of higher
// precedence) and v from rule.
func (m *merger) resolve(path string, have, v any, rule string) (any, string) {
	// The probes path is in are its prefixes before a dot.
	owned := m.ownedProbes()
	for i := 0; i < len(path); i++ {
		if path[i] != '.' {
			continue
		}
		if owner, ok := owned[path[:i]]; ok && owner != rule {
			return have, owner + " replaces the handler of " + path[:i]
		}
	}
	if a, b, ok := numbers(have, v); ok {
		if b > a {
			return v, "the more tolerant value"
		}
		return have, "the more tolerant value"
	}
	return have, "the lower rule ID"
}

// own records the probes whose handler rule's patch replaces.
func (m *merger) own(v any, path, rule string) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			p := join(path, k)
			if pm, ok := c.(map[string]any); ok && isProbe(k) && handlerDeleted(pm) {
				if _, taken := m.owned[p]; !taken {
					m.owned[p] = rule
				}
			}
			m.own(c, p, rule)
		}
	case []any:
		for _, c := range x {
			if n, ok := ItemName(c); ok {
				m.own(c, path+"["+n+"]", rule)
			}
		}
	}
}

func (m *merger) mark(v any, path, rule string) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			m.mark(c, join(path, k), rule)
		}
	case []any:
		for _, c := range x {
			if n, ok := ItemName(c); ok {
				m.mark(c, path+"["+n+"]", rule)
			}
		}
	default:
		m.by[path] = rule
	}
}

// mergeNamed merges lists whose items are maps with a "name" (containers),
// item by item, as a strategic merge patch does: into the merged list
// dst, whose items by name are given, it returns the list merged.
func (m *merger) mergeNamed(dst *namedItems, src []any, path, rule string) []any {
	for _, s := range src {
		name, _ := ItemName(s)
		if d, ok := dst.first[name]; ok {
			m.merge(d, s.(map[string]any), path+"["+name+"]", rule)
			continue
		}
		c := clone(s)
		dst.list = append(dst.list, c)
		// By the copy's name: a name that is not UTF-8 is not the same
		// once copied through JSON, as before.
		if cn, ok := ItemName(c); ok {
			if _, dup := dst.first[cn]; !dup {
				dst.first[cn] = c.(map[string]any)
			}
		}
		if !m.quiet {
			m.toMark = append(m.toMark, walk{s, path + "[" + name + "]", rule})
		}
	}
	return dst.list
}

func handlerDeleted(pm map[string]any) bool {
	for _, h := range probeHandlers {
		if v, ok := pm[h]; ok && v == nil {
			return true
		}
	}
	return false
}

// ItemName is a list item's name, when it is a map with one, as a
// strategic merge patch merges containers by it.
func ItemName(v any) (string, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return "", false
	}
	n, ok := m["name"].(string)
	return n, ok
}

// NamedList reports whether every item of a non-empty list has a name
// (ItemName): such a list is merged item by item.
func NamedList(l []any) bool {
	for _, v := range l {
		if _, ok := ItemName(v); !ok {
			return false
		}
	}
	return len(l) > 0
}

// numbers reads two numbers or two resource quantities.
func numbers(a, b any) (float64, float64, bool) {
	fa, oka := a.(float64)
	fb, okb := b.(float64)
	if oka && okb {
		return fa, fb, true
	}
	sa, oka := a.(string)
	sb, okb := b.(string)
	if !oka || !okb {
		return 0, 0, false
	}
	qa, err1 := resource.ParseQuantity(sa)
	qb, err2 := resource.ParseQuantity(sb)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return qa.AsApproximateFloat64(), qb.AsApproximateFloat64(), true
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func show(v any) string {
	if v == nil {
		return "null (deleted)"
	}
	b, _ := jsonenc.Marshal(v)
	return string(b)
}

// Equal reports whether two decoded JSON values are the same: whether
// they encode to the same JSON.
func Equal(a, b any) bool { return equal(a, b) }

// equal is JSON equality, walked structurally for the types json.Unmarshal
// makes (the patches' values) instead of encoding both sides: the fixes'
// composition asks it for every field of every patch. Anything else (an
// int from a rule, a nil map, a string that is not UTF-8, which encoding
// changes) is compared by its encoding, as before.
func equal(a, b any) bool {
	switch x := a.(type) {
	case nil:
		if b == nil {
			return true
		}
	case string:
		if y, ok := b.(string); ok && utf8.ValidString(x) && utf8.ValidString(y) {
			return x == y
		}
	case bool:
		if y, ok := b.(bool); ok {
			return x == y
		}
	case float64:
		if y, ok := b.(float64); ok && !math.IsNaN(x) && !math.IsNaN(y) && !math.IsInf(x, 0) && !math.IsInf(y, 0) {
			// -0 encodes as "-0": it is not 0 here either.
			return x == y && math.Signbit(x) == math.Signbit(y)
		}
	case map[string]any:
		// Keys that are not UTF-8 may encode alike: those go by encoding.
		if y, ok := b.(map[string]any); ok && x != nil && y != nil && validKeys(x) && validKeys(y) {
			if len(x) != len(y) {
				return false
			}
			for k, xv := range x {
				if yv, ok := y[k]; !ok || !equal(xv, yv) {
					return false
				}
			}
			return true
		}
	case []any:
		if y, ok := b.([]any); ok && x != nil && y != nil {
			return slices.EqualFunc(x, y, equal)
		}
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func validKeys(m map[string]any) bool {
	for k := range m {
		if !utf8.ValidString(k) {
			return false
		}
	}
	return true
}

// clone is v encoded and decoded again: a deep copy, made directly for the
// types json.Unmarshal makes and through JSON for anything else.
func clone(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case bool:
		return x
	case float64:
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			return x
		}
	case string:
		if utf8.ValidString(x) {
			return x
		}
	case map[string]any:
		if x == nil {
			return nil
		}
		out := make(map[string]any, len(x))
		for k, c := range x {
			if !utf8.ValidString(k) {
				return cloneJSON(v)
			}
			out[k] = clone(c)
		}
		return out
	case []any:
		if x == nil {
			return nil
		}
		out := make([]any, len(x))
		for i, c := range x {
			out[i] = clone(c)
		}
		return out
	}
	return cloneJSON(v)
}

func cloneJSON(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}
