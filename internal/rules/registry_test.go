package rules

import (
	"strings"
	"testing"
)

// Register files a rule under the package that registers it, lists it in
// ID order, and refuses a second rule with the same ID or slug.
func TestRegister(t *testing.T) {
	b := Register(&Rule{ID: "BF952", Slug: "registered-b", Summary: "test", Check: &Scan{Run: func(*Pass) {}}})
	a := Register(&Rule{ID: "BF951", Slug: "registered-a", Summary: "test", Check: &Scan{Run: func(*Pass) {}}})
	if a.Family() != "backfire.dev/backfire/internal/rules" {
		t.Errorf("family %q, want this package", a.Family())
	}
	var ids []string
	for _, r := range Registered() {
		ids = append(ids, r.ID)
	}
	if got := strings.Join(ids, " "); !strings.Contains(got, "BF951 BF952") {
		t.Errorf("registered %s, want ID order", got)
	}
	for _, dup := range []*Rule{{ID: "bf951", Slug: "other"}, {ID: "BF953", Slug: b.Slug}} {
		func() {
			defer func() {
				if v := recover(); v == nil || !strings.Contains(v.(string), "registered twice") {
					t.Errorf("registering %s (%s) again: %v", dup.ID, dup.Slug, v)
				}
			}()
			Register(dup)
		}()
	}
}
