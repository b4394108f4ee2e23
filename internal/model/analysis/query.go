package analysis

import (
	"slices"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	corev1 "k8s.io/api/core/v1"
)

// Query is what a metric's provider sends, and what it is called.
type Query struct {
	Provider string // "prometheus"
	What     string // "query", "URL", "command"
	// Texts are the parts the args are substituted into.
	Texts []string
	// Judged says how the provider turns a result into a measurement
	// phase: by the metric's conditions, or by its own rule.
	Judged Judge
}

// Judge is how a provider decides a measurement's phase.
type Judge int

const (
	// ByConditions: evaluate.EvaluateResult (utils/evaluate/evaluate.go)
	// applies successCondition and failureCondition.
	ByConditions Judge = iota
	// ByJob: the Job's own success or failure (JobProvider.Resume,
	// metricproviders/job/job.go).
	ByJob
	// ByScore: Kayenta's canary score against threshold.pass and
	// threshold.marginal (evaluateResult, metricproviders/kayenta).
	ByScore
	// ByPlugin: a metric plugin decides; most call EvaluateResult, which
	// backfire assumes.
	ByPlugin
)

// QueryOf collects what each provider sends to the metrics backend (or,
// for web and job, to the service): the fields the controller substitutes
// args into.
func QueryOf(m *v1alpha1.Metric) Query {
	p := m.Provider
	switch {
	case p.Prometheus != nil:
		return Query{Provider: "prometheus", What: "query", Texts: []string{p.Prometheus.Query}}
	case p.Datadog != nil:
		// v1 sends query; v2 sends query, or queries combined by formula.
		texts := nonEmpty(p.Datadog.Query)
		for _, k := range sortedKeys(p.Datadog.Queries) {
			texts = append(texts, p.Datadog.Queries[k])
		}
		texts = append(texts, nonEmpty(p.Datadog.Formula)...)
		return Query{Provider: "datadog", What: "query", Texts: texts}
	case p.NewRelic != nil:
		return Query{Provider: "newRelic", What: "query", Texts: []string{p.NewRelic.Query}}
	case p.Wavefront != nil:
		return Query{Provider: "wavefront", What: "query", Texts: []string{p.Wavefront.Query}}
	case p.Graphite != nil:
		return Query{Provider: "graphite", What: "query", Texts: []string{p.Graphite.Query}}
	case p.Influxdb != nil:
		return Query{Provider: "influxdb", What: "query", Texts: []string{p.Influxdb.Query}}
	case p.SkyWalking != nil:
		return Query{Provider: "skywalking", What: "query", Texts: []string{p.SkyWalking.Query}}
	case p.CloudWatch != nil:
		var texts []string
		for _, q := range p.CloudWatch.MetricDataQueries {
			if q.Expression != nil {
				texts = append(texts, *q.Expression)
			}
			if q.MetricStat != nil {
				texts = append(texts, q.MetricStat.Metric.MetricName)
				for _, d := range q.MetricStat.Metric.Dimensions {
					texts = append(texts, d.Name+"="+d.Value)
				}
			}
		}
		return Query{Provider: "cloudWatch", What: "metric data queries", Texts: texts}
	case p.Kayenta != nil:
		var texts []string
		for _, s := range p.Kayenta.Scopes {
			texts = append(texts, s.ControlScope.Scope, s.ExperimentScope.Scope)
		}
		return Query{Provider: "kayenta", What: "scopes", Texts: texts, Judged: ByScore}
	case p.Web != nil:
		texts := slices.Concat([]string{p.Web.URL}, nonEmpty(p.Web.Body), nonEmpty(string(p.Web.JSONBody)), nonEmpty(p.Web.JSONPath))
		for _, h := range p.Web.Headers {
			texts = append(texts, h.Value)
		}
		return Query{Provider: "web", What: "URL", Texts: texts}
	case p.Job != nil:
		var texts []string
		spec := p.Job.Spec.Template.Spec
		for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
			texts = append(texts, containerText(c)...)
		}
		return Query{Provider: "job", What: "command", Texts: texts, Judged: ByJob}
	case len(p.Plugin) > 0:
		var texts []string
		for _, k := range sortedKeys(p.Plugin) {
			texts = append(texts, string(p.Plugin[k]))
		}
		return Query{Provider: "plugin", What: "configuration", Texts: texts, Judged: ByPlugin}
	}
	return Query{}
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

func containerText(c corev1.Container) []string {
	texts := slices.Concat(c.Command, c.Args)
	for _, e := range c.Env {
		if e.Value != "" {
			texts = append(texts, e.Value)
		}
	}
	return texts
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// ComparesScopes reports whether a Kayenta metric compares two different
// scopes: Kayenta judges the experiment scope against the control scope,
// so with different scopes it measures one version against another, not
// the traffic of both at once.
func ComparesScopes(m *v1alpha1.Metric, args map[string]Arg) bool {
	if m.Provider.Kayenta == nil {
		return false
	}
	for _, s := range m.Provider.Kayenta.Scopes {
		control, _ := Substitute(s.ControlScope.Scope, args)
		experiment, _ := Substitute(s.ExperimentScope.Scope, args)
		if control != experiment {
			return true
		}
	}
	return false
}
