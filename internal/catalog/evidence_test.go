package catalog

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"backfire.dev/backfire/docs"
	"backfire.dev/backfire/internal/testutil"
)

// The schema's evidence definitions and the rule pages' evidence tables are
// generated from the evidence types; this fails when they are stale (run
// go generate ./internal/catalog).
func TestGeneratedEvidenceIsCurrent(t *testing.T) {
	types := EvidenceTypes()
	for _, r := range All() {
		if len(types[r.ID]) == 0 {
			t.Errorf("%s declares no Evidence", r.ID)
		}
		page, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "docs", "rules", r.ID+".md"))
		if err != nil {
			t.Errorf("%s has no page (go generate ./internal/catalog writes one): %v", r.ID, err)
			continue
		}
		if got := RenderDoc(r.ID, page); !bytes.Equal(got, page) {
			t.Errorf("docs/rules/%s.md: evidence table is stale (go generate ./internal/catalog)", r.ID)
		}
		if bytes.Contains(page, []byte(MechanismToWrite)) {
			t.Errorf("docs/rules/%s.md: the mechanism is still to write", r.ID)
		}
		if !bytes.Contains(page, []byte("## Evidence")) {
			t.Errorf("docs/rules/%s.md has no evidence section", r.ID)
		}
	}
	for id := range types {
		if ByID(id) == nil {
			t.Errorf("evidence for %s, which is no rule", id)
		}
	}
	got, err := RenderSchema(docs.SchemaV1)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, docs.SchemaV1) {
		t.Error("docs/schema/backfire-v1.json: evidence definitions are stale (go generate ./internal/catalog)")
	}
}

func TestRenderDocIsIdempotentAndPlacedBeforeReferences(t *testing.T) {
	page := []byte("# BF101 x\n\ntext\n\n## References\n\n- a\n")
	once := RenderDoc("BF101", page)
	if !bytes.Equal(RenderDoc("BF101", once), once) {
		t.Error("rendering twice changes the page")
	}
	if i, j := bytes.Index(once, []byte("## Evidence")), bytes.Index(once, []byte("## References")); i < 0 || j < i {
		t.Errorf("evidence section not before references:\n%s", once)
	}
}

func TestNewPageNeedsItsMechanism(t *testing.T) {
	page := NewPage(ByID("BF104"))
	for _, want := range []string{"# BF104 readiness-flaps-on-single-failure\n", "Severity: **warning**.", "## Mechanism\n\n" + MechanismToWrite, "## Evidence", "| `failureThreshold` |"} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("new page lacks %q:\n%s", want, page)
		}
	}
	if !bytes.Equal(RenderDoc("BF104", page), page) {
		t.Error("a new page is not current")
	}
}
