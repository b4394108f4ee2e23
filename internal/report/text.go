package report

import (
	"fmt"
	"io"
	"strings"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/result"
)

// TextOptions tune the text report.
type TextOptions struct {
	Color bool
	// ShowSuppressed lists the findings an annotation silenced, with the
	// annotation's reason.
	ShowSuppressed bool
	// Brief leaves out each finding's causal chain, assumptions and patch:
	// one line, the message and the fix per finding, so that a scan's
	// report fits a terminal; the last line says how to see the rest.
	Brief bool
}

type palette struct{ bold, dim, reset string }

func (p palette) severity(s finding.Severity) string {
	if p.reset == "" {
		return ""
	}
	switch s {
	case finding.Error:
		return "\x1b[1;31m"
	case finding.Warning:
		return "\x1b[1;33m"
	}
	return "\x1b[1;36m"
}

// Text writes findings grouped by object, each with its mechanism and fix.
func Text(w io.Writer, r *result.Result, opts TextOptions) error {
	var p palette
	if opts.Color {
		p = palette{bold: "\x1b[1m", dim: "\x1b[2m", reset: "\x1b[0m"}
	}
	b := &strings.Builder{}
	var last, lastOrigin string
	for _, f := range r.Findings {
		group := f.File + "\x00" + f.Object.String()
		if group != last {
			if last != "" {
				b.WriteString("\n")
			}
			fmt.Fprintf(b, "%s%s%s  %s%s%s\n", p.bold, printable(f.Object.String()), p.reset, p.dim, printable(f.File), p.reset)
			// A chart's objects share one origin: the brief report says it
			// once, above the first of them.
			if f.Origin != "" && (!opts.Brief || f.Origin != lastOrigin) {
				fmt.Fprintf(b, "  %s(%s)%s\n", p.dim, printable(f.Origin), p.reset)
			}
			last, lastOrigin = group, f.Origin
		}
		where := fmt.Sprintf("%d:%d", f.Line, f.Column)
		fmt.Fprintf(b, "  %-7s %s%-7s%s %s %s", where, p.severity(f.Severity), f.Severity, p.reset, f.Rule, f.Slug)
		if f.Container != "" {
			fmt.Fprintf(b, "  %scontainer %s%s", p.dim, printable(f.Container), p.reset)
		}
		b.WriteString("\n")
		fmt.Fprintf(b, "          %s\n", printable(f.Message))
		if f.ValuesSource != "" {
			fmt.Fprintf(b, "          %svalue set at:%s %s\n", p.dim, p.reset, printable(f.ValuesSource))
		}
		if opts.Brief {
			if f.Fix != nil {
				fmt.Fprintf(b, "          %sfix:%s %s\n", p.bold, p.reset, printable(f.Fix.Description))
			}
			continue
		}
		for i, m := range f.Mechanism {
			fmt.Fprintf(b, "          %s%d.%s %s\n", p.dim, i+1, p.reset, printable(m))
		}
		for _, a := range f.Assumptions {
			fmt.Fprintf(b, "          %sassumed:%s %s\n", p.dim, p.reset, printable(a))
		}
		if f.Fix != nil {
			fmt.Fprintf(b, "          %sfix:%s %s\n", p.bold, p.reset, printable(f.Fix.Description))
			if len(f.Fix.Patch) > 0 {
				fmt.Fprintf(b, "          %s\n", printable(patchCommand(f)))
			}
		}
	}
	if len(r.Findings) > 0 {
		b.WriteString("\n")
	}
	if opts.ShowSuppressed && len(r.Suppressed) > 0 {
		fmt.Fprintf(b, "%sSuppressed by annotation%s\n", p.bold, p.reset)
		for _, f := range r.Suppressed {
			reason := f.Reason
			if reason == "" {
				reason = "no reason given"
			}
			fmt.Fprintf(b, "  %s:%d:%d  %s %s  %s: %s\n", printable(f.File), f.Line, f.Column, f.Rule, f.Slug, printable(f.Object.String()), printable(reason))
		}
		b.WriteString("\n")
	}
	s := r.Summary
	fmt.Fprintf(b, "%s, %s, %d info in %s (%s; %s without apiVersion/kind skipped",
		Count(s.Findings["error"], "error"), Count(s.Findings["warning"], "warning"), s.Findings["info"],
		Count(s.Objects, "object"), Count(s.Files, "file"), Count(s.Skipped, "document"))
	if s.Suppressed > 0 {
		fmt.Fprintf(b, "; %d suppressed by annotation", s.Suppressed)
	}
	b.WriteString(")\n")
	if s.Hidden > 0 {
		fmt.Fprintf(b, "%s %s not shown\n", Count(s.Hidden, "finding"), s.HiddenAs)
	}
	if len(r.Errors) > 0 {
		fmt.Fprintf(b, "%s (see stderr)\n", Count(len(r.Errors), "input error"))
	}
	if opts.Brief && len(r.Findings) > 0 {
		fmt.Fprintf(b, "%sAdd --explain for each finding's causal chain, assumptions and patch; backfire fix applies the fixes.%s\n", p.dim, p.reset)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// patchCommand shows a strategic merge patch as the kubectl command that
// applies it, so it can be tried with --dry-run=server first.
func patchCommand(f finding.Finding) string {
	if f.Fix.Type != finding.StrategicMergePatch {
		return string(f.Fix.Patch)
	}
	target := f.Object
	if f.Fix.Target != nil {
		target = *f.Fix.Target
	}
	if group, _, _ := strings.Cut(target.APIVersion, "/"); strings.Contains(target.APIVersion, "/") && strings.Contains(group, ".") && !strings.HasSuffix(group, ".k8s.io") {
		// The API server takes strategic merge patches for built-in kinds
		// only (core, apps, ..., and the *.k8s.io groups such as
		// networking.k8s.io); a custom resource's fix goes into its manifest.
		return fmt.Sprintf("strategic merge patch for %s (a custom resource: merge it into the manifest): %s", target, f.Fix.Patch)
	}
	ns := ""
	if target.Namespace != "" {
		ns = " -n " + target.Namespace
	}
	return fmt.Sprintf("kubectl patch %s %s%s --type strategic -p '%s'",
		strings.ToLower(target.Kind), target.Name, ns, f.Fix.Patch)
}

// Errors writes input errors, "file:line:col: message", each on its own
// lines (see Message).
func Errors(w io.Writer, errs []load.Error) {
	for _, e := range errs {
		Message(w, e.Error())
	}
}

// Message writes one message for standard error: "backfire: " and its first
// line, then each further line indented. Each line is escaped (printable): a
// message of several lines (a template's fail, a chart's error) is shown as
// lines, not as one line of "\x0a", and still drives no terminal.
func Message(w io.Writer, msg string) {
	var b strings.Builder
	for i, line := range strings.Split(strings.TrimRight(msg, "\r\n"), "\n") {
		if i == 0 {
			b.WriteString("backfire: ")
		} else {
			b.WriteString("  ")
		}
		b.WriteString(printable(strings.TrimSuffix(line, "\r")))
		b.WriteByte('\n')
	}
	io.WriteString(w, b.String())
}

// Count says n things, in the plural unless n is 1: "1 object",
// "2 objects", "0 errors", "2 entries". The nouns the reports count are
// regular.
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if stem, ok := strings.CutSuffix(noun, "y"); ok && !strings.HasSuffix(stem, "e") {
		return fmt.Sprintf("%d %sies", n, stem)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
