package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"github.com/spf13/cobra"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/model/rollout"
	"backfire.dev/backfire/internal/report"
	"backfire.dev/backfire/internal/scan"
	"backfire.dev/backfire/internal/simulate/rolloutsim"
	"backfire.dev/backfire/internal/simulate/rolloutview"
)

func init() { simulators = append(simulators, newSimulateRolloutCommand) }

type simulateRolloutFlags struct {
	file, name, scenario, version, format string
	replicas, brokenNotReady              int32
	rps, capacity, brokenErrorRate        float64
	podStart                              string
	seconds                               int
	at                                    time.Duration
	seed                                  int64
	fix                                   bool
}

var simulateFormats = []string{"text", "json", "svg", "html"}

func newSimulateRolloutCommand() *cobra.Command {
	var fl simulateRolloutFlags
	cmd := &cobra.Command{
		Use:   "rollout -f FILE [--scenario rollback] [--replicas N] [--rps R] [--pod-capacity C] [--pod-start 20s..40s]",
		Short: "Play an Argo Rollouts canary through the controller twin, second by second",
		Long: `Simulate rollout plays one scenario of an Argo Rollouts canary (with traffic
routing) through a twin of the rollout controller's reconcile loop: the traffic
weight, the ReplicaSet sizes and the step index are decided as the controller of
--rollouts-version decides them, and a small cluster around it starts pods, runs
their readiness probes against the load they get, splits traffic by weight over
Ready endpoints and runs the background analysis.

Replicas, steps, the readiness probe and the analysis come from the manifest (and
its autoscaler, as the rules read them); the flags supply what a manifest cannot
know. Scenarios: ` + strings.Join(rolloutsim.Scenarios, ", ") + `.
"rollback" rolls back within the rollback window to a ReplicaSet scaled to zero,
"rollback-active" to one still up, "rollback-outside-window" past the window.

--fix runs the same scenario again with the fixes the rules propose for the
Rollout applied, and shows both. See docs/simulate-rollout.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runSimulateRollout(cmd, &fl) },
	}
	f := cmd.Flags()
	f.StringVarP(&fl.file, "file", "f", "", "manifest with the Rollout (and its autoscaler and AnalysisTemplates); a directory is read recursively, - is standard input")
	f.StringVar(&fl.name, "name", "", "the Rollout to simulate when the file has several")
	f.StringVar(&fl.scenario, "scenario", rolloutsim.Rollback, "scenario: "+strings.Join(rolloutsim.Scenarios, ", "))
	f.StringVar(&fl.version, "rollouts-version", rollout.DefaultVersion, "Argo Rollouts controller version to behave as (v1.8.0 and later)")
	f.Int32Var(&fl.replicas, "replicas", 0, "replica count (default: the Rollout's status.replicas, spec.replicas or its autoscaler's minimum)")
	f.Float64Var(&fl.rps, "rps", 100, "requests per second offered to the Service")
	f.Float64Var(&fl.capacity, "pod-capacity", 0, "requests per second one pod serves before its readiness probe times out (required)")
	f.StringVar(&fl.podStart, "pod-start", "20s..40s", "time from pod creation to the application answering: a duration or a range lo..hi")
	f.IntVar(&fl.seconds, "seconds", 180, "seconds to simulate")
	f.DurationVar(&fl.at, "at", time.Minute, "when the abort or promote --full of those scenarios is issued")
	f.Float64Var(&fl.brokenErrorRate, "broken-error-rate", 0.5, "share of requests the version being rolled back from fails (rollback scenarios)")
	f.Int32Var(&fl.brokenNotReady, "broken-not-ready", 0, "pods of the version being rolled back from that are not Ready (rollback scenarios)")
	f.Int64Var(&fl.seed, "seed", 1, "seed for the start-up times drawn from a range: the same seed gives the same timeline")
	f.BoolVar(&fl.fix, "fix", false, "also run the scenario with the rules' fixes for the Rollout applied, and compare")
	f.StringVar(&fl.format, "format", "text", "output format: "+strings.Join(simulateFormats, ", "))
	return cmd
}

// parsePodStart reads "30s" or "20s..40s".
func parsePodStart(s string) ([2]time.Duration, error) {
	lo, hi, isRange := strings.Cut(s, "..")
	a, err := time.ParseDuration(strings.TrimSpace(lo))
	if err != nil {
		return [2]time.Duration{}, err
	}
	b := a
	if isRange {
		if b, err = time.ParseDuration(strings.TrimSpace(hi)); err != nil {
			return [2]time.Duration{}, err
		}
	}
	if a < 0 || b < a {
		return [2]time.Duration{}, fmt.Errorf("want 0 <= lo <= hi, got %s", s)
	}
	return [2]time.Duration{a, b}, nil
}

func runSimulateRollout(cmd *cobra.Command, fl *simulateRolloutFlags) error {
	if fl.file == "" {
		return usageError(cmd, "simulate rollout needs -f FILE")
	}
	if !slices.Contains(simulateFormats, fl.format) {
		return usageError(cmd, "unknown --format %q (want %s)", fl.format, strings.Join(simulateFormats, ", "))
	}
	if !slices.Contains(rolloutsim.Scenarios, fl.scenario) {
		return usageError(cmd, "unknown --scenario %q (want %s)", fl.scenario, strings.Join(rolloutsim.Scenarios, ", "))
	}
	if fl.capacity <= 0 {
		return usageError(cmd, "--pod-capacity must be set to what one pod serves, in requests per second")
	}
	if fl.rps < 0 || fl.seconds <= 0 || fl.seconds > 24*3600 || fl.brokenErrorRate < 0 || fl.brokenErrorRate > 1 {
		return usageError(cmd, "--rps must not be negative, --seconds must be 1 to 86400 and --broken-error-rate 0 to 1")
	}
	podStart, err := parsePodStart(fl.podStart)
	if err != nil {
		return usageError(cmd, "--pod-start: %v", err)
	}
	version, err := rollout.ParseVersion(fl.version)
	if err != nil {
		return usageError(cmd, "--rollouts-version: %v", err)
	}
	res, err := scan.Run(scan.Options{Paths: []string{fl.file}, Stdin: cmd.InOrStdin(), KeepObjects: true})
	if err != nil {
		return usageError(cmd, "%v", err)
	}
	if len(res.Errors) > 0 {
		report.Errors(cmd.ErrOrStderr(), res.Errors)
		return exitError{exitUsage}
	}
	m, err := rolloutsim.FromObjects(res.Objects, fl.name)
	if err != nil {
		return usageError(cmd, "%s: %v", fl.file, err)
	}
	replicas := m.Replicas
	if fl.replicas > 0 {
		replicas = fl.replicas
		m.Notes = slices.DeleteFunc(m.Notes, func(n string) bool { return strings.HasPrefix(n, "replicas ") })
		m.Notes = append([]string{fmt.Sprintf("replicas %d from --replicas", replicas)}, m.Notes...)
	}
	in := rolloutsim.Input{
		Rollout: m.Rollout, Replicas: replicas, Version: version, Scenario: fl.scenario,
		Probe: m.Probe, Analysis: m.Analysis, RPS: fl.rps, PodCapacity: fl.capacity, PodStart: podStart,
		BrokenErrorRate: fl.brokenErrorRate, BrokenNotReady: fl.brokenNotReady,
		ActionAt: fl.at.Truncate(time.Second), Duration: time.Duration(fl.seconds) * time.Second, Seed: fl.seed,
	}
	run, err := rolloutsim.Run(in)
	if err != nil {
		return usageError(cmd, "%s: %v", fl.file, err)
	}
	run.Notes = append(m.Notes, run.Notes...)
	rep := &rolloutview.Report{Rollout: m.Rollout.Name, Run: run, Inputs: map[string]any{
		"replicas": replicas, "rps": fl.rps, "podCapacity": fl.capacity, "podStart": fl.podStart, "seconds": fl.seconds,
		"seed": fl.seed, "brokenErrorRate": fl.brokenErrorRate, "brokenNotReady": fl.brokenNotReady,
	}}
	if fl.fix {
		fixed, applied, err := fixedRollout(m.Rollout, res.Findings)
		if err != nil {
			return usageError(cmd, "%s: %v", fl.file, err)
		}
		if len(applied) == 0 {
			applied = []string{"none: the rules propose no fix for this Rollout"}
		}
		in.Rollout = fixed
		if len(fixed.Spec.Template.Spec.Containers) > 0 {
			// A fix may change the readiness probe (BF104).
			in.Probe, _ = rolloutsim.ProbeOf(&fixed.Spec.Template.Spec)
		}
		if rep.Fixed, err = rolloutsim.Run(in); err != nil {
			return usageError(cmd, "%s: with the fix: %v", fl.file, err)
		}
		rep.Fix = applied
	}
	out := cmd.OutOrStdout()
	switch fl.format {
	case "json":
		return rolloutview.JSON(out, rep)
	case "svg", "html":
		render := rolloutview.SVG
		if fl.format == "html" {
			render = rolloutview.HTML
		}
		b, err := render(rep)
		if err != nil {
			return err
		}
		_, err = out.Write(b)
		return err
	}
	return rolloutview.Text(out, rep)
}

// fixedRollout applies to the Rollout the patches the rules propose for it,
// composed as backfire fix composes them and applied with the same applier
// (fix.Apply: the Rollout's Go type says how its lists merge).
func fixedRollout(ro *v1alpha1.Rollout, findings []finding.Finding) (*v1alpha1.Rollout, []string, error) {
	doc, err := json.Marshal(ro)
	if err != nil {
		return nil, nil, err
	}
	var own []finding.Finding
	for _, f := range findings {
		if f.Fix == nil || f.Fix.Type != finding.StrategicMergePatch || f.Fix.Target != nil ||
			f.Object.Kind != "Rollout" || f.Object.Name != ro.Name || f.Object.Namespace != ro.Namespace {
			continue
		}
		own = append(own, f)
	}
	for _, c := range fix.Compose(own) {
		if doc, err = fix.ApplyChange(doc, c, &v1alpha1.Rollout{}); err != nil {
			return nil, nil, fmt.Errorf("the composed fix: %w", err)
		}
	}
	var applied []string
	for _, f := range own {
		note := ""
		if strings.Contains(string(f.Fix.Patch), `"resources"`) {
			// CPU and memory do not enter the simulation: a pod serves
			// --pod-capacity whatever its limits.
			note = " (no effect here: the simulation takes --pod-capacity as given)"
		}
		applied = append(applied, f.Rule+note+": "+f.Fix.Description)
	}
	out := &v1alpha1.Rollout{}
	if err := json.Unmarshal(doc, out); err != nil {
		return nil, nil, err
	}
	return out, applied, nil
}
