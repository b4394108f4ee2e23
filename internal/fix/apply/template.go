package apply

import (
	"encoding/json"
	"fmt"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/source"
)

// A fix that replaces a probe handler the chart writes literally in a
// template (Harbor's database: `exec: command: [/docker-healthcheck.sh]`
// in templates/database/database-ss.yaml) is made in the template: no
// values key reaches the handler. The numbers of the same probe still go
// to the values. Only plain template lines are edited (see
// fix.ReplaceLiteralHandler); the proof renders the chart again with the
// new template, and when the findings are not gone the template is left
// alone and the finding is left with its reason.

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

// templateEdit applies the handler replacements to the template that
// rendered o, on top of the edits already planned for it.
func (v *valuesPlan) templateEdit(o *object.Object, edits []handlerEdit) (*File, error) {
	path := o.Doc.File
	f := v.templates[path]
	if f == nil {
		data, err := source.ReadFile(path, v.maxSize)
		if err != nil {
			return nil, err
		}
		f = &File{Path: path, Old: data, New: data}
	}
	next := f.New
	for _, e := range edits {
		n, err := fix.ReplaceLiteralHandler(next, e.probe, e.oldKey, e.old, e.newKey, e.val)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		next = n
	}
	return &File{Path: path, Old: f.Old, New: next}, nil
}

// planTemplate plans a change whose probe handlers the template writes
// literally: the handlers in the template, the rest through the values.
// It reports whether the change is planned, or why it is not.
func planTemplate(o *object.Object, c fix.Change, chosen []finding.Finding, v *valuesPlan) (bool, string) {
	var doc any
	if json.Unmarshal(o.Doc.JSON, &doc) != nil {
		return false, ""
	}
	var edits []handlerEdit
	rest, _ := splitHandlers(c.Patch, doc, &edits).(map[string]any)
	if len(edits) == 0 {
		return false, ""
	}
	f, err := v.templateEdit(o, edits)
	if err != nil {
		return false, err.Error()
	}
	fileOf := map[string]string{}
	// Fields neither the template nor the values reach stay missing: the
	// proof leaves the findings that need them, with the reason.
	set, missing, keys := valuesOf(o, rest, fileOf)
	for k, p := range fileOf {
		v.fileOf[k] = p
	}
	v.templates[f.Path] = f
	v.record(c, set, missing, keys, chosen, f.Path)
	return true, ""
}
