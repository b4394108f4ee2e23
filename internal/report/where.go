package report

import (
	"backfire.dev/backfire/internal/finding"
)

// Where is the place a line-oriented format points at: the file and line a
// user edits to change the finding.
type Where struct {
	File         string
	Line, Column int
	// OutputLine: Line is of the file's generated output, not the file.
	OutputLine bool
}

// EditAt returns where to change a finding: for a field of a rendered Helm
// chart whose value a values file set, that key in the values file (the
// template only copies it; column 1 when the file could not be read);
// otherwise the finding's own file, line and column (a plain file, the
// Kustomize patch or base, the template).
func EditAt(f finding.Finding) Where {
	if v := f.ValuesAt; v != nil {
		return Where{File: v.File, Line: v.Line, Column: max(v.Column, 1)}
	}
	return Where{File: f.File, Line: max(f.Line, 1), Column: max(f.Column, 1), OutputLine: f.OutputLine}
}
