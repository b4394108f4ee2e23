package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"backfire.dev/backfire/internal/catalog"
)

type ruleInfo struct {
	ID         string   `json:"id"`
	Slug       string   `json:"slug"`
	Severity   string   `json:"severity"`
	Summary    string   `json:"summary"`
	Kinds      []string `json:"kinds,omitempty"`
	DefaultOff bool     `json:"defaultOff,omitempty"`
	Doc        string   `json:"doc"`
}

func newRulesCommand() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "rules",
		Short: "List the rule catalog",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var infos []ruleInfo
			for _, r := range catalog.All() {
				infos = append(infos, ruleInfo{ID: r.ID, Slug: r.Slug, Severity: r.Severity.String(), Summary: r.Summary,
					Kinds: r.Kinds, DefaultOff: r.DefaultOff, Doc: "docs/rules/" + r.ID + ".md"})
			}
			out := cmd.OutOrStdout()
			switch format {
			case "json":
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(infos)
			case "text":
				tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
				for _, r := range infos {
					off := ""
					if r.DefaultOff {
						off = " (off by default)"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s%s\n", r.ID, r.Severity, r.Slug, r.Summary, off)
				}
				return tw.Flush()
			}
			return usageError(cmd, "unknown --format %q (want text or json)", format)
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "text or json")
	return cmd
}

func newExplainCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "explain RULE",
		Short: "Print a rule's documentation page",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r := catalog.ByID(args[0])
			if r == nil {
				return usageError(cmd, "unknown rule %q (see backfire rules)", args[0])
			}
			_, err := fmt.Fprint(cmd.OutOrStdout(), r.Doc())
			return err
		},
	}
}
