package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/finding"
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

func TestJSONHasEmptyListsNotNull(t *testing.T) {
	var b bytes.Buffer
	JSON(&b, &result.Result{Summary: result.Summary{Findings: map[string]int{"error": 0, "warning": 0, "info": 0}}}, JSONOptions{})
	if !strings.Contains(b.String(), `"findings": []`) || !strings.Contains(b.String(), `"errors": []`) {
		t.Errorf("%s", b.String())
	}
}
