// Package result is the contract between the scan pipeline and the
// reporters: what was read, what was found, and what was silenced. It is
// plain data; reporters read it and import nothing of the pipeline.
package result

import (
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
)

// Summary counts what was read and found.
type Summary struct {
	Files      int            `json:"files"`
	Documents  int            `json:"documents"`
	Objects    int            `json:"objects"`
	Skipped    int            `json:"skipped"`
	Findings   map[string]int `json:"findings"`
	Suppressed int            `json:"suppressed"`
	// Hidden counts the findings --diff or --baseline left out as already
	// known, and HiddenAs says known how ("already at origin/main (--diff)").
	// The text summary says it; the JSON document (schema v1) does not.
	Hidden   int    `json:"-"`
	HiddenAs string `json:"-"`
}

// Result is everything a reporter needs.
type Result struct {
	// Findings are located (file, line, column of the field the user
	// edits) and fingerprinted, sorted by file, line, column and rule.
	Findings []finding.Finding
	Errors   []load.Error
	Summary  Summary
	// Suppressed are the findings an ignore annotation silenced, with the
	// annotation's reason, for --show-suppressed.
	Suppressed []Suppressed
	// Rules are the rules that ran, in ID order, for formats that
	// describe them (SARIF's tool.driver.rules).
	Rules []Rule
	// Objects are the decoded objects, for callers that inspect them
	// (tests, the simulators); reporters do not need them.
	Objects []*object.Object
	// Spill, when set, holds the findings instead of Findings (which is
	// then empty), sorted; only the JSON report reads it.
	Spill *Spill
}

// Suppressed is a finding silenced by the object's ignore annotation.
type Suppressed struct {
	finding.Finding
	// Reason is the annotation's text after '#', or "".
	Reason string `json:"reason,omitempty"`
}

// Count fills Summary.Findings from the findings' severities.
func (r *Result) Count() {
	r.Summary.Findings = map[string]int{"error": 0, "warning": 0, "info": 0}
	r.EachSeverity(func(s finding.Severity) { r.Summary.Findings[s.String()]++ })
	r.Summary.Suppressed = len(r.Suppressed)
}

// EachSeverity calls fn with the severity of each finding, held in memory
// or spilled.
func (r *Result) EachSeverity(fn func(finding.Severity)) {
	if r.Spill != nil {
		r.Spill.Severities(fn)
		return
	}
	for _, f := range r.Findings {
		fn(f.Severity)
	}
}

// Rule describes a rule of the catalog to a reporter.
type Rule struct {
	ID       string
	Slug     string
	Summary  string
	Severity finding.Severity
	// Doc is the rule's documentation page (docs/rules/ID.md), Markdown.
	Doc string
}

// DropKnown removes the findings whose fingerprint is among known (the
// findings of the same scan at a base revision), leaving those a change
// introduced, and counts again; as says how they were known, for the
// summary's count of what was left out.
func (r *Result) DropKnown(known []finding.Finding, as string) {
	fps := make([]string, len(known))
	for i, f := range known {
		fps[i] = f.Fingerprint
	}
	r.DropFingerprints(fps, as)
}

// DropFingerprints removes the findings whose fingerprint is among known
// (a baseline's, or a base revision's), and counts again.
func (r *Result) DropFingerprints(known []string, as string) {
	seen := make(map[string]bool, len(known))
	for _, fp := range known {
		seen[fp] = true
	}
	kept := r.Findings[:0]
	for _, f := range r.Findings {
		if !seen[f.Fingerprint] {
			kept = append(kept, f)
		}
	}
	if n := len(r.Findings) - len(kept); n > 0 {
		if r.Summary.Hidden == 0 {
			r.Summary.HiddenAs = as
		} else if as != r.Summary.HiddenAs {
			r.Summary.HiddenAs = "already known (--diff, --baseline)"
		}
		r.Summary.Hidden += n
	}
	r.Findings = kept
	r.Count()
}

// TextChange is one hunk of a fix as text: the region of File from
// StartLine, column 1, up to EndLine:EndColumn (exclusive; columns count
// UTF-16 code units, SARIF's default) is replaced by Text. A region that
// starts and ends at the same place inserts; a file the fix creates is
// inserted whole at line 1.
type TextChange struct {
	File                          string
	StartLine, EndLine, EndColumn int
	Text                          string
	// NewFile: the file does not exist yet.
	NewFile bool
}
