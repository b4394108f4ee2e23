package rollouts

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/model/rollout"
	"backfire.dev/backfire/internal/object"
)

// analysisBlock is one place a canary runs analysis from: the background
// analysis or an analysis step.
type analysisBlock struct {
	path     *field.Path
	analysis *v1alpha1.RolloutAnalysis
	// step is the step index the run starts at: startingStep (0 by
	// default) for background analysis, the step's own index otherwise.
	step       int32
	background bool
	// startingStep is set when the background analysis names one.
	startingStep bool
}

func analysisBlocks(c *v1alpha1.CanaryStrategy) []analysisBlock {
	var out []analysisBlock
	canary := field.NewPath("spec", "strategy", "canary")
	if c.Analysis != nil {
		b := analysisBlock{path: canary.Child("analysis"), analysis: &c.Analysis.RolloutAnalysis, background: true}
		if c.Analysis.StartingStep != nil {
			b.step, b.startingStep = *c.Analysis.StartingStep, true
		}
		out = append(out, b)
	}
	for i, s := range c.Steps {
		if s.Analysis != nil {
			out = append(out, analysisBlock{path: canary.Child("steps").Index(i).Child("analysis"), analysis: s.Analysis, step: int32(i)})
		}
	}
	return out
}

// templateMetric is one metric of a template a Rollout's analysis uses.
type templateMetric struct {
	template *object.Object
	// kindName is "AnalysisTemplate error-rate".
	kindName string
	metric   *v1alpha1.Metric
	args     []v1alpha1.Argument // the template's own args and defaults
	dryRun   bool
}

// resolution is what an analysis block's template references resolve to.
type resolution struct {
	metrics []templateMetric
	// missing names each template that is not in the input, with why when
	// one of that name is there but cannot be used.
	missing []string
	// notes say what was assumed to resolve a reference.
	notes []string
}

// resolveAnalysis finds the templates of an analysis block, following
// templates that include other templates, and marks dry-run metrics.
func resolveAnalysis(ix *index.Index, ro *object.Object, a *v1alpha1.RolloutAnalysis) resolution {
	var res resolution
	seen := map[*object.Object]bool{}
	// The AnalysisRun flattens included templates: every dryRun rule
	// applies to every metric.
	dryRun := slices.Clone(a.DryRun)
	var visit func(refs []v1alpha1.AnalysisTemplateRef, namespace string)
	visit = func(refs []v1alpha1.AnalysisTemplateRef, namespace string) {
		for _, ref := range refs {
			t, why, note := lookupTemplate(ix, ref, namespace)
			if note != "" {
				res.notes = append(res.notes, note)
			}
			if t == nil {
				res.missing = append(res.missing, why)
				continue
			}
			if seen[t] {
				continue
			}
			seen[t] = true
			spec := templateSpec(t)
			if spec == nil {
				continue
			}
			dryRun = append(dryRun, spec.DryRun...)
			for i := range spec.Metrics {
				res.metrics = append(res.metrics, templateMetric{
					template: t, kindName: t.Kind + " " + t.Name, metric: &spec.Metrics[i], args: spec.Args,
				})
			}
			visit(spec.Templates, t.Namespace)
		}
	}
	visit(a.Templates, ro.Namespace)
	for i := range res.metrics {
		res.metrics[i].dryRun = matchesDryRun(dryRun, res.metrics[i].metric.Name)
	}
	return res
}

func templateSpec(t *object.Object) *v1alpha1.AnalysisTemplateSpec {
	switch v := t.Typed.(type) {
	case *v1alpha1.AnalysisTemplate:
		return &v.Spec
	case *v1alpha1.ClusterAnalysisTemplate:
		return &v.Spec
	}
	return nil
}

// lookupTemplate resolves a template reference. An AnalysisTemplate is
// namespaced: it must be in the Rollout's namespace. When one of the two
// leaves the namespace to `kubectl apply -n`, they are assumed to share it.
func lookupTemplate(ix *index.Index, ref v1alpha1.AnalysisTemplateRef, namespace string) (t *object.Object, missing, note string) {
	if ref.ClusterScope != nil && *ref.ClusterScope {
		if t := ix.ClusterScoped("ClusterAnalysisTemplate", ref.TemplateName); t != nil {
			return t, "", ""
		}
		return nil, "ClusterAnalysisTemplate " + ref.TemplateName, ""
	}
	if t := ix.Get("AnalysisTemplate", namespace, ref.TemplateName); t != nil {
		return t, "", ""
	}
	var elsewhere []string
	for _, o := range ix.Objects() {
		if o.Kind != "AnalysisTemplate" || o.Name != ref.TemplateName {
			continue
		}
		if namespace == "" || o.Namespace == "" {
			return o, "", fmt.Sprintf("AnalysisTemplate %s and the Rollout are applied to the same namespace (one of them names none)", ref.TemplateName)
		}
		elsewhere = append(elsewhere, o.Namespace)
	}
	if len(elsewhere) > 0 {
		return nil, fmt.Sprintf("AnalysisTemplate %s (only in namespace %s, which a Rollout in namespace %s cannot use)", ref.TemplateName, strings.Join(elsewhere, ", "), namespace), ""
	}
	return nil, "AnalysisTemplate " + ref.TemplateName, ""
}

// matchesDryRun applies the controller's rule: each dryRun metricName is a
// regular expression matched anywhere in the metric's name.
func matchesDryRun(rules []v1alpha1.DryRun, name string) bool {
	for _, r := range rules {
		if ok, _ := regexp.MatchString(r.MetricName, name); ok {
			return true
		}
	}
	return false
}

// argValue is what an {{args.NAME}} placeholder becomes in an AnalysisRun.
type argValue struct {
	name string
	// text is the value, or a description of it when it is not known.
	text string
	// latest is true when the Rollout feeds it the canary's pod-template
	// hash (valueFrom.podTemplateHashValue: Latest).
	latest bool
	// secret names the Secret the value comes from ("" if none).
	secret string
	// known is true when text is the value itself.
	known bool
	// missing is true when neither the Rollout nor the template gives a
	// value: the controller cannot create the run.
	missing bool
}

// argValues merges the template's args with the Rollout's (the Rollout's
// win, as in the AnalysisRun).
func argValues(ro *object.Object, rolloutArgs []v1alpha1.AnalysisRunArgument, templateArgs []v1alpha1.Argument) map[string]argValue {
	out := map[string]argValue{}
	for _, a := range templateArgs {
		v := argValue{name: a.Name}
		switch {
		case a.Value != nil:
			v.text, v.known = *a.Value, true
		case a.ValueFrom != nil && a.ValueFrom.SecretKeyRef != nil:
			v.secret = a.ValueFrom.SecretKeyRef.Name + " (key " + a.ValueFrom.SecretKeyRef.Key + ")"
			v.text = "the value of Secret " + v.secret
		case a.ValueFrom != nil && a.ValueFrom.FieldRef != nil:
			v.text, v.known = fieldRefValue(ro, a.ValueFrom.FieldRef.FieldPath)
		default:
			v.text, v.missing = "not supplied", true
		}
		out[a.Name] = v
	}
	for _, a := range rolloutArgs {
		v := argValue{name: a.Name, text: a.Value, known: true}
		if vf := a.ValueFrom; vf != nil {
			switch {
			case vf.PodTemplateHashValue != nil:
				// A placeholder with no revision word: Stable must not count.
				v.text = "(the " + string(*vf.PodTemplateHashValue) + " ReplicaSet's hash)"
				v.latest = *vf.PodTemplateHashValue == v1alpha1.Latest
			case vf.FieldRef != nil:
				v.text, v.known = fieldRefValue(ro, vf.FieldRef.FieldPath)
			}
		}
		out[a.Name] = v
	}
	return out
}

// fieldRefValue resolves the Rollout fields args commonly take; other
// paths stay as written, which still shows what they select.
func fieldRefValue(ro *object.Object, path string) (string, bool) {
	switch path {
	case "metadata.name":
		return ro.Name, true
	case "metadata.namespace":
		if ro.Namespace == "" {
			return "the Rollout's namespace", false
		}
		return ro.Namespace, true
	}
	return "the Rollout's " + path, false
}

var argRef = regexp.MustCompile(`\{\{\s*args\.([^\s}]+)\s*\}\}`)

// substitute replaces {{args.NAME}} with each value, and returns the names
// used.
func substitute(text string, args map[string]argValue) (string, []argValue) {
	var used []argValue
	out := argRef.ReplaceAllStringFunc(text, func(m string) string {
		name := argRef.FindStringSubmatch(m)[1]
		v, ok := args[name]
		if !ok {
			v = argValue{name: name, text: "not supplied", missing: true}
		}
		if !slices.ContainsFunc(used, func(u argValue) bool { return u.name == name }) {
			used = append(used, v)
		}
		return v.text
	})
	return out, used
}

// revisionToken finds a label or word that names a revision: the pod
// template hash label, version, revision, canary. It must start a word, so
// that "conversion" is not "version".
var revisionToken = regexp.MustCompile(`(?i)(?:^|[^a-z0-9])(rollouts[-_]pod[-_]template[-_]hash|pod[-_]template[-_]hash|version|revision|canary)`)

// query is the text a metric's provider sends, and what it is called.
type query struct {
	provider string // "prometheus"
	what     string // "query", "URL", "command"
	texts    []string
}

// queryOf collects what each provider sends to the metrics backend (or,
// for web and job, to the service).
func queryOf(m *v1alpha1.Metric) query {
	p := m.Provider
	switch {
	case p.Prometheus != nil:
		return query{"prometheus", "query", []string{p.Prometheus.Query}}
	case p.Datadog != nil:
		texts := []string{p.Datadog.Query}
		for _, k := range sortedKeys(p.Datadog.Queries) {
			texts = append(texts, p.Datadog.Queries[k])
		}
		return query{"datadog", "query", texts}
	case p.NewRelic != nil:
		return query{"newRelic", "query", []string{p.NewRelic.Query}}
	case p.Wavefront != nil:
		return query{"wavefront", "query", []string{p.Wavefront.Query}}
	case p.Graphite != nil:
		return query{"graphite", "query", []string{p.Graphite.Query}}
	case p.Influxdb != nil:
		return query{"influxdb", "query", []string{p.Influxdb.Query}}
	case p.SkyWalking != nil:
		return query{"skywalking", "query", []string{p.SkyWalking.Query}}
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
		return query{"cloudWatch", "metric data queries", texts}
	case p.Kayenta != nil:
		var texts []string
		for _, s := range p.Kayenta.Scopes {
			texts = append(texts, s.ControlScope.Scope, s.ExperimentScope.Scope)
		}
		return query{"kayenta", "scopes", texts}
	case p.Web != nil:
		texts := []string{p.Web.URL, p.Web.Body, string(p.Web.JSONBody), p.Web.JSONPath}
		for _, h := range p.Web.Headers {
			texts = append(texts, h.Value)
		}
		return query{"web", "URL", texts}
	case p.Job != nil:
		var texts []string
		spec := p.Job.Spec.Template.Spec
		for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
			texts = append(texts, containerText(c)...)
		}
		return query{"job", "command", texts}
	case len(p.Plugin) > 0:
		var texts []string
		for _, k := range sortedKeys(p.Plugin) {
			texts = append(texts, string(p.Plugin[k]))
		}
		return query{"plugin", "configuration", texts}
	}
	return query{}
}

func containerText(c corev1.Container) []string {
	texts := slices.Concat(c.Command, c.Args)
	for _, e := range c.Env {
		texts = append(texts, e.Value)
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

// verdict is what a metric's query says about the revisions.
type verdict int

const (
	// blind: nothing in the query separates canary from stable.
	blind verdict = iota
	// separated: the query selects the canary (or compares revisions).
	separated
	// unknown: the query depends on a value not in the input (a Secret).
	unknown
	// inert: the metric cannot fail the run, or measures no service.
	inert
)

// metricCheck is the verdict on one metric and why.
type metricCheck struct {
	templateMetric
	verdict verdict
	why     string
	query   query
	// resolved is the query with the args substituted, and used the args.
	resolved string
	used     []argValue
	// failsAfter is when the run fails if every measurement fails.
	failsAfter failure
}

type serviceNames struct {
	canary string
	// reach lists names whose presence shows a job reaches the service
	// (the Rollout's, its Services'); computed only for job metrics.
	reach func() []string
}

// checkMetric decides whether a metric can tell canary from stable.
func checkMetric(tm templateMetric, args map[string]argValue, svc serviceNames) metricCheck {
	mc := metricCheck{templateMetric: tm, query: queryOf(tm.metric), failsAfter: failureOf(tm.metric)}
	if tm.dryRun {
		mc.verdict, mc.why = inert, "dry-run metric: its result does not fail the run"
		return mc
	}
	if !mc.failsAfter.possible {
		mc.verdict, mc.why = inert, mc.failsAfter.text
		return mc
	}
	if mc.query.provider == "" {
		mc.verdict, mc.why = inert, "no provider backfire reads"
		return mc
	}
	raw := strings.Join(mc.query.texts, "\n")
	mc.resolved, mc.used = substitute(raw, args)
	for _, a := range mc.used {
		if a.latest {
			mc.verdict, mc.why = separated, fmt.Sprintf("args.%s is valueFrom.podTemplateHashValue: Latest", a.name)
			return mc
		}
	}
	if m := revisionToken.FindStringSubmatch(mc.resolved); m != nil {
		mc.verdict, mc.why = separated, fmt.Sprintf("its %s names %q", mc.query.what, m[1])
		return mc
	}
	if svc.canary != "" && strings.Contains(mc.resolved, svc.canary) {
		mc.verdict, mc.why = separated, fmt.Sprintf("its %s names the canary Service %s", mc.query.what, svc.canary)
		return mc
	}
	for _, a := range mc.used {
		switch {
		case a.secret != "":
			mc.verdict, mc.why = unknown, fmt.Sprintf("its %s takes args.%s from Secret %s", mc.query.what, a.name, a.secret)
			return mc
		case a.missing:
			mc.verdict, mc.why = unknown, fmt.Sprintf("its %s uses args.%s, which neither the Rollout nor the template gives a value", mc.query.what, a.name)
			return mc
		}
	}
	if mc.query.provider == "job" && !reaches(raw, svc.reach()) {
		mc.verdict, mc.why = inert, "its job names no URL, Service or argument: it measures neither version"
		return mc
	}
	mc.verdict = blind
	return mc
}

// reaches reports whether a job's command names anything it could measure
// the service through.
func reaches(text string, names []string) bool {
	if strings.Contains(text, "{{") || strings.Contains(text, "://") || strings.Contains(text, ".svc") {
		return true
	}
	for _, n := range names {
		if n != "" && strings.Contains(text, n) {
			return true
		}
	}
	return false
}

// failure is when a metric fails its AnalysisRun, if every measurement
// fails: after failureLimit+1 failed measurements, the first at
// initialDelay and the others one interval apart.
type failure struct {
	possible bool
	seconds  float64
	text     string // how the time comes about, or why it cannot fail
	limit    int
	interval time.Duration
	delay    time.Duration
}

// when says when the run fails, for a message.
func (f failure) when() string {
	if f.seconds == 0 {
		return "at its first measurement, as soon as it starts"
	}
	return seconds(f.seconds) + " after it starts"
}

func failureOf(m *v1alpha1.Metric) failure {
	f := failure{}
	if m.FailureLimit != nil {
		f.limit = m.FailureLimit.IntValue()
	}
	interval, _ := m.Interval.Duration()
	delay, _ := m.InitialDelay.Duration()
	f.interval, f.delay = interval, delay
	if f.limit < 0 {
		f.text = fmt.Sprintf("failureLimit %d: failed measurements never fail it", f.limit)
		return f
	}
	if c := m.EffectiveCount(); c != nil && c.IntValue() < f.limit+1 {
		f.text = fmt.Sprintf("count %d is below failureLimit %d + 1: it cannot fail", c.IntValue(), f.limit)
		return f
	}
	f.possible = true
	f.seconds = (delay + time.Duration(f.limit)*interval).Seconds()
	limit := "failureLimit " + fmt.Sprint(f.limit)
	if m.FailureLimit == nil {
		limit = "failureLimit unset (0)"
	}
	switch {
	case interval == 0 && delay > 0:
		f.text = fmt.Sprintf("%s, no interval and initialDelay %s, the metric is measured once, %s after the run starts, and a failed measurement fails the run", limit, m.InitialDelay, seconds(f.seconds))
	case interval == 0:
		f.text = fmt.Sprintf("%s and no interval, the metric is measured once and the first failed measurement fails the run", limit)
	case delay > 0:
		f.text = fmt.Sprintf("%s, interval %s and initialDelay %s, the %s failed measurement, %s + %d x %s = %s after the run starts, fails the run",
			limit, m.Interval, m.InitialDelay, ordinal(f.limit+1), seconds(delay.Seconds()), f.limit, seconds(interval.Seconds()), seconds(f.seconds))
	default:
		f.text = fmt.Sprintf("%s and interval %s, the %s failed measurement, %d x %s = %s after the run starts, fails the run",
			limit, m.Interval, ordinal(f.limit+1), f.limit, seconds(interval.Seconds()), seconds(f.seconds))
	}
	return f
}

func seconds(s float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.1f", s), "0"), ".") + " s"
}

func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprintf("%d%s", n, suffix)
}

// brokenShare is the traffic the broken version (the stable, during a
// rollback) still serves when a run that starts at step i measures.
func brokenShare(ro *v1alpha1.Rollout, step int32) (share string, weight int32, zero bool) {
	maxWeight := rollout.MaxTrafficWeight(ro)
	w := rollout.SetWeightAt(ro, step)
	return pct(maxWeight-min(w, maxWeight), maxWeight), w, w >= maxWeight
}
