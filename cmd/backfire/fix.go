package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"backfire.dev/backfire/internal/catalog"
	"backfire.dev/backfire/internal/fixplan"
	"backfire.dev/backfire/internal/helm"
	"backfire.dev/backfire/internal/kustomize"
	"backfire.dev/backfire/internal/model/rollout"
	"backfire.dev/backfire/internal/progress"
	"backfire.dev/backfire/internal/report"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/scan"
	"backfire.dev/backfire/internal/source"
)

type fixFlags struct {
	rules           []string
	diff            bool
	configPath      string
	rolloutsVersion string
	maxFileSize     int64
	valuesOut       string
	failPlaceholder bool
	helm            helm.Options
}

func newFixCommand() *cobra.Command {
	var fl fixFlags
	cmd := &cobra.Command{
		Use:   "fix PATH...",
		Short: "Apply the fixes to the manifests, composed per object and proven by a rescan",
		Long: `Fix scans like "backfire scan", merges the fixes of all findings on one object
into one change (see docs/fix.md for the precedence), and writes it into the YAML
files in place: only the values that change are rewritten; comments, key order,
quoting and every other line stay as they were. Before writing, the new files are
scanned again: the fixed findings must be gone, and fixing again must change
nothing. Values the tool cannot know (request sizes) are marked with a
"# placeholder" comment and listed in the summary.

An object rendered from a Helm chart is fixed in the values that produced it
(in place, or in a file of its own with --values-out), and in its template
where the template writes a probe's handler or numbers literally; an object built by a
Kustomize overlay gets a strategic-merge patch file in the overlay, listed
under patches:. What cannot be fixed is listed with the reason and the patch.

--diff prints a unified diff on standard output and writes nothing; the
summary goes to standard error, so the output is the diff alone.

Exit codes: 0 every finding fixed; 1 findings left (listed with the reason),
or with --fail-on-placeholder a placeholder written;
2 usage error, input that could not be read, or a file that could not be written;
3 with --diff, changes pending: fix would change files (the diff is not empty).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runFix(cmd, args, &fl)
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&fl.rules, "rule", nil, "fix only these rules (BF101,BF102)")
	f.BoolVar(&fl.diff, "diff", false, "print a unified diff of the changes and write nothing")
	f.StringVar(&fl.configPath, "config", "", "configuration file (default: .backfire.yaml found from the working directory up)")
	f.StringVar(&fl.rolloutsVersion, "rollouts-version", rollout.DefaultVersion, "Argo Rollouts controller version the Argo rules assume")
	f.Int64Var(&fl.maxFileSize, "max-file-size", source.DefaultMaxFileSize, "largest input file read, in bytes")
	f.StringVar(&fl.valuesOut, "values-out", "", "write the fixes of Helm chart objects to this values file (edited in place when it exists; pass it last with --values), keeping the chart's values untouched; a probe handler or number written literally in a template is still edited there")
	f.BoolVar(&fl.failPlaceholder, "fail-on-placeholder", false, "exit 1 when fix writes a placeholder (a request size to measure), as for a finding left")
	f.StringArrayVar(&fl.helm.ValueFiles, "values", nil, "Helm values file for charts (repeatable, merged in order)")
	f.StringArrayVar(&fl.helm.Set, "set", nil, "Helm value for charts, key=value (repeatable)")
	f.StringVar(&fl.helm.ReleaseName, "release-name", helm.DefaultReleaseName, "Helm release name charts are rendered with")
	f.StringVar(&fl.helm.Namespace, "namespace", helm.DefaultNamespace, "namespace Helm charts are rendered into")
	return cmd
}

func runFix(cmd *cobra.Command, args []string, fl *fixFlags) error {
	if len(args) == 0 {
		return usageError(cmd, "fix needs at least one PATH")
	}
	for _, r := range fl.rules {
		if catalog.ByID(r) == nil {
			return usageError(cmd, "--rule: unknown rule %q (see backfire rules)", r)
		}
	}
	rv, err := rollout.ParseVersion(fl.rolloutsVersion)
	if err != nil {
		return usageError(cmd, "--rollouts-version: %v", err)
	}
	cfg, err := loadConfig(fl.configPath)
	if err != nil {
		return usageError(cmd, "%v", err)
	}
	if fl.maxFileSize <= 0 {
		// The scan would read 0 or less as its default: say so instead.
		return usageError(cmd, "--max-file-size %d: want a size in bytes, more than 0", fl.maxFileSize)
	}
	fl.helm.MaxOutput = fl.maxFileSize
	if _, err := helm.New(fl.helm); err != nil {
		return usageError(cmd, "%v", err)
	}
	var ids []string
	for _, r := range fl.rules {
		ids = append(ids, catalog.ByID(r).ID)
	}
	// The plan scans, then proves the fixes by scanning what it would write
	// (and again, to see that a second run changes nothing).
	meter := progress.ForTerminal(cmd.ErrOrStderr(), "scanning", "proving the fixes")
	plan, err := fixplan.Plan(fixplan.Options{
		Scan: scan.Options{
			Paths:       args,
			Stdin:       cmd.InOrStdin(),
			MaxFileSize: fl.maxFileSize,
			Kustomize:   kustomize.New(),
			Rules:       rules.Options{Config: cfg, RolloutsVersion: rv},
			Progress:    meter.Count,
		},
		Rules:     ids,
		Helm:      &fl.helm,
		ValuesOut: fl.valuesOut,
	})
	meter.Done()
	stderr, out := cmd.ErrOrStderr(), cmd.OutOrStdout()
	if plan != nil {
		report.Errors(stderr, plan.Errors)
	}
	if err != nil {
		report.Message(stderr, err.Error())
		return exitError{exitUsage}
	}
	failed := len(plan.Errors) > 0
	if fl.diff {
		if err := plan.Diff(out); err != nil {
			return err
		}
	} else {
		for _, e := range plan.Write() {
			report.Message(stderr, e.Error())
			failed = true
		}
		for _, f := range plan.Files {
			fmt.Fprintf(out, "fixed %s (%s)\n", f.Path, strings.Join(f.Rules, ", "))
		}
	}
	// With --diff, standard output is the diff alone (for patch, git apply
	// or a review), and the summary goes to standard error.
	sumOut := out
	if fl.diff {
		sumOut = stderr
	}
	summary(sumOut, plan, fl.diff)
	switch {
	case failed:
		return exitError{exitUsage}
	case fl.diff && len(plan.Files) > 0:
		// Changes pending come before findings left: running fix is the
		// next step either way, and what is left is in the summary.
		return exitError{exitPending}
	case len(plan.Left) > 0, fl.failPlaceholder && len(plan.Placeholders) > 0:
		return exitError{exitFindings}
	}
	return exitError{exitClean}
}

// summary prints "N fixed, M left" and what a human still has to do.
func summary(w io.Writer, p *fixplan.FixPlan, dry bool) {
	verb := "fixed"
	if dry {
		verb = "would be fixed"
	}
	fmt.Fprintf(w, "%d %s, %d left\n", len(p.Fixed), verb, len(p.Left))
	for _, l := range p.Left {
		f := l.Finding
		fmt.Fprintf(w, "  left %s %s:%d %s: %s\n", f.Rule, f.File, f.Line, f.Object, l.Reason)
	}
	for _, ph := range p.Placeholders {
		at := ph.File
		if ph.Line > 0 {
			at = fmt.Sprintf("%s:%d", ph.File, ph.Line)
		}
		fmt.Fprintf(w, "  placeholder %s %s = %s: %s\n", at, ph.Field, ph.Value, measure(ph.Field))
	}
	for _, r := range p.Routes {
		route := "values"
		if r.How == "template" {
			route = "template"
		}
		fmt.Fprintf(w, "  %s %s %s (%s): %s, because %s\n", route, r.Object, r.Block, strings.Join(r.Rules, ", "), strings.Join(r.Keys, ", "), r.Why)
	}
	for _, r := range p.Ranges {
		fmt.Fprintf(w, "  range %s\n", r)
	}
	for _, n := range p.Notes {
		fmt.Fprintf(w, "  precedence %s\n", n)
	}
	for _, f := range p.Files {
		for _, n := range f.Notes {
			fmt.Fprintf(w, "  note %s:%s\n", f.Path, strings.TrimPrefix(n, "line "))
		}
	}
}

// measure says what to measure to size a placeholder, from its field.
func measure(field string) string {
	what := "the container's observed use"
	switch field[strings.LastIndexByte(field, '.')+1:] {
	case "cpu":
		what = "the container's observed CPU use (cores at its usual peak, e.g. the 95th percentile of rate(container_cpu_usage_seconds_total[5m]) over a week)"
	case "memory":
		what = "the container's observed memory (its peak working set, container_memory_working_set_bytes, with headroom)"
	case "ephemeral-storage":
		what = "the container's observed local disk use"
	}
	return "set it from " + what
}
