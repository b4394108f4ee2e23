package fixplan

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/helm"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/valuesdoc"
)

// valuesOf finds, for each value a patch sets on an object rendered from a
// Helm chart, the values key that produced the rendered field (the chart's
// provenance trace). It returns the keys it found, dotted, with the patch's
// values, and the fields of the patch that no values key reaches: a field
// the template writes literally, computes in a helper, or does not write
// at all (a new probe handler), and every deletion.
func valuesOf(o *object.Object, patch map[string]any, fileOf map[string]string) (map[string]any, []string, map[string]string) {
	var doc any
	if o.Doc.Trace == nil || json.Unmarshal(o.Doc.JSON, &doc) != nil {
		return nil, []string{"the whole patch"}, nil
	}
	set := map[string]any{}
	keys := map[string]string{} // patch field -> values key
	var missing []string
	var walk func(p any, d any, fieldPath, shown string)
	walk = func(p any, d any, fieldPath, shown string) {
		switch x := p.(type) {
		case map[string]any:
			dm, _ := d.(map[string]any)
			for _, k := range sortedKeys(x) {
				var dv any
				if dm != nil {
					dv = dm[k]
				}
				walk(x[k], dv, join(fieldPath, k), join(shown, k))
			}
			return
		case []any:
			dl, _ := d.([]any)
			if named(x) && dl != nil {
				for _, it := range x {
					name := it.(map[string]any)["name"].(string)
					idx := -1
					for i, di := range dl {
						if dmi, ok := di.(map[string]any); ok && dmi["name"] == name {
							idx = i
						}
					}
					if idx < 0 {
						missing = append(missing, shown+"["+name+"]")
						continue
					}
					item := map[string]any{}
					for k, v := range it.(map[string]any) {
						if k != "name" {
							item[k] = v
						}
					}
					walk(item, dl[idx], fieldPath+"["+strconv.Itoa(idx)+"]", shown+"["+name+"]")
				}
				return
			}
		}
		if p == nil {
			if d != nil {
				missing = append(missing, shown+" (deleted)")
			}
			return
		}
		pos, exact := o.Doc.Locate(fieldPath)
		if !exact {
			missing = append(missing, shown)
			return
		}
		ref, ok := o.Doc.Trace(o.Doc, fieldPath, pos).Values.Key()
		if !ok {
			missing = append(missing, shown)
			return
		}
		fileOf[ref.Key] = ref.File
		set[ref.Key] = p
		keys[shown] = ref.Key
	}
	walk(patch, doc, "", "")
	return set, missing, keys
}

// nest turns dotted keys into nested maps.
func nest(flat map[string]any) map[string]any {
	out := map[string]any{}
	keys := make([]string, 0, len(flat))
	for k := range flat {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		segs := strings.Split(k, ".")
		m := out
		for _, s := range segs[:len(segs)-1] {
			next, ok := m[s].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[s] = next
			}
			m = next
		}
		if sub, ok := m[segs[len(segs)-1]].(map[string]any); ok {
			// A key under one already set whole: merged into a copy.
			for sk, sv := range cloneValue(flat[k]).(map[string]any) {
				sub[sk] = sv
			}
			continue
		}
		m[segs[len(segs)-1]] = cloneValue(flat[k])
	}
	return out
}

// parentKey is the dotted key above k, "" at the root.
func parentKey(k string) string {
	if i := strings.LastIndexByte(k, '.'); i >= 0 {
		return k[:i]
	}
	return ""
}

// cloneValue deep-copies a decoded JSON value.
func cloneValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, c := range x {
			out[k] = cloneValue(c)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, c := range x {
			out[i] = cloneValue(c)
		}
		return out
	}
	return v
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func named(l []any) bool {
	for _, v := range l {
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		if _, ok := m["name"].(string); !ok {
			return false
		}
	}
	return len(l) > 0
}

// valuesPlan gathers the values keys the fixes of chart objects set.
type valuesPlan struct {
	set          map[string]any
	fileOf       map[string]string // values key -> the values file that sets it
	placeholders []string          // values keys
	changes      []planned
	maxSize      int64
	// inPlace: the keys go to the values files that set them.
	editInPlace bool
	// renderer renders the charts; trials holds one trial renderer per
	// chart, made when an object of it is first routed.
	renderer *helm.Renderer
	trials   map[string]*chartTrial
	// nulls are keys written as null rather than deleted (a chart's
	// default overridden from a file that does not set it).
	nulls map[string]bool
	// comments say beside each key which findings it fixes.
	comments map[string]string
	routes   []Route
	// ranges say where a number was kept inside the range the values
	// file documents; docLines caches the files read for it.
	ranges   []string
	docLines map[string][]string
	// unwritableWhy says, for the object being planned, why the values
	// keys a route found are not written in place (a read-only file).
	unwritableWhy string
	// unreached says, for the object being planned, why no values route
	// reaches each block the router could not route.
	unreached map[string]string
}

// withinDocumented keeps each number written to a key inside the range
// the values file documents beside the key ("1 to 5 seconds"): a value
// above it is written as its upper bound, and said. The rescan then tells
// whether that is enough.
func (v *valuesPlan) withinDocumented(o *object.Object, set map[string]any) {
	t, err := v.trial(o)
	if err != nil {
		return
	}
	for _, k := range sortedKeys(set) {
		n, ok := set[k].(float64)
		if !ok {
			continue
		}
		for _, l := range t.layers {
			rel, ok := strings.CutPrefix(k, l.Prefix)
			line, has := l.Lines[rel]
			if !ok || !has {
				continue
			}
			if v.docLines == nil {
				v.docLines = map[string][]string{}
			}
			lines, read := v.docLines[l.File]
			if !read {
				data, _ := os.ReadFile(l.File)
				lines = strings.Split(string(data), "\n")
				v.docLines[l.File] = lines
			}
			r, found := valuesdoc.Find(lines, line, rel)
			if !found {
				break
			}
			bound := n
			switch {
			case n > r.High:
				bound = r.High
			case n < r.Low:
				bound = r.Low
			}
			if bound != n {
				set[k] = bound
				v.ranges = append(v.ranges, fmt.Sprintf("%s: %g, not %g: %s:%d documents the key as %q", k, bound, n, l.File, r.Line, r.Text))
			}
			break
		}
	}
}

// unreachedWhy says why the values do not reach the blocks of o, as the
// router found.
func (v *valuesPlan) unreachedWhy() string {
	var parts []string
	for _, b := range sortedKeys(v.unreached) {
		parts = append(parts, v.unreached[b])
	}
	return strings.Join(parts, "; ")
}

// trial is the trial renderer of the chart o was rendered from.
func (v *valuesPlan) trial(o *object.Object) (*chartTrial, error) {
	dir := o.Doc.Origin.Dir
	if t, ok := v.trials[dir]; ok {
		if t == nil {
			return nil, fmt.Errorf("%s cannot be rendered for trial", dir)
		}
		return t, nil
	}
	if v.renderer == nil {
		v.trials[dir] = nil
		return nil, fmt.Errorf("no chart renderer")
	}
	t, err := newTrial(v.renderer, dir)
	if t != nil {
		t.maxSize = v.maxSize
	}
	v.trials[dir] = t
	return t, err
}

// planRoutes routes what it can of the change c on o through the chart's
// values (see route.go), and records those findings' fix. It returns the
// change left for the other routes (the template, the patch), with the
// findings the values do not reach, or nil when none is left.
func planRoutes(o *object.Object, c fix.Change, chosen []finding.Finding, v *valuesPlan) *fix.Change {
	v.unreached, v.unwritableWhy = nil, ""
	t, err := v.trial(o)
	if err == nil {
		var rt *objectRoute
		if rt, err = t.routeObject(o, c); err == nil {
			return v.planObjectRoute(o, c, chosen, t, rt)
		}
	}
	v.unreached = map[string]string{"": "the chart's values are not tried: " + err.Error()}
	return &c
}

// planObjectRoute records the findings of c the routes rt reach, and
// returns the change left for the other routes, or nil.
func (v *valuesPlan) planObjectRoute(o *object.Object, c fix.Change, chosen []finding.Finding, t *chartTrial, rt *objectRoute) *fix.Change {
	v.unreached = rt.unreached
	if len(rt.routes) == 0 {
		return &c
	}
	routed := map[string]bool{}
	for _, r := range rt.routes {
		routed[r.block] = true
	}
	in, rest := findingsIn(o, c, chosen, routed)
	if len(in) == 0 {
		return &c
	}
	keys := map[string]any{}
	touched := map[int]map[string]bool{}
	for _, i := range in {
		touched[i] = blocksOf(o, chosen[i])
	}
	for _, r := range rt.routes {
		var rules []string
		for _, i := range in {
			if touched[i][r.block] && !containsString(rules, chosen[i].Rule) {
				rules = append(rules, chosen[i].Rule)
			}
		}
		if len(rules) == 0 {
			continue // a block only the findings left for later reach
		}
		sort.Strings(rules)
		for k, val := range r.keys {
			if why := v.place(t, k, val); why != "" {
				return &c
			}
			keys[k] = val
			v.comments[k] = "backfire fix: " + strings.Join(rules, ", ")
		}
		v.routes = append(v.routes, Route{Object: o.Ref, Block: namedPath(o, r.block), How: r.how, Keys: sortedKeys(r.keys), Why: r.why, Rules: rules})
	}
	if why := v.unwritable(keys); why != "" {
		// The values do reach the fields: say so, and which keys.
		v.unwritableWhy = why
		return &c
	}
	sub := c
	sub.Findings = in
	// Placeholders follow their field into the values key that holds it.
	var ph []string
	for _, p := range c.Placeholders {
		if k, ok := rt.keyOf(o, p); ok {
			ph = append(ph, k)
		}
	}
	sub.Placeholders = nil
	keyOf := map[string]string{}
	for _, p := range ph {
		keyOf[p] = p
	}
	v.record(o, fix.Change{Target: c.Target, Patch: c.Patch, Findings: in, Placeholders: ph}, keys, nil, keyOf, chosen, "", "")
	if len(rest) == 0 {
		return nil
	}
	left := c
	left.Findings = rest
	sub2 := make([]finding.Finding, len(rest))
	for k, i := range rest {
		sub2[k] = chosen[i]
	}
	cs := fix.Compose(sub2)
	if len(cs) != 1 {
		return &left
	}
	left = cs[0]
	for k, i := range left.Findings {
		left.Findings[k] = rest[i]
	}
	return &left
}

// place chooses the values file a routed key is written to in place: the
// file that sets it (a subchart's keys in the chart's own values.yaml,
// under the subchart's name), else the user's last --values file, else
// the one that sets its nearest parent. A deletion of a key the chosen
// file does not set alone is written as null.
func (v *valuesPlan) place(t *chartTrial, key string, val any) string {
	root := ""
	for _, l := range t.layers {
		if !l.User && l.Prefix == "" {
			root = l.File
		}
	}
	sets := func(l helm.ValuesLayer, k string) bool {
		rel, ok := strings.CutPrefix(k, l.Prefix)
		if !ok && l.Prefix != "" {
			return false
		}
		_, set := l.Lines[rel]
		return set
	}
	file := ""
	var setBy []helm.ValuesLayer
	for _, l := range t.layers {
		if sets(l, key) {
			setBy = append(setBy, l)
		}
	}
	switch {
	case len(setBy) > 0 && setBy[0].Prefix == "":
		file = setBy[0].File
	case len(setBy) > 0:
		file = root
	default:
		for _, l := range t.layers {
			if l.User {
				file = l.File
				break
			}
		}
		if file == "" {
			file = root
		}
	}
	if file == "" {
		return "no values file to write " + key + " to"
	}
	v.fileOf[key] = file
	if val == nil {
		// Removing the key from the file that sets it is enough only when
		// no file below it sets it too.
		below := false
		for _, l := range setBy {
			if l.File != file {
				below = true
			}
		}
		if len(setBy) == 0 || below || setBy[0].File != file {
			v.nulls[key] = true
		}
	}
	return ""
}

// unwritable says why a values file that sets one of the keys cannot be
// edited in place (a symbolic link, a read-only file), or "".
func (v *valuesPlan) unwritable(set map[string]any) string {
	if !v.editInPlace {
		return ""
	}
	for _, k := range sortedKeys(set) {
		if why := cannotWrite(v.fileOf[k]); why != "" {
			return why + ": the values keys " + strings.Join(sortedKeys(set), ", ") + " would fix it; pass --values-out FILE to write the fixes to a values file of their own"
		}
	}
	return ""
}

// packagedChart gives the archive (a chart packaged as .tgz) that path,
// a file of the chart, lies in, or "": its first ancestor that exists is
// then a regular file, not a directory.
func packagedChart(path string) string {
	for dir := filepath.Dir(path); dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		info, err := os.Stat(dir)
		if err == nil {
			if info.Mode().IsRegular() {
				return dir
			}
			return ""
		}
	}
	return ""
}

// cannotWrite says why fix does not write a file in place, or "".
func cannotWrite(path string) string {
	if path == "" {
		return ""
	}
	info, err := os.Lstat(path)
	switch {
	case err != nil:
		if archive := packagedChart(path); archive != "" {
			return archive + " is a packaged chart, and fix does not write inside an archive"
		}
		return ""
	case info.Mode()&os.ModeSymlink != 0:
		to, _ := os.Readlink(path)
		return fmt.Sprintf("%s is a symbolic link (to %s): fix does not write through links", path, to)
	case !info.Mode().IsRegular():
		return path + " is not a regular file"
	case info.Mode().Perm()&0o200 == 0:
		return fmt.Sprintf("%s is read-only (mode %v)", path, info.Mode().Perm())
	}
	return ""
}

// record adds a planned change: the values keys it sets, the template it
// edits, if any, and why the fields still missing are not edited there.
func (v *valuesPlan) record(o *object.Object, c fix.Change, set map[string]any, missing []string, keys map[string]string, chosen []finding.Finding, template, why string) {
	v.withinDocumented(o, set)
	for k, val := range set {
		v.set[k] = val
	}
	// Placeholders follow their field into the values file.
	var ph []string
	for _, p := range c.Placeholders {
		if k, ok := keys[p]; ok {
			ph = append(ph, k)
			v.placeholders = append(v.placeholders, k)
		}
	}
	c.Placeholders = ph
	var rs []string
	for _, i := range c.Findings {
		if !slices.Contains(rs, chosen[i].Rule) {
			rs = append(rs, chosen[i].Rule)
		}
	}
	sort.Strings(rs)
	// The comment names the rules of the object's change, less those
	// whose patch changes no block these keys set: a rule left for a
	// block no key reaches (BF601's lifecycle on a chart without a
	// lifecycle value) is not written beside a probe's keys. Fields are
	// named by container name or index, so a block is matched by its own
	// name (livenessProbe, resources).
	reaches := func(i int) bool {
		for b := range blocksOf(o, chosen[i]) {
			name := b[strings.LastIndexAny(b, "].")+1:]
			for field := range keys {
				if strings.Contains("."+strings.ReplaceAll(field, "].", "]..")+".", "."+name+".") {
					return true
				}
			}
		}
		return false
	}
	who := rs
	if len(keys) > 0 {
		who = nil
		for _, i := range c.Findings {
			if reaches(i) && !slices.Contains(who, chosen[i].Rule) {
				who = append(who, chosen[i].Rule)
			}
		}
		sort.Strings(who)
		if len(who) == 0 {
			who = rs
		}
	}
	for k := range set {
		if v.comments[k] == "" {
			v.comments[k] = "backfire fix: " + strings.Join(who, ", ")
		}
	}
	v.changes = append(v.changes, planned{change: c, obj: o, values: set, missing: missing, rules: rs, template: template, why: why})
}
