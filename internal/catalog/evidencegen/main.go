// Command evidencegen regenerates, from the rules' evidence types, the
// evidence definitions of docs/schema/backfire-v1.json and the evidence
// tables of docs/rules/*.md, and writes the page of a new rule that has
// none (catalog.NewPage), for its mechanism to be written by hand (run by
// go generate ./internal/catalog). The argument is the repository's root.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"backfire.dev/backfire/internal/catalog"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: evidencegen REPO_ROOT")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "evidencegen:", err)
		os.Exit(1)
	}
}

func run(root string) error {
	schemaPath := filepath.Join(root, "docs", "schema", "backfire-v1.json")
	schema, err := os.ReadFile(schemaPath)
	if err != nil {
		return err
	}
	out, err := catalog.RenderSchema(schema)
	if err != nil {
		return fmt.Errorf("%s: %w", schemaPath, err)
	}
	if err := os.WriteFile(schemaPath, out, 0o644); err != nil {
		return err
	}
	for _, r := range catalog.All() {
		p := filepath.Join(root, "docs", "rules", r.ID+".md")
		page, err := os.ReadFile(p)
		if os.IsNotExist(err) {
			page, err = catalog.NewPage(r), nil // a new rule: its page to write
		}
		if err != nil {
			return err
		}
		if err := os.WriteFile(p, catalog.RenderDoc(r.ID, page), 0o644); err != nil {
			return err
		}
	}
	return nil
}
