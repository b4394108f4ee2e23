package catalog

import (
	"regexp"
	"strings"
	"testing"

	"backfire.dev/backfire/docs"
)

// Every rule is a complete entry: a stable ID and slug, a summary, a doc
// page that starts with its name (its fixtures are checked by
// TestEveryRuleRunsItsFixtures).
func TestCatalogEntriesAreComplete(t *testing.T) {
	id := regexp.MustCompile(`^BF[1-9][0-9]{2}$`)
	slug := regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	seen := map[string]bool{}
	for _, r := range All() {
		if !id.MatchString(r.ID) || !slug.MatchString(r.Slug) || r.Summary == "" || (r.Run == nil) == (r.Diagnose == nil) {
			t.Errorf("incomplete rule %+v", r)
		}
		if seen[r.ID] || seen[r.Slug] {
			t.Errorf("%s: duplicate ID or slug", r.ID)
		}
		seen[r.ID], seen[r.Slug] = true, true
		if doc := r.Doc(); !strings.HasPrefix(doc, "# "+r.ID+" "+r.Slug) {
			t.Errorf("%s: docs/rules/%s.md must start with %q", r.ID, r.ID, "# "+r.ID+" "+r.Slug)
		}
		if ByID(strings.ToLower(r.ID)) != r || ByID(r.Slug) != r {
			t.Errorf("%s: ByID does not find it", r.ID)
		}
	}
	for _, page := range docs.RuleIDs() {
		if ByID(page) == nil {
			t.Errorf("docs/rules/%s.md documents no rule", page)
		}
	}
}
