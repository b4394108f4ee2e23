package fixplan

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/object"
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

// template is the template that rendered o, with the edits already
// planned for it.
func (v *valuesPlan) template(o *object.Object) (*File, error) {
	path := o.Doc.File
	if f := v.templates[path]; f != nil {
		return f, nil
	}
	data, err := source.ReadFile(path, v.maxSize)
	if err != nil {
		return nil, err
	}
	return &File{Path: path, Old: data, New: data}, nil
}

// planTemplate plans a change that the template that rendered o writes in
// part literally: the probe handlers it replaces, and the probe scalars no
// values key reaches, are edited in the template; the rest goes through
// the values. It reports whether the change is planned, or why the
// template is not edited. A scalar the template does not write literally
// is left to the proof (the finding that needs it is left, with the
// reason); a handler that cannot be replaced leaves the whole template
// alone, so that the numbers chosen for the new handler are not written
// for the old one.
func planTemplate(o *object.Object, c fix.Change, chosen []finding.Finding, v *valuesPlan) (bool, string) {
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
	f, err := v.template(o)
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
	v.templates[f.Path] = &File{Path: f.Path, Old: f.Old, New: next}
	v.record(o, c, set, missing, keys, chosen, f.Path, v.reason(why))
	var rules []string
	for _, i := range c.Findings {
		if !slices.Contains(rules, chosen[i].Rule) {
			rules = append(rules, chosen[i].Rule)
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
