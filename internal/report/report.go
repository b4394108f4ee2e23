// Package report formats scan results. Reporters only format: every
// decision (severity, exit code, what is a finding) was made before.
package report

import (
	"backfire.dev/backfire/internal/result"
)

// Formats lists the output formats of `backfire scan --format`.
var Formats = []string{"text", "json", "sarif", "github", "gitlab", "junit", "short", "html"}

// SchemaVersion names the JSON output schema.
const SchemaVersion = "backfire/v1"

// Document is the JSON output, schema backfire/v1.
type Document struct {
	Schema   string `json:"schema"`
	Findings any    `json:"findings"`
	Errors   any    `json:"errors"`
	Summary  any    `json:"summary"`
	// Suppressed lists the findings an annotation silenced, with its
	// reason, when asked for (--show-suppressed).
	Suppressed []result.Suppressed `json:"suppressed,omitempty"`
}

// JSONOptions tune the JSON report.
type JSONOptions struct {
	ShowSuppressed bool
}

func jsonDocument(r *result.Result, opts JSONOptions) Document {
	d := Document{Schema: SchemaVersion, Findings: r.Findings, Errors: r.Errors, Summary: r.Summary}
	if opts.ShowSuppressed {
		d.Suppressed = r.Suppressed
	}
	if r.Findings == nil {
		d.Findings = []any{}
	}
	if r.Errors == nil {
		d.Errors = []any{}
	}
	return d
}
