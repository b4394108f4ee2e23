package fixplan

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/scan"
	"backfire.dev/backfire/internal/source"
	"backfire.dev/backfire/internal/yamledit"
)

// A fix that replaces a probe handler the chart writes literally in a
// template (Harbor's database: `exec: command: [/docker-healthcheck.sh]`
// in templates/database/database-ss.yaml) is made in the template: no
// values key reaches the handler. The numbers of the same probe still go
// to the values, where a values key sets them; a number the template
// writes literally (`timeoutSeconds: 1`) is set in the template too. Only
// plain template lines are edited (see yamledit.ReplaceLiteralHandler and
// yamledit.SetLiteralProbeField); the proof renders the chart again with the
// new template, and when the findings are not gone, or a number edited is
// not what the object now renders, the template is left alone and the
// finding is left with its reason.

var probeKeys = []string{"livenessProbe", "readinessProbe", "startupProbe"}
var handlerKeys = []string{"exec", "httpGet", "tcpSocket", "grpc"}

// handlerEdit is one probe handler a patch replaces.
type handlerEdit struct {
	probe, oldKey, newKey string
	old, val              any
}

// splitHandlers returns the patch without the handler replacements of
// its probes (an old handler deleted, a new one set), and collects those;
// d is the rendered object at the same place.
func splitHandlers(p, d any, edits *[]handlerEdit) any {
	switch x := p.(type) {
	case map[string]any:
		dm, _ := d.(map[string]any)
		out := map[string]any{}
		for k, v := range x {
			var dv any
			if dm != nil {
				dv = dm[k]
			}
			if pm, ok := v.(map[string]any); ok && contains(probeKeys, k) {
				if e, ok := handlerOf(k, pm, dv); ok {
					*edits = append(*edits, e)
					rest := map[string]any{}
					for pk, pv := range pm {
						if pk != e.oldKey && pk != e.newKey {
							rest[pk] = pv
						}
					}
					out[k] = rest
					continue
				}
			}
			out[k] = splitHandlers(v, dv, edits)
		}
		return out
	case []any:
		dl, _ := d.([]any)
		out := make([]any, len(x))
		for i, it := range x {
			var di any
			if m, ok := it.(map[string]any); ok {
				for _, c := range dl {
					if cm, ok := c.(map[string]any); ok && cm["name"] != nil && cm["name"] == m["name"] {
						di = c
					}
				}
			}
			out[i] = splitHandlers(it, di, edits)
		}
		return out
	}
	return p
}

// handlerOf reads a probe patch that deletes the rendered handler and sets
// another one.
func handlerOf(probe string, pm map[string]any, d any) (handlerEdit, bool) {
	dm, _ := d.(map[string]any)
	e := handlerEdit{probe: probe}
	for _, h := range handlerKeys {
		v, set := pm[h]
		switch {
		case set && v == nil && dm != nil && dm[h] != nil:
			e.oldKey, e.old = h, dm[h]
		case set && v != nil:
			e.newKey, e.val = h, v
		}
	}
	return e, e.oldKey != "" && e.newKey != ""
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// scalarEdit is a scalar field of a container's probe that a patch sets
// and no values key reaches: a value the template may write literally.
type scalarEdit struct {
	field   yamledit.ProbeField
	shown   string // the field as valuesOf names it
	old     any    // the rendered value
	present bool   // whether the rendered object has the field
	val     any
}

var containerLists = []string{"containers", "initContainers", "ephemeralContainers"}

// probeScalars collects the scalar fields of container probes that patch
// p sets; d is the rendered object at the same place, shown the path as
// valuesOf names it.
func probeScalars(p, d any, shown string, out *[]scalarEdit) {
	pm, ok := p.(map[string]any)
	if !ok {
		return
	}
	dm, _ := d.(map[string]any)
	for _, k := range sortedKeys(pm) {
		var dv any
		if dm != nil {
			dv = dm[k]
		}
		items, ok := pm[k].([]any)
		if !ok || !contains(containerLists, k) {
			probeScalars(pm[k], dv, join(shown, k), out)
			continue
		}
		dl, _ := dv.([]any)
		for _, it := range items {
			im, _ := it.(map[string]any)
			name, _ := im["name"].(string)
			if name == "" {
				continue
			}
			var dc map[string]any
			for _, c := range dl {
				if cm, ok := c.(map[string]any); ok && cm["name"] == name {
					dc = cm
				}
			}
			for _, probe := range probeKeys {
				pp, _ := im[probe].(map[string]any)
				dp, _ := dc[probe].(map[string]any)
				for _, key := range sortedKeys(pp) {
					switch pp[key].(type) {
					case string, float64, bool:
					default:
						continue // a handler, a deletion
					}
					old, present := dp[key]
					*out = append(*out, scalarEdit{
						field: yamledit.ProbeField{List: k, Container: name, Probe: probe, Key: key},
						shown: join(shown, k) + "[" + name + "]." + probe + "." + key,
						old:   old, present: present, val: pp[key],
					})
				}
			}
		}
	}
}

// chartTemplate is the destination of what no values key reaches of a
// chart object's change, where the template that renders the object
// writes it literally: probe handlers it replaces, probe scalars it sets.
// The fields of the change a values key does reach still go to the
// values: a template change is recorded with the values' changes (it may
// set keys too), and its route among theirs, in the order planned. It
// owns the templates it edits and their proof.
type chartTemplate struct {
	charts bool // charts are rendered by fix (the Helm options)
	// on: template edits are made; off when the plan is made again after
	// their proof failed (proofWhy says why).
	on       bool
	proofWhy string
	chosen   []finding.Finding
	values   *valuesPlan
	maxSize  int64
	files    map[string]*File
	// refused says why the last change was not taken, "" when nothing
	// needs saying (edits off, nothing written literally); inPart says it
	// with the values' reason.
	refused string
}

func (d *chartTemplate) claim(o *object.Object) *Reason { return claimChart(o, d.charts) }

func (d *chartTemplate) take(o *object.Object, c fix.Change) (*fix.Change, *Reason) {
	d.refused = ""
	if !d.on {
		return &c, nil
	}
	done, why := d.plan(o, c)
	if done {
		return nil, nil
	}
	d.refused = why
	if why == "" {
		return &c, nil
	}
	return &c, reason(ReasonUnreached, "the template is not edited: "+why)
}

func (d *chartTemplate) write(files map[string]*File) ([]planned, error) {
	for p, f := range d.files {
		f.Rules = templateRules(d.values.changes, p)
		files[p] = f
	}
	// The changes that edit a template are given with the values' (see
	// the type).
	return nil, nil
}

// verify proves the template edits on the rescan, beyond their findings
// being gone: a literal scalar edited must be what renders its field
// (else the line edited is another, a branch not taken), and a finding
// whose new handler was written there must be gone. An error makes the
// plan again without template edits.
func (d *chartTemplate) verify(after *scan.Result, _ map[string][]byte) error {
	for _, e := range d.values.changes {
		if e.template == "" {
			continue
		}
		if why := renders(after, e); why != "" {
			return fmt.Errorf("%s: %s", e.template, why)
		}
		if why := d.changedElsewhere(after, e); why != "" {
			return fmt.Errorf("%s: %s", e.template, why)
		}
	}
	still := map[key]finding.Finding{}
	for _, f := range after.Findings {
		still[keyOf(f)] = f
	}
	for _, e := range d.values.changes {
		if e.template == "" {
			continue
		}
		for _, i := range e.change.Findings {
			f := d.chosen[i]
			if g, ok := still[keyOf(f)]; ok && replacesHandler(f) {
				return fmt.Errorf("%s: still reported after the edit: %s", e.template, g.Message)
			}
		}
	}
	return nil
}

// changedElsewhere says what the rescan's render of e's object changes
// outside the blocks the object's changes are for (the probe, the
// resources; a values route may have taken part of its fix), or "": a
// template edit changes nothing else. Fields that differ from render to
// render (the chart's trial noise) and those the chart derives from the
// values (a checksum annotation) are not counted.
func (d *chartTemplate) changedElsewhere(after *scan.Result, e planned) string {
	a := sameObject(after.Objects, e.obj)
	var before, now any
	if a == nil || json.Unmarshal(e.obj.Doc.JSON, &before) != nil || json.Unmarshal(a.Doc.JSON, &now) != nil {
		return "" // renders says so, for an edit that must render
	}
	var blocks [][]load.Segment
	for _, c := range d.values.changes {
		if c.obj == nil || c.obj.Ref != e.obj.Ref || c.obj.Doc.File != e.obj.Doc.File {
			continue
		}
		want, err := fix.ApplyChange(e.obj.Doc.JSON, c.change, e.obj.Typed)
		var fixed any
		if err != nil || json.Unmarshal(want, &fixed) != nil {
			return ""
		}
		var edits []fieldEdit
		diffValues(before, alignTo(before, fixed), nil, &edits)
		for _, ed := range edits {
			blocks = append(blocks, blockOf(ed.path))
		}
	}
	var noise map[string]bool
	if t := d.values.trials[e.obj.Doc.Origin.Dir]; t != nil {
		noise = t.noise[objKey{e.obj.Doc.File, e.obj.Ref}]
	}
	return outsideBlocks(before, alignTo(before, now), blocks, e.obj.Ref.Kind, noise)
}

// outsideBlocks says which field now changes from before outside the
// blocks, or "".
func outsideBlocks(before, now any, blocks [][]load.Segment, kind string, noise map[string]bool) string {
	var edits []fieldEdit
	diffValues(before, now, nil, &edits)
	for _, e := range edits {
		if noise[pathString(e.path)] || insideAny(e.path, blocks) || derivedChange(kind, e) {
			continue
		}
		return "the edit also changes " + pathString(e.path) + " of the object"
	}
	return ""
}

// notEdited says why the fields no values key reaches are not edited in
// the template: why the keys do not reach them (unreached), the refusal
// of the edit, or the proof that did not bear it out.
func notEdited(unreached, refused, proofWhy string) string {
	var parts []string
	if unreached != "" {
		parts = append(parts, unreached)
	}
	if refused != "" {
		parts = append(parts, "the template is not edited: "+refused)
	}
	if proofWhy != "" {
		parts = append(parts, "the template edit was not proven: "+proofWhy)
	}
	return strings.Join(parts, "; ")
}

// file is the template that rendered o, with the edits already planned
// for it.
func (d *chartTemplate) file(o *object.Object) (*File, error) {
	path := o.Doc.File
	if f := d.files[path]; f != nil {
		return f, nil
	}
	data, err := source.ReadFile(path, d.maxSize)
	if err != nil {
		return nil, err
	}
	return &File{Path: path, Old: data, New: data}, nil
}

// plan plans a change that the template that rendered o writes in
// part literally: the probe handlers it replaces, and the probe scalars no
// values key reaches, are edited in the template; the rest goes through
// the values. It reports whether the change is planned, or why the
// template is not edited. A scalar the template does not write literally
// is left to the proof (the finding that needs it is left, with the
// reason); a handler that cannot be replaced leaves the whole template
// alone, so that the numbers chosen for the new handler are not written
// for the old one.
func (d *chartTemplate) plan(o *object.Object, c fix.Change) (bool, string) {
	v := d.values
	var doc any
	if json.Unmarshal(o.Doc.JSON, &doc) != nil {
		return false, ""
	}
	var handlers []handlerEdit
	rest, _ := splitHandlers(c.Patch, doc, &handlers).(map[string]any)
	fileOf := map[string]string{}
	// Fields neither the template nor the values reach stay missing: the
	// proof leaves the findings that need them, with the reason.
	set, missing, keys := valuesOf(o, rest, fileOf)
	var all, scalars []scalarEdit
	probeScalars(rest, doc, "", &all)
	for _, s := range all {
		if slices.Contains(missing, s.shown) {
			scalars = append(scalars, s)
		}
	}
	if len(handlers) == 0 && len(scalars) == 0 {
		return false, ""
	}
	f, err := d.file(o)
	if err != nil {
		return false, err.Error()
	}
	next := f.New
	for _, e := range handlers {
		n, err := yamledit.ReplaceLiteralHandler(next, e.probe, e.oldKey, e.old, e.newKey, e.val)
		if err != nil {
			return false, fmt.Sprintf("%s: %v", f.Path, err)
		}
		next = n
	}
	var edited, whys []string
	for _, s := range scalars {
		n, err := yamledit.SetLiteralProbeField(next, s.field, s.old, s.present, s.val)
		if err != nil {
			whys = append(whys, err.Error())
			continue
		}
		next = n
		edited = append(edited, s.shown)
	}
	why := ""
	if len(whys) > 0 {
		why = f.Path + ": " + strings.Join(whys, "; ")
	}
	if len(handlers) == 0 && len(edited) == 0 {
		return false, why
	}
	if why := v.unwritable(set); why != "" {
		return false, why
	}
	missing = slices.DeleteFunc(missing, func(m string) bool { return slices.Contains(edited, m) })
	for k, p := range fileOf {
		v.fileOf[k] = p
	}
	d.files[f.Path] = &File{Path: f.Path, Old: f.Old, New: next}
	v.record(o, c, set, missing, keys, d.chosen, f.Path, notEdited(v.unreachedWhy(), why, d.proofWhy))
	var rules []string
	for _, i := range c.Findings {
		if !slices.Contains(rules, d.chosen[i].Rule) {
			rules = append(rules, d.chosen[i].Rule)
		}
	}
	sort.Strings(rules)
	var what []string
	for _, e := range handlers {
		what = append(what, e.probe+" handler "+e.oldKey+" (now "+e.newKey+")")
	}
	what = append(what, edited...)
	v.routes = append(v.routes, Route{Object: o.Ref, Block: strings.Join(what, ", "), How: "template", Keys: []string{f.Path}, Rules: rules,
		Why: "the template writes them literally, and no values key reaches them"})
	p := &v.changes[len(v.changes)-1]
	p.edited = map[string]any{}
	for _, e := range scalars {
		if slices.Contains(edited, e.shown) {
			p.edited[e.shown] = e.val
		}
	}
	return true, ""
}

// templateRules lists the rules of the changes that edit the template p.
func templateRules(changes []planned, p string) []string {
	var rules []string
	for _, c := range changes {
		if c.template != p {
			continue
		}
		for _, r := range c.rules {
			if !containsString(rules, r) {
				rules = append(rules, r)
			}
		}
	}
	return rules
}
