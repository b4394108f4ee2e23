package fixplan

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/kustomize"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/scan"
)

// The proof of a plan: the rescan of the new contents.

// prove rescans the new contents: the fixed findings must be gone, no
// new finding may appear, the new files must parse, and the fixes applied
// again must change nothing.
func (r *FixPlan) prove(opts Options, before *scan.Result, chosen []finding.Finding, applied []planned, dests []destination) error {
	overlay := map[string][]byte{}
	for _, f := range r.Files {
		overlay[f.Path] = f.New
	}
	so, renames, cleanup, err := rescanOptions(opts, r.Files, overlay)
	defer cleanup()
	if err != nil {
		return err
	}
	so.KeepObjects = true
	after, err := scan.Run(so)
	if err != nil {
		return err
	}
	renamed(after, renames)
	// Any error the first scan did not have is the fix's: a file that no
	// longer parses, an object the API server would reject (two probe
	// handlers), a build that fails.
	had := map[string]bool{}
	for _, e := range before.Errors {
		had[e.Message] = true
	}
	for _, e := range after.Errors {
		if !had[e.Message] {
			e.Message = oneLine(e.Message)
			return fmt.Errorf("the fixed files do not load, nothing written: %v", e)
		}
	}
	still := map[key]finding.Finding{}
	for _, f := range after.Findings {
		still[keyOf(f)] = f
	}
	was := map[key]bool{}
	for _, f := range before.Findings {
		was[keyOf(f)] = true
	}
	for _, f := range after.Findings {
		if !was[keyOf(f)] {
			r.Introduced = append(r.Introduced, f)
		}
	}
	if len(r.Introduced) > 0 {
		f := r.Introduced[0]
		return fmt.Errorf("the fix would introduce %s on %s (%s), nothing written", f.Rule, f.Object, f.Message)
	}
	for _, e := range applied {
		for _, i := range e.change.Findings {
			f := chosen[i]
			if g, ok := still[keyOf(f)]; ok {
				r.leaveOne(f, e.stillReason(f, reason(ReasonStill, "still reported after the composed fix: "+g.Message)))
				continue
			}
			r.Fixed = append(r.Fixed, f)
			r.fixedIn = append(r.fixedIn, spanFiles(e.spans))
			if r.Spans == nil {
				r.Spans = map[string][]Span{}
			}
			r.Spans[f.Instance()] = e.spans
		}
		for _, p := range e.change.Placeholders {
			if v, ok := valueAt(e.change.Patch, p); ok {
				r.Placeholders = append(r.Placeholders, Placeholder{File: e.file, Field: p, Value: v})
			}
		}
	}

	r.fileRules()
	r.keepFixedRoutes()

	// Each destination's own checks: the plain files' idempotence, the
	// template edits' renders.
	for _, d := range dests {
		if err := d.verify(after, overlay); err != nil {
			return err
		}
	}
	return nil
}

// rescanOptions are the scan options of the proof: the new contents read
// from memory (overlay), charts rendered again with them (a copy of the
// chart, or the new --values-out file), overlays built with them. renames
// maps a chart's copy to the chart; cleanup removes the copies.
func rescanOptions(opts Options, files []*File, overlay map[string][]byte) (scan.Options, map[string]string, func(), error) {
	var temps []string
	cleanup := func() {
		for _, t := range temps {
			os.RemoveAll(t)
		}
	}
	so := opts.Scan
	so.Overlay = overlay
	renames := map[string]string{} // a chart's copy -> the chart
	so.Stdin = nil
	if opts.ValuesOut != "" {
		if nv, ok := overlay[opts.ValuesOut]; ok {
			// Helm reads values files from disk: the new values go to a
			// temporary file for the rescan.
			tmp, err := os.CreateTemp("", "backfire-values-*.yaml")
			if err != nil {
				return so, nil, cleanup, err
			}
			temps = append(temps, tmp.Name())
			if _, err := tmp.Write(nv); err != nil {
				tmp.Close()
				return so, nil, cleanup, err
			}
			tmp.Close()
			r, err := charts(opts, false, tmp.Name())
			if err != nil {
				return so, nil, cleanup, fmt.Errorf("the new values do not load: %v", err)
			}
			so.Charts = r
		}
		// A template edit is proven on a copy of its chart.
		var rest []*File
		for _, f := range files {
			if f.Path != opts.ValuesOut {
				rest = append(rest, f)
			}
		}
		tmps, err := copyCharts(&so, rest, renames)
		temps = append(temps, tmps...)
		if err != nil {
			return so, nil, cleanup, err
		}
	}
	done := cleanup
	if opts.Helm != nil && opts.ValuesOut == "" {
		undo, err := rerender(&so, opts, files, renames)
		done = func() { undo(); cleanup() }
		if err != nil {
			return so, nil, done, err
		}
	}
	if opts.Scan.Kustomize != nil {
		k, err := kustomize.WithFiles(overlay)
		if err != nil {
			return so, nil, done, err
		}
		so.Kustomize = k
	}
	return so, renames, done, nil
}

// stillReason says why a finding a change was meant to fix is still
// reported: the fields of the change nothing reaches, or else why.
func (e planned) stillReason(f finding.Finding, why *Reason) *Reason {
	if len(e.missing) == 0 {
		return why
	}
	detail := "the chart's values do not reach " + strings.Join(e.missing, ", ") + ": change the template" + templateLines(e.obj, e.missing, 0) + ", or patch the rendered object with " + string(f.Fix.Patch)
	if e.why != "" {
		detail += "; " + e.why
	}
	return reason(ReasonUnreached, detail)
}

// renders checks that the rescan's object has the values a change's
// template edits wrote; it says which does not.
func renders(after *scan.Result, e planned) string {
	if len(e.edited) == 0 {
		return ""
	}
	o := sameObject(after.Objects, e.obj)
	var doc map[string]any
	if o == nil || json.Unmarshal(o.Doc.JSON, &doc) != nil {
		return e.change.Target.String() + " is not rendered after the edit"
	}
	for _, field := range sortedKeys(e.edited) {
		want := fmt.Sprint(e.edited[field])
		if got, ok := valueAt(doc, field); !ok || got != want {
			if !ok {
				got = "absent"
			}
			return fmt.Sprintf("%s is %s after the edit, not %s: the line edited does not render it", field, got, want)
		}
	}
	return ""
}

// renamed names the streams of a rescan that rendered a copy of a chart
// as the scan named them: after the chart, not the copy.
func renamed(r *scan.Result, renames map[string]string) {
	name := func(p string) string {
		for cp, orig := range renames {
			if rest, ok := strings.CutPrefix(p, filepath.ToSlash(cp)+"/"); ok {
				return filepath.ToSlash(filepath.Join(orig, rest))
			}
		}
		return p
	}
	if len(renames) == 0 {
		return
	}
	for i := range r.Findings {
		r.Findings[i].Stream = name(r.Findings[i].Stream)
		r.Findings[i].File = name(r.Findings[i].File)
	}
	for _, o := range r.Objects {
		o.Doc.File = name(o.Doc.File)
	}
	for i := range r.Errors {
		r.Errors[i].File = name(r.Errors[i].File)
	}
}

// sameObject finds o again among the objects of a rescan: the object of
// its kind and name in the same stream.
func sameObject(objs []*object.Object, o *object.Object) *object.Object {
	if o == nil {
		return nil
	}
	for _, p := range objs {
		if p.Ref == o.Ref && p.Doc.File == o.Doc.File {
			return p
		}
	}
	return nil
}

// replacesHandler reports whether a finding's own fix replaces a probe
// handler: the part of a change a template edit makes.
func replacesHandler(f finding.Finding) bool {
	if f.Fix == nil {
		return false
	}
	own := f.Fix.Patch
	if f.Fix.Own != nil {
		own = f.Fix.Own
	}
	var p any
	return json.Unmarshal(own, &p) == nil && fix.ReplacesHandler(p)
}
