package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"github.com/spf13/cobra"

	"backfire.dev/backfire/internal/cluster"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/kustomize"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/model/flagger"
	"backfire.dev/backfire/internal/model/rollout"
	"backfire.dev/backfire/internal/report"
	"backfire.dev/backfire/internal/rules"
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
	fix, compare                          bool
	errorRates, podStarts, loads          string
	cluster                               clusterFlags
	namespace                             string
	toRevision                            int64
	flaggerVersion                        string
}

var simulateFormats = []string{"text", "json", "svg", "html"}

func newSimulateRolloutCommand() *cobra.Command {
	var fl simulateRolloutFlags
	cmd := &cobra.Command{
		Use:   "rollout (-f FILE | --cluster [-n NS] NAME) [--scenario rollback] [--replicas N] [--rps R] [--pod-capacity C] [--pod-start 20s..40s]",
		Short: "Play an Argo Rollouts canary or a Flagger Canary through the controller twin, second by second",
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
Rollout applied, and shows both.

--cluster reads one Rollout (NAME) and its ReplicaSets from the kubeconfig
context's cluster, read-only, and plays kubectl argo rollouts undo
(--to-revision, default the previous revision) from their real state: what a
rollback would do right now, the rollback window counted as the controller
counts it.

--compare rolls back within the window six ways (as written; BF401's fix,
dropping the last setWeight; a last setWeight no larger than the share the
step-0 pods carry; dynamicStableScale; no rollbackWindow with a
revision-aware analysis; an undo followed by promote --full), each until it
settles (--seconds is then the cap, default an hour), at the inputs given and
over a sweep of what the manifest cannot know (--compare-error-rates,
--compare-pod-starts, --compare-loads), and says which loses least where.
See docs/simulate-rollout.md.

A Flagger Canary in the file (flagger.app/v1beta1, with its target Deployment
and autoscaler) is played through a twin of Flagger's analysis tick with the
same small cluster: scenarios ` + strings.Join(rolloutsim.FlaggerScenarios, ", ") + `. "rollback" breaks
the canary (--broken-error-rate) when it reaches its highest weight (or at
--at), "revert" redeploys a good version over a broken primary, and
"failed-promotion" gives the primary a spec that never becomes Ready;
--flagger-version (default: the controller's in the input, else v1.44.0)
decides what a failed promotion does. Mirroring, A/B testing, blue/green,
skipAnalysis and non-Deployment targets are refused as not modelled.
See docs/simulate-flagger.md.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runSimulateRollout(cmd, &fl, args) },
	}
	f := cmd.Flags()
	f.StringVarP(&fl.file, "file", "f", "", "manifest with the Rollout (and its autoscaler and AnalysisTemplates); a directory is read recursively, - is standard input")
	f.StringVar(&fl.name, "name", "", "the Rollout to simulate when the file has several")
	f.StringVar(&fl.scenario, "scenario", rolloutsim.Rollback, "scenario: "+strings.Join(rolloutsim.Scenarios, ", ")+"; for a Flagger Canary "+strings.Join(rolloutsim.FlaggerScenarios, ", "))
	f.StringVar(&fl.version, "rollouts-version", rollout.DefaultVersion, "Argo Rollouts controller version to behave as (v1.8.0 and later)")
	f.Int32Var(&fl.replicas, "replicas", 0, "replica count (default: the Rollout's status.replicas, spec.replicas or its autoscaler's minimum)")
	f.Float64Var(&fl.rps, "rps", 100, "requests per second offered to the Service")
	f.Float64Var(&fl.capacity, "pod-capacity", 0, "requests per second one pod serves before its readiness probe times out (required)")
	f.StringVar(&fl.podStart, "pod-start", "20s..40s", "time from pod creation to the application answering: a duration or a range lo..hi")
	f.IntVar(&fl.seconds, "seconds", 180, "seconds to simulate")
	f.DurationVar(&fl.at, "at", time.Minute, "when the abort or promote --full of those scenarios is issued; for a Canary's rollback, when the canary starts failing")
	f.Float64Var(&fl.brokenErrorRate, "broken-error-rate", 0.5, "share of requests the version being rolled back from fails (rollback scenarios)")
	f.Int32Var(&fl.brokenNotReady, "broken-not-ready", 0, "pods of the version being rolled back from that are not Ready (rollback scenarios)")
	f.Int64Var(&fl.seed, "seed", 1, "seed for the start-up times drawn from a range: the same seed gives the same timeline")
	f.BoolVar(&fl.fix, "fix", false, "also run the scenario with the rules' fixes for the Rollout applied, and compare")
	f.BoolVar(&fl.compare, "compare", false, "compare six ways to roll back within the window, at these inputs and over a sweep of the unknowns")
	f.StringVar(&fl.errorRates, "compare-error-rates", "0.02,0.1,0.5,1", "with --compare: the broken version's error rates to try")
	f.StringVar(&fl.podStarts, "compare-pod-starts", "10s..30s,20s..4m", "with --compare: the pod start-up times to try")
	f.StringVar(&fl.loads, "compare-loads", "0.5,1,2", "with --compare: the loads to try, as multiples of --rps")
	f.StringVar(&fl.format, "format", "text", "output format: "+strings.Join(simulateFormats, ", "))
	f.BoolVar(&fl.cluster.enabled, "cluster", false, "read the Rollout NAME and its ReplicaSets from the kubeconfig context's cluster, read-only, and play an undo from their state")
	f.StringVar(&fl.cluster.context, "context", "", "kubeconfig context for --cluster (default: the current context)")
	f.StringVar(&fl.cluster.kubeconfig, "kubeconfig", "", "kubeconfig file for --cluster (default: $KUBECONFIG or ~/.kube/config)")
	f.StringVarP(&fl.namespace, "namespace", "n", "", "with --cluster, the Rollout's namespace (default: the context's)")
	f.StringVar(&fl.flaggerVersion, "flagger-version", "", "for a Flagger Canary, the Flagger release to behave as (default: the controller's in the input, else "+flagger.HaltsFailedPromotion+")")
	f.Int64Var(&fl.toRevision, "to-revision", 0, "with --cluster, the revision to roll back to, as kubectl argo rollouts undo --to-revision (default: the previous one)")
	return cmd
}

// checkRolloutNumbers refuses the number flags outside their range (NaN
// and the infinities included): each is a usage error naming its flag,
// never a value silently replaced by a default.
func checkRolloutNumbers(cmd *cobra.Command, fl *simulateRolloutFlags) error {
	for _, c := range []struct {
		name string
		v    float64
		ok   bool
		want string
	}{
		{"pod-capacity", fl.capacity, fl.capacity > 0, "the requests per second one pod serves, more than 0"},
		{"rps", fl.rps, fl.rps >= 0, "the requests per second offered, 0 or more"},
		{"broken-error-rate", fl.brokenErrorRate, fl.brokenErrorRate >= 0 && fl.brokenErrorRate <= 1, "a share from 0 to 1"},
	} {
		if err := numberFlag(cmd, c.name, c.v, c.ok, c.want); err != nil {
			return err
		}
	}
	switch {
	case cmd.Flags().Changed("replicas") && (fl.replicas < 1 || fl.replicas > rolloutsim.MaxReplicas):
		return usageError(cmd, "--replicas %d: want a replica count from 1 to %d", fl.replicas, rolloutsim.MaxReplicas)
	case fl.seconds <= 0 || fl.seconds > 24*3600:
		return usageError(cmd, "--seconds %d: want 1 to 86400", fl.seconds)
	case fl.at < 0:
		return usageError(cmd, "--at %v: want a time from the start, 0 or later", fl.at)
	case fl.brokenNotReady < 0:
		return usageError(cmd, "--broken-not-ready %d: want a count of pods, 0 or more", fl.brokenNotReady)
	case fl.toRevision < 0:
		return usageError(cmd, "--to-revision %d: want a revision, or 0 for the previous one", fl.toRevision)
	}
	return nil
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

func runSimulateRollout(cmd *cobra.Command, fl *simulateRolloutFlags, args []string) error {
	switch {
	case fl.cluster.enabled && (fl.file != "" || len(args) != 1):
		return usageError(cmd, "simulate rollout --cluster takes the Rollout's NAME, and no -f")
	case !fl.cluster.enabled && fl.file == "":
		return usageError(cmd, "simulate rollout needs -f FILE, or --cluster and a Rollout's NAME")
	case !fl.cluster.enabled && len(args) > 0:
		return usageError(cmd, "simulate rollout takes NAME only with --cluster (use --name to pick a Rollout in the file)")
	}
	if !fl.cluster.enabled {
		for _, name := range []string{"context", "kubeconfig", "namespace", "to-revision"} {
			if cmd.Flags().Changed(name) {
				return usageError(cmd, "--%s needs --cluster", name)
			}
		}
	} else if cmd.Flags().Changed("scenario") && fl.scenario != rolloutsim.Rollback {
		return usageError(cmd, "--cluster plays an undo from the live state: --scenario must be rollback")
	}
	if fl.compare && (fl.fix || fl.scenario != rolloutsim.Rollback) {
		return usageError(cmd, "--compare rolls back within the window: it takes neither --fix nor a --scenario other than rollback")
	}
	if fl.compare && !cmd.Flags().Changed("seconds") {
		fl.seconds = 3600
	}
	if !slices.Contains(simulateFormats, fl.format) {
		return usageError(cmd, "unknown --format %q (want %s)", fl.format, strings.Join(simulateFormats, ", "))
	}
	if !slices.Contains(rolloutsim.Scenarios, fl.scenario) && !slices.Contains(rolloutsim.FlaggerScenarios, fl.scenario) {
		return usageError(cmd, "unknown --scenario %q (want %s; for a Flagger Canary %s)", fl.scenario,
			strings.Join(rolloutsim.Scenarios, ", "), strings.Join(rolloutsim.FlaggerScenarios, ", "))
	}
	if fl.capacity == 0 {
		return usageError(cmd, "--pod-capacity must be set to what one pod serves, in requests per second")
	}
	if err := checkRolloutNumbers(cmd, fl); err != nil {
		return err
	}
	podStart, err := parsePodStart(fl.podStart)
	if err != nil {
		return usageError(cmd, "--pod-start: %v", err)
	}
	version, err := rollout.ParseVersion(fl.version)
	if err != nil {
		return usageError(cmd, "--rollouts-version: %v", err)
	}
	// The rules compute for the release simulated: their fixes and the
	// releases they name are that release's.
	ruleOpts := rules.Options{RolloutsVersion: version}
	// A Kustomize directory is built as scan builds it (remote resources
	// refused): a Canary usually comes with its Deployment and HPA in one.
	opts := scan.Options{Paths: []string{fl.file}, Stdin: cmd.InOrStdin(), KeepObjects: true, Rules: ruleOpts, Kustomize: kustomize.New()}
	var live *cluster.RolloutState
	source, name := fl.file, fl.name
	if fl.cluster.enabled {
		name = args[0]
		var files []load.File
		if files, live, source, err = readLiveRollout(cmd, &fl.cluster, fl.namespace, name); err != nil {
			return usageError(cmd, "%v", err)
		}
		opts = scan.Options{Extra: files, KeepObjects: true, Rules: ruleOpts}
	}
	res, err := scan.Run(opts)
	if err != nil {
		return usageError(cmd, "%v", err)
	}
	if len(res.Errors) > 0 {
		report.Errors(cmd.ErrOrStderr(), res.Errors)
		return exitError{exitUsage}
	}
	if !fl.cluster.enabled && rolloutsim.HasCanary(res.Objects, name) {
		return runSimulateCanary(cmd, fl, res, name)
	}
	if fl.flaggerVersion != "" {
		return usageError(cmd, "--flagger-version applies to a Flagger Canary, and the input has none")
	}
	if !slices.Contains(rolloutsim.Scenarios, fl.scenario) {
		return usageError(cmd, "--scenario %s is for a Flagger Canary (a Rollout's: %s)", fl.scenario, strings.Join(rolloutsim.Scenarios, ", "))
	}
	m, err := rolloutsim.FromObjects(res.Objects, name)
	if err != nil {
		return usageError(cmd, "%s: %v", source, err)
	}
	if live != nil {
		// The Rollout as the controller holds it, status and all: the scan
		// reads a rendering that keeps only status.replicas.
		m.Rollout = live.Rollout
	}
	replicas := m.Replicas
	if replicas > rolloutsim.MaxReplicas && fl.replicas == 0 {
		return usageError(cmd, "%s: Rollout %s: %d replicas is more than the %d pods the simulation plays one by one (Kubernetes' own bound for a whole cluster): give --replicas %d or fewer",
			source, m.Rollout.Name, replicas, rolloutsim.MaxReplicas, rolloutsim.MaxReplicas)
	}
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
	if live != nil {
		lv, err := rolloutsim.FromLive(live.Rollout, live.ReplicaSets, live.Services, time.Now(), fl.toRevision, replicas, version)
		if err != nil {
			return usageError(cmd, "%s: %v", source, err)
		}
		in.Live, in.Scenario = lv, rolloutsim.Rollback
		m.Notes = append(m.Notes, lv.Notes...)
	}
	if fl.compare {
		return runCompare(cmd, fl, in, m, res.Findings)
	}
	run, err := rolloutsim.Run(in)
	if err != nil {
		return usageError(cmd, "%s: %v", fl.file, err)
	}
	run.Notes = append(append(m.Notes, run.Notes...), abortNotes(m.Rollout, res.Findings)...)
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
	return writeRolloutReport(out, fl.format, rep)
}

// writeRolloutReport writes a simulated run (a Rollout's or a Canary's) in
// the format asked for.
func writeRolloutReport(out io.Writer, format string, rep *rolloutview.Report) error {
	switch format {
	case "json":
		return rolloutview.JSON(out, rep)
	case "svg", "html":
		render := rolloutview.SVG
		if format == "html" {
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

// runCompare plays the remedies over the sweep and prints the comparison.
func runCompare(cmd *cobra.Command, fl *simulateRolloutFlags, in rolloutsim.Input, m *rolloutsim.Manifest, findings []finding.Finding) error {
	sw, err := parseSweep(fl)
	if err != nil {
		return usageError(cmd, "%v", err)
	}
	var bf401 []finding.Finding
	for _, f := range findings {
		if f.Rule == "BF401" {
			bf401 = append(bf401, f)
		}
	}
	var ruleFix *v1alpha1.Rollout
	if len(bf401) > 0 {
		fixed, applied, err := fixedRollout(m.Rollout, bf401)
		if err != nil {
			return usageError(cmd, "%s: %v", fl.file, err)
		}
		if len(applied) > 0 {
			ruleFix = fixed
		}
	}
	remedies, notes := rolloutsim.Remedies(m.Rollout, in.Replicas, in.Version, ruleFix)
	cmp, err := rolloutsim.Compare(in, remedies, sw)
	if err != nil {
		return usageError(cmd, "%s: %v", fl.file, err)
	}
	cmp.Notes = notes
	broken := "current"
	if in.Live != nil {
		broken = in.Live.Current
	}
	c := &rolloutview.Comparison{Rollout: m.Rollout.Name, Version: in.Version, Broken: broken, Notes: m.Notes, Result: cmp,
		Inputs: map[string]any{"replicas": in.Replicas, "rps": fl.rps, "podCapacity": fl.capacity, "podStart": fl.podStart, "capSeconds": fl.seconds,
			"seed": fl.seed, "brokenErrorRate": fl.brokenErrorRate, "brokenNotReady": fl.brokenNotReady,
			"compareErrorRates": fl.errorRates, "comparePodStarts": fl.podStarts, "compareLoads": fl.loads}}
	out := cmd.OutOrStdout()
	switch fl.format {
	case "json":
		return rolloutview.CompareJSON(out, c)
	case "svg", "html":
		render := rolloutview.CompareSVG
		if fl.format == "html" {
			render = rolloutview.CompareHTML
		}
		b, err := render(c)
		if err != nil {
			return err
		}
		_, err = out.Write(b)
		return err
	}
	return rolloutview.CompareText(out, c)
}

// parseSweep reads the --compare-* lists.
func parseSweep(fl *simulateRolloutFlags) (rolloutsim.Sweep, error) {
	var sw rolloutsim.Sweep
	floats := func(flag, list string, lo, hi float64) ([]float64, error) {
		var out []float64
		for _, f := range strings.Split(list, ",") {
			if f = strings.TrimSpace(f); f == "" {
				continue
			}
			v, err := strconv.ParseFloat(f, 64)
			if err != nil || !(v >= lo && v <= hi) { // NaN is in no range
				return nil, fmt.Errorf("--%s: %q is not a number from %g to %g", flag, f, lo, hi)
			}
			out = append(out, v)
		}
		return out, nil
	}
	var err error
	if sw.ErrorRates, err = floats("compare-error-rates", fl.errorRates, 0, 1); err != nil {
		return sw, err
	}
	if sw.Loads, err = floats("compare-loads", fl.loads, 0, 100); err != nil {
		return sw, err
	}
	for _, ps := range strings.Split(fl.podStarts, ",") {
		if ps = strings.TrimSpace(ps); ps == "" {
			continue
		}
		r, err := parsePodStart(ps)
		if err != nil {
			return sw, fmt.Errorf("--compare-pod-starts: %q: %v", ps, err)
		}
		sw.PodStarts = append(sw.PodStarts, r)
	}
	if n := len(sw.ErrorRates) * len(sw.Loads) * len(sw.PodStarts); n > 200 {
		return sw, fmt.Errorf("the sweep has %d cases: keep it to 200 or fewer", n)
	}
	return sw, nil
}

// readLiveRollout reads, read-only, the namespace's objects the rules read
// (for the Rollout's analysis templates and autoscaler) and the Rollout's
// own state: its status and ReplicaSets.
func readLiveRollout(cmd *cobra.Command, c *clusterFlags, namespace, name string) ([]load.File, *cluster.RolloutState, string, error) {
	target, err := cluster.Connect(c.kubeconfig, c.context)
	if err != nil {
		return nil, nil, "", err
	}
	if namespace == "" {
		namespace = target.Namespace
	}
	source := cluster.FileName(target.Context, namespace, "Rollout", name)
	st, err := cluster.ReadRollout(cmd.Context(), cluster.RolloutOptions{Config: target.Config, Namespace: namespace, Name: name})
	if err != nil {
		return nil, nil, source, err
	}
	res := cluster.Read(cmd.Context(), cluster.Options{Config: target.Config, Context: target.Context, Namespace: namespace})
	for _, n := range res.Notes {
		report.Message(cmd.ErrOrStderr(), "note: "+n)
	}
	if len(res.Errors) > 0 {
		report.Errors(cmd.ErrOrStderr(), res.Errors)
	}
	return res.Files, st, source, nil
}

// abortNotes names, for the abort bugs of dynamicStableScale (BF404, BF405)
// found on the Rollout, the releases that have them, so that a run on one
// release says which others behave the same.
func abortNotes(ro *v1alpha1.Rollout, findings []finding.Finding) []string {
	var notes []string
	for _, f := range findings {
		if (f.Rule != "BF404" && f.Rule != "BF405") || f.Object.Kind != "Rollout" ||
			f.Object.Name != ro.Name || f.Object.Namespace != ro.Namespace {
			continue
		}
		if applies, ok := f.Evidence["appliesTo"].(string); ok {
			notes = append(notes, fmt.Sprintf("%s %s: %s", f.Rule, f.Message, "applies to Argo Rollouts "+applies))
		}
	}
	return notes
}
