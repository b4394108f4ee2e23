package rollouts

import (
	"fmt"
	"slices"
	"strings"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/model/analysis"
	"backfire.dev/backfire/internal/model/rollout"
	"backfire.dev/backfire/internal/rules"
)

// BF402: the analysis a rollback runs cannot tell the version rolled back
// to from the broken one, so it judges the incident and aborts the rollback.
var BF402 = rules.Register(&rules.Rule{
	ID:       "BF402",
	Slug:     "analysis-blind-to-revision",
	Severity: finding.Warning,
	Summary:  "An analysis whose queries cannot tell canary from stable judges the broken version during a rollback and aborts it.",
	Kinds:    rolloutKind,
	Reads:    []string{"AnalysisTemplate", "ClusterAnalysisTemplate", "Secret", "Service"},
	Check:    &rules.Scan{Run: runBF402},
	Evidence: []any{BF402Evidence{}, BF402UncheckedEvidence{}},
})

// revisionFilterExample is the filter the fix proposes.
const revisionFilterExample = `rollouts_pod_template_hash="{{args.canary-hash}}"`

func runBF402(p *rules.Pass) {
	ro, c := canaryOf(p)
	if c == nil || rollout.MaxTrafficWeight(ro) <= 0 {
		return
	}
	ctl := controllerOf(p)
	svc := serviceNames{canary: c.CanaryService, stable: c.StableService, reach: func() []string {
		names := []string{p.Object.Name, c.CanaryService, c.StableService}
		return append(names, p.Index.Names("Service", p.Object.Namespace)...)
	}, services: func() map[string]map[string]string {
		out := map[string]map[string]string{}
		for _, n := range p.Index.Names("Service", p.Object.Namespace) {
			if s, ok := p.Index.Get("Service", p.Object.Namespace, n).Typed.(*corev1.Service); ok {
				out[n] = s.Spec.Selector
			}
		}
		return out
	}}
	for _, b := range analysis.Blocks(c) {
		share, weight, none := brokenShare(ro, b.Step)
		if none {
			continue // the run starts once the canary has all the traffic
		}
		res := analysis.Resolve(p.Index, p.Object, b.Analysis)
		args := analysis.Args(p.Index, p.Object, b.Analysis.Args, res.Args)
		var checks []metricCheck
		for _, tm := range res.Metrics {
			checks = append(checks, checkMetric(tm, args, svc))
		}
		blindOnes := filterChecks(checks, blind)
		if len(blindOnes) > 0 {
			p.Report(bf402Blind(ro, b, blindOnes, res, share, weight, ctl))
			continue
		}
		if unknowns := filterChecks(checks, unknown); len(res.Missing) > 0 || len(unknowns) > 0 {
			p.Report(bf402Unchecked(b, res, unknowns, share, ctl))
		}
	}
}

func filterChecks(cs []metricCheck, v verdict) []metricCheck {
	var out []metricCheck
	for _, c := range cs {
		if c.verdict == v {
			out = append(out, c)
		}
	}
	return out
}

func windowOf(ro *v1alpha1.Rollout) int32 {
	if ro.Spec.RollbackWindow == nil {
		return 0
	}
	return ro.Spec.RollbackWindow.Revisions
}

// starts says when the block's AnalysisRun starts during an update.
func starts(b analysis.Block) string {
	switch {
	case b.Background && b.StartingStep:
		return fmt.Sprintf("from startingStep %d the background analysis starts", b.Step)
	case b.Background:
		return "the background analysis starts"
	}
	return fmt.Sprintf("on reaching steps[%d] the analysis step starts", b.Step)
}

func templateNames(a *v1alpha1.RolloutAnalysis) string {
	var names []string
	for _, t := range a.Templates {
		kind := "AnalysisTemplate"
		if t.ClusterScope != nil && *t.ClusterScope {
			kind = "ClusterAnalysisTemplate"
		}
		names = append(names, kind+" "+t.TemplateName)
	}
	return strings.Join(names, ", ")
}

func bf402Blind(ro *v1alpha1.Rollout, b analysis.Block, blindOnes []metricCheck, res analysis.Resolution, share string, weight int32, ctl controller) rules.Report {
	// The metric that fails first aborts the rollback.
	first := slices.MinFunc(blindOnes, func(x, y metricCheck) int {
		switch {
		case x.failsAfter.Seconds < y.failsAfter.Seconds:
			return -1
		case x.failsAfter.Seconds > y.failsAfter.Seconds:
			return 1
		}
		return 0
	})
	window := windowOf(ro)
	skips := rollout.RollbackWindowSkipsAnalysis.Contains(ctl.version)
	sev, lead := finding.Error, "a rollback aborts itself"
	switch {
	case window > 0 && skips:
		sev, lead = finding.Warning, fmt.Sprintf("a rollback further back than rollbackWindow.revisions %d aborts itself", window)
	case window > 0:
		lead = fmt.Sprintf("a rollback aborts itself, window or not (rollbackWindow skips analysis only from %s)", rollout.RollbackWindowSkipsAnalysis.Since)
	}
	metricName := fmt.Sprintf("metric %s of %s", first.Metric.Metric.Name, first.KindName)
	l := rollout.SourceLines(ctl.version)

	stepText := fmt.Sprintf("step %d", b.Step)
	if weight > 0 {
		stepText += fmt.Sprintf(" (setWeight %d)", weight)
	}
	basic := ""
	if ro.Spec.Strategy.Canary.TrafficRouting == nil {
		basic = ", by pod count without traffic routing,"
	}
	mech := []string{
		fmt.Sprintf("Rolling back changes the pod template, so the controller treats it as a new update: step index 0, and %s a new AnalysisRun from %s.", starts(b), templateNames(b.Analysis)),
		fmt.Sprintf("Its %s (%s %s) has nothing that tells canary from stable: %s.", metricName, first.query.Provider, first.query.What, blindReasons(first, ro.Spec.Strategy.Canary.CanaryService)),
		fmt.Sprintf("At %s the broken version is still the stable and serves %s of traffic%s so the run measures the incident the rollback is meant to end.", stepText, share, orComma(basic)),
		fmt.Sprintf("With %s; the Rollout aborts and sends all traffic back to the broken stable.", first.failsAfter.Text),
	}
	if b.Background {
		if b.StartingStep {
			mech = append(mech, fmt.Sprintf("startingStep %d only delays the run to step %d of the ramp, where %s of traffic is still the broken version's: it protects the ramp, not the rollback.", b.Step, b.Step, share))
		} else {
			mech = append(mech, "canary.analysis.startingStep would only delay the run to a later step of the ramp: it protects the ramp, not the rollback.")
		}
	}
	skip := rollout.RollbackWindowSkipsAnalysis
	switch {
	case window > 0 && skips:
		mech = append(mech, fmt.Sprintf("From %s, rollbackWindow.revisions %d skips and cancels analysis on a rollback to one of the %d previous revisions (%s; %s in the %s source): a rollback further back, or to a ReplicaSet already deleted (BF403), still aborts, and the window opens BF401.",
			skip.Since, window, window, skip.Ref, l.AnalysisSkip, l.Release))
	case window > 0:
		mech = append(mech, fmt.Sprintf("%s ignores rollbackWindow here: skipping analysis on a rollback within the window arrived in %s (%s).",
			ctl.version, skip.Since, skip.Ref))
	case skips:
		mech = append(mech, fmt.Sprintf("From %s a rollbackWindow would skip this analysis on a recent rollback (%s), but it sends the last setWeight's traffic to the step-0 canary (BF401): fix the query instead.",
			skip.Since, skip.Ref))
	default:
		mech = append(mech, fmt.Sprintf("%s has no way to skip analysis on a rollback: rollbackWindow does so only from %s (%s).", ctl.version, skip.Since, skip.Ref))
	}

	var names []string
	for _, mc := range blindOnes {
		names = append(names, mc.KindName+": "+mc.Metric.Metric.Name)
	}
	var windowEv *int32
	if window > 0 {
		windowEv = &window
	}
	as := append(slices.Clone(res.Notes), missingAssumptions(res.Missing)...)
	as = append(as, first.wordArgs...)
	return rules.Report{
		Path:     b.Path,
		Severity: sev,
		Message: fmt.Sprintf("%s: %s cannot tell the canary from the stable, so during a rollback it judges the broken version, which still serves %s of traffic, and fails the run %s",
			lead, metricName, share, first.failsAfter.When()),
		Mechanism: mech,
		Evidence: BF402Evidence{
			Template:                first.KindName,
			Metric:                  first.Metric.Metric.Name,
			Provider:                first.query.Provider,
			FailureLimit:            first.failsAfter.Limit,
			IntervalSeconds:         first.failsAfter.Interval.Seconds(),
			InitialDelaySeconds:     first.failsAfter.Delay.Seconds(),
			TimeToAbortSeconds:      first.failsAfter.Seconds,
			StartStep:               b.Step,
			BrokenTrafficShare:      share,
			BlindMetrics:            names,
			RollbackWindowRevisions: windowEv,
			RolloutsVersion:         ctl.version,
			AppliesTo:               "every release; a rollback within rollbackWindow skips the analysis from " + rollout.RollbackWindowSkipsAnalysis.Since,
		},
		Assumptions: ctl.assumptions(as...),
		Fix:         bf402Fix(b, first, ro.Spec.Strategy.Canary.CanaryService),
	}
}

// blindReasons lists what the query lacks, and what its args stand for.
func blindReasons(mc metricCheck, canaryService string) string {
	parts := []string{"no argument fed by valueFrom.podTemplateHashValue: Latest", "no revision label matcher (rollouts-pod-template-hash, version, revision)"}
	if canaryService != "" {
		parts = append(parts, "not the canary Service "+canaryService)
	} else {
		parts = append(parts, "and the Rollout names no canary Service")
	}
	s := strings.Join(parts, ", ")
	if len(mc.services) > 0 {
		s += "; " + strings.Join(mc.services, "; ")
	}
	var args []string
	for i, a := range mc.used {
		if i == 3 {
			args = append(args, "...")
			break
		}
		args = append(args, fmt.Sprintf("args.%s is %s", a.Name, quoteKnown(a)))
	}
	if len(args) > 0 {
		s += "; " + strings.Join(args, ", ")
	}
	return s
}

func quoteKnown(a analysis.Arg) string {
	if a.Known {
		return fmt.Sprintf("%q", a.Text)
	}
	return a.Text
}

func orComma(s string) string {
	if s == "" {
		return ","
	}
	return s
}

func missingAssumptions(missing []string) []string {
	var out []string
	for _, m := range missing {
		out = append(out, m+" is not in the input: its metrics were not checked")
	}
	return out
}

func bf402Fix(b analysis.Block, mc metricCheck, canaryService string) *finding.Fix {
	addArg := fmt.Sprintf("Give the run the canary's hash: add the arg {name: canary-hash, valueFrom: {podTemplateHashValue: Latest}} to %s.args and declare arg canary-hash in %s. ", b.Path, mc.KindName)
	var use string
	switch mc.query.Provider {
	case "web", "job":
		use = fmt.Sprintf("Then make the %s of metric %s reach the canary only: pass {{args.canary-hash}} to a check that filters by it", mc.query.What, mc.Metric.Metric.Name)
		if canaryService != "" {
			use += ", or call the canary Service " + canaryService
		}
	default:
		use = fmt.Sprintf("Then select the canary's series in the %s of metric %s by a label the pods' metrics carry, e.g. %s", mc.query.What, mc.Metric.Metric.Name, revisionFilterExample)
		if strings.Contains(mc.resolved, "istio_") {
			use += " (Istio's standard metrics carry no pod-template hash: filter on a label they carry that differs between versions, such as destination_version from a version label set to the image tag)"
		}
		if canaryService != "" {
			use += ", or query the canary Service " + canaryService
		}
	}
	return &finding.Fix{Type: finding.ManualChange, Description: addArg + use + "."}
}

// bf402Unchecked is the info finding for an analysis backfire could not
// read in full: a template not in the input, or a query from a Secret.
func bf402Unchecked(b analysis.Block, res analysis.Resolution, unknowns []metricCheck, share string, ctl controller) rules.Report {
	var what []string
	what = append(what, res.Missing...)
	for _, u := range unknowns {
		what = append(what, fmt.Sprintf("metric %s of %s: %s", u.Metric.Metric.Name, u.KindName, u.why))
	}
	msg := "template not in input: " + strings.Join(res.Missing, "; ")
	if len(res.Missing) == 0 {
		msg = "query not in input: " + what[0]
	}
	return rules.Report{
		Path:     b.Path,
		Severity: finding.Info,
		Message:  msg + "; backfire cannot check that its metrics tell the canary from the stable",
		Mechanism: []string{
			fmt.Sprintf("A rollback is a new update: %s a new AnalysisRun while the broken version still serves %s of traffic.", starts(b), share),
			"A metric that cannot tell canary from stable then judges the broken version and aborts the rollback.",
			"Not checked: " + strings.Join(what, "; ") + ".",
		},
		Evidence: BF402UncheckedEvidence{
			Unchecked:       what,
			StartStep:       b.Step,
			RolloutsVersion: ctl.version,
		},
		Assumptions: ctl.assumptions(res.Notes...),
		Fix: &finding.Fix{
			Type:        finding.ManualChange,
			Description: "Scan the templates together with the Rollout, or check by hand that every metric selects the canary: an arg fed by valueFrom.podTemplateHashValue: Latest used in the query, a revision label, or the canary Service.",
		},
	}
}
