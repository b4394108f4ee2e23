// Package catalog is the rule table: every family's rules in ID order. A new
// rule is a line in its family's Rules plus its fixtures and
// docs/rules/ID.md.
package catalog

import (
	"slices"
	"strings"

	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/rules/probes"
	"backfire.dev/backfire/internal/rules/resources"
	"backfire.dev/backfire/internal/rules/restarts"
	"backfire.dev/backfire/internal/rules/rollouts"
	"backfire.dev/backfire/internal/rules/suppression"
)

var all = func() []*rules.Rule {
	var rs []*rules.Rule
	for _, family := range [][]*rules.Rule{probes.Rules, resources.Rules, rollouts.Rules, restarts.Rules, suppression.Rules} {
		rs = append(rs, family...)
	}
	slices.SortFunc(rs, func(a, b *rules.Rule) int { return strings.Compare(a.ID, b.ID) })
	return rs
}()

// All returns the catalog in ID order.
func All() []*rules.Rule { return all }

// ByID finds a rule by its ID ("BF101", any case) or slug.
func ByID(id string) *rules.Rule {
	for _, r := range all {
		if strings.EqualFold(r.ID, id) || r.Slug == id {
			return r
		}
	}
	return nil
}
