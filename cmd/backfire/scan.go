package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"backfire.dev/backfire/internal/baseline"
	"backfire.dev/backfire/internal/buildinfo"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fixplan"
	"backfire.dev/backfire/internal/fixplan/textchange"
	"backfire.dev/backfire/internal/gitbase"
	"backfire.dev/backfire/internal/helm"
	"backfire.dev/backfire/internal/kustomize"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/model/rollout"
	"backfire.dev/backfire/internal/progress"
	"backfire.dev/backfire/internal/report"
	"backfire.dev/backfire/internal/result"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/scan"
	"backfire.dev/backfire/internal/source"
)

type scanFlags struct {
	format          string
	failOn          string
	configPath      string
	rolloutsVersion string
	color           string
	maxFileSize     int64
	showSuppressed  bool
	explain         bool
	diffBase        string
	baseline        string
	writeBaseline   string
	sarifFixes      bool
	allowRemote     bool
	helm            helm.Options
	cluster         clusterFlags
}

func newScanCommand() *cobra.Command {
	var fl scanFlags
	cmd := &cobra.Command{
		Use:   "scan [PATH|-]...",
		Short: "Scan manifests, directories, Helm charts and Kustomize overlays",
		Long: `Scan reads files (.yaml, .yml, .json), directories (recursively), and "-" for
standard input, and reports the safeguards that will backfire. A directory with
Chart.yaml (or a packaged chart .tgz) is rendered as "helm template" would, with
--values, --set and the other Helm flags; a directory with kustomization.yaml is
built as "kubectl kustomize" would. --cluster scans the objects of a live cluster
too, read-only (see docs/cluster.md).

Exit codes: 0 nothing at or above --fail-on; 1 findings at or above it; 2 usage
error, or input that could not be read or parsed (reported with file and line;
everything else is still scanned).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runScan(cmd, args, &fl)
		},
	}
	f := cmd.Flags()
	f.StringVar(&fl.format, "format", "text", "output format: "+strings.Join(report.Formats, ", "))
	f.StringVar(&fl.failOn, "fail-on", "error", "lowest severity that makes the exit code 1: error, warning, info or none")
	f.StringVar(&fl.configPath, "config", "", "configuration file (default: .backfire.yaml found from the working directory up)")
	f.StringVar(&fl.rolloutsVersion, "rollouts-version", rollout.DefaultVersion, "Argo Rollouts controller version the Argo rules assume")
	f.StringVar(&fl.color, "color", "auto", "colour the text report: auto, always or never")
	f.Int64Var(&fl.maxFileSize, "max-file-size", source.DefaultMaxFileSize, "largest input file read, in bytes")
	f.StringArrayVar(&fl.helm.ValueFiles, "values", nil, "Helm values file for charts (repeatable, merged in order)")
	f.StringArrayVar(&fl.helm.Set, "set", nil, "Helm value for charts, key=value (repeatable)")
	f.StringArrayVar(&fl.helm.SetString, "set-string", nil, "Helm string value for charts, key=value (repeatable)")
	f.StringVar(&fl.helm.ReleaseName, "release-name", helm.DefaultReleaseName, "Helm release name charts are rendered with")
	f.StringVar(&fl.helm.Namespace, "namespace", helm.DefaultNamespace, "namespace Helm charts are rendered into; with --cluster, the namespace to scan when set (else the context's)")
	f.StringVar(&fl.helm.KubeVersion, "kube-version", helm.DefaultKubeVersion, "Kubernetes version charts see in .Capabilities")
	f.StringArrayVar(&fl.helm.APIVersions, "api-versions", nil, "extra API version charts see in .Capabilities (repeatable)")
	f.BoolVar(&fl.showSuppressed, "show-suppressed", false, "list the findings an ignore annotation silenced, with its reason (text, json and sarif)")
	f.BoolVar(&fl.explain, "explain", false, "with the text format, print each finding's causal chain, assumptions and patch (the other formats always carry them)")
	f.StringVar(&fl.diffBase, "diff", "", "report only findings introduced since git revision `BASE` (matched by fingerprint)")
	f.StringVar(&fl.baseline, "baseline", "", "report only findings not accepted in the baseline `FILE` (matched by fingerprint; written by --write-baseline)")
	f.StringVar(&fl.writeBaseline, "write-baseline", "", "write every finding of this scan to the baseline `FILE`, then report as --baseline FILE would")
	f.BoolVar(&fl.sarifFixes, "sarif-fixes", false, "with --format sarif, give each result the text changes \"backfire fix\" would write as SARIF fixes (plans and proves the fixes: a second scan and a rescan)")
	f.BoolVar(&fl.allowRemote, "allow-remote-resources", false, "let Kustomize fetch the remote resources and bases a kustomization names (an HTTP GET, a git clone), as kubectl kustomize does; refused by default")
	fl.cluster.register(cmd)
	return cmd
}

func usageError(cmd *cobra.Command, format string, args ...any) error {
	report.Message(cmd.ErrOrStderr(), fmt.Sprintf(format, args...))
	return exitError{exitUsage}
}

func runScan(cmd *cobra.Command, args []string, fl *scanFlags) error {
	if len(args) == 0 && !fl.cluster.enabled {
		return usageError(cmd, "scan needs at least one PATH, - for standard input, or --cluster")
	}
	if err := fl.cluster.check(cmd); err != nil {
		return err
	}
	if !slices.Contains(report.Formats, fl.format) {
		return usageError(cmd, "unknown --format %q (want %s)", fl.format, strings.Join(report.Formats, ", "))
	}
	failOn, err := finding.ParseSeverity(fl.failOn)
	if err != nil {
		return usageError(cmd, "--fail-on: %v", err)
	}
	rv, err := rollout.ParseVersion(fl.rolloutsVersion)
	if err != nil {
		return usageError(cmd, "--rollouts-version: %v", err)
	}
	cfg, err := loadConfig(fl.configPath)
	if err != nil {
		return usageError(cmd, "%v", err)
	}
	var accepted *baseline.File
	if fl.baseline != "" && fl.writeBaseline == "" {
		if accepted, err = baseline.Read(fl.baseline); err != nil {
			return usageError(cmd, "--baseline: %v", err)
		}
	}

	if fl.maxFileSize <= 0 {
		// The scan would read 0 or less as its default: say so instead.
		return usageError(cmd, "--max-file-size %d: want a size in bytes, more than 0", fl.maxFileSize)
	}
	fl.helm.MaxOutput = fl.maxFileSize
	charts, err := helm.New(fl.helm)
	if err != nil {
		return usageError(cmd, "%v", err)
	}
	kust := kustomize.New()
	if fl.allowRemote {
		kust = kust.AllowRemote()
	}

	// A bar on stderr while the work is long, when stderr is a terminal.
	stages := []string{"scanning"}
	if fl.cluster.enabled {
		stages = []string{"reading the cluster", "scanning"}
	}
	if fl.diffBase != "" {
		stages = append(stages, "scanning "+fl.diffBase)
	}
	if fl.sarifFixes {
		stages = append(stages, "planning and proving the fixes")
	}
	meter := progress.ForTerminal(cmd.ErrOrStderr(), stages...)
	defer meter.Done()

	var live []load.File
	var liveErrs []load.Error
	if fl.cluster.enabled {
		if live, liveErrs, err = fl.cluster.read(cmd, fl.helm.Namespace, meter.Count); err != nil {
			return usageError(cmd, "%v", err)
		}
	}

	opts := scan.Options{
		Paths:       args,
		Extra:       live,
		Stdin:       cmd.InOrStdin(),
		MaxFileSize: fl.maxFileSize,
		Charts:      charts,
		Kustomize:   kust,
		Rules:       rules.Options{Config: cfg, RolloutsVersion: rv},
		// The JSON report can be written from findings kept on disk, so
		// that a scan's memory does not grow with its findings; the other
		// formats, and comparing with a base revision, read them whole.
		Spill: fl.format == "json" && fl.diffBase == "" && fl.baseline == "" && fl.writeBaseline == "",
		// One line a finding, without its fix: the fixes are not
		// composed. The other formats show each fix's description, which
		// the composition can change (fix.Agree).
		NoFixes:  fl.format == "short",
		Progress: meter.Count,
	}
	res, err := scan.Run(opts)
	if err != nil {
		return usageError(cmd, "%v", err)
	}
	defer res.Spill.Close()
	res.Errors = append(res.Errors, liveErrs...)
	if fl.writeBaseline != "" {
		accepted = baseline.Of(res.Findings)
		if err := baseline.Write(fl.writeBaseline, accepted); err != nil {
			return usageError(cmd, "--write-baseline: %v", err)
		}
		fl.baseline = fl.writeBaseline
	}
	var stale int
	if accepted != nil {
		stale = accepted.Stale(res.Findings)
		res.DropFingerprints(accepted.Fingerprints(), "accepted in the baseline "+fl.baseline+" (--baseline)")
	}
	if fl.diffBase != "" {
		if err := dropBaseFindings(res, opts, fl.diffBase); err != nil {
			return usageError(cmd, "%v", err)
		}
	}

	meter.Done()
	out := cmd.OutOrStdout()
	if fl.writeBaseline != "" {
		fmt.Fprintf(cmd.ErrOrStderr(), "backfire: wrote %s to %s\n", report.Count(len(accepted.Findings), "finding"), fl.writeBaseline)
	}
	if stale > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "backfire: %s of %s no longer found (fixed): --write-baseline %s drops them\n",
			report.Count(stale, "entry"), fl.baseline, fl.baseline)
	}
	if h := res.Summary; h.Hidden > 0 && fl.format != "text" {
		// The text summary says it; the other formats keep their shape.
		fmt.Fprintf(cmd.ErrOrStderr(), "backfire: %s %s not shown\n", report.Count(h.Hidden, "finding"), h.HiddenAs)
	}
	switch fl.format {
	case "json":
		err = report.JSON(out, res, report.JSONOptions{ShowSuppressed: fl.showSuppressed})
	case "sarif":
		so := report.SARIFOptions{BaseDir: ".", Version: buildinfo.Version(), ShowSuppressed: fl.showSuppressed}
		if fl.sarifFixes {
			so.Fixes = textFixes(cmd, opts, fl)
		}
		err = report.SARIF(out, res, so)
	case "github":
		// Errors are annotations too; stderr keeps the plain lines.
		report.Errors(cmd.ErrOrStderr(), res.Errors)
		err = report.GitHub(out, res)
	case "gitlab":
		// Errors are issues too; stderr keeps the plain lines.
		report.Errors(cmd.ErrOrStderr(), res.Errors)
		err = report.GitLab(out, res)
	case "junit":
		// Errors are errored test cases too.
		report.Errors(cmd.ErrOrStderr(), res.Errors)
		err = report.JUnit(out, res)
	case "short":
		report.Errors(cmd.ErrOrStderr(), res.Errors)
		err = report.Short(out, res)
	case "html":
		report.Errors(cmd.ErrOrStderr(), res.Errors)
		err = report.HTML(out, res, report.HTMLOptions{ReadFile: os.ReadFile, Version: buildinfo.Version()})
	default:
		report.Errors(cmd.ErrOrStderr(), res.Errors)
		err = report.Text(out, res, report.TextOptions{Color: useColor(fl.color, out), ShowSuppressed: fl.showSuppressed, Brief: !fl.explain})
	}
	if err != nil {
		return err
	}
	return exitError{exitCode(res, failOn)}
}

// textFixes plans the fixes as "backfire fix" does and returns each fixed
// finding's hunks. A plan that fails (the fix would not be proven) gives
// no fixes, and says why on stderr: the scan's report stands without them.
func textFixes(cmd *cobra.Command, opts scan.Options, fl *scanFlags) map[string][]result.TextChange {
	if len(opts.Paths) == 0 {
		return nil // a live cluster alone: no files to edit
	}
	opts.Extra = nil                   // a live cluster has no files to edit
	opts.Stdin = strings.NewReader("") // standard input was read by the scan
	opts.Charts = nil
	plan, err := fixplan.Plan(fixplan.Options{Scan: opts, Helm: &fl.helm})
	if err != nil {
		report.Message(cmd.ErrOrStderr(), "--sarif-fixes: "+err.Error())
		return nil
	}
	return textchange.ByFinding(plan)
}

// dropBaseFindings scans the same paths at git revision base and keeps
// only the findings whose fingerprint is new. Standard input and a live
// cluster have no base: their findings all count as new. Input errors of
// the base are not reported: only the change's own inputs are.
func dropBaseFindings(res *result.Result, opts scan.Options, base string) error {
	tree, err := gitbase.Checkout(base)
	if err != nil {
		return err
	}
	defer tree.Close()
	var paths []string
	for _, p := range opts.Paths {
		if bp, ok := tree.Path(p); ok {
			if _, err := os.Stat(bp); err == nil {
				paths = append(paths, bp)
			}
		}
	}
	if len(paths) == 0 {
		return nil // everything is new
	}
	opts.Paths, opts.Extra, opts.Stdin = paths, nil, nil
	baseRes, err := scan.Run(opts)
	if err != nil {
		return err
	}
	res.DropKnown(baseRes.Findings, "already at "+base+" (--diff)")
	return nil
}

// exitCode applies the contract: input errors win over findings.
func exitCode(res *result.Result, failOn finding.Severity) int {
	if len(res.Errors) > 0 {
		return exitUsage
	}
	if failOn == finding.None {
		return exitClean
	}
	worst := finding.None
	res.EachSeverity(func(s finding.Severity) { worst = max(worst, s) })
	if worst >= failOn {
		return exitFindings
	}
	return exitClean
}

func useColor(mode string, w io.Writer) bool {
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
