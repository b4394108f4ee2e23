package fixplan

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
)

// Routing a chart object's fix through the chart's values.
//
// Real charts rarely print a probe's numbers one key at a time: they print
// a whole map (`toYaml .Values.livenessProbe`, `with .Values.resources`),
// guard a block with a switch (`if .Values.startupProbe.enabled`), let a
// key replace the whole probe (`customLivenessProbe`), or use a size
// preset only while `resources` is empty (Bitnami's `resourcesPreset`).
// None of that is told by a chart's name: the router finds, for each block
// the fix changes (a container's probe or resources), values keys that
// could reach it, from the keys the trace ties to the block's fields and
// to the container's other fields, and from the values tree (a map named
// like the block, its custom* replacement), and renders the chart with
// them. A route is kept only when the render puts the fix's values on the
// block's fields and changes nothing else, in any object of the chart.
//
// The routes, tried in this order for each block:
//
//  1. keys: every field the fix changes is set by a values key already:
//     those keys get the new values;
//  2. map: a values map prints the block (the new keys go under it, a key
//     deleted is set to null, a switch beside it is turned on);
//  3. whole: a values key replaces the block (custom<Block>), or the map
//     must hold the block whole (a preset used only while it is empty):
//     it gets the block as the fix makes it, with null for the chart's
//     defaults the fix deletes.
//
// A block no route reaches is left to the template edits, then to the
// finding's patch (see planValues).

// keySet is a set of values keys with their new values: nil deletes.
type keySet map[string]any

// route is how one block is reached.
type route struct {
	block string // the block's field path
	how   string // keys, map, whole
	keys  keySet
	why   string // said to the user
	// at is the key a whole route writes the block to; fields maps the
	// field paths of the other routes' edits to their keys.
	at     string
	fields map[string]string
}

// keyOf is the values key that holds a field the routes write: the field
// path with list items named ("spec.template.spec.containers[db].resources.requests.cpu"),
// as finding.Fix.Placeholders names it.
func (r *objectRoute) keyOf(o *object.Object, named string) (string, bool) {
	var doc any
	if json.Unmarshal(o.Doc.JSON, &doc) != nil {
		return "", false
	}
	path, ok := indexPath(doc, named)
	if !ok {
		return "", false
	}
	for _, rt := range r.routes {
		at := map[string]string{}
		for f, k := range rt.fields {
			at[f] = k
		}
		if rt.at != "" {
			at[rt.block] = rt.at
		}
		// The field itself, or the field under one a key holds whole.
		for f, k := range at {
			base := load.SplitPath(f)
			if !hasPrefix(path, base) {
				continue
			}
			if rel, ok := relKey(path, base); ok && rel == "" {
				return k, true
			} else if ok {
				return k + "." + rel, true
			}
		}
	}
	return "", false
}

// objectRoute routes the change c of the rendered object o through the
// chart's values: the routes of the blocks it reaches, verified together,
// and the blocks it does not.
type objectRoute struct {
	routes    []route
	unrouted  []string // block paths
	unreached map[string]string
}

// routeObject finds and proves values routes for the blocks of c.
func (t *chartTrial) routeObject(o *object.Object, c fix.Change) (*objectRoute, error) {
	var before any
	if err := json.Unmarshal(o.Doc.JSON, &before); err != nil {
		return nil, err
	}
	wantJSON, err := fix.ApplyChange(o.Doc.JSON, c, o.Typed)
	if err != nil {
		return nil, err
	}
	var want any
	if err := json.Unmarshal(wantJSON, &want); err != nil {
		return nil, err
	}
	// A strategic merge patch may give named items back in another
	// order: the paths of both must name the same fields.
	want = alignTo(before, want)
	var edits []fieldEdit
	diffValues(before, want, nil, &edits)
	key := objKey{o.Doc.File, o.Ref}
	if _, ok := t.base[key]; !ok {
		return nil, fmt.Errorf("%s is not in the chart's render", o.Ref)
	}
	blocks := map[string][]fieldEdit{}
	paths := map[string][]load.Segment{}
	var order []string
	for _, e := range edits {
		b := blockOf(e.path)
		s := pathString(b)
		if _, ok := blocks[s]; !ok {
			order = append(order, s)
			paths[s] = b
		}
		blocks[s] = append(blocks[s], e)
	}
	r := &objectRoute{unreached: map[string]string{}}
	for _, s := range order {
		b := blockPlan{trial: t, obj: o, key: key, before: before, want: want, path: paths[s], edits: blocks[s]}
		rt, why := b.route()
		if rt == nil {
			r.unrouted = append(r.unrouted, s)
			r.unreached[s] = why
			continue
		}
		r.routes = append(r.routes, *rt)
	}
	if len(r.routes) > 1 {
		// Each route was proven alone: together they must give the
		// fixed object too.
		all := keySet{}
		for _, rt := range r.routes {
			for k, v := range rt.keys {
				all[k] = v
			}
		}
		var blocks [][]load.Segment
		for _, rt := range r.routes {
			blocks = append(blocks, paths[rt.block])
		}
		if why := t.check(key, before, want, blocks, all, nil); why != "" {
			for _, rt := range r.routes {
				r.unrouted = append(r.unrouted, rt.block)
				r.unreached[rt.block] = "the routes of the object's blocks do not hold together: " + why
			}
			r.routes = nil
		}
	}
	return r, nil
}

// blockPlan is one block of one object to route.
type blockPlan struct {
	trial        *chartTrial
	obj          *object.Object
	key          objKey
	before, want any
	path         []load.Segment
	edits        []fieldEdit
}

func (b *blockPlan) name() string {
	for i := len(b.path) - 1; i >= 0; i-- {
		if !b.path[i].IsIndex {
			return b.path[i].Key
		}
	}
	return ""
}

// route tries the routes in order; it returns the first the render
// proves, or why none is.
func (b *blockPlan) route() (*route, string) {
	block := pathString(b.path)
	shown := namedPath(b.obj, block)
	var whys []string
	tryKeys := func(how string, ks keySet, fields map[string]string, why string) *route {
		if len(ks) == 0 {
			return nil
		}
		if w := b.trial.check(b.key, b.before, b.want, [][]load.Segment{b.path}, ks, &b.path); w != "" {
			whys = append(whys, fmt.Sprintf("%s (%s): %s", how, strings.Join(sortedKeys(ks), ", "), w))
			return nil
		}
		if len(b.trial.mirrored) > 0 {
			why += "; the same keys set " + strings.Join(b.trial.mirrored, ", ") + " alike, which held the same"
		}
		if len(b.trial.derived) > 0 {
			why += "; the chart computes " + strings.Join(b.trial.derived, ", ") + " from them, and they change with them"
		}
		return &route{block: block, how: how, keys: ks, why: why, fields: fields}
	}
	// 1. The keys that set the fields now.
	if ks, fields, ok := b.existingKeys(); ok {
		if r := tryKeys("keys", ks, fields, "these values keys set the fields now"); r != nil {
			return r, ""
		}
	}
	// 2. A values map that prints the block: when the block is new and
	// the map has a switch that is off, the switch turned on first, and
	// only what the fix changes in what the chart then prints.
	maps := b.mapCandidates()
	for _, x := range maps {
		if ks, fields, ok := b.switchedOn(x); ok {
			if r := tryKeys("map", ks, fields, x+".enabled turns "+shown+" on, and "+x+" is printed into it"); r != nil {
				return r, ""
			}
		}
		ks, fields, ok := b.underMap(x)
		if !ok {
			continue
		}
		if r := tryKeys("map", ks, fields, x+" is printed into "+shown); r != nil {
			return r, ""
		}
	}
	// 3. A key that holds the block whole.
	for _, w := range b.wholeCandidates(maps) {
		ks := keySet{w: b.whole(w)}
		why := w + " holds " + shown + " whole"
		def, _ := lookupValue(b.trial.values, w)
		if bv, _ := load.ValueAt(b.before, b.path); empty(def) && !empty(bv) {
			why = w + " is empty, and the chart fills " + shown + " without it (a preset); set, it replaces the preset: it holds the block whole, as the fix makes it"
		}
		if strings.Contains(w[strings.LastIndexByte(w, '.')+1:], "custom") {
			why = w + " replaces " + shown + " in the chart's template"
		}
		if r := tryKeys("whole", ks, nil, why); r != nil {
			r.at = w
			return r, ""
		}
	}
	if len(whys) == 0 {
		if tied := b.tiedKeys(); tied != "" {
			return nil, "no values key of the chart holds " + shown + " whole; " + tied
		}
		return nil, "no values key of the chart is tied to " + shown
	}
	if len(whys) > 3 {
		whys = append(whys[:3], fmt.Sprintf("%d more", len(whys)-3))
	}
	return nil, "no values key reaches " + shown + " (tried " + strings.Join(whys, "; ") + ")"
}

// tiedKeys says, field by field, which values keys reach the fields the
// fix changes when no route reaches the block as a whole: the key the
// trace ties to a field, else a key the template names after the field
// (Telegraf's `{{- if .Values.pdb.maxUnavailable }}`, a key values.yaml
// does not set), else none; or "" when no field has a key, where "no
// values key is tied to" the block is the whole truth.
func (b *blockPlan) tiedKeys() string {
	doc := b.obj.Doc
	var tied, none []string
	for _, e := range b.edits {
		p := pathString(e.path)
		shown := namedPath(b.obj, p)
		if doc.Trace != nil && e.had {
			if pos, exact := doc.Locate(p); exact {
				if ref, ok := doc.Trace(doc, p, pos).Values.Key(); ok {
					tied = append(tied, ref.Key+" sets "+shown)
					b.trial.reached(b.key, shown)
					continue
				}
			}
		}
		name := e.path[len(e.path)-1].Key
		named := ""
		for _, k := range b.trial.refs[b.key.stream] {
			if !e.path[len(e.path)-1].IsIndex && k[strings.LastIndexByte(k, '.')+1:] == name {
				named = k
				break
			}
		}
		if named != "" {
			tied = append(tied, "the template names "+named+" for "+shown)
			b.trial.reached(b.key, shown)
			continue
		}
		none = append(none, shown)
	}
	if len(tied) == 0 {
		return ""
	}
	out := strings.Join(tied, ", ")
	if len(none) > 0 {
		out += "; no values key is tied to " + strings.Join(none, ", ")
	}
	return out
}

// existingKeys are the keys the trace ties to each field the fix changes.
func (b *blockPlan) existingKeys() (keySet, map[string]string, bool) {
	ks, fields := keySet{}, map[string]string{}
	doc := b.obj.Doc
	if doc.Trace == nil {
		return nil, nil, false
	}
	for _, e := range b.edits {
		if !e.had {
			return nil, nil, false
		}
		p := pathString(e.path)
		pos, exact := doc.Locate(p)
		if !exact {
			return nil, nil, false
		}
		prov := doc.Trace(doc, p, pos).Values
		ref, ok := prov.Key()
		if !ok {
			if e.has || prov == nil || prov.Parent == nil {
				return nil, nil, false
			}
			ref = *prov.Parent // a deleted map that one values key holds
		}
		ks[ref.Key] = e.new
		fields[p] = ref.Key
	}
	return ks, fields, true
}

// mapCandidates are values maps that could print the block: found from
// the keys the trace ties to the block's fields and to its container's,
// then the maps of the values tree named like the block, nearest first.
func (b *blockPlan) mapCandidates() []string {
	var out []string
	add := func(k string) {
		if k != "" && !containsString(out, k) {
			out = append(out, k)
		}
	}
	doc := b.obj.Doc
	var prefixes []string
	if doc.Trace != nil {
		scope := containerOf(b.path)
		if scope == nil {
			scope = b.path[:len(b.path)-1]
		}
		bv, _ := load.ValueAt(b.before, scope)
		for _, leaf := range segmentLeaves(bv, scope) {
			p := pathString(leaf)
			pos, exact := doc.Locate(p)
			if !exact {
				continue
			}
			ref, ok := doc.Trace(doc, p, pos).Values.Key()
			if !ok {
				continue
			}
			rel, ok := relKey(leaf, scope)
			if !ok || !strings.HasSuffix(ref.Key, "."+rel) {
				continue
			}
			prefix := strings.TrimSuffix(ref.Key, "."+rel)
			if hasPrefix(leaf, b.path) {
				if sub, ok := relKey(b.path, scope); ok {
					// The leaf is in the block: its key's prefix plus the
					// block's own path below the container is the map.
					add(prefix + "." + sub)
				}
			}
			if !containsString(prefixes, prefix) {
				prefixes = append(prefixes, prefix)
			}
		}
		if sub, ok := relKey(b.path, scope); ok {
			for _, p := range prefixes {
				add(p + "." + sub)
			}
		}
	}
	// The keys named like the block in the template that renders the
	// object, those under a prefix the container's keys share first: the
	// reference that prints the block, whether values.yaml sets the key
	// or leaves it commented out, ranked before the values tree's maps of
	// the same name (a top-level resources beside sixteen modules' ones).
	name := b.name()
	var inTemplate []string
	for _, k := range b.trial.refs[b.key.stream] {
		if k[strings.LastIndexByte(k, '.')+1:] == name {
			inTemplate = append(inTemplate, k)
		}
	}
	sort.SliceStable(inTemplate, func(i, j int) bool {
		return sharedPrefix(inTemplate[i], prefixes) > sharedPrefix(inTemplate[j], prefixes)
	})
	// The one whose reference stands nearest the line that writes the
	// block renders it: first of them, however many modules' maps of the
	// same name the template names too.
	if k := nearestRef(b.obj, namedPath(b.obj, pathString(b.path)), inTemplate, b.trial.maxSize); k != "" {
		add(k)
	}
	for _, k := range inTemplate {
		add(k)
	}
	// The values tree: maps named like the block, those under a prefix
	// the container's keys share first.
	var named []string
	walkValues(b.trial.values, "", 8, func(k string, v any) {
		if k[strings.LastIndexByte(k, '.')+1:] != name {
			return
		}
		switch v.(type) {
		case map[string]any, nil:
			named = append(named, k)
		}
	})
	sort.SliceStable(named, func(i, j int) bool {
		return sharedPrefix(named[i], prefixes) > sharedPrefix(named[j], prefixes)
	})
	for _, k := range named {
		add(k)
	}
	if len(out) > 8 {
		out = out[:8]
	}
	return out
}

// underMap sets the block's changes under the values map x; a switch
// beside them (x.enabled: false) is turned on when the block is new.
func (b *blockPlan) underMap(x string) (keySet, map[string]string, bool) {
	ks, fields := keySet{}, map[string]string{}
	for _, e := range b.edits {
		rel, ok := relKey(e.path, b.path)
		if !ok {
			return nil, nil, false
		}
		k := x
		if rel != "" {
			k += "." + rel
		}
		ks[k] = e.new
		fields[pathString(e.path)] = k
	}
	if _, had := load.ValueAt(b.before, b.path); !had {
		if v, ok := lookupValue(b.trial.values, x+".enabled"); ok && v == false {
			ks[x+".enabled"] = true
		}
	}
	return ks, fields, true
}

// switchedOn turns on the switch beside the map x (x.enabled: false) of
// a block the object does not have, renders the chart, and sets under x
// only the fields where the block the chart then prints differs from the
// fix's.
func (b *blockPlan) switchedOn(x string) (keySet, map[string]string, bool) {
	if _, had := load.ValueAt(b.before, b.path); had {
		return nil, nil, false
	}
	if v, ok := lookupValue(b.trial.values, x+".enabled"); !ok || v != false {
		return nil, nil, false
	}
	on := keySet{x + ".enabled": true}
	got, err := b.trial.render(on)
	if err != nil {
		return nil, nil, false
	}
	gb, ok := load.ValueAt(got[b.key], b.path)
	if !ok {
		return nil, nil, false
	}
	wb, _ := load.ValueAt(b.want, b.path)
	var edits []fieldEdit
	diffValues(gb, wb, b.path, &edits)
	ks, fields := keySet{x + ".enabled": true}, map[string]string{}
	for _, e := range edits {
		if !e.has {
			continue // a default of the block the chart prints: kept
		}
		rel, ok := relKey(e.path, b.path)
		if !ok || rel == "" {
			return nil, nil, false
		}
		ks[x+"."+rel] = e.new
		fields[pathString(e.path)] = x + "." + rel
	}
	return ks, fields, true
}

// wholeCandidates are keys that could hold the block whole: custom<Block>
// beside each map candidate that the values tree has, then the map
// candidates themselves that exist.
func (b *blockPlan) wholeCandidates(maps []string) []string {
	custom := "custom" + upperFirst(b.name())
	var out []string
	add := func(k string) {
		if !containsString(out, k) && len(out) < 10 {
			out = append(out, k)
		}
	}
	for _, m := range maps {
		parent := ""
		if i := strings.LastIndexByte(m, '.'); i >= 0 {
			parent = m[:i+1]
		}
		if _, ok := lookupValue(b.trial.values, parent+custom); ok {
			add(parent + custom)
		}
	}
	for _, m := range maps {
		if _, ok := lookupValue(b.trial.values, m); ok {
			add(m)
		}
	}
	// A container's lifecycle block is printed whole from a key named
	// lifecycleHooks in Bitnami's charts (primary.lifecycleHooks), beside
	// the container's other keys; the render proves which, as for any
	// candidate.
	if b.name() == "lifecycle" {
		var hooks []string
		walkValues(b.trial.values, "", 8, func(k string, v any) {
			if k[strings.LastIndexByte(k, '.')+1:] != "lifecycleHooks" {
				return
			}
			switch v.(type) {
			case map[string]any, nil:
				hooks = append(hooks, k)
			}
		})
		sort.SliceStable(hooks, func(i, j int) bool {
			return sharedPrefix(hooks[i], maps) > sharedPrefix(hooks[j], maps)
		})
		for _, k := range hooks {
			add(k)
		}
	}
	// custom<Block> elsewhere in the values tree (statefulset.customLivenessProbe
	// beside no livenessProbe map), nearest the maps first.
	var customs []string
	walkValues(b.trial.values, "", 8, func(k string, _ any) {
		if k[strings.LastIndexByte(k, '.')+1:] == custom {
			customs = append(customs, k)
		}
	})
	sort.SliceStable(customs, func(i, j int) bool {
		return sharedPrefix(customs[i], maps) > sharedPrefix(customs[j], maps)
	})
	for _, c := range customs {
		add(c)
	}
	return out
}

// whole is the block as the fix makes it, as the value of key w: with
// null for what the chart's default of w holds and the block does not,
// since values maps merge.
func (b *blockPlan) whole(w string) any {
	v, _ := load.ValueAt(b.want, b.path)
	def, _ := lookupValue(b.trial.values, w)
	return withDeletions(v, def)
}

// empty reports whether a value holds nothing: null, {}, [], "".
func empty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	case string:
		return x == ""
	}
	return false
}

// withDeletions is v with a null for each key def has and v lacks.
func withDeletions(v, def any) any {
	vm, ok := v.(map[string]any)
	dm, dok := def.(map[string]any)
	if !ok || !dok {
		return v
	}
	out := map[string]any{}
	for k, x := range vm {
		out[k] = withDeletions(x, dm[k])
	}
	for k := range dm {
		if _, ok := vm[k]; !ok {
			out[k] = nil
		}
	}
	return out
}

// walkValues calls f for each key of a values tree, to a depth.
func walkValues(m map[string]any, prefix string, depth int, f func(key string, v any)) {
	if depth == 0 {
		return
	}
	for _, k := range sortedKeys(m) {
		key := join(prefix, k)
		f(key, m[k])
		if sub, ok := m[k].(map[string]any); ok {
			walkValues(sub, key, depth-1, f)
		}
	}
}

func lookupValue(m map[string]any, key string) (any, bool) {
	var v any = m
	for _, part := range strings.Split(key, ".") {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = mm[part]; !ok {
			return nil, false
		}
	}
	return v, true
}

// sharedPrefix is how many leading segments key shares with the nearest
// of prefixes.
func sharedPrefix(key string, prefixes []string) int {
	best := 0
	ks := strings.Split(key, ".")
	for _, p := range prefixes {
		ps := strings.Split(p, ".")
		n := 0
		for n < len(ks) && n < len(ps) && ks[n] == ps[n] {
			n++
		}
		best = max(best, n)
	}
	return best
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func containsString(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// findingsIn lists the findings of c whose own patch reaches only the
// given blocks of o.
func findingsIn(o *object.Object, c fix.Change, chosen []finding.Finding, blocks map[string]bool) (in, out []int) {
	for _, i := range c.Findings {
		touched := blocksOf(o, chosen[i])
		ok := len(touched) > 0
		for b := range touched {
			if !blocks[b] {
				ok = false
			}
		}
		if ok {
			in = append(in, i)
		} else {
			out = append(out, i)
		}
	}
	return in, out
}

// blocksOf lists the blocks of o a finding's own patch changes.
func blocksOf(o *object.Object, f finding.Finding) map[string]bool {
	var before, want any
	if json.Unmarshal(o.Doc.JSON, &before) != nil {
		return nil
	}
	after, err := fix.Apply(o.Doc.JSON, f.Fix.Patch, o.Typed)
	if err != nil || json.Unmarshal(after, &want) != nil {
		return nil
	}
	var edits []fieldEdit
	diffValues(before, alignTo(before, want), nil, &edits)
	out := map[string]bool{}
	for _, e := range edits {
		out[pathString(blockOf(e.path))] = true
	}
	return out
}
