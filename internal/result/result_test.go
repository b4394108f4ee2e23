package result

import (
	"testing"

	"backfire.dev/backfire/internal/finding"
)

func TestDropKnownKeepsOnlyNewFingerprintsAndRecounts(t *testing.T) {
	r := &Result{Findings: []finding.Finding{
		{Rule: "BF101", Severity: finding.Error, Fingerprint: "a"},
		{Rule: "BF102", Severity: finding.Warning, Fingerprint: "b"},
		{Rule: "BF104", Severity: finding.Warning, Fingerprint: "c"},
	}, Suppressed: []Suppressed{{Reason: "r"}}}
	r.Count()
	if r.Summary.Findings["warning"] != 2 || r.Summary.Suppressed != 1 {
		t.Fatalf("summary %+v", r.Summary)
	}
	r.DropKnown([]finding.Finding{{Fingerprint: "a"}, {Fingerprint: "c"}, {Fingerprint: "z"}})
	if len(r.Findings) != 1 || r.Findings[0].Fingerprint != "b" {
		t.Fatalf("kept %+v", r.Findings)
	}
	if r.Summary.Findings["error"] != 0 || r.Summary.Findings["warning"] != 1 || r.Summary.Findings["info"] != 0 {
		t.Errorf("not recounted: %+v", r.Summary.Findings)
	}
}
