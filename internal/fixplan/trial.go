package fixplan

import (
	"encoding/json"
	"strings"

	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/helm"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/source"
)

// A chart rendered with trial values, compared with its render as the
// scan saw it: the proof of each values route.

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
	// tied holds the fields of a block no route reaches whole that a
	// values key reaches on its own (see tiedKeys), by object.
	tied map[objKey]map[string]bool
}

// reached records that a values key reaches the field shown of k.
func (t *chartTrial) reached(k objKey, shown string) {
	if t.tied == nil {
		t.tied = map[objKey]map[string]bool{}
	}
	if t.tied[k] == nil {
		t.tied[k] = map[string]bool{}
	}
	t.tied[k][shown] = true
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
	return t.changedElsewhere(key, before, want, blocks, got)
}

// changedElsewhere says what the render got changes outside the blocks,
// or "".
func (t *chartTrial) changedElsewhere(key objKey, before, want any, blocks [][]load.Segment, got map[objKey]any) string {
	g := got[key]
	// Nothing else changes, but for a block that mirrors the fixed one
	// and a field the chart derives from the keys (see mirrors, derives).
	t.mirrored, t.derived = nil, nil
	mirrors := func(k objKey, path []load.Segment) bool { return t.mirrors(k, path, got, before, want, blocks) }
	var edits []fieldEdit
	diffValues(t.base[key], g, nil, &edits)
	for _, e := range edits {
		if t.noise[key][pathString(e.path)] || insideAny(e.path, blocks) || mirrors(key, e.path) || t.derives(key, e) {
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
			if !t.noise[k][pathString(e.path)] && !mirrors(k, e.path) && !t.derives(k, e) {
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

// mirrors reports whether the field at path of the object k is in a
// block that held what a fixed block held and now, in the render got,
// holds what it holds: the same values key sets both (an init container
// sized like its container), so the fix is the same. It is noted in
// t.mirrored.
func (t *chartTrial) mirrors(k objKey, path []load.Segment, got map[objKey]any, before, want any, blocks [][]load.Segment) bool {
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

// derives reports whether the edit e of the object k is one the chart
// derives from the keys (see derivedChange); it is noted in t.derived.
func (t *chartTrial) derives(k objKey, e fieldEdit) bool {
	if !derivedChange(k.ref.Kind, e) {
		return false
	}
	d := k.ref.String() + " " + pathString(e.path)
	if !containsString(t.derived, d) {
		t.derived = append(t.derived, d)
	}
	return true
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
