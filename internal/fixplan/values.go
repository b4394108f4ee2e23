package fixplan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/helm"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/scan"
	"backfire.dev/backfire/internal/source"
	"backfire.dev/backfire/internal/valuesdoc"
	"backfire.dev/backfire/internal/yamledit"
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

// file renders the values file: the existing one edited in place, or a
// new one.
func (v *valuesPlan) file(path string, old []byte) (*File, error) {
	patch := nest(v.set)
	f := &File{Path: path, Old: old}
	if old != nil {
		pos, err := rootPosition(old)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		// The file overrides the chart: a deletion is written as null.
		n, err := yamledit.EditWith(old, pos, patch, yamledit.Options{Placeholders: v.placeholders, Comments: v.comments, KeepNulls: true, Notes: &f.Notes})
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		f.New = n
	} else {
		var n yaml.Node
		if err := n.Encode(patch); err != nil {
			return nil, err
		}
		comment(&n, "", v.placeholders, v.comments)
		var b bytes.Buffer
		b.WriteString("# Values written by backfire fix: pass this file last with --values.\n")
		enc := yaml.NewEncoder(&b)
		enc.SetIndent(2)
		if err := enc.Encode(&n); err != nil {
			return nil, err
		}
		enc.Close()
		f.New = b.Bytes()
	}
	for i := range v.changes {
		v.changes[i].file = path
		for _, r := range v.changes[i].rules {
			if !slices.Contains(f.Rules, r) {
				f.Rules = append(f.Rules, r)
			}
		}
	}
	return f, nil
}

func rootPosition(data []byte) (load.Position, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return load.Position{}, err
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return load.Position{}, fmt.Errorf("not a mapping of values")
	}
	return load.Position{Line: doc.Content[0].Line, Column: doc.Content[0].Column}, nil
}

// charts builds the chart renderer: the user's values files, then the
// values-out file when it exists, or extra (the rescan's new values).
func charts(opts Options, withOut bool, extra string) (source.Renderer, error) {
	h := *opts.Helm
	h.ValueFiles = slices.Clone(h.ValueFiles)
	if withOut {
		h.ValueFiles = append(h.ValueFiles, opts.ValuesOut)
	}
	if extra != "" {
		h.ValueFiles = append(h.ValueFiles, extra)
	}
	return helm.New(h)
}

// comment marks the placeholder keys of a new values file.
func comment(n *yaml.Node, path string, placeholders []string, comments map[string]string) {
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		p := join(path, n.Content[i].Value)
		switch {
		case slices.Contains(placeholders, p):
			n.Content[i+1].LineComment = yamledit.PlaceholderComment
		case comments[p] != "" && n.Content[i+1].Kind == yaml.MappingNode:
			n.Content[i].LineComment = "# " + comments[p]
		case comments[p] != "":
			n.Content[i+1].LineComment = "# " + comments[p]
		}
		comment(n.Content[i+1], p, placeholders, comments)
	}
}

// inSubchart reports whether a values file is a subchart's: under a
// charts/ folder of a chart fix renders. Only the part of the path below
// that chart counts: a chart kept at charts/<name>, as many repositories
// keep theirs, is not a subchart.
func (v *valuesPlan) inSubchart(path string) bool {
	for dir := range v.trials {
		rel, err := filepath.Rel(dir, path)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		if slices.Contains(strings.Split(filepath.ToSlash(filepath.Dir(rel)), "/"), "charts") {
			return true
		}
	}
	return false
}

// inPlace edits the values files that set the keys: the chart's
// values.yaml, or a --values file, each in place.
func (v *valuesPlan) inPlace(maxSize int64) ([]*File, error) {
	byFile := map[string]map[string]any{}
	for k, val := range v.set {
		f := v.fileOf[k]
		if byFile[f] == nil {
			byFile[f] = map[string]any{}
		}
		byFile[f][k] = val
	}
	var out []*File
	for _, path := range sortedKeys(byFile) {
		// A subchart's values file holds its keys without the prefix the
		// trace names them by: not written (the finding stays, reported).
		if path == "" || v.inSubchart(path) {
			continue
		}
		data, err := source.ReadFile(path, maxSize)
		if err != nil {
			return nil, err
		}
		pos, err := rootPosition(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		var ph []string
		for _, p := range v.placeholders {
			// The placeholder's key, or the key above it written whole.
			for k := p; k != ""; k = parentKey(k) {
				if f, ok := v.fileOf[k]; ok {
					if f == path {
						ph = append(ph, p)
					}
					break
				}
			}
		}
		// Keys are set, and deleted where the file alone sets them; a
		// chart default the file does not set is overridden with null.
		set, nulls := map[string]any{}, map[string]any{}
		for k, val := range byFile[path] {
			if val == nil && v.nulls[k] {
				nulls[k] = nil
			} else {
				set[k] = val
			}
		}
		var notes []string
		n, err := yamledit.EditWith(data, pos, nest(set), yamledit.Options{Placeholders: ph, Comments: v.comments, Notes: &notes})
		if err == nil && len(nulls) > 0 {
			n, err = yamledit.EditWith(n, pos, nest(nulls), yamledit.Options{Comments: v.comments, KeepNulls: true, Notes: &notes})
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		f := &File{Path: path, Old: data, New: n, Notes: notes}
		for _, c := range v.changes {
			for k := range c.values {
				if v.fileOf[k] == path {
					for _, r := range c.rules {
						if !slices.Contains(f.Rules, r) {
							f.Rules = append(f.Rules, r)
						}
					}
				}
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// rerender points the rescan at the new values files: Helm reads a chart
// and its values from disk, so a changed --values file is replaced by a
// temporary copy, and a chart whose values.yaml changed is copied to a
// temporary directory with the new file.
func rerender(so *scan.Options, opts Options, files []*File, renames map[string]string) (func(), error) {
	var tmps []string
	cleanup := func() {
		for _, t := range tmps {
			os.RemoveAll(t)
		}
	}
	h := *opts.Helm
	h.ValueFiles = slices.Clone(h.ValueFiles)
	var rest []*File
	for _, f := range files {
		if i := slices.IndexFunc(h.ValueFiles, func(p string) bool { return filepath.Clean(p) == filepath.Clean(f.Path) }); i >= 0 {
			tmp, err := os.CreateTemp("", "backfire-values-*.yaml")
			if err != nil {
				return cleanup, err
			}
			tmps = append(tmps, tmp.Name())
			_, err = tmp.Write(f.New)
			tmp.Close()
			if err != nil {
				return cleanup, err
			}
			h.ValueFiles[i] = tmp.Name()
			continue
		}
		rest = append(rest, f)
	}
	ts, err := copyCharts(so, rest, renames)
	tmps = append(tmps, ts...)
	if err != nil {
		return cleanup, err
	}
	r, err := helm.New(h)
	if err != nil {
		return cleanup, fmt.Errorf("the new values do not load: %v", err)
	}
	so.Charts = r
	return cleanup, nil
}

// copyCharts copies each chart one of files belongs to (a chart's
// values.yaml, a template) to a temporary directory with the new
// contents, and points the scan at the copy: Helm reads a chart from disk.
// It returns the temporary directories to remove; renames maps each copy
// to its chart, so that the rescan's streams are named as the scan's.
func copyCharts(so *scan.Options, files []*File, renames map[string]string) ([]string, error) {
	var tmps []string
	so.Paths = slices.Clone(so.Paths)
	copies := map[string]string{} // chart directory -> its copy
	for _, f := range files {
		chartDir := filepath.Dir(f.Path)
		for {
			if _, err := os.Stat(filepath.Join(chartDir, "Chart.yaml")); err == nil {
				break
			}
			up := filepath.Dir(chartDir)
			if up == chartDir {
				chartDir = ""
				break
			}
			chartDir = up
		}
		if chartDir == "" {
			continue // a plain manifest: read from the overlay
		}
		copyDir, ok := copies[chartDir]
		if !ok {
			i := slices.IndexFunc(so.Paths, func(p string) bool { return filepath.Clean(p) == filepath.Clean(chartDir) })
			if i < 0 {
				if rel, _ := filepath.Rel(chartDir, f.Path); filepath.Dir(rel) != "." && !strings.HasPrefix(filepath.ToSlash(rel), "templates/") {
					continue // a manifest kept beside a chart, not part of it
				}
				return tmps, fmt.Errorf("%s: to prove a change of a chart, pass the chart directory %s itself", f.Path, chartDir)
			}
			dir, err := os.MkdirTemp("", "backfire-chart-*")
			if err != nil {
				return tmps, err
			}
			tmps = append(tmps, dir)
			copyDir = filepath.Join(dir, filepath.Base(chartDir))
			if err := copyResolved(copyDir, chartDir); err != nil {
				return tmps, err
			}
			copies[chartDir] = copyDir
			renames[copyDir] = so.Paths[i]
			so.Paths[i] = copyDir
		}
		rel, err := filepath.Rel(chartDir, f.Path)
		if err != nil {
			return tmps, err
		}
		// The copy may hold a symbolic link where the chart does: remove
		// it, so that the new contents never reach what it points to.
		dst := filepath.Join(copyDir, rel)
		if err := os.Remove(dst); err != nil && !os.IsNotExist(err) {
			return tmps, err
		}
		if err := os.WriteFile(dst, f.New, 0o644); err != nil {
			return tmps, err
		}
	}
	return tmps, nil
}

// copyResolved copies the tree at src to dst with its symbolic links
// resolved, as Helm's loader reads a chart: a link to a file (even one
// outside the chart, which a relative link would leave dangling in the
// copy) becomes a copy of what it points to. A link to a directory that
// holds it is a loop, and an error.
func copyResolved(dst, src string) error {
	return copyDirResolved(dst, src, map[string]bool{})
}

func copyDirResolved(dst, src string, onPath map[string]bool) error {
	real, err := filepath.EvalSymlinks(src)
	if err != nil {
		return err
	}
	if onPath[real] {
		return fmt.Errorf("%s: a symbolic link loop", src)
	}
	onPath[real] = true
	defer delete(onPath, real)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		from, to := filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())
		info, err := os.Stat(from) // through links
		if err != nil {
			return fmt.Errorf("%s: %v", from, err)
		}
		if info.IsDir() {
			if err := copyDirResolved(to, from, onPath); err != nil {
				return err
			}
			continue
		}
		if !info.Mode().IsRegular() {
			continue // a FIFO or device is not part of a chart
		}
		data, err := os.ReadFile(from)
		if err != nil {
			return err
		}
		if err := os.WriteFile(to, data, info.Mode().Perm()|0o200); err != nil {
			return err
		}
	}
	return nil
}
