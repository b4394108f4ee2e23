package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/result"
)

func sample() *result.Result {
	return &result.Result{
		Findings: []finding.Finding{{
			Rule: "BF102", Slug: "liveness-default-timeout", Severity: finding.Error,
			Object: object.Ref{APIVersion: "apps/v1", Kind: "StatefulSet", Namespace: "db", Name: "pg"},
			File:   "a.yaml", Line: 7, Column: 3, Message: "m", Mechanism: []string{"one", "two"},
			Fix: &finding.Fix{Description: "d", Type: finding.StrategicMergePatch, Patch: json.RawMessage(`{"spec":{}}`)},
		}, {
			Rule: "BF401", Slug: "rollback-window-weight-jump", Severity: finding.Warning,
			Object: object.Ref{APIVersion: "argoproj.io/v1alpha1", Kind: "Rollout", Name: "r"},
			File:   "a.yaml", Line: 30, Column: 1, Message: "m2", Mechanism: []string{},
			Fix: &finding.Fix{Description: "d2", Type: finding.StrategicMergePatch, Patch: json.RawMessage(`{"spec":{}}`)},
		}},
		Summary: result.Summary{Objects: 2, Files: 1, Findings: map[string]int{"error": 1, "warning": 1}},
	}
}

func TestTextGroupsByObjectAndShowsTheFixCommand(t *testing.T) {
	var b bytes.Buffer
	Text(&b, sample(), TextOptions{})
	out := b.String()
	for _, want := range []string{
		"StatefulSet db/pg  a.yaml\n  7:3     error   BF102 liveness-default-timeout",
		"          1. one\n          2. two\n",
		"kubectl patch statefulset pg -n db --type strategic -p '{\"spec\":{}}'",
		// The API server takes no strategic merge patch for a custom resource.
		"strategic merge patch for Rollout r (a custom resource: merge it into the manifest)",
		"1 error, 1 warning, 0 info in 2 objects",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Error("colour codes without Color")
	}
	b.Reset()
	Text(&b, sample(), TextOptions{Color: true})
	if !strings.Contains(b.String(), "\x1b[1;31merror") || !strings.Contains(b.String(), "\x1b[1;33mwarning") {
		t.Errorf("no severity colours: %q", b.String())
	}
}

// The summary counts in English: one of a thing, many things, and no
// findings is "0 errors", not "0 error".
func TestTextSummarySaysOneAndMany(t *testing.T) {
	r := sample()
	r.Findings = r.Findings[:1]
	r.Summary = result.Summary{Objects: 1, Files: 1, Skipped: 1, Findings: map[string]int{"error": 1}}
	r.Errors = []load.Error{{File: "bad.yaml", Line: 1, Message: "m"}}
	var b bytes.Buffer
	Text(&b, r, TextOptions{})
	if want := "1 error, 0 warnings, 0 info in 1 object (1 file; 1 document without apiVersion/kind skipped)\n1 input error (see stderr)\n"; !strings.HasSuffix(b.String(), want) {
		t.Errorf("summary:\n%s\nwant\n%s", b.String(), want)
	}
	r.Summary = result.Summary{Objects: 3, Files: 2, Skipped: 0, Findings: map[string]int{"warning": 2}, Hidden: 4, HiddenAs: "already at main (--diff)"}
	r.Errors = append(r.Errors, r.Errors[0])
	b.Reset()
	Text(&b, r, TextOptions{})
	if want := "0 errors, 2 warnings, 0 info in 3 objects (2 files; 0 documents without apiVersion/kind skipped)\n4 findings already at main (--diff) not shown\n2 input errors (see stderr)\n"; !strings.HasSuffix(b.String(), want) {
		t.Errorf("summary:\n%s\nwant\n%s", b.String(), want)
	}
	for n, want := range map[int]string{0: "0 entries", 1: "1 entry", 2: "2 entries"} {
		if got := Count(n, "entry"); got != want {
			t.Errorf("Count(%d, entry) = %q", n, got)
		}
	}
}

func TestJSONHasEmptyListsNotNull(t *testing.T) {
	var b bytes.Buffer
	JSON(&b, &result.Result{Summary: result.Summary{Findings: map[string]int{"error": 0, "warning": 0, "info": 0}}}, JSONOptions{})
	if !strings.Contains(b.String(), `"findings": []`) || !strings.Contains(b.String(), `"errors": []`) {
		t.Errorf("%s", b.String())
	}
}

// The brief report (scan's default) keeps one line, the message and the fix
// per finding, says a shared origin once, and ends by saying how to see the
// causal chains.
func TestTextBriefLeavesTheChainToExplain(t *testing.T) {
	r := sample()
	r.Findings[0].Origin, r.Findings[1].Origin = "rendered from chart c", "rendered from chart c"
	r.Findings[0].Assumptions = []string{"an assumption"}
	var b bytes.Buffer
	Text(&b, r, TextOptions{Brief: true})
	out := b.String()
	want := "StatefulSet db/pg  a.yaml\n  (rendered from chart c)\n  7:3     error   BF102 liveness-default-timeout\n          m\n          fix: d\n\n" +
		"Rollout r  a.yaml\n  30:1    warning BF401 rollback-window-weight-jump\n          m2\n          fix: d2\n\n" +
		"1 error, 1 warning, 0 info in 2 objects (1 file; 0 documents without apiVersion/kind skipped)\n" +
		"Add --explain for each finding's causal chain, assumptions and patch; backfire fix applies the fixes.\n"
	if out != want {
		t.Errorf("brief report:\n%s\nwant\n%s", out, want)
	}
	b.Reset()
	r.Findings = nil
	Text(&b, r, TextOptions{Brief: true})
	if strings.Contains(b.String(), "--explain") {
		t.Errorf("a report without findings points to --explain:\n%s", b.String())
	}
}
