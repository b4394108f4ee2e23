package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/result"
)

// GitHub writes each finding as a GitHub Actions workflow command
// ("::error file=a.yaml,line=7,col=3,title=BF102 ...::message"), which the
// runner turns into an annotation on the file and line of the pull request.
// Input errors become annotations too, so a broken manifest is seen where
// it is.
func GitHub(w io.Writer, r *result.Result) error {
	b := bufio.NewWriter(w)
	for _, f := range r.Findings {
		at := EditAt(f)
		msg := printableLines(f.Message)
		if f.Fix != nil {
			msg += "\nfix: " + printableLines(f.Fix.Description)
		}
		workflowCommand(b, githubLevel(f.Severity), []string{
			"file", printable(at.File), "line", fmt.Sprint(at.Line), "col", fmt.Sprint(at.Column),
			"title", f.Rule + " " + f.Slug + " (" + printable(f.Object.String()) + ")",
		}, msg)
	}
	for _, e := range r.Errors {
		props := []string{"file", printable(e.File)}
		if e.Line > 0 {
			props = append(props, "line", fmt.Sprint(e.Line))
		}
		if e.Column > 0 {
			props = append(props, "col", fmt.Sprint(e.Column))
		}
		workflowCommand(b, "error", append(props, "title", "backfire: input error"), printableLines(e.Message))
	}
	return b.Flush()
}

// githubLevel maps severities to the three annotation commands.
func githubLevel(s finding.Severity) string {
	switch s {
	case finding.Error:
		return "error"
	case finding.Warning:
		return "warning"
	}
	return "notice"
}

// workflowCommand writes "::level k=v,k=v::message", of texts whose
// control characters are escaped already (see printable). The escaping is
// the runner's own (actions/toolkit, packages/core/src/command.ts, escapeData
// and escapeProperty): '%', CR and LF everywhere, and ':' and ',' in
// property values, which would otherwise end the value.
func workflowCommand(w io.Writer, level string, props []string, msg string) {
	fmt.Fprintf(w, "::%s ", level)
	for i := 0; i+1 < len(props); i += 2 {
		if i > 0 {
			io.WriteString(w, ",")
		}
		fmt.Fprintf(w, "%s=%s", props[i], escapeProperty(props[i+1]))
	}
	fmt.Fprintf(w, "::%s\n", escapeData(msg))
}

var (
	dataEscaper     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	propertyEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)

func escapeData(s string) string     { return dataEscaper.Replace(s) }
func escapeProperty(s string) string { return propertyEscaper.Replace(s) }
