package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	flaggerv1 "github.com/fluxcd/flagger/pkg/apis/flagger/v1beta1"
	"github.com/spf13/cobra"
	"golang.org/x/mod/semver"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/model/flagger"
	"backfire.dev/backfire/internal/scan"
	"backfire.dev/backfire/internal/simulate/rolloutsim"
	"backfire.dev/backfire/internal/simulate/rolloutview"
)

// runSimulateCanary plays a Flagger Canary: its scheduler's ticks
// (flagger.Tick) in the same small cluster as a Rollout.
func runSimulateCanary(cmd *cobra.Command, fl *simulateRolloutFlags, res *scan.Result, name string) error {
	for _, f := range []string{"fix", "compare", "rollouts-version", "broken-not-ready", "compare-error-rates", "compare-pod-starts", "compare-loads"} {
		if cmd.Flags().Changed(f) {
			return usageError(cmd, "--%s applies to an Argo Rollout: a Flagger Canary is played without it", f)
		}
	}
	if !slices.Contains(rolloutsim.FlaggerScenarios, fl.scenario) {
		return usageError(cmd, "--scenario %s is not one of a Flagger Canary's: %s", fl.scenario, strings.Join(rolloutsim.FlaggerScenarios, ", "))
	}
	m, err := rolloutsim.CanaryFromObjects(res.Objects, name)
	if err != nil {
		return usageError(cmd, "%s: %v", fl.file, err)
	}
	cd := m.Canary
	if why := rolloutsim.NotModelled(cd); why != "" {
		return usageError(cmd, "%s: Canary %s: not modelled: %s (docs/simulate-flagger.md says what the twin plays exactly)", fl.file, cd.Name, why)
	}
	version, note, err := flaggerVersion(fl.flaggerVersion, cd, res.Findings)
	if err != nil {
		return usageError(cmd, "--flagger-version: %v", err)
	}
	notes := append([]string{note}, m.Notes...)
	replicas := m.Replicas
	if replicas > rolloutsim.MaxReplicas && fl.replicas == 0 {
		return usageError(cmd, "%s: Canary %s: %d replicas is more than the %d pods the simulation plays one by one: give --replicas %d or fewer",
			fl.file, cd.Name, replicas, rolloutsim.MaxReplicas, rolloutsim.MaxReplicas)
	}
	if fl.replicas > 0 {
		replicas = fl.replicas
		notes = slices.DeleteFunc(notes, func(n string) bool { return strings.HasPrefix(n, "replicas ") })
		notes = append([]string{fmt.Sprintf("replicas %d from --replicas: the pods the primary needs for all the traffic", replicas)}, notes...)
	}
	podStart, _ := parsePodStart(fl.podStart) // checked by the caller
	in := rolloutsim.CanaryInput{
		Canary: cd, Version: version, Scenario: fl.scenario, Replicas: replicas, CanaryReplicas: min(m.CanaryReplicas, rolloutsim.MaxReplicas),
		Autoscaler: m.Autoscaler, Probe: m.Probe, Checks: rolloutsim.ChecksOf(cd, blindMetrics(cd, res.Findings)),
		ProgressDeadline: m.Deadline, RPS: fl.rps, PodCapacity: fl.capacity, PodStart: podStart,
		MaxSurge: m.MaxSurge, MaxUnavailable: m.MaxUnavailable, BreakAt: -1,
		BrokenErrorRate: fl.brokenErrorRate, Duration: time.Duration(fl.seconds) * time.Second, Seed: fl.seed,
	}
	if cmd.Flags().Changed("at") {
		if fl.scenario != rolloutsim.Rollback {
			return usageError(cmd, "--at with a Canary is when the canary starts failing: it applies to --scenario rollback only")
		}
		in.BreakAt = max(fl.at.Truncate(time.Second), time.Second)
	}
	if in.Autoscaler != nil {
		in.Autoscaler.Max = max(in.Autoscaler.Max, replicas)
	}
	run, err := rolloutsim.RunCanary(in)
	if err != nil {
		return usageError(cmd, "%s: Canary %s: %v", fl.file, cd.Name, err)
	}
	run.Notes = append(notes, run.Notes...)
	rep := &rolloutview.Report{Kind: "Canary", Rollout: cd.Name, Run: run, Inputs: map[string]any{
		"replicas": replicas, "canaryReplicas": in.CanaryReplicas, "rps": fl.rps, "podCapacity": fl.capacity, "podStart": fl.podStart,
		"seconds": fl.seconds, "seed": fl.seed, "brokenErrorRate": fl.brokenErrorRate,
	}}
	return writeRolloutReport(cmd.OutOrStdout(), fl.format, rep)
}

// flaggerVersion is the release to play: the flag's, else the controller's
// BF413 read in the input (it reports only one older than the fix), else
// the first release with the fix.
func flaggerVersion(flag string, cd *flaggerv1.Canary, findings []finding.Finding) (string, string, error) {
	if flag != "" {
		v := flag
		if !strings.HasPrefix(v, "v") {
			v = "v" + v
		}
		if !semver.IsValid(v) {
			return "", "", fmt.Errorf("%q is not a release such as v1.43.0", flag)
		}
		return v, "Flagger " + v + " from --flagger-version", nil
	}
	for _, f := range findings {
		if f.Rule == "BF413" && f.Object.Kind == "Canary" && f.Object.Name == cd.Name && f.Object.Namespace == cd.Namespace {
			if v, ok := f.Evidence["flaggerVersion"].(string); ok && semver.IsValid(v) {
				return v, fmt.Sprintf("Flagger %s: the controller's in the input (BF413)", v), nil
			}
		}
	}
	return flagger.HaltsFailedPromotion, "Flagger " + flagger.HaltsFailedPromotion + ": no older controller in the input (give --flagger-version to play another)", nil
}

// blindMetrics are the metrics BF411 found unable to tell the canary from
// the primary: the run reads them on both sides' requests.
func blindMetrics(cd *flaggerv1.Canary, findings []finding.Finding) []string {
	var out []string
	for _, f := range findings {
		if f.Rule != "BF411" || f.Object.Kind != "Canary" || f.Object.Name != cd.Name || f.Object.Namespace != cd.Namespace {
			continue
		}
		switch ms := f.Evidence["blindMetrics"].(type) {
		case []string:
			out = append(out, ms...)
		case []any:
			for _, m := range ms {
				if s, ok := m.(string); ok {
					out = append(out, s)
				}
			}
		}
	}
	return out
}
