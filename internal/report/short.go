package report

import (
	"bufio"
	"fmt"
	"io"

	"backfire.dev/backfire/internal/result"
)

// Short writes one line per finding, "file:line:col: severity RULE
// message", the shape compilers print and editors' problem matchers read.
func Short(w io.Writer, r *result.Result) error {
	b := bufio.NewWriter(w)
	for _, f := range r.Findings {
		at := EditAt(f)
		fmt.Fprintf(b, "%s:%d:%d: %s %s %s\n", printable(at.File), at.Line, at.Column, f.Severity, f.Rule, printable(f.Message))
	}
	return b.Flush()
}
