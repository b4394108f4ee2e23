package webhook

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"backfire.dev/backfire/internal/finding"
)

// Mode says what the webhook does with findings.
type Mode string

const (
	// Warn admits every object and returns findings as admission warnings.
	Warn Mode = "warn"
	// Deny refuses objects with new findings at or above the policy's
	// FailOn, and warns about the rest.
	Deny Mode = "deny"
)

// ParseMode reads "warn" or "deny".
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(s)); m {
	case Warn, Deny:
		return m, nil
	}
	return "", fmt.Errorf("unknown mode %q (want warn or deny)", s)
}

// The API server's limits on warnings (k8s.io/apiserver
// pkg/endpoints/filters/warning.go, recorder.AddWarning): once the warnings
// of a response pass 4096 runes in all, each is cut to 256 runes and those
// past the total are dropped; a warning with a control character (a
// newline) is dropped (k8s.io/apimachinery pkg/util/net NewWarningHeader).
// Staying inside both means kubectl prints every warning whole.
const (
	MaxWarningRunes = 256
	MaxTotalRunes   = 4096
)

// Policy turns a verdict into the answer to the API server.
type Policy struct {
	Mode   Mode
	FailOn finding.Severity
}

// Blocks reports whether the policy refuses the object for this finding.
func (p Policy) Blocks(f Judged) bool {
	return p.Mode == Deny && p.FailOn != finding.None && f.Severity >= p.FailOn && !f.Preexisting
}

// Respond builds the admission response for a verdict.
func (p Policy) Respond(v Verdict) admission.Response {
	// Most severe first: when the API server's limits leave some warnings
	// out, they are the least severe.
	findings := slices.Clone(v.Findings)
	slices.SortStableFunc(findings, func(a, b Judged) int { return cmp.Compare(b.Severity, a.Severity) })
	var blocking []Judged
	// What could not be checked and what was assumed come first: they
	// qualify every finding after them.
	var warnings []string
	for _, e := range append(slices.Clip(v.Errors), v.RuleErrors...) {
		warnings = append(warnings, "backfire could not check "+v.Object.String()+": "+e.Message)
	}
	for _, a := range v.Assumed {
		warnings = append(warnings, "backfire assumed: "+a)
	}
	for _, f := range findings {
		if p.Blocks(f) {
			blocking = append(blocking, f)
			continue
		}
		warnings = append(warnings, warningFor(f))
	}
	warnings = FitWarnings(warnings)
	if len(blocking) > 0 {
		return admission.Denied(denyMessage(v.Object, blocking, p.FailOn, v.Assumed)).WithWarnings(warnings...)
	}
	msg := "no findings"
	switch {
	case v.Skipped != "":
		msg = "not judged: " + v.Skipped
	case len(v.Findings) > 0:
		msg = fmt.Sprintf("%d finding(s), none refused", len(v.Findings))
	}
	return admission.Allowed(msg).WithWarnings(warnings...)
}

// warningFor says one finding in a line: rule, severity, field, message.
func warningFor(f Judged) string {
	var b strings.Builder
	b.WriteString(f.Rule)
	b.WriteString(" ")
	b.WriteString(f.Severity.String())
	if f.Preexisting {
		b.WriteString(" (already there before this update)")
	}
	b.WriteString(" ")
	b.WriteString(where(f.Finding))
	b.WriteString(": ")
	b.WriteString(f.Message)
	return b.String()
}

func where(f finding.Finding) string {
	s := f.Object.String()
	if f.Path != "" {
		s += " " + f.Path
	}
	if f.Container != "" {
		s += " (container " + f.Container + ")"
	}
	return s
}

// FitWarnings makes warnings the API server passes on whole: one line each,
// at most MaxWarningRunes runes, and MaxTotalRunes in all. When some do not
// fit, the last warning says how many were left out.
func FitWarnings(ws []string) []string {
	out := make([]string, 0, len(ws))
	total := 0
	for i, w := range ws {
		w = clip(oneLine(w), MaxWarningRunes)
		n := utf8.RuneCountInString(w)
		rest := len(ws) - i - 1
		// Keep room for the note about the rest unless this is the last.
		reserve := 0
		if rest > 0 {
			reserve = utf8.RuneCountInString(leftOut(rest))
		}
		if total+n+reserve > MaxTotalRunes {
			out = append(out, leftOut(len(ws)-i))
			return out
		}
		out = append(out, w)
		total += n
	}
	return out
}

func leftOut(n int) string {
	return fmt.Sprintf("backfire: %d more warning(s) left out to stay within the API server's limits; run backfire scan on the object for all of them", n)
}

// oneLine replaces control characters (newlines, tabs) with spaces: the API
// server drops a warning that contains one.
func oneLine(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) && utf8.ValidString(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "?")
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

// clip cuts s to n runes, ending with an ellipsis when it cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// maxRefusedShown bounds the refusal message: each finding takes a few
// lines with its fix.
const maxRefusedShown = 10

// denyMessage names each refused finding's rule, field and fix.
func denyMessage(obj fmt.Stringer, fs []Judged, failOn finding.Severity, assumed []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "backfire refused %s: %d finding(s) at or above %s", obj, len(fs), failOn)
	for i, f := range fs {
		if i == maxRefusedShown {
			fmt.Fprintf(&b, "\n... and %d more; run backfire scan on the object for all of them", len(fs)-i)
			break
		}
		fmt.Fprintf(&b, "\n%s %s %s %s: %s", f.Rule, f.Slug, f.Severity, where(f.Finding), f.Message)
		if f.Fix != nil {
			fmt.Fprintf(&b, "\n  fix: %s", f.Fix.Description)
			if f.Fix.Type == finding.StrategicMergePatch && len(f.Fix.Patch) > 0 {
				fmt.Fprintf(&b, "\n  strategic merge patch: %s", f.Fix.Patch)
			}
		}
	}
	for _, a := range assumed {
		fmt.Fprintf(&b, "\nassumed: %s", a)
	}
	b.WriteString("\nsuppress one rule on this object with the annotation backfire.dev/ignore: \"RULE # reason\"; backfire explain RULE tells more")
	return b.String()
}
