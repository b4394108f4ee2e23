package main

import (
	"strings"

	"github.com/spf13/cobra"

	"backfire.dev/backfire/internal/catalog"
	"backfire.dev/backfire/internal/report"
	"backfire.dev/backfire/internal/simulate/probeview"
)

// commandExamples are each command's Examples: section, by its path below the root.
// TestEveryCommandHasExamples checks each is there and uses only flags its
// command has.
var commandExamples = map[string]string{
	"": `  backfire scan examples/
  backfire scan --format sarif deploy/ > backfire.sarif
  backfire fix --diff deploy/
  backfire explain BF101`,
	"scan": `  backfire scan deploy/ charts/app                      # files, directories, charts, overlays
  backfire scan --explain deploy/                         # with each finding's causal chain and patch
  helm template app charts/app | backfire scan -          # standard input
  backfire scan --format short --fail-on warning deploy/  # file:line:col lines, exit 1 on warnings
  backfire scan --diff origin/main deploy/                # only what the change introduced
  backfire scan --write-baseline .backfire-baseline.json deploy/   # accept what is there, once
  backfire scan --baseline .backfire-baseline.json deploy/         # then fail on new findings only
  backfire scan --values prod.yaml --set replicaCount=3 charts/app
  backfire scan --cluster --context prod -A               # a live cluster, read-only`,
	"fix": `  backfire fix --diff deploy/                 # show the change, write nothing
  backfire fix deploy/                        # write the composed fixes in place
  backfire fix --rule BF101,BF102 deploy/
  backfire fix --values-out fixes.yaml charts/app`,
	"diagnose": `  backfire diagnose pod.yaml --events events.txt --logs database=database.log
  kubectl describe pod db-0 | backfire diagnose -
  backfire diagnose --cluster -n registry registry-database-0`,
	"simulate": `  backfire simulate rollout -f rollout.yaml --scenario rollback --replicas 20 --rps 96 --pod-capacity 15
  backfire simulate probe -f statefulset.yaml --latency p50=40ms,p99=1.2s --recovery 10m`,
	"simulate rollout": `  backfire simulate rollout -f rollout.yaml --scenario rollback --replicas 20 --rps 96 --pod-capacity 15 --fix
  backfire simulate rollout -f rollout.yaml --replicas 20 --rps 96 --pod-capacity 15 --compare
  backfire simulate rollout -f rollout.yaml --replicas 20 --rps 96 --pod-capacity 15 --format html > rollback.html
  backfire simulate rollout --cluster -n shop --pod-capacity 15 order-front-api
  backfire simulate rollout -f apps/backend --scenario rollback --replicas 8 --rps 100 --pod-capacity 20
  backfire simulate rollout -f apps/backend --scenario failed-promotion --flagger-version v1.43.0 --pod-capacity 20`,
	"simulate probe": `  backfire simulate probe -f statefulset.yaml --latency p50=40ms,p99=1.2s --recovery 10m
  backfire simulate probe -f statefulset.yaml --latency-trace latency.txt --format svg > probe.svg`,
	"serve": `  backfire serve --tls-cert tls.crt --tls-key tls.key                 # warn mode
  backfire serve --tls-cert tls.crt --tls-key tls.key --mode deny --fail-on error`,
	"rules": `  backfire rules
  backfire rules --format json`,
	"explain": `  backfire explain BF101
  backfire explain liveness-fails-during-recovery`,
	"version": `  backfire version`,
}

// decorate gives every command below root its examples, and completes
// rule IDs and the values of the flags that take one of a fixed list.
func decorate(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := strings.TrimSpace(strings.TrimPrefix(c.CommandPath(), root.Name()))
		if ex, ok := commandExamples[path]; ok {
			c.Example = ex
		}
		formats := map[string][]string{
			"scan": report.Formats, "rules": {"text", "json"}, "diagnose": {"text", "json"},
			"simulate rollout": simulateFormats, "simulate probe": probeview.Formats,
		}
		if f, ok := formats[path]; ok {
			complete(c, "format", f...)
		}
		if c.Flags().Lookup("fail-on") != nil {
			complete(c, "fail-on", "error", "warning", "info", "none")
		}
		if c.Flags().Lookup("mode") != nil {
			complete(c, "mode", "warn", "deny")
		}
		if c.Flags().Lookup("rule") != nil {
			_ = c.RegisterFlagCompletionFunc("rule", completeRuleList)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if explain, _, err := root.Find([]string{"explain"}); err == nil {
		explain.ValidArgsFunction = func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return ruleCompletions(""), cobra.ShellCompDirectiveNoFileComp
		}
	}
}

// complete offers values for a flag, and no file names.
func complete(c *cobra.Command, flag string, values ...string) {
	_ = c.RegisterFlagCompletionFunc(flag, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
}

// ruleCompletions are the catalog's IDs, each described by its slug, after
// prefix (the IDs already typed in a comma-separated list).
func ruleCompletions(prefix string) []cobra.Completion {
	var out []cobra.Completion
	for _, r := range catalog.All() {
		out = append(out, cobra.CompletionWithDesc(prefix+r.ID, r.Slug))
	}
	return out
}

// completeRuleList completes the last ID of --rule BF101,BF1...
func completeRuleList(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	prefix := ""
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		prefix = toComplete[:i+1]
	}
	return ruleCompletions(prefix), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}
