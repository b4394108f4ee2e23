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
	r.DropKnown([]finding.Finding{{Fingerprint: "a"}, {Fingerprint: "c"}, {Fingerprint: "z"}}, "already at main (--diff)")
	if len(r.Findings) != 1 || r.Findings[0].Fingerprint != "b" {
		t.Fatalf("kept %+v", r.Findings)
	}
	if r.Summary.Findings["error"] != 0 || r.Summary.Findings["warning"] != 1 || r.Summary.Findings["info"] != 0 {
		t.Errorf("not recounted: %+v", r.Summary.Findings)
	}
}

// What was left out is counted, and said as what, so a summary of "0 errors"
// does not read as a clean repository.
func TestDroppedFindingsAreCountedAndNamed(t *testing.T) {
	r := &Result{Findings: []finding.Finding{{Fingerprint: "a"}, {Fingerprint: "b"}, {Fingerprint: "c"}}}
	r.DropFingerprints([]string{"x"}, "in the baseline b.json (--baseline)")
	if r.Summary.Hidden != 0 || r.Summary.HiddenAs != "" {
		t.Errorf("nothing dropped, summary %+v", r.Summary)
	}
	r.DropFingerprints([]string{"a"}, "in the baseline b.json (--baseline)")
	if r.Summary.Hidden != 1 || r.Summary.HiddenAs != "in the baseline b.json (--baseline)" {
		t.Errorf("one dropped, summary %+v", r.Summary)
	}
	r.DropKnown([]finding.Finding{{Fingerprint: "b"}}, "already at main (--diff)")
	if r.Summary.Hidden != 2 || r.Summary.HiddenAs != "already known (--diff, --baseline)" {
		t.Errorf("two ways, summary %+v", r.Summary)
	}
}
