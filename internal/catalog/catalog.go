// Package catalog is the rule table: every rule the family packages
// register, in ID order. A new rule is one value in its family's package
// (rules.Register), its fixtures (testdata/ID) and docs/rules/ID.md; a new
// family is one more import below. Everything else about a rule (the
// schema, the evidence tables, which rules a driver runs) is derived from
// its value.
package catalog

import (
	"path"
	"strings"

	"backfire.dev/backfire/internal/rules"
	// The families: importing one registers its rules.
	_ "backfire.dev/backfire/internal/rules/controllers"
	_ "backfire.dev/backfire/internal/rules/disruption"
	_ "backfire.dev/backfire/internal/rules/flagger"
	_ "backfire.dev/backfire/internal/rules/network"
	_ "backfire.dev/backfire/internal/rules/probes"
	_ "backfire.dev/backfire/internal/rules/resources"
	_ "backfire.dev/backfire/internal/rules/restarts"
	_ "backfire.dev/backfire/internal/rules/rollouts"
	_ "backfire.dev/backfire/internal/rules/supply"
	_ "backfire.dev/backfire/internal/rules/suppression"
	_ "backfire.dev/backfire/internal/rules/termination"
)

var all = rules.Registered()

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

// Family returns the rules of one family, named by its package ("probes"),
// in ID order.
func Family(name string) []*rules.Rule {
	var out []*rules.Rule
	for _, r := range all {
		if path.Base(r.Family()) == name {
			out = append(out, r)
		}
	}
	return out
}
