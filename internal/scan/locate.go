package scan

import (
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/rules"
)

// locate gives a reported finding the place a user edits to change it: the
// field's line and column in its document, and for a rendered or built
// document the template, patch or values file it was written in, where
// that can be told. It runs after the rules, once per finding, so a chart
// is rendered a second time (for values provenance) only here.
func locate(r rules.Reported) finding.Finding {
	f := r.Finding
	doc := r.At
	f.File = doc.File
	f.Origin = doc.Origin
	pos, _ := doc.Locate(f.Path)
	f.Line, f.Column = pos.Line, pos.Column
	if doc.Trace != nil {
		tr := doc.Trace(doc, f.Path, pos)
		if tr.File != "" {
			f.File, f.Line, f.Column = tr.File, tr.Line, tr.Column
		} else {
			f.OutputLine = true
		}
		f.ValuesSource = tr.Values
	}
	f.Fingerprint = f.ComputeFingerprint()
	return f
}
