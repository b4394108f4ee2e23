// Package docs embeds the rule documentation so that `backfire explain`
// works from the binary alone.
package docs

import (
	"embed"
	"io/fs"
	"sort"
	"strings"
)

//go:embed rules/*.md
var rules embed.FS

// SchemaV1 is the JSON Schema of `backfire scan --format json`.
//
//go:embed schema/backfire-v1.json
var SchemaV1 []byte

// Rule returns docs/rules/ID.md, or "" when there is no page.
func Rule(id string) string {
	b, err := rules.ReadFile("rules/" + strings.ToUpper(id) + ".md")
	if err != nil {
		return ""
	}
	return string(b)
}

// RuleIDs lists the IDs that have a page.
func RuleIDs() []string {
	entries, _ := fs.ReadDir(rules, "rules")
	var ids []string
	for _, e := range entries {
		ids = append(ids, strings.TrimSuffix(e.Name(), ".md"))
	}
	sort.Strings(ids)
	return ids
}
