package flagger

import (
	"fmt"
	"strings"

	flaggerv1 "github.com/fluxcd/flagger/pkg/apis/flagger/v1beta1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/model/analysis"
	model "backfire.dev/backfire/internal/model/flagger"
	"backfire.dev/backfire/internal/rules"
)

// BF411: a Canary metric whose query cannot tell the canary from the
// primary. A rollback in Flagger is a new revision analysed like any
// other, while the broken version is the primary: the blind metric judges
// the broken primary and rolls the rollback back.
var BF411 = rules.Register(&rules.Rule{
	ID:       "BF411",
	Slug:     "flagger-metric-blind-to-canary",
	Severity: finding.Error,
	Summary:  "A Flagger metric whose query cannot tell canary from primary judges the broken primary during a rollback and rolls the rollback back.",
	Kinds:    canaryKind,
	Reads:    []string{"MetricTemplate"},
	Evidence: []any{BF411Evidence{}, BF411UncheckedEvidence{}},
	Check:    &rules.Scan{Run: runBF411},
})

// The builtin checks, whose queries Flagger writes per provider with the
// target or the canary's names (pkg/metrics/observers/*.go).
var builtin = map[string]bool{"request-success-rate": true, "request-duration": true}

// blindMetric is a metric whose query selects both sides.
type blindMetric struct {
	index    int
	metric   flaggerv1.CanaryMetric
	template string // "MetricTemplate ns/name", or "inline query"
	provider string
	sight    model.Sight
}

func runBF411(p *rules.Pass) {
	cd := canaryOf(p)
	if cd == nil || cd.SkipAnalysis() {
		return
	}
	a := cd.GetAnalysis()
	var blind []blindMetric
	var missing []string
	for i, m := range a.Metrics {
		//lint:ignore SA1019 Flagger v1.44.0 still runs an inline query
		if m.TemplateRef == nil && (m.Query == "" || builtin[m.Name]) {
			continue
		}
		if !canFail(m) {
			continue
		}
		//lint:ignore SA1019 Flagger v1.44.0 still runs an inline query
		query, provider, kindName := m.Query, "prometheus", "the inline query"
		if m.TemplateRef != nil {
			ns := p.Object.Namespace
			if m.TemplateRef.Namespace != "" {
				ns = m.TemplateRef.Namespace
			}
			kindName = "MetricTemplate " + m.TemplateRef.Name
			mt := metricTemplate(p, ns, m.TemplateRef.Name)
			if mt == nil {
				missing = append(missing, fmt.Sprintf("MetricTemplate %s/%s (metric %s)", nsOrDefault(ns), m.TemplateRef.Name, m.Name))
				continue
			}
			query, provider = mt.Spec.Query, mt.Spec.Provider.Type
			if provider == "" {
				provider = "prometheus"
			}
		}
		mod := model.ModelOf(cd, m)
		rendered, err := model.Render(query, mod)
		if err != nil {
			continue // every check fails on the render error: not this mechanism
		}
		var s model.Sight
		if provider == "prometheus" {
			if !analysis.SightOf(analysis.Query{Provider: "prometheus"}, rendered).Sees {
				continue // a constant or a count of objects judges neither side
			}
			s = model.SightOfProm(rendered, model.NamesOf(mod))
		} else {
			s = model.SightOfText(rendered, model.NamesOf(mod))
		}
		if s.Side == model.Blind {
			blind = append(blind, blindMetric{index: i, metric: m, template: kindName, provider: provider, sight: s})
		}
	}
	switch {
	case len(blind) > 0:
		p.Report(bf411Blind(cd, blind))
	case len(missing) > 0:
		p.Report(bf411Unchecked(cd, missing))
	}
}

// metricTemplate finds a MetricTemplate: in the Canary's namespace, among
// the objects applied with it (index.Scope); in another namespace, which
// templateRef names for a template shared by many Canaries (Flagger looks
// it up there, scheduler_metrics.go:272-278), anywhere in the input.
func metricTemplate(p *rules.Pass, ns, name string) *flaggerv1.MetricTemplate {
	if nsOrDefault(ns) == nsOrDefault(p.Object.Namespace) {
		if o := p.Index.Get("MetricTemplate", ns, name); o != nil {
			mt, _ := o.Typed.(*flaggerv1.MetricTemplate)
			return mt
		}
		return nil
	}
	for _, o := range p.Index.NamedAnywhere("MetricTemplate", name) {
		if nsOrDefault(o.Namespace) == nsOrDefault(ns) {
			mt, _ := o.Typed.(*flaggerv1.MetricTemplate)
			return mt
		}
	}
	return nil
}

func nsOrDefault(ns string) string {
	if ns == "" {
		return "default"
	}
	return ns
}

// canFail says whether a metric's value can fail a check: with a
// thresholdRange, only past a bound it sets; without one, a value above
// threshold (0 when unset) fails (runMetricChecks,
// pkg/controller/scheduler_metrics.go:329-345).
func canFail(m flaggerv1.CanaryMetric) bool {
	if m.ThresholdRange != nil {
		return m.ThresholdRange.Min != nil || m.ThresholdRange.Max != nil
	}
	return true
}

func metricPath(cd *flaggerv1.Canary, b blindMetric) *field.Path {
	p := field.NewPath("spec", analysisField(cd), "metrics").Index(b.index)
	if b.metric.TemplateRef != nil {
		return p.Child("templateRef")
	}
	return p.Child("query")
}

func bf411Blind(cd *flaggerv1.Canary, blind []blindMetric) rules.Report {
	first := blind[0]
	r := model.RampOf(cd)
	toRollback := float64(r.Threshold+1) * r.Interval
	what := fmt.Sprintf("metric %s (%s)", first.metric.Name, first.template)
	var names []string
	for _, b := range blind {
		names = append(names, b.metric.Name)
	}
	share := r.PrimaryShare()
	mech := []string{
		fmt.Sprintf("Flagger has no undo: rolling back is deploying the last good version to Deployment %s, a new revision that Flagger analyses like any other, with the version rolled back to as the canary and the broken version still the primary (%s-primary).", cd.Spec.TargetRef.Name, cd.Spec.TargetRef.Name),
		fmt.Sprintf("The %s query of %s cannot tell the two apart: %s. Flagger runs the canary as %s (pods %s-<hash>-<id>) and the primary as %s-primary (pods %s-primary-<hash>-<id>).", first.provider, what, strings.Join(first.sight.Why, "; "), cd.Spec.TargetRef.Name, cd.Spec.TargetRef.Name, cd.Spec.TargetRef.Name, cd.Spec.TargetRef.Name),
		fmt.Sprintf("While the analysis judges the canary the broken primary serves %s: the query measures mostly the incident the rollback is meant to end.", share),
		fmt.Sprintf("threshold %d: after %d failed check%s, one per interval of %s, the next tick rolls back (scheduler.go:429-438): all traffic to the primary and the canary scaled to zero (rollback, scheduler.go:948-990), about (%d + 1) x %s = %s after the analysis starts.", r.Threshold, r.Threshold, plural(r.Threshold), analysis.Seconds(r.Interval), r.Threshold, analysis.Seconds(r.Interval), analysis.Seconds(toRollback)),
		"The same query lets a broken canary through: at weight w its errors are diluted by the primary's healthy (100 - w)%, so a canary that fails every request shows w% errors at weight w.",
	}
	return rules.Report{
		Path: metricPath(cd, first),
		Message: fmt.Sprintf("a rollback is rolled back: %s cannot tell the canary from the primary, so while the broken primary serves %s it fails %d check%s and Flagger sends all traffic back to the broken version, about %s after the analysis starts",
			what, shareShort(r), r.Threshold, plural(r.Threshold), analysis.Seconds(toRollback)),
		Mechanism: mech,
		Evidence: BF411Evidence{
			Template:              first.template,
			Metric:                first.metric.Name,
			Provider:              first.provider,
			Why:                   first.sight.Why,
			Threshold:             r.Threshold,
			IntervalSeconds:       r.Interval,
			TimeToRollbackSeconds: toRollback,
			Strategy:              r.Strategy,
			PrimaryShare:          share,
			BlindMetrics:          names,
		},
		Fix: &finding.Fix{
			Type: finding.ManualChange,
			Description: fmt.Sprintf("Select the canary's series in the query of %s: a matcher on its pods, pod=~\"{{ target }}-[0-9a-zA-Z]+(-[0-9a-zA-Z]+)\" (Flagger's own App Mesh query; it drops %s-primary-<hash>-<id>), on its workload (destination_workload=\"{{ target }}\" with Istio, deployment=\"{{ target }}\" with Linkerd), or on the canary Service (\"{{ service }}-canary\").",
				what, cd.Spec.TargetRef.Name),
		},
	}
}

func shareShort(r model.Ramp) string {
	switch {
	case !r.Shifts || r.Strategy == flaggerv1.DeploymentStrategyBlueGreen:
		return "100% of traffic"
	case r.Strategy == flaggerv1.DeploymentStrategyABTesting:
		return "every request outside the A/B match"
	}
	return fmt.Sprintf("%d%% of traffic", 100-r.FirstWeight)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func bf411Unchecked(cd *flaggerv1.Canary, missing []string) rules.Report {
	return rules.Report{
		Path:     field.NewPath("spec", analysisField(cd), "metrics"),
		Severity: finding.Info,
		Message:  "template not in input: " + strings.Join(missing, "; ") + "; backfire cannot check that its query tells the canary from the primary",
		Mechanism: []string{
			"A rollback in Flagger is a new revision analysed while the broken version is the primary.",
			"A metric whose query cannot tell canary from primary then judges the broken primary and rolls the rollback back.",
			"Not checked: " + strings.Join(missing, "; ") + ".",
		},
		Evidence: BF411UncheckedEvidence{Unchecked: missing},
		Fix: &finding.Fix{
			Type:        finding.ManualChange,
			Description: "Scan the MetricTemplates together with the Canary, or check by hand that every query selects the canary: {{ target }} in a matcher that drops the primary's TARGET-primary names, or the canary Service.",
		},
	}
}
