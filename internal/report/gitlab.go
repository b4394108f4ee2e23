package report

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/result"
)

// GitLab writes a GitLab Code Quality report: a JSON array of issues, each
// with description, check_name, fingerprint, severity and location.path
// and location.lines.begin or location.positions.begin.line (GitLab's documentation, "Code Quality", section
// "Implement a custom tool"; the issue schema GitLab validates each entry
// against is app/validators/json_schemas/codeclimate.json, vendored in
// testdata/gitlab). GitLab keeps one issue per fingerprint, so a
// fingerprint that repeats in one report is made unique by its occurrence.
// Input errors are issues too ("backfire/input-error", blocker): a file
// that could not be read is seen where it is.
func GitLab(w io.Writer, r *result.Result) error {
	issues := make([]codeQualityIssue, 0, len(r.Findings)+len(r.Errors))
	seen := map[string]int{}
	unique := func(fp string) string {
		seen[fp]++
		if n := seen[fp]; n > 1 {
			return fmt.Sprintf("%s-%d", fp, n)
		}
		return fp
	}
	for _, f := range r.Findings {
		at := EditAt(f)
		desc := f.Rule + " " + f.Slug + " (" + f.Object.String()
		if f.Container != "" {
			desc += ", container " + f.Container
		}
		desc += "): " + f.Message
		if f.Fix != nil {
			desc = strings.TrimSuffix(desc, ".") + ". Fix: " + f.Fix.Description
		}
		issues = append(issues, codeQualityIssue{
			Type:        "issue",
			Description: oneLine(desc),
			CheckName:   f.Rule + " " + f.Slug,
			Fingerprint: unique(f.Fingerprint),
			Severity:    gitlabSeverity(f.Severity),
			Categories:  []string{"Bug Risk"},
			Location:    codeQualityAt(at.File, at.Line, at.Column),
		})
	}
	for _, e := range r.Errors {
		issues = append(issues, codeQualityIssue{
			Type:        "issue",
			Description: oneLine("input error: " + e.Message),
			CheckName:   "backfire/input-error",
			Fingerprint: unique(fingerprintOf("input-error", e.File, e.Message)),
			Severity:    "blocker",
			Categories:  []string{"Bug Risk"},
			Location:    codeQualityAt(e.File, e.Line, e.Column),
		})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(issues)
}

// codeQualityIssue is the subset of the Code Climate issue (its
// specification, spec/analyzers/SPEC.md in codeclimate/platform) that GitLab
// reads, plus type and categories, which the specification requires and
// GitLab ignores.
type codeQualityIssue struct {
	Type        string              `json:"type"`
	Description string              `json:"description"`
	CheckName   string              `json:"check_name"`
	Fingerprint string              `json:"fingerprint"`
	Severity    string              `json:"severity"`
	Categories  []string            `json:"categories"`
	Location    codeQualityLocation `json:"location"`
}

// codeQualityLocation is a position-based location: line and column, both
// 1-based, as SARIF's region.
type codeQualityLocation struct {
	Path      string `json:"path"`
	Positions struct {
		Begin struct {
			Line   int `json:"line"`
			Column int `json:"column"`
		} `json:"begin"`
	} `json:"positions"`
}

func codeQualityAt(file string, line, column int) codeQualityLocation {
	var l codeQualityLocation
	l.Path = file
	l.Positions.Begin.Line = max(line, 1)
	l.Positions.Begin.Column = max(column, 1)
	return l
}

// oneLine joins lines: the specification wants a description of one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// fingerprintOf hashes parts into a fingerprint of the findings' length.
func fingerprintOf(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// gitlabSeverity maps severities onto GitLab's five (info, minor, major,
// critical, blocker): an error is an outage the manifest already fixes.
func gitlabSeverity(s finding.Severity) string {
	switch s {
	case finding.Error:
		return "critical"
	case finding.Warning:
		return "major"
	}
	return "info"
}
