package helm

import (
	"backfire.dev/backfire/internal/lazyregexp"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"

	yaml "go.yaml.in/yaml/v3"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	sigsyaml "sigs.k8s.io/yaml"

	"backfire.dev/backfire/internal/load"
)

// Values provenance: which values key produced a line of rendered output.
//
// Go templates keep no map from output to source, so the chart is rendered
// a second time with a marker appended to every template line that prints
// exactly one .Values reference. A rendered line that carries one marker,
// and equals the first render's line once the marker is removed, came from
// that template line. The key is then looked up in the values layers, from
// --set-string down to the chart's values.yaml, and kept only if the
// rendered field's value is exactly the value the key holds. Markers are
// plain text, so control flow is the same in both renders; where a marker
// would change what a template computes (inside a checksum, a tpl string),
// the lines differ and the line is dropped; if the second render fails,
// there is no provenance.

// valuesRef matches a .Values reference ($.Values.a.b or .Values.a.b).
var valuesRef = lazyregexp.New(`(?:^|[^A-Za-z0-9_\]\)])\$?\.Values\.([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)`)

// Markers use private-use code points that charts do not contain.
const markOpen, markClose = "\uE000", "\uE001"

var markerRe = lazyregexp.New(markOpen + `(\d+)` + markClose)

// marked is a template line that carries a marker.
type marked struct {
	chartPath string // the chart's full path in the engine: "harbor/charts/redis"
	key       string // the values key, relative to that chart
}

// valueSource is where a rendered line's value was set.
type valueSource struct {
	layer layer
	rank  int    // precedence of the layer: 0 is the highest
	line  int    // of the key in the layer's file; 0 for --set
	key   string // dotted values key, as seen from the root chart
	text  string // "values.yaml:1074 database.internal.livenessProbe.timeoutSeconds"
}

// provenance is computed on the first finding that asks for it: it costs a
// second render of the chart, which most charts' clean objects never need.
type provenance struct {
	once    sync.Once
	compute func() map[string]*traceTable
	tables  map[string]*traceTable
}

// tracer is the load.Tracer of one rendered template; starts holds the
// line of the template's output each of its documents starts on.
func (p *provenance) tracer(template string, starts []int) load.Tracer {
	return func(d *load.Document, path string, pos load.Position) load.Trace {
		if d.Index < 0 || d.Index >= len(starts) {
			return load.Trace{}
		}
		p.once.Do(func() {
			defer func() { _ = recover() }() // no provenance, never a crash
			p.tables = p.compute()
		})
		if t := p.tables[template]; t != nil {
			return t.trace(d, path, pos, starts[d.Index]-1)
		}
		return load.Trace{}
	}
}

// traceTable maps rendered lines of one template to their values source.
type traceTable struct {
	lines map[int]valueSource
}

// traceTables builds a trace table per rendered template. It never fails
// the render: without it, findings just carry no values source.
func (r *Renderer) traceTables(chartPath string, ch *chart.Chart, vals chartutil.Values, first map[string]string) map[string]*traceTable {
	var marks []marked
	var restore []func()
	defer func() {
		for _, f := range restore {
			f()
		}
	}()
	var walk func(c *chart.Chart)
	walk = func(c *chart.Chart) {
		for _, t := range c.Templates {
			if t == nil {
				continue
			}
			src := string(t.Data)
			// The random calls made fixed (see stubRandomness): the lines
			// they print differ from the first render's and are not
			// traced, every other line of the file is; and no RSA key is
			// generated, most of the render of a chart such as Harbor's.
			if out, ok := stubTemplate(src); ok {
				src = out
			}
			data, n := src, 0
			if !strings.HasPrefix(path.Base(t.Name), "_") { // partials hold defines, often piped through fromYaml
				data, n = markTemplate(src, c.ChartFullPath(), &marks)
			}
			if n == 0 && src == string(t.Data) {
				continue
			}
			orig := t.Data
			t.Data = []byte(data)
			restore = append(restore, func() { t.Data = orig })
		}
		for _, d := range c.Dependencies() {
			walk(d)
		}
	}
	walk(ch)
	if len(marks) == 0 {
		return nil
	}
	second, err := engine.Engine{}.Render(ch, vals)
	if err != nil {
		return nil
	}
	layers := r.layers(chartPath, ch)
	out := map[string]*traceTable{}
	for name, text := range first {
		a, b := strings.Split(text, "\n"), strings.Split(second[name], "\n")
		if len(a) != len(b) {
			continue
		}
		t := &traceTable{lines: map[int]valueSource{}}
		for i, line := range b {
			ids := markerRe().FindAllStringSubmatch(line, -1)
			if len(ids) != 1 || markerRe().ReplaceAllString(line, "") != a[i] {
				continue
			}
			id, _ := strconv.Atoi(ids[0][1])
			m := marks[id]
			if src, ok := r.source(m, ch, vals, layers, a[i]); ok {
				t.lines[i+1] = src
				continue
			}
			for line, src := range blockSources(m, ch, vals, layers, a, i) {
				t.lines[line] = src
			}
		}
		if len(t.lines) > 0 {
			out[name] = t
		}
	}
	return out
}

// markTemplate appends a marker to each line of a template that holds
// exactly one .Values reference and where a marker is plain text: outside
// any action ({{ ... }} spanning lines) and not right after a "-}}" that
// would trim the line break (the marker would stop it doing so). Inside
// {{ with .Values.x }}, a line that prints toYaml of the dot (toYaml . or
// toYaml .y) is marked with that key (x, x.y).
func markTemplate(src, chartPath string, marks *[]marked) (string, int) {
	lines := strings.Split(src, "\n")
	depth, n := 0, 0
	var dots dotScopes
	for i, l := range lines {
		start := depth
		depth += strings.Count(l, "{{") - strings.Count(l, "}}")
		if start != 0 || depth != 0 {
			if !strings.HasPrefix(strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "{-")), "/*") {
				dots.lost = true // an action across lines may open or close a block
			}
			continue
		}
		key := ""
		refs := valuesRef().FindAllStringSubmatch(l, -1)
		switch {
		case len(refs) == 1 && printsValue(l):
			key = refs[0][1]
		case len(refs) == 0:
			key = dots.toYamlKey(l)
		}
		dots.follow(l)
		if key == "" || strings.HasSuffix(strings.TrimRight(l, " \t\r"), "-}}") {
			continue
		}
		lines[i] = l + markOpen + strconv.Itoa(len(*marks)) + markClose
		*marks = append(*marks, marked{chartPath: chartPath, key: key})
		n++
	}
	return strings.Join(lines, "\n"), n
}

// dotScopes follows the blocks of a template to know what the dot is:
// the values key of the innermost {{ with .Values.x }}, or nothing known.
type dotScopes struct {
	stack []dotScope
	lost  bool // a block opened or closed where it could not be followed
}

type dotScope struct {
	rebinds bool   // with, range, define, block set the dot; if does not
	key     string // the values key the dot is, "" if unknown
}

var (
	withValues = lazyregexp.New(`^with\s+\$?\.Values\.([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)$`)
	toYamlDot  = lazyregexp.New(`^toYaml\s+\.((?:[A-Za-z_][A-Za-z0-9_]*)(?:\.[A-Za-z_][A-Za-z0-9_]*)*)?\s*(?:\|\s*n?indent\s+\d+)?$`)
	firstWord  = lazyregexp.New(`^[a-z]+`)
)

// follow updates the scopes with the control actions of a line.
func (d *dotScopes) follow(line string) {
	for _, a := range action().FindAllStringSubmatch(line, -1) {
		switch firstWord().FindString(a[1]) {
		case "if":
			d.stack = append(d.stack, dotScope{})
		case "with":
			key := ""
			if m := withValues().FindStringSubmatch(a[1]); m != nil {
				key = m[1]
			}
			d.stack = append(d.stack, dotScope{rebinds: true, key: key})
		case "range", "define", "block":
			d.stack = append(d.stack, dotScope{rebinds: true})
		case "else":
			if len(d.stack) > 0 {
				d.stack[len(d.stack)-1].key = "" // the dot of an else is not the with's
			}
		case "end":
			if len(d.stack) == 0 {
				d.lost = true
				continue
			}
			d.stack = d.stack[:len(d.stack)-1]
		}
	}
}

// toYamlKey is the values key a line prints with toYaml of the dot, when
// that is the line's only action and the dot is a known values key.
func (d *dotScopes) toYamlKey(line string) string {
	if d.lost {
		return ""
	}
	as := action().FindAllStringSubmatch(line, -1)
	if len(as) != 1 {
		return ""
	}
	m := toYamlDot().FindStringSubmatch(as[0][1])
	if m == nil {
		return ""
	}
	for i := len(d.stack) - 1; i >= 0; i-- {
		if !d.stack[i].rebinds {
			continue
		}
		if d.stack[i].key == "" {
			return ""
		}
		if m[1] == "" {
			return d.stack[i].key
		}
		return d.stack[i].key + "." + m[1]
	}
	return ""
}

// action is one {{ ... }} of a template line.
var action = lazyregexp.New(`\{\{-?\s*(.*?)\s*-?\}\}`)

// controlWords start actions that print nothing themselves; a .Values
// reference in one of them decides what is printed, it is not printed.
var controlWords = lazyregexp.New(`^(?:if|else|with|range|end|define|block|/\*|\$[A-Za-z0-9_]*\s*:?=)`)

// printsValue reports whether the action that holds the line's .Values
// reference prints something.
func printsValue(line string) bool {
	for _, a := range action().FindAllStringSubmatch(line, -1) {
		if valuesRef().MatchString(a[0]) {
			return !controlWords().MatchString(a[1])
		}
	}
	return false
}

// renderedScalar is the value a rendered line gives its field: after
// "key: " or "- ", unquoted. Lines that are not a simple scalar field give
// "".
func renderedScalar(line string) string {
	v := strings.TrimSpace(line)
	v = strings.TrimSpace(strings.TrimPrefix(v, "- "))
	if i := strings.Index(v, ": "); i >= 0 {
		v = strings.TrimSpace(v[i+2:])
	} else if strings.HasSuffix(v, ":") {
		return ""
	}
	if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
		v = v[1 : len(v)-1]
	}
	return v
}

// layer is a values layer as seen from the root chart: key prefix is
// where the layer's keys sit in the root's values ("redis." for the
// values.yaml of subchart redis).
type layer struct {
	*valuesLayer
	prefix string
}

// layers lists the values sources from the highest precedence down:
// --set-string and --set (last given first), --values files (last first),
// then each chart's values.yaml from the root down to the subcharts.
func (r *Renderer) layers(chartPath string, ch *chart.Chart) []layer {
	var ls []layer
	for i := len(r.user) - 1; i >= 0; i-- {
		ls = append(ls, layer{valuesLayer: r.user[i]})
	}
	var walk func(c *chart.Chart, prefix string)
	walk = func(c *chart.Chart, prefix string) {
		for _, f := range c.Raw {
			if f.Name != chartutil.ValuesfileName {
				continue
			}
			if l, err := parseValues(r.name(chartPath, c.ChartFullPath()+"/"+f.Name), f.Data); err == nil {
				ls = append(ls, layer{valuesLayer: l, prefix: prefix})
			}
		}
		for _, d := range c.Dependencies() {
			walk(d, prefix+d.Name()+".")
		}
	}
	walk(ch, "")
	return ls
}

// rootKey is the key of m as seen from the root chart: subchart values
// live under the subchart's name.
func rootKey(m marked, root *chart.Chart) string {
	rel := strings.TrimPrefix(m.chartPath, root.ChartFullPath())
	if rel == "" {
		return m.key
	}
	parts := strings.Split(strings.Trim(rel, "/"), "/")
	var names []string
	for i := 1; i < len(parts); i += 2 { // "charts/<name>/charts/<name>"
		names = append(names, parts[i])
	}
	return strings.Join(names, ".") + "." + m.key
}

// source finds the layer that set the key of m, and checks that the value
// it set is what the rendered line shows.
func (r *Renderer) source(m marked, root *chart.Chart, vals chartutil.Values, layers []layer, rendered string) (valueSource, bool) {
	key := rootKey(m, root)
	v, ok := lookup(vals.AsMap(), "Values."+key)
	if !ok {
		return valueSource{}, false
	}
	// The field must show the value as it is: not a default that
	// replaced it, not a string built around it.
	shown, ok := scalarText(v)
	if !ok || shown == "" || renderedScalar(rendered) != shown {
		return valueSource{}, false
	}
	return layerSource(key, layers)
}

// layerSource names the highest-precedence layer that sets a root key.
func layerSource(rootKey string, layers []layer) (valueSource, bool) {
	for rank, l := range layers {
		key, ok := strings.CutPrefix(rootKey, l.prefix)
		if !ok || !l.keys[key] {
			continue
		}
		src := valueSource{layer: l, rank: rank, key: rootKey, text: l.name}
		if l.lines != nil {
			src.line = l.lines[key]
			src.text = fmt.Sprintf("%s:%d %s", l.name, src.line, rootKey)
		}
		return src, true
	}
	return valueSource{}, false
}

// blockSources traces a block that `toYaml .Values.x | indent n` (or
// nindent) printed: the marker sits on the block's last line. The block
// is kept only if its lines are exactly what Helm's toYaml makes of the
// value (sigs.k8s.io/yaml, trailing newline trimmed: toYAML in
// pkg/engine/funcs.go), indented; then each key line of it is the values
// key below x at that line, at any depth. Keys under lists are not
// addressable as values keys and are left out.
func blockSources(m marked, root *chart.Chart, vals chartutil.Values, layers []layer, rendered []string, last int) map[int]valueSource {
	key := rootKey(m, root)
	v, ok := lookup(vals.AsMap(), "Values."+key)
	if !ok {
		return nil
	}
	if _, scalar := scalarText(v); scalar || v == nil {
		return nil
	}
	text, err := sigsyaml.Marshal(v)
	if err != nil {
		return nil
	}
	block := strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")
	first := last - len(block) + 1
	if first < 0 {
		return nil
	}
	for k, want := range block {
		prefix, ok := strings.CutSuffix(rendered[first+k], want)
		if !ok || k > 0 && strings.Trim(prefix, " ") != "" {
			return nil
		}
	}
	var node yaml.Node
	if yaml.Unmarshal(text, &node) != nil || len(node.Content) == 0 {
		return nil
	}
	subLines := map[string]int{}
	keyLines(node.Content[0], "", subLines)
	out := map[int]valueSource{}
	for sub, line := range subLines {
		full := key + "." + sub
		if val, ok := lookup(vals.AsMap(), "Values."+full); !ok {
			continue
		} else if _, scalar := scalarText(val); !scalar {
			continue // a mapping key: its leaves are traced
		}
		if src, ok := layerSource(full, layers); ok {
			out[first+line] = src
		}
	}
	return out
}

// scalarText prints a value as a template prints it; maps and lists span
// lines and are not traced.
func scalarText(v any) (string, bool) {
	switch v := v.(type) {
	case nil:
		return "", false
	case string:
		return v, true
	case bool, int, int64, float64, json.Number:
		return fmt.Sprint(v), true
	}
	return "", false
}

// trace is the load.Tracer of a rendered template. A scalar field reports
// the values key on its line. A mapping or list (a whole livenessProbe)
// reports the values that fill it: their common parent key when one values
// file set them all, else each of them. Absent fields have none: a
// defaulted value was not set anywhere.
// offset turns a line of the document into a line of the template's
// output.
func (t *traceTable) trace(d *load.Document, fieldPath string, pos load.Position, offset int) load.Trace {
	if fieldPath == "" {
		return load.Trace{}
	}
	if _, exact := d.Locate(fieldPath); !exact {
		return load.Trace{}
	}
	var v any
	if json.Unmarshal(d.JSON, &v) != nil {
		return load.Trace{}
	}
	v, ok := load.ValueAt(v, load.SplitPath(fieldPath))
	if !ok {
		return load.Trace{}
	}
	switch v.(type) {
	case map[string]any, []any:
	default:
		if s, ok := t.lines[pos.Line+offset]; ok {
			return load.Trace{Values: &load.Provenance{Keys: []load.ValuesRef{s.ref()}, Own: true, Text: s.text}}
		}
		return load.Trace{}
	}
	var srcs []valueSource
	seen := map[string]bool{}
	for _, leaf := range leaves(v, fieldPath) {
		p, _ := d.Locate(leaf)
		if s, ok := t.lines[p.Line+offset]; ok && !seen[s.text] {
			seen[s.text] = true
			srcs = append(srcs, s)
		}
	}
	if len(srcs) == 0 {
		return load.Trace{}
	}
	return load.Trace{Values: provenanceOf(srcs)}
}

// provenanceOf is the typed provenance of a composite field's sources.
func provenanceOf(srcs []valueSource) *load.Provenance {
	p := &load.Provenance{Text: summarize(srcs)}
	if parent, line, ok := commonParent(srcs); ok {
		l := srcs[0].layer
		p.Parent = &load.ValuesRef{File: l.file(), Layer: l.name, Line: line, Key: parent}
	}
	sorted := append([]valueSource(nil), srcs...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if sorted[i].rank != sorted[j].rank {
			return sorted[i].rank < sorted[j].rank
		}
		return sorted[i].line < sorted[j].line
	})
	for _, s := range sorted {
		p.Keys = append(p.Keys, s.ref())
	}
	return p
}

// ref is the typed reference of a source.
func (s valueSource) ref() load.ValuesRef {
	return load.ValuesRef{File: s.layer.file(), Layer: s.layer.name, Line: s.line, Key: s.key}
}

// summarize names the sources of a composite field: "values.yaml:1071
// database.internal.livenessProbe (5 keys)" when one file set them all
// under one parent, else per layer, highest precedence first:
// "fix.yaml:18,19 database.internal.livenessProbe.{timeoutSeconds,failureThreshold};
// values.yaml:1072,1073 database.internal.livenessProbe.{initialDelaySeconds,periodSeconds}".
func summarize(srcs []valueSource) string {
	switch len(srcs) {
	case 0:
		return ""
	case 1:
		return srcs[0].text
	}
	if parent, line, ok := commonParent(srcs); ok {
		return fmt.Sprintf("%s:%d %s (%d keys)", srcs[0].layer.name, line, parent, len(srcs))
	}
	sort.SliceStable(srcs, func(i, j int) bool {
		if srcs[i].rank != srcs[j].rank {
			return srcs[i].rank < srcs[j].rank
		}
		return srcs[i].line < srcs[j].line
	})
	var parts []string
	for i := 0; i < len(srcs); {
		j := i + 1
		for j < len(srcs) && srcs[j].rank == srcs[i].rank {
			j++
		}
		parts = append(parts, group(srcs[i:j]))
		i = j
	}
	return strings.Join(parts, "; ")
}

// group names the sources of one layer: "file:l1,l2 parent.{a,b}".
func group(srcs []valueSource) string {
	if len(srcs) == 1 || srcs[0].layer.lines == nil {
		var texts []string
		for _, s := range srcs {
			texts = append(texts, s.text)
		}
		return strings.Join(texts, "; ")
	}
	var lines, keys []string
	for _, s := range srcs {
		lines = append(lines, strconv.Itoa(s.line))
		keys = append(keys, s.key)
	}
	parent := commonPrefix(keys)
	if parent == "" {
		return fmt.Sprintf("%s:%s %s", srcs[0].layer.name, strings.Join(lines, ","), strings.Join(keys, ","))
	}
	for i, k := range keys {
		keys[i] = strings.TrimPrefix(k, parent+".")
	}
	return fmt.Sprintf("%s:%s %s.{%s}", srcs[0].layer.name, strings.Join(lines, ","), parent, strings.Join(keys, ","))
}

// commonPrefix is the longest dotted key above all of keys ("" if none).
func commonPrefix(keys []string) string {
	common := strings.Split(keys[0], ".")
	for _, k := range keys[1:] {
		parts := strings.Split(k, ".")
		n := 0
		for n < len(common) && n < len(parts)-1 && common[n] == parts[n] {
			n++
		}
		common = common[:n]
	}
	if len(keys) == 1 && len(common) > 0 {
		common = common[:len(common)-1]
	}
	return strings.Join(common, ".")
}

// commonParent is the deepest key above every source, when all of them
// were set in one values file that writes that key.
func commonParent(srcs []valueSource) (string, int, bool) {
	l := srcs[0].layer
	if l.lines == nil {
		return "", 0, false
	}
	keys := make([]string, len(srcs))
	for i, s := range srcs {
		if s.layer.valuesLayer != l.valuesLayer {
			return "", 0, false
		}
		keys[i] = s.key
	}
	parent := commonPrefix(keys)
	key, ok := strings.CutPrefix(parent, l.prefix)
	if !ok || key == "" {
		return "", 0, false
	}
	line, ok := l.lines[key]
	return parent, line, ok
}

// identifier is a map key that a field path can write after a dot.
var identifier = lazyregexp.New(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// leaves lists the paths of the scalar values under v, written the way
// field.Path prints them.
func leaves(v any, prefix string) []string {
	switch x := v.(type) {
	case map[string]any:
		var out []string
		for k, c := range x {
			p := prefix + "[" + k + "]"
			if identifier().MatchString(k) {
				p = prefix + "." + k
			}
			out = append(out, leaves(c, p)...)
		}
		return out
	case []any:
		var out []string
		for i, c := range x {
			out = append(out, leaves(c, fmt.Sprintf("%s[%d]", prefix, i))...)
		}
		return out
	}
	return []string{prefix}
}
