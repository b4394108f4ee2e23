package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"backfire.dev/backfire/internal/catalog"
	"backfire.dev/backfire/internal/report"
)

// Every command's help has an Examples: section, and each example uses only
// flags its command has: an example that no longer runs is worse than none.
func TestEveryCommandHasExamples(t *testing.T) {
	root := newRootCommand()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" || (c.HasParent() && c.Parent().Name() == "completion") {
			return
		}
		out, _, code := execute(t, "", append(strings.Fields(strings.TrimPrefix(c.CommandPath(), "backfire")), "--help")...)
		if code != exitClean || !strings.Contains(out, "Examples:\n  backfire") && !strings.Contains(out, "Examples:\n  kubectl") && !strings.Contains(out, "Examples:\n  helm") {
			t.Errorf("%s --help: exit %d, no examples:\n%s", c.CommandPath(), code, out)
		}
		for _, line := range strings.Split(c.Example, "\n") {
			line, _, _ = strings.Cut(line, "#")
			// The command the line runs: what follows "backfire".
			fields := strings.Fields(line)
			for i, f := range fields {
				if f == "backfire" {
					fields = fields[i+1:]
					break
				}
			}
			ran, _, err := root.Find(fields)
			if err != nil {
				t.Errorf("%s: example %q runs no command: %v", c.CommandPath(), strings.TrimSpace(line), err)
				continue
			}
			for _, tok := range fields {
				var ok bool
				switch {
				case strings.HasPrefix(tok, "--"):
					name, _, _ := strings.Cut(strings.TrimPrefix(tok, "--"), "=")
					ok = ran.Flags().Lookup(name) != nil || ran.InheritedFlags().Lookup(name) != nil
				case strings.HasPrefix(tok, "-") && len(tok) == 2:
					ok = ran.Flags().ShorthandLookup(tok[1:]) != nil || ran.InheritedFlags().ShorthandLookup(tok[1:]) != nil
				default:
					ok = true
				}
				if !ok {
					t.Errorf("%s: example %q uses %s, which %s does not have", c.CommandPath(), strings.TrimSpace(line), tok, ran.CommandPath())
				}
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// complete asks cobra's completion command, as a shell would, and returns
// the candidates without their descriptions.
func completions(t *testing.T, args ...string) []string {
	t.Helper()
	out, stderr, code := execute(t, "", append([]string{cobra.ShellCompNoDescRequestCmd}, args...)...)
	if code != exitClean {
		t.Fatalf("__complete %v: exit %d, %s", args, code, stderr)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(l, ":") {
			got = append(got, l)
		}
	}
	return got
}

// Shells complete the rule IDs and the format names from the catalog and
// the reporters, so they cannot drift from what the flags accept.
func TestCompletionOffersRulesAndFormats(t *testing.T) {
	has := func(got []string, want ...string) bool {
		set := map[string]bool{}
		for _, g := range got {
			set[g] = true
		}
		for _, w := range want {
			if !set[w] {
				return false
			}
		}
		return true
	}
	if got := completions(t, "scan", "--format", ""); !has(got, report.Formats...) || len(got) != len(report.Formats) {
		t.Errorf("scan --format: %v, want %v", got, report.Formats)
	}
	if got := completions(t, "simulate", "probe", "--format", ""); !has(got, "text", "json", "svg", "html") {
		t.Errorf("simulate probe --format: %v", got)
	}
	if got := completions(t, "scan", "--fail-on", ""); !has(got, "error", "warning", "info", "none") {
		t.Errorf("--fail-on: %v", got)
	}
	var ids []string
	for _, r := range catalog.All() {
		ids = append(ids, r.ID)
	}
	if got := completions(t, "explain", ""); !has(got, ids...) {
		t.Errorf("explain: %v, want %v", got, ids)
	}
	if got := completions(t, "explain", "BF101", ""); len(got) != 0 {
		t.Errorf("explain takes one rule, offered %v", got)
	}
	// --rule takes a list: the IDs already typed stay in front.
	if got := completions(t, "fix", "--rule", "BF101,"); !has(got, "BF101,BF102") {
		t.Errorf("fix --rule BF101,: %v", got)
	}
	if got := completions(t, "serve", "--mode", ""); !has(got, "warn", "deny") {
		t.Errorf("serve --mode: %v", got)
	}
}
