// Package fixplan turns a scan's findings into edits of the files they
// were read from: the fixes on each object composed (package fix), routed
// to the file a user edits (a plain file, a chart's values or template, an
// overlay's patch), written with the text editor (package yamledit), and
// proven by a rescan of the new contents before anything is written.
//
// The layers: package fix (the patch algebra: compose, agree) sits below
// the rules; package yamledit (YAML, JSON and template text edits) beside
// load; this package above scan. None imports upward.
package fixplan

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/helm"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/scan"
	"backfire.dev/backfire/internal/source"
)

// Options configure a run.
type Options struct {
	Scan scan.Options
	// Rules limits the fixes to these rule IDs; empty means every rule.
	Rules []string
	// Helm, when set, renders charts (it replaces Scan.Charts), so that
	// the rescan can render them again with the new values.
	Helm *helm.Options
	// ValuesOut is the values file the fixes of objects rendered from a
	// Helm chart go to, keeping the chart untouched; when it exists it is
	// read as the last --values file and edited in place.
	ValuesOut string
}

// File is one file and what fix makes of it.
type File struct {
	Path     string
	Old, New []byte
	// Rules lists the rules whose fixes changed the file.
	Rules []string
	// Notes say what the edit did beyond the fixes (a flow mapping
	// rewritten in block style).
	Notes []string
}

// Left is a finding that is not fixed, and why.
type Left struct {
	Finding finding.Finding
	// Reason is said to the user; Type says the same for a program.
	Reason string
	Type   ReasonType
}

// Placeholder is a value written into a file that a human must size.
type Placeholder struct {
	File, Field, Value string
	// Line is the line of the new contents that holds it (0: unknown, a
	// file whose format has no comments).
	Line int
}

// FixPlan is the plan: new contents, proven, not yet written.
type FixPlan struct {
	// Files are the files to change; after Write, those written.
	Files []*File
	// Unwritten are the files Write could not write.
	Unwritten    []*File
	Fixed        []finding.Finding
	Left         []Left
	Placeholders []Placeholder
	// Notes say where the composition's precedence settled a conflict.
	Notes []string
	// Routes say how each chart object's fix reaches it: which values
	// keys, and why they do.
	Routes []Route
	// Ranges say where a value written to a chart's values key was kept
	// inside the range the values file documents for it.
	Ranges []string
	// TrialRenders counts the renders of charts the values routes took.
	TrialRenders int
	// Introduced are findings the rescan reports that the first scan did
	// not: the fix made something worse. Plan refuses such a fix.
	Introduced []finding.Finding
	// Errors are input problems of the scan.
	Errors []load.Error
	// Spans says, for each fixed finding (by finding.Instance), which lines of
	// the changed files its object's fix wrote, so that a report can give
	// each finding its part of the diff.
	Spans map[string][]Span
	// fixedIn lists, for each of Fixed, the files its fix writes: a file
	// that cannot be written leaves its findings unfixed.
	fixedIn [][]string
}

// keepFixedRoutes keeps the routes of the findings fixed.
func (r *FixPlan) keepFixedRoutes() {
	var kept []Route
	for _, rt := range r.Routes {
		for _, f := range r.Fixed {
			if f.Object == rt.Object && slices.Contains(rt.Rules, f.Rule) {
				kept = append(kept, rt)
				break
			}
		}
	}
	r.Routes = kept
}

func spanFiles(spans []Span) []string {
	var out []string
	for _, s := range spans {
		if !slices.Contains(out, s.File) {
			out = append(out, s.File)
		}
	}
	return out
}

// fileRules gives each changed file the rules whose findings its changes
// fix: a rule whose finding is left is not named.
func (r *FixPlan) fileRules() {
	for _, f := range r.Files {
		f.Rules = nil
		for i, fx := range r.Fixed {
			if slices.Contains(r.fixedIn[i], f.Path) && !slices.Contains(f.Rules, fx.Rule) {
				f.Rules = append(f.Rules, fx.Rule)
			}
		}
		sort.Strings(f.Rules)
	}
}

// Route is how a fix reaches a block of a rendered object through the
// chart's values.
type Route struct {
	Object object.Ref
	Block  string   // the field path of the block (a container's probe)
	How    string   // keys, map, whole
	Keys   []string // the values keys written
	Why    string
	// Findings are the rules whose findings the route is for.
	Rules []string
}

// Span is a part of a changed file that one object's fix wrote: lines
// From to To (1-based, inclusive) of the old contents, To -1 meaning the
// last line; From 0 is the whole file (a values file, an overlay's patch
// file and kustomization, a new file).
type Span struct {
	File     string
	From, To int
	// Wrote, when set, narrows a whole-file span to the hunks that write
	// one of these lines of the new contents: the values keys one
	// object's fix set, in a values file other objects' fixes edit too.
	Wrote []int
}

// key identifies a finding across the scan and its rescan: its identity
// in the stream its object was read from, since two files may each hold
// an object of one kind and name.
type key struct {
	finding.Identity
	stream string
}

func keyOf(f finding.Finding) key { return key{f.Identity(), f.Stream} }

// Plan scans, composes the fixes, edits the files in memory, and proves
// the edits: the rescan of the new contents must not report the fixed
// findings, and applying the fixes again must change nothing.
//
// A probe handler or number written literally in a chart's template is
// edited there; when the proof does not bear that edit out, the plan is
// made again without template edits, and the finding is left with the
// reason.
func Plan(opts Options) (*FixPlan, error) {
	r, err := plan(opts, true, "")
	var pe *templateProofError
	if errors.As(err, &pe) {
		return plan(opts, false, pe.err.Error())
	}
	return r, err
}

// templateProofError is a proof that failed with a template edited.
type templateProofError struct{ err error }

func (e *templateProofError) Error() string { return e.err.Error() }

// planner holds one run's plan and its destinations.
type planner struct {
	opts     Options
	chosen   []finding.Finding
	out      *FixPlan
	plain    *plainFile
	chart    *chart
	template *chartTemplate
	inPart   *inPart
	overlay  *overlayPlan
}

// destinations lists every destination, in the order their files are
// made and their edits verified.
func (p *planner) destinations() []destination {
	return []destination{p.plain, p.chart, p.template, p.inPart, p.overlay}
}

// plan scans, gives each object's composed change to its destination,
// writes the new contents in memory, and proves them by a rescan.
func plan(opts Options, templates bool, proofWhy string) (*FixPlan, error) {
	if opts.Scan.MaxFileSize <= 0 {
		opts.Scan.MaxFileSize = source.DefaultMaxFileSize
	}
	sink, renderer, err := chartSink(&opts)
	if err != nil {
		return nil, err
	}
	opts.Scan.KeepObjects = true
	res, err := scan.Run(opts.Scan)
	if err != nil {
		return nil, err
	}
	p := newPlanner(opts, res, sink, renderer, templates, proofWhy)
	changes, unresolved := composeByObject(res.Objects, p.chosen)
	inChange := make([]bool, len(p.chosen))
	for _, u := range unresolved {
		inChange[u.index] = true
		p.out.leaveOne(p.chosen[u.index], reason(ReasonAmbiguous, u.why))
	}
	for _, oc := range changes {
		for _, i := range oc.change.Findings {
			inChange[i] = true
		}
		p.route(oc.obj, oc.change)
	}
	for i, f := range p.chosen {
		if !inChange[i] {
			why := "no patch to apply"
			if f.Fix != nil {
				why = "a change to make by hand: " + f.Fix.Description
			}
			p.out.leaveOne(f, reason(ReasonNoPatch, why))
		}
	}
	applied, err := p.write()
	if err != nil {
		return nil, err
	}
	out := p.out
	if len(out.Files) == 0 {
		// The fixes change no byte (the fields they reach already hold
		// their values): the findings, still reported, are left.
		for _, e := range applied {
			for _, i := range e.change.Findings {
				out.leaveOne(p.chosen[i], e.stillReason(p.chosen[i], reason(ReasonNoChange, "the fix changes nothing in the files it edits")))
			}
		}
		out.keepFixedRoutes() // none: a route of a finding left is not taken
		return out, nil
	}
	err = out.prove(opts, res, p.chosen, applied, p.destinations())
	if err != nil && len(p.template.files) > 0 {
		return nil, &templateProofError{err}
	}
	out.placeholderLines()
	return out, err
}

// chartSink sets the chart renderer of the scan, when fix renders
// charts, and says where the chart's values keys go.
func chartSink(opts *Options) (valuesSink, *helm.Renderer, error) {
	var sink valuesSink = valuesInPlace{maxSize: opts.Scan.MaxFileSize}
	out := valuesOut{path: opts.ValuesOut}
	if opts.ValuesOut != "" {
		if opts.Helm == nil {
			return nil, nil, fmt.Errorf("--values-out needs the chart options")
		}
		if data, err := os.ReadFile(opts.ValuesOut); err == nil {
			out.old = data
		} else if !os.IsNotExist(err) {
			return nil, nil, err
		}
		sink = out
	}
	if opts.Helm == nil {
		return sink, nil, nil
	}
	r, err := charts(*opts, out.old != nil, "")
	if err != nil {
		return nil, nil, err
	}
	opts.Scan.Charts = r
	renderer, _ := r.(*helm.Renderer)
	return sink, renderer, nil
}

// newPlanner chooses the findings to fix and makes the destinations.
func newPlanner(opts Options, res *scan.Result, sink valuesSink, renderer *helm.Renderer, templates bool, proofWhy string) *planner {
	p := &planner{opts: opts, out: &FixPlan{Errors: res.Errors}}
	for _, f := range res.Findings {
		if len(opts.Rules) > 0 && !slices.ContainsFunc(opts.Rules, func(r string) bool { return strings.EqualFold(r, f.Rule) }) {
			continue
		}
		p.chosen = append(p.chosen, f)
	}
	maxSize := opts.Scan.MaxFileSize
	p.plain = &plainFile{out: p.out, chosen: p.chosen, objects: res.Objects, maxSize: maxSize}
	values := &valuesPlan{set: map[string]any{}, fileOf: map[string]string{}, maxSize: maxSize, editInPlace: opts.ValuesOut == "",
		renderer: renderer, trials: map[string]*chartTrial{}, nulls: map[string]bool{}, comments: map[string]string{}}
	charts := opts.Helm != nil
	p.chart = &chart{on: charts, out: p.out, chosen: p.chosen, values: values, sink: sink}
	p.template = &chartTemplate{charts: charts, on: templates, proofWhy: proofWhy, chosen: p.chosen, values: values, maxSize: maxSize, files: map[string]*File{}}
	p.inPart = &inPart{charts: charts, out: p.out, chosen: p.chosen, values: values, template: p.template, reroute: p.route}
	p.overlay = &overlayPlan{on: opts.Scan.Kustomize != nil, maxSize: maxSize, chosen: p.chosen}
	return p
}

// write has each destination write its edits into the new contents, and
// gives the changes made, for the proof.
func (p *planner) write() ([]planned, error) {
	files := map[string]*File{}
	var applied []planned
	for _, d := range p.destinations() {
		made, err := d.write(files)
		if err != nil {
			return nil, err
		}
		applied = append(applied, made...)
	}
	for _, path := range sortedKeys(files) {
		if f := files[path]; !bytes.Equal(f.Old, f.New) {
			sort.Strings(f.Rules)
			p.out.Files = append(p.out.Files, f)
		}
	}
	return applied, nil
}

type planned struct {
	change fix.Change
	// obj is the object the change is for, as the first scan read it.
	obj  *object.Object
	file string
	pos  load.Position
	// values is set for a change made through a chart's values; missing
	// lists the fields of its patch that no values key reaches.
	values  map[string]any
	missing []string
	rules   []string
	// template is the chart template the change edits, if any; edited
	// are the fields its literal scalars were edited for, with their new
	// values, which the rendered object must then have. why says why the
	// fields still missing are not edited in the template.
	template string
	edited   map[string]any
	why      string
	// overlay is set for a change made as a Kustomize patch file.
	overlay bool
	// spans are the parts of the changed files this change wrote.
	spans []Span
}

// documentSpan is the lines of o's document in its file: from its first
// line to the line before the next object's document of the same file.
func documentSpan(objs []*object.Object, o *object.Object) Span {
	s := Span{File: o.Doc.File, From: o.Doc.Line}
	for _, p := range objs {
		if p.Doc.File == o.Doc.File && p.Doc.Line > o.Doc.Line && (s.To == 0 || p.Doc.Line-1 < s.To) {
			s.To = p.Doc.Line - 1
		}
	}
	if s.To == 0 {
		s.To = -1 // to the end of the file
	}
	return s
}

// withSpans gives each values change the lines of the new values files
// that hold the keys it set; all is set when every key went to the one
// file (--values-out). A key that cannot be found spans its whole file.
func (v *valuesPlan) withSpans(fs []*File, all bool) []planned {
	docs := map[string]*yaml.Node{}
	for _, f := range fs {
		var n yaml.Node
		if yaml.Unmarshal(f.New, &n) == nil && len(n.Content) > 0 {
			docs[f.Path] = n.Content[0]
		}
	}
	out := make([]planned, len(v.changes))
	for i, c := range v.changes {
		byFile := map[string]*Span{}
		var order []string
		for _, k := range sortedKeys(c.values) {
			for _, f := range fs {
				if !all && v.fileOf[k] != f.Path {
					continue
				}
				s, ok := byFile[f.Path]
				if !ok {
					s = &Span{File: f.Path, Wrote: []int{}}
					byFile[f.Path] = s
					order = append(order, f.Path)
				}
				if s.Wrote == nil {
					continue // the whole file already
				}
				if line, ok := keyLine(docs[f.Path], k); ok {
					s.Wrote = append(s.Wrote, line)
				} else {
					s.Wrote = nil
				}
			}
		}
		for _, p := range order {
			c.spans = append(c.spans, *byFile[p])
		}
		if c.template != "" {
			c.spans = append(c.spans, Span{File: c.template})
		}
		out[i] = c
	}
	return out
}

// keyLine is the line of a dotted values key in a values file's root.
func keyLine(root *yaml.Node, key string) (int, bool) {
	line, n := 0, root
	for _, seg := range strings.Split(key, ".") {
		if n == nil || n.Kind != yaml.MappingNode {
			return 0, false
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == seg {
				line, next = n.Content[i].Line, n.Content[i+1]
				break
			}
		}
		if next == nil {
			return 0, false
		}
		n = next
	}
	return line, true
}

// objectChange is the composed change of the findings on one object.
type objectChange struct {
	change fix.Change
	obj    *object.Object
}

// unresolved is a finding whose fix's object cannot be told.
type unresolved struct {
	index int
	why   string
}

// composeByObject composes the fixes of the findings per object: an
// object is its kind and name in the stream it was read from, so that two
// files that each define Deployment web are fixed each with its own
// findings. A fix that names another object (the Deployment behind a
// Rollout's workloadRef) applies to that object in the finding's stream,
// else in its directory, else the only one of that name.
func composeByObject(objs []*object.Object, fs []finding.Finding) ([]objectChange, []unresolved) {
	var order []*object.Object
	groups := map[*object.Object][]int{}
	var missing []int // findings whose target is not in the input
	var left []unresolved
	for i, f := range fs {
		if f.Fix == nil || f.Fix.Type != finding.StrategicMergePatch || len(f.Fix.Patch) == 0 {
			continue
		}
		o, why := targetOf(objs, f)
		switch {
		case why != "":
			left = append(left, unresolved{i, why})
			continue
		case o == nil:
			missing = append(missing, i)
			continue
		}
		if _, ok := groups[o]; !ok {
			order = append(order, o)
		}
		groups[o] = append(groups[o], i)
	}
	var out []objectChange
	compose := func(idx []int, o *object.Object) {
		sub := make([]finding.Finding, len(idx))
		for k, i := range idx {
			sub[k] = fs[i]
		}
		for _, c := range fix.Compose(sub) {
			for k, i := range c.Findings {
				c.Findings[k] = idx[i]
			}
			out = append(out, objectChange{c, o})
		}
	}
	for _, o := range order {
		compose(groups[o], o)
	}
	if len(missing) > 0 {
		compose(missing, nil)
	}
	return out, left
}

// targetOf is the object f's fix applies to, or why it cannot be told.
func targetOf(objs []*object.Object, f finding.Finding) (*object.Object, string) {
	ref := fix.TargetOf(f)
	var all []*object.Object
	for _, o := range objs {
		if o.Ref == ref {
			all = append(all, o)
		}
	}
	if len(all) <= 1 && (f.Fix.Target != nil || len(all) == 0 || all[0].Doc.File == f.Stream) {
		if len(all) == 0 {
			return nil, ""
		}
		return all[0], ""
	}
	pick := func(keep func(*object.Object) bool) []*object.Object {
		var out []*object.Object
		for _, o := range all {
			if keep(o) {
				out = append(out, o)
			}
		}
		return out
	}
	same := pick(func(o *object.Object) bool { return o.Doc.File == f.Stream })
	if len(same) == 0 && f.Fix.Target != nil {
		dir := filepath.Dir(f.Stream)
		same = pick(func(o *object.Object) bool { return filepath.Dir(o.Doc.File) == dir })
	}
	switch len(same) {
	case 1:
		return same[0], ""
	case 0:
		if f.Fix.Target == nil {
			return nil, ""
		}
	}
	var where []string
	for _, o := range all {
		where = append(where, o.Doc.File)
	}
	return nil, fmt.Sprintf("%s is defined more than once (%s): fix cannot tell which one the finding is about", ref, strings.Join(where, ", "))
}

// valueAt reads a dotted placeholder path from a patch.
func valueAt(patch map[string]any, path string) (string, bool) {
	var v any = patch
	for _, seg := range strings.Split(path, ".") {
		name := ""
		if i := strings.IndexByte(seg, '['); i >= 0 && strings.HasSuffix(seg, "]") {
			seg, name = seg[:i], seg[i+1:len(seg)-1]
		}
		m, ok := v.(map[string]any)
		if !ok {
			return "", false
		}
		v = m[seg]
		if name != "" {
			l, _ := v.([]any)
			v = nil
			for _, it := range l {
				if im, ok := it.(map[string]any); ok && im["name"] == name {
					v = im
				}
			}
		}
	}
	if v == nil {
		return "", false
	}
	return fmt.Sprint(v), true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
