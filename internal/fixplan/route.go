package fixplan

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/helm"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/source"
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

// chartTrial renders one chart with trial values and compares the
// objects with its render as the scan saw it.
type chartTrial struct {
	r     *helm.Renderer
	in    source.Input
	base  map[objKey]any
	noise map[objKey]map[string]bool // fields that differ from render to render
	// unstable holds the streams and kinds whose objects' names differ
	// from render to render (a test Pod named with randAlphaNum).
	unstable map[string]bool
	values   map[string]any // .Values
	layers   []helm.ValuesLayer
	// refs holds the values keys each template names (by stream), for
	// the candidates of a block (see mapCandidates).
	refs map[string][]string
	// renders counts the trial renders, for the evaluation.
	renders int
	// schema: the chart or a subchart has a values.schema.json, which
	// may reject what a fix sets (see admitted).
	schema bool
	// maxSize bounds the templates read to rank candidates.
	maxSize int64
	// mirrored lists the blocks the last check let change alike, as
	// "Kind name path".
	mirrored []string
	// derived lists what the last check let change because the chart
	// computes it from the keys (see derivedChange), as "Kind name path".
	derived []string
}

type objKey struct {
	stream string
	ref    object.Ref
}

func newTrial(r *helm.Renderer, chartDir string) (*chartTrial, error) {
	t := &chartTrial{r: r, in: source.Input{Path: chartDir, Kind: source.Chart}}
	vals, layers, err := r.Values(t.in)
	if err != nil {
		return nil, err
	}
	t.values, t.layers = vals, layers
	t.schema = hasSchema(chartDir)
	// Without them only the trace and the values tree give candidates.
	t.refs, _ = r.ValuesRefs(t.in)
	if t.base, err = t.render(nil); err != nil {
		return nil, err
	}
	again, err := t.render(nil)
	if err != nil {
		return nil, err
	}
	t.noise = map[objKey]map[string]bool{}
	t.unstable = map[string]bool{}
	for k := range again {
		if _, ok := t.base[k]; !ok {
			t.unstable[k.stream+"\x00"+k.ref.Kind] = true
		}
	}
	for k := range t.base {
		if _, ok := again[k]; !ok {
			t.unstable[k.stream+"\x00"+k.ref.Kind] = true
		}
	}
	for k, v := range t.base {
		var edits []fieldEdit
		diffValues(v, again[k], nil, &edits)
		for _, e := range edits {
			if t.noise[k] == nil {
				t.noise[k] = map[string]bool{}
			}
			t.noise[k][pathString(e.path)] = true
		}
	}
	return t, nil
}

// render renders the chart with extra values and decodes its objects.
func (t *chartTrial) render(extra keySet) (map[objKey]any, error) {
	t.renders++
	streams, errs := t.r.Trial(nest(extra)).Render(t.in)
	if len(errs) > 0 {
		return nil, &renderError{file: errs[0].File, message: errs[0].Message}
	}
	out := map[objKey]any{}
	for _, st := range streams {
		var f load.File
		if st.Documents != nil {
			f = load.ParseDocuments(st.Name, st.Documents)
		} else {
			f = load.Parse(st.Name, st.Data)
		}
		for _, d := range f.Documents {
			o, err := object.Decode(d)
			if err != nil {
				continue
			}
			var v any
			if json.Unmarshal(d.JSON, &v) == nil {
				out[objKey{st.Name, o.Ref}] = v
			}
		}
	}
	return out, nil
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
		return nil, "no values key of the chart is tied to " + shown
	}
	if len(whys) > 3 {
		whys = append(whys[:3], fmt.Sprintf("%d more", len(whys)-3))
	}
	return nil, "no values key reaches " + shown + " (tried " + strings.Join(whys, "; ") + ")"
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

// check renders the chart with ks and says what is wrong with the result,
// or "": the object at key must be want in the blocks (with only the
// chart's own defaults added where a block is new), and before elsewhere;
// every other object as the chart renders it now.
func (t *chartTrial) check(key objKey, before, want any, blocks [][]load.Segment, ks keySet, _ *[]load.Segment) string {
	got, err := t.render(ks)
	if err != nil {
		return "the chart does not render with them: " + oneLine(err.Error())
	}
	g, ok := got[key]
	if !ok {
		return key.ref.String() + " is not rendered with them"
	}
	for _, b := range blocks {
		gb, _ := load.ValueAt(g, b)
		wb, _ := load.ValueAt(want, b)
		_, had := load.ValueAt(before, b)
		if fix.Equal(gb, wb) || !had && covers(gb, wb) {
			continue
		}
		var edits []fieldEdit
		diffValues(wb, gb, b, &edits)
		return "the render gives " + describeEdits(edits, wb)
	}
	// Nothing else changes, but for a block that held what the fixed one
	// held and now holds what it holds: the same values key sets both (an
	// init container sized like its container), so the fix is the same.
	t.mirrored = nil
	mirrors := func(k objKey, path []load.Segment) bool {
		mb := blockOf(path)
		if len(mb) == 0 || containerOf(mb) == nil {
			return false
		}
		bv, _ := load.ValueAt(t.base[k], mb)
		gv, _ := load.ValueAt(got[k], mb)
		for _, b := range blocks {
			if mb[len(mb)-1] != b[len(b)-1] {
				continue
			}
			was, _ := load.ValueAt(before, b)
			now, _ := load.ValueAt(want, b)
			if fix.Equal(bv, was) && fix.Equal(gv, now) {
				m := k.ref.String() + " " + namedPathIn(t.base[k], pathString(mb))
				if !containsString(t.mirrored, m) {
					t.mirrored = append(t.mirrored, m)
				}
				return true
			}
		}
		return false
	}
	t.derived = nil
	derives := func(k objKey, e fieldEdit) bool {
		if !derivedChange(k.ref.Kind, e) {
			return false
		}
		d := k.ref.String() + " " + pathString(e.path)
		if !containsString(t.derived, d) {
			t.derived = append(t.derived, d)
		}
		return true
	}
	var edits []fieldEdit
	diffValues(t.base[key], g, nil, &edits)
	for _, e := range edits {
		if t.noise[key][pathString(e.path)] || insideAny(e.path, blocks) || mirrors(key, e.path) || derives(key, e) {
			continue
		}
		return "it also changes " + pathString(e.path)
	}
	for k, v := range t.base {
		if k == key || t.unstable[k.stream+"\x00"+k.ref.Kind] {
			continue
		}
		gv, ok := got[k]
		if !ok {
			return "it removes " + k.ref.String()
		}
		var edits []fieldEdit
		diffValues(v, gv, nil, &edits)
		for _, e := range edits {
			if !t.noise[k][pathString(e.path)] && !mirrors(k, e.path) && !derives(k, e) {
				return "it also changes " + k.ref.String() + " " + pathString(e.path)
			}
		}
	}
	for k := range got {
		if _, ok := t.base[k]; !ok && !t.unstable[k.stream+"\x00"+k.ref.Kind] {
			return "it adds " + k.ref.String()
		}
	}
	return ""
}

// derivedChange says whether a change a values route makes outside the
// block is one the chart computes from the keys, as it intends: the data
// of a ConfigMap or a Secret (a server's memory setting computed from
// resources.limits.memory), or an annotation that holds a digest (Helm's
// "Automatically Roll Deployments": checksum/config is the sha256sum of
// the rendered config, https://helm.sh/docs/howto/charts_tips_and_tricks/#automatically-roll-deployments),
// which changes with it. Any other field of any object is unrelated.
func derivedChange(kind string, e fieldEdit) bool {
	if len(e.path) == 0 || e.path[0].IsIndex {
		return false
	}
	if (kind == "ConfigMap" || kind == "Secret") && (e.path[0].Key == "data" || e.path[0].Key == "stringData" || e.path[0].Key == "binaryData") {
		return true
	}
	for i := 0; i+2 < len(e.path); i++ {
		if e.path[i].Key == "metadata" && e.path[i+1].Key == "annotations" && i+3 == len(e.path) {
			old, _ := e.old.(string)
			new, _ := e.new.(string)
			return digest(old) && digest(new)
		}
	}
	return false
}

// digest reports whether s is a hex digest (md5, sha1, sha256, sha512).
func digest(s string) bool {
	switch len(s) {
	case 32, 40, 64, 128:
	default:
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// covers reports whether got holds every field of want with its value.
func covers(got, want any) bool {
	wm, ok := want.(map[string]any)
	if !ok {
		return fix.Equal(got, want)
	}
	gm, ok := got.(map[string]any)
	if !ok {
		return false
	}
	for k, wv := range wm {
		if !covers(gm[k], wv) {
			return false
		}
	}
	return true
}

func insideAny(path []load.Segment, blocks [][]load.Segment) bool {
	for _, b := range blocks {
		if hasPrefix(path, b) {
			return true
		}
	}
	return false
}

// describeEdits says how a render differs from what the fix makes.
func describeEdits(edits []fieldEdit, _ any) string {
	var parts []string
	for _, e := range edits {
		switch {
		case !e.has:
			parts = append(parts, pathString(e.path)+" absent")
		case !e.had:
			parts = append(parts, pathString(e.path)+" = "+show(e.new)+" as well")
		default:
			parts = append(parts, pathString(e.path)+" = "+show(e.new)+", not "+show(e.old))
		}
		if len(parts) == 3 {
			break
		}
	}
	return strings.Join(parts, ", ")
}

func show(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
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
