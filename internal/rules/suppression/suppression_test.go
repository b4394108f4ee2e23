package suppression_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/catalog"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/ruletest"
)

// BF901's fix sets the annotation to what is used (its fixtures, with the
// rest, run from the registry in internal/catalog): the other rules'
// findings and suppressions stay exactly as they were.
func TestBF901FixChangesNothingElse(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "BF901", "positive", "*.yaml"))
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".yaml"), func(t *testing.T) {
			res := ruletest.Scan(t, catalog.All(), nil, file)
			got := ruletest.Of(res, "BF901")
			if len(got) != 1 {
				t.Fatalf("%d BF901 findings, want 1", len(got))
			}
			checkFix(t, res.Objects[0].Doc.JSON, got[0].Fix.Patch)
		})
	}
}

// checkFix sets the annotation as the patch says and scans again: BF901
// is silent and nothing that was suppressed comes back.
func checkFix(t *testing.T, doc, patch []byte) {
	t.Helper()
	var obj, p map[string]any
	if err := json.Unmarshal(doc, &obj); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(patch, &p); err != nil {
		t.Fatal(err)
	}
	v := p["metadata"].(map[string]any)["annotations"].(map[string]any)[rules.IgnoreAnnotation]
	ann := obj["metadata"].(map[string]any)["annotations"].(map[string]any)
	if v == nil {
		delete(ann, rules.IgnoreAnnotation)
	} else {
		ann[rules.IgnoreAnnotation] = v
	}
	fixed, _ := json.Marshal(obj)
	before := ruletest.Scan(t, catalog.All(), doc, "-")
	after := ruletest.Scan(t, catalog.All(), fixed, "-")
	if n := len(ruletest.Of(after, "BF901")); n != 0 {
		t.Errorf("BF901 still fires after its fix %s", patch)
	}
	if len(after.Findings) != len(before.Findings)-1 || len(after.Suppressed) != len(before.Suppressed) {
		t.Errorf("fix %s changed more than BF901: %d findings and %d suppressed before, %d and %d after",
			patch, len(before.Findings), len(before.Suppressed), len(after.Findings), len(after.Suppressed))
	}
}

// The suppressed findings keep their reason for --show-suppressed.
func TestSuppressedFindingsKeepTheirReason(t *testing.T) {
	res := ruletest.Scan(t, catalog.All(), nil, filepath.Join("testdata", "BF901", "negative", "used.yaml"))
	if len(res.Suppressed) != 1 || res.Suppressed[0].Rule != "BF102" || res.Suppressed[0].Reason != "the probe answers from memory" || res.Suppressed[0].Line < 1 {
		t.Fatalf("suppressed %+v", res.Suppressed)
	}
	var b bytes.Buffer
	b.WriteString(res.Suppressed[0].Reason)
}
