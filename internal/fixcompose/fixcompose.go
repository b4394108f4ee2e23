// Package fixcompose makes the fixes of several rules on one object
// compose, by what each rule declares its fix sets and computes from
// (rules.Rule.Fix). Each rule computes its fix from the object as written;
// when another rule's fix sets a field a fix was computed from (BF104
// raises readiness's failureThreshold, from which BF103 computed how
// tolerant liveness must be), merging the two patches is not enough: the
// reader must be asked again, on the object with every fix applied.
//
// So, after the rules ran on an object, while some rule's fix reads a
// field another rule's patch sets, the object is patched with all the
// fixes composed (fix.Compose, whose precedence is order-independent), the
// readers are run again on it, and what they still ask for is merged into
// their patches, up to MaxRounds times. Nothing depends on the order the
// rules ran or registered in: each round starts from the composition of
// every patch, and a reader satisfied by the others' fixes asks nothing
// more. `backfire fix` then proves the result by rescanning it.
package fixcompose

import (
	"encoding/json"
	"slices"
	"strings"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/jsonenc"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/typedpatch"
)

// MaxRounds bounds the rounds of asking the readers again: each round
// that changes a patch can only raise what the next asks for, and the
// rules' fixes settle in one or two.
const MaxRounds = 4

// RunAndAgree runs the rules on one object (rules.RunObject), composes the
// fixes of its findings (Recompute), and makes each finding's fix agree
// with the composition of all the fixes on the object (fix.Agree), as the
// scan and the webhook report them. Each patch is decoded once for both.
func RunAndAgree(o *object.Object, ix *index.Index, rs []*rules.Rule, opts *rules.Options) rules.Outcome {
	res := rules.RunObject(o, ix, rs, opts)
	if opts.Canceled() {
		return res // incomplete: the caller drops it
	}
	patches := make([]map[string]any, len(res.Findings))
	composed, parts := recompute(o, ix, rs, opts, res.Findings, patches)
	fs := make([]finding.Finding, len(res.Findings))
	for i := range res.Findings {
		fs[i] = res.Findings[i].Finding
	}
	if opts.Canceled() {
		return res
	}
	fix.AgreeComposed(fs, patches, composed, parts)
	for i := range fs {
		res.Findings[i].Fix = fs[i].Fix
	}
	return res
}

// Recompute rewrites, in found, the fixes computed from a field another
// finding's fix sets: they are computed again on o with every fix on it
// applied (see the package comment). Only strategic merge patches of o
// itself take part; a rule that reads the others' findings is not asked
// again, since it would run alone.
func Recompute(o *object.Object, ix *index.Index, rs []*rules.Rule, opts *rules.Options, found []rules.Reported) {
	recompute(o, ix, rs, opts, found, make([]map[string]any, len(found)))
}

// recompute is Recompute with patches[i] found[i]'s patch decoded, or nil
// where it is not decoded yet; it decodes the ones it reads, and leaves nil
// the ones of the fixes it rewrites. It returns the composition of the
// parts (found's indexes) it last patched o with when no patch changed
// after it, for the agreement to use rather than compose them again.
func recompute(o *object.Object, ix *index.Index, rs []*rules.Rule, opts *rules.Options, found []rules.Reported, patches []map[string]any) (*fix.Change, []int) {
	var parts []int
	for i, f := range found {
		if f.Fix != nil && f.Fix.Type == finding.StrategicMergePatch && len(f.Fix.Patch) > 0 && f.Fix.Target == nil {
			parts = append(parts, i)
		}
	}
	if len(parts) < 2 {
		return nil, nil
	}
	// Only the parts' rules are asked for: a few of all, not a map of
	// all per object.
	byID := make(map[string]*rules.Rule, len(parts))
	for _, i := range parts {
		if id := found[i].Rule; byID[id] == nil {
			byID[id] = lastByID(rs, id)
		}
	}
	decoded := func(i int) map[string]any {
		if patches[i] == nil {
			if p, err := fix.DecodePatch(found[i].Fix.Patch); err == nil {
				patches[i] = p
			}
		}
		return patches[i]
	}
	var composed *fix.Change
	for range MaxRounds {
		if opts.Canceled() {
			return nil, nil
		}
		readers := stale(o, found, parts, byID, decoded)
		if len(readers) == 0 {
			return composed, parts
		}
		var again []*rules.Rule
		for _, i := range readers {
			if r := byID[found[i].Rule]; !slices.Contains(again, r) {
				again = append(again, r)
			}
		}
		patched, c := patchedObject(o, found, parts, decoded, again)
		composed = c
		if patched == nil {
			return composed, parts
		}
		asked := askedOf(rules.RunObject(patched, ix, again, opts).Findings)
		changed := false
		for _, i := range readers {
			g := asked.same(found[i])
			if g == nil || g.Fix == nil || g.Fix.Type != finding.StrategicMergePatch || len(g.Fix.Patch) == 0 {
				continue // satisfied by the composition: it asks nothing more
			}
			merged, ok := merge(found[i].Finding, g.Finding)
			if !ok || string(merged) == string(found[i].Fix.Patch) {
				continue
			}
			fx := *found[i].Fix
			fx.Patch = merged
			fx.Description = g.Fix.Description
			for _, ph := range g.Fix.Placeholders {
				if !slices.Contains(fx.Placeholders, ph) {
					fx.Placeholders = append(fx.Placeholders, ph)
				}
			}
			found[i].Fix = &fx
			patches[i] = nil
			changed = true
		}
		if !changed {
			return composed, parts
		}
		composed = nil // composed from patches since rewritten
	}
	return nil, nil
}

// lastByID is the rule of rs with the ID, the last where several have it
// (as a map of them by ID keeps), nil where none has.
func lastByID(rs []*rules.Rule, id string) *rules.Rule {
	for i := len(rs) - 1; i >= 0; i-- {
		if rs[i].ID == id {
			return rs[i]
		}
	}
	return nil
}

// stale returns the parts whose rule's fix reads a field another rule's
// part sets. The rules' declarations answer first: a rule's patch sets
// only fields its Fix.Sets cover (the fixture test checks every patch),
// so a part whose rule declares no field another part's rule reads
// cannot make that one stale, and only the patches of the rules that may
// are walked, most objects' none.
func stale(o *object.Object, found []rules.Reported, parts []int, byID map[string]*rules.Rule, decoded func(int) map[string]any) []int {
	return staleOf(o, found, parts, byID, decoded, false)
}

// staleOf is stale, walking every part's patch when walkAll is set (the
// test's reference for the declarations' answer).
func staleOf(o *object.Object, found []rules.Reported, parts []int, byID map[string]*rules.Rule, decoded func(int) map[string]any, walkAll bool) []int {
	var ruleIDs []string // the parts' rules, each once
	for _, i := range parts {
		if !slices.Contains(ruleIDs, found[i].Rule) {
			ruleIDs = append(ruleIDs, found[i].Rule)
		}
	}
	// writers are the rules whose patches some other part's rule may
	// read.
	var writers []string
	for _, id := range ruleIDs {
		r := reader(byID[id])
		if r == nil {
			continue
		}
		for _, w := range ruleIDs {
			if w != id && !slices.Contains(writers, w) && (walkAll || maySet(byID[w], r.Fix.From)) {
				writers = append(writers, w)
			}
		}
	}
	if len(writers) == 0 {
		return nil
	}
	var set setters
	spec := specPath(o)
	for _, j := range parts {
		if !slices.Contains(writers, found[j].Rule) {
			continue
		}
		if p := decoded(j); p != nil {
			set = appendFields(set, spec, p, found[j].Rule)
		}
	}
	slices.SortFunc(set, func(a, b setField) int { return strings.Compare(a.Container, b.Container) })
	var out []int
	for _, i := range parts {
		r := reader(byID[found[i].Rule])
		if r == nil {
			continue
		}
		// The fields of i's container, and those of no container.
		if set.setByOther(found[i].Container, found[i].Rule, r.Fix.From) || found[i].Container != "" && set.setByOther("", found[i].Rule, r.Fix.From) {
			out = append(out, i)
		}
	}
	return out
}

// reader is r when its fix is computed from fields and it can be asked
// again (it does not read the others' findings), else nil.
func reader(r *rules.Rule) *rules.Rule {
	if r == nil || r.ScanCheck() == nil || r.ScanCheck().ReadsFindings || len(r.Fix.From) == 0 {
		return nil
	}
	return r
}

// maySet reports whether rule w's patches may set a field that overlaps
// from: a field its Fix.Sets declares does, and a rule unknown or
// declaring nothing may set anything.
func maySet(w *rules.Rule, from []string) bool {
	if w == nil || len(w.Fix.Sets) == 0 {
		return true
	}
	for _, d := range w.Fix.Sets {
		if Overlaps(from, d) {
			return true
		}
	}
	return false
}

// setters are the fields the walked parts' patches set, each with the
// rule that sets it, sorted by container ("" for the fields of none): an
// object's thousands of containers' fixes are not each compared with all
// the others'.
type setters []setField

type setField struct {
	Field
	rule string
}

// setByOther reports whether a rule other than rule sets a field of
// container that overlaps from.
func (s setters) setByOther(container, rule string, from []string) bool {
	i, _ := slices.BinarySearchFunc(s, container, func(f setField, c string) int { return strings.Compare(f.Container, c) })
	for ; i < len(s) && s[i].Container == container; i++ {
		if s[i].rule != rule && Overlaps(from, s[i].Path) {
			return true
		}
	}
	return false
}

// patchedObject is o with the composed patch of the parts applied, nil
// when it cannot be made (no typed model, a patch that does not apply).
// It returns too the composition it patched o with, when there is one.
// The readers, the rules asked again, read only the patched object's
// typed value unless one reads its document: then the document is
// patched and decoded again, else the typed value alone where it can be
// (package typedpatch).
func patchedObject(o *object.Object, found []rules.Reported, parts []int, decoded func(int) map[string]any, readers []*rules.Rule) (*object.Object, *fix.Change) {
	if o.Typed == nil {
		return nil, nil
	}
	fs := make([]finding.Finding, len(parts))
	ps := make([]map[string]any, len(parts))
	for k, i := range parts {
		fs[k] = found[i].Finding
		ps[k] = decoded(i)
	}
	changes := fix.ComposePatchOnly(fs, ps) // read for its patch alone
	if len(changes) != 1 {
		return nil, nil
	}
	c := &changes[0]
	if typedAnswers(o, readers) {
		if p, ok := typedPatched(o, c.Patch); ok {
			return p, c
		}
	}
	return decodedPatched(o, c.Patch), c
}

// typedPatched is o with patch applied to its typed value, nil where the
// patched object is rejected; false where the patch is left to the
// document (see typedpatch.Apply).
func typedPatched(o *object.Object, patch map[string]any) (*object.Object, bool) {
	t, ok := typedpatch.Apply(o.Typed, patch)
	if !ok {
		return nil, false
	}
	p, valid := object.Retyped(patchedDoc(o.Doc, nil), t)
	if !valid {
		return nil, true
	}
	return p, true
}

// decodedPatched is o's document with patch applied, decoded again; nil
// where the patch does not apply or the patched object is rejected.
func decodedPatched(o *object.Object, patch map[string]any) *object.Object {
	out, err := fix.Patched(o.Doc.JSON, patch, o.Typed)
	if err != nil {
		return nil
	}
	p, lerr := object.Decode(patchedDoc(o.Doc, out))
	if lerr != nil {
		return nil
	}
	return p
}

// typedAnswers reports whether patching o's typed value answers the
// readers as patching its document does: none reads the document, and o
// dropped no field (the patched document's decode would list them again).
func typedAnswers(o *object.Object, readers []*rules.Rule) bool {
	if len(o.Dropped) > 0 {
		return false
	}
	for _, r := range readers {
		if r.Fix.FromDocument {
			return false
		}
	}
	return true
}

// patchedDoc is doc with the patched JSON: none where only the typed
// value is patched, since no reader asked again reads it.
func patchedDoc(doc *load.Document, json []byte) *load.Document {
	return &load.Document{File: doc.File, Index: doc.Index, Line: doc.Line, Origin: doc.Origin,
		JSON: json, APIVersion: doc.APIVersion, Kind: doc.Kind}
}

// asked is the findings of the rules asked again, by rule and container.
type asked map[[2]string][]*rules.Reported

func askedOf(fs []rules.Reported) asked {
	a := asked{}
	for i := range fs {
		k := [2]string{fs[i].Rule, fs[i].Container}
		a[k] = append(a[k], &fs[i])
	}
	return a
}

// same finds the finding of f's rule about f's container, at f's path
// when the rule reports more than one.
func (a asked) same(f rules.Reported) *rules.Reported {
	gs := a[[2]string{f.Rule, f.Container}]
	for _, g := range gs {
		if g.Path == f.Path {
			return g
		}
	}
	if len(gs) > 0 {
		return gs[0]
	}
	return nil
}

// merge is a's patch with b's merged in by fix.Compose's precedence.
func merge(a, b finding.Finding) (json.RawMessage, bool) {
	b.Object = a.Object
	changes := fix.Compose([]finding.Finding{a, b})
	if len(changes) != 1 {
		return nil, false
	}
	out, err := jsonenc.Marshal(changes[0].Patch)
	return out, err == nil
}

// A Field is one field a patch sets, named as rules declare fields
// (rules.FixFields): "container.livenessProbe.failureThreshold" for a field
// of a container (Container names it), "pod.affinity" for one of the pod
// spec, and the object's own path otherwise ("spec.revisionHistoryLimit").
type Field struct {
	Path      string
	Container string
}

// Fields lists the fields a strategic merge patch of o sets: its leaves,
// and the maps or lists it sets whole.
func Fields(o *object.Object, patch json.RawMessage) []Field {
	v, err := fix.DecodePatch(patch)
	if err != nil {
		return nil
	}
	return fieldsOf(o, v)
}

// fieldsOf is Fields of a decoded patch, which it leaves as it is.
func fieldsOf(o *object.Object, v map[string]any) []Field {
	var set setters
	set = appendFields(set, specPath(o), v, "")
	out := make([]Field, len(set))
	for i, f := range set {
		out[i] = f.Field
	}
	slices.SortFunc(out, func(a, b Field) int { return strings.Compare(a.Container+" "+a.Path, b.Container+" "+b.Path) })
	return out
}

// specPath is the path of o's pod spec, "" when it has none.
func specPath(o *object.Object) string {
	if t := o.PodTemplate(); t != nil {
		return t.SpecPath.String()
	}
	return ""
}

// appendFields appends to set the fields the decoded patch v sets, each
// set by rule; spec is the path of the object's pod spec.
func appendFields(set setters, spec string, v map[string]any, rule string) setters {
	var walk func(v any, path, container string)
	walk = func(v any, path, container string) {
		m, ok := v.(map[string]any)
		if !ok || len(m) == 0 {
			set = append(set, setField{Field{Path: path, Container: container}, rule})
			return
		}
		for k, c := range m {
			p := k
			if path != "" {
				p = path + "." + k
			}
			if container == "" && spec != "" && p == spec {
				walk(c, "pod", "")
				continue
			}
			if list, ok := c.([]any); ok && container == "" && (p == "pod.containers" || p == "pod.initContainers") {
				for _, item := range list {
					if im, ok := item.(map[string]any); ok {
						name, _ := im["name"].(string)
						for k, c := range im {
							if k != "name" {
								walk(c, "container."+k, name)
							}
						}
					}
				}
				continue
			}
			walk(c, p, container)
		}
	}
	walk(v, "", "")
	return set
}

// Overlaps reports whether path is, holds or is held by one of the
// declared fields: "container.livenessProbe" and
// "container.livenessProbe.timeoutSeconds" overlap.
func Overlaps(declared []string, path string) bool {
	for _, d := range declared {
		if d == path || under(path, d) || under(d, path) {
			return true
		}
	}
	return false
}

// under reports whether path is a field inside the field d:
// strings.HasPrefix(path, d+"."), without making d+".".
func under(path, d string) bool {
	return len(path) > len(d) && path[len(d)] == '.' && path[:len(d)] == d
}

// Covers reports whether path is one of the declared fields or inside one:
// what a patch sets must be covered by the rule's Fix.Sets.
func Covers(declared []string, path string) bool {
	for _, d := range declared {
		if d == path || under(path, d) {
			return true
		}
	}
	return false
}
