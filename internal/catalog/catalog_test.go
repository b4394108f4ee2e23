package catalog

import (
	"go/build"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"backfire.dev/backfire/docs"
	"backfire.dev/backfire/internal/testutil"
)

// Every rule is a complete entry: a stable ID and slug, a summary, a doc
// page that starts with its name (its fixtures are checked by
// TestEveryRuleRunsItsFixtures).
func TestCatalogEntriesAreComplete(t *testing.T) {
	id := regexp.MustCompile(`^BF[1-9][0-9]{2}$`)
	slug := regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	fieldName := regexp.MustCompile(`^(container|pod|spec|metadata)(\.[A-Za-z][A-Za-z0-9]*)+$`)
	if id.MatchString(testutil.UnknownRule) {
		t.Errorf("testutil.UnknownRule %s is inside the ID space: tests that use it as an unknown rule would break when a rule takes it", testutil.UnknownRule)
	}
	seen := map[string]bool{}
	for _, r := range All() {
		if !id.MatchString(r.ID) || !slug.MatchString(r.Slug) || r.Summary == "" || r.Check == nil {
			t.Errorf("incomplete rule %+v", r)
		}
		if r.Check != nil && r.Check.Driver() != "scan" && r.Check.Driver() != "diagnose" {
			t.Errorf("%s: a check for %q, which no driver runs", r.ID, r.Check.Driver())
		}
		for _, f := range append(slices.Clone(r.Fix.Sets), r.Fix.From...) {
			if !fieldName.MatchString(f) {
				t.Errorf("%s: fix field %q is not container.X, pod.X, spec.X or metadata.X", r.ID, f)
			}
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

// Every driver (scan, diagnose, the webhook, the simulators) takes its
// rules from the catalog: no other package imports a rule family.
func TestOnlyTheCatalogImportsFamilies(t *testing.T) {
	root := testutil.RepoRoot(t)
	families := map[string]bool{}
	for _, r := range All() {
		families[r.Family()] = true
	}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(path, 0)
		if err != nil {
			return nil // no Go files, or another module's
		}
		rel, _ := filepath.Rel(root, path)
		if rel == filepath.Join("internal", "catalog") {
			return nil
		}
		for _, imp := range pkg.Imports {
			if families[imp] {
				t.Errorf("%s imports the rule family %s: take rules from the catalog", rel, imp)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
