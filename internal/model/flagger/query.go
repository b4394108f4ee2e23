// Package flagger models what Flagger (fluxcd/flagger) does with a Canary:
// the query a metric sends, whether it can tell the canary's pods from the
// primary's, and the traffic each side carries on the way. Each fact is
// cited in Flagger's source at v1.44.0 beside the code that models it.
package flagger

import (
	"backfire.dev/backfire/internal/lazyregexp"
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"text/template"

	flaggerv1 "github.com/fluxcd/flagger/pkg/apis/flagger/v1beta1"
)

// ModelOf is the template model Flagger renders a metric's query with
// (toMetricModel, pkg/controller/scheduler_metrics.go:355-378): the
// service, ingress and route default to the target's name.
func ModelOf(cd *flaggerv1.Canary, m flaggerv1.CanaryMetric) flaggerv1.MetricTemplateModel {
	service, ingress, route := cd.Spec.TargetRef.Name, cd.Spec.TargetRef.Name, cd.Spec.TargetRef.Name
	if cd.Spec.Service.Name != "" {
		service = cd.Spec.Service.Name
	}
	if cd.Spec.IngressRef != nil {
		ingress = cd.Spec.IngressRef.Name
	}
	if cd.Spec.RouteRef != nil {
		route = cd.Spec.RouteRef.Name
	}
	interval := m.Interval
	if interval == "" {
		interval = cd.GetMetricInterval()
	}
	return flaggerv1.MetricTemplateModel{
		Name:      cd.Name,
		Namespace: cd.Namespace,
		Target:    cd.Spec.TargetRef.Name,
		Service:   service,
		Ingress:   ingress,
		Route:     route,
		Interval:  interval,
		Variables: m.TemplateVariables,
	}
}

// Render renders a query as Flagger does (RenderQuery,
// pkg/metrics/observers/render.go: text/template, missingkey=error, the
// model's functions {{ target }}, {{ namespace }}, ...).
func Render(query string, model flaggerv1.MetricTemplateModel) (string, error) {
	t, err := template.New("tmpl").Option("missingkey=error").Funcs(model.TemplateFunctions()).Parse(query)
	if err != nil {
		return "", fmt.Errorf("template parsing failed: %w", err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, nil); err != nil {
		return "", fmt.Errorf("template execution failed: %w", err)
	}
	return b.String(), nil
}

// Side is what a query selects.
type Side int

const (
	// Blind: nothing in the query selects the canary apart from the primary.
	Blind Side = iota
	// Canary: a matcher selects the canary's series and not the primary's.
	Canary
	// Unknown: a matcher names the workload in a way backfire cannot
	// resolve to either side (a pattern that matches neither sample name).
	Unknown
)

// Sight is the verdict on one rendered query.
type Sight struct {
	Side Side
	// Why lists what the query selects instead, for a blind one: each
	// matcher that names the workload but selects the primary too, or that
	// the query names no workload at all.
	Why []string
	// By is the matcher that selects the canary, for a Canary verdict.
	By string
}

// Names are the names Flagger gives the two sides of one Canary: the
// canary runs as the target Deployment (its pods TARGET-<hash>-<id>) behind
// SERVICE-canary, the primary as TARGET-primary behind SERVICE-primary
// (GetServiceNames, pkg/apis/flagger/v1beta1/canary.go; the primary
// Deployment, pkg/canary/deployment_controller.go), and the apex Service
// and the ingress carry both sides' traffic.
type Names struct {
	Target, Service, Ingress string
}

// NamesOf returns the names for the model the query is rendered with.
func NamesOf(m flaggerv1.MetricTemplateModel) Names {
	return Names{Target: m.Target, Service: m.Service, Ingress: m.Ingress}
}

// describe says what a name on the primary's side is.
func (n Names) describe(label, name string) string {
	ingress := strings.Contains(strings.ToLower(label), "ingress")
	switch {
	case ingress && name == n.Ingress:
		return "the Ingress " + name + ", which carries both sides' requests (ingress-nginx tells the canary's apart only by its canary label)"
	case !ingress && name == n.Service:
		return "the apex Service " + name + ", which carries both sides' traffic"
	}
	switch name {
	case n.Target + "-primary":
		return "the primary, " + name
	case n.Target + "-primary" + podSuffix:
		return "the primary's pods, " + n.Target + "-primary-<hash>-<id>"
	case n.Service + "-primary":
		return "the primary's Service, " + name
	}
	return name
}

// podSuffix stands for a ReplicaSet's hash and a pod's id: a Deployment's
// pod is DEPLOYMENT-<pod-template-hash>-<5 random characters>.
const podSuffix = "-5d8f7c9b4-x2x9z"

// samples are the names a matcher is tried against, by the label's kind:
// what the canary side is called and what selects the primary's traffic
// too. Labels are told apart by name, since a Service and the target
// often share one (the service defaults to the target's name).
func (n Names) samples(label string) (canary, other []string) {
	l := strings.ToLower(label)
	switch {
	case strings.Contains(l, "ingress"):
		return []string{n.Ingress + "-canary"}, []string{n.Ingress, n.Ingress + "-primary"}
	case strings.Contains(l, "service") || l == "job":
		return []string{n.Service + "-canary"}, []string{n.Service, n.Service + "-primary"}
	}
	canary = []string{n.Target, n.Target + podSuffix, n.Target + "-canary", n.Service + "-canary"}
	other = []string{n.Target + "-primary", n.Target + "-primary" + podSuffix, n.Service + "-primary"}
	return canary, other
}

var promMatcher = lazyregexp.New(`([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|` + "`([^`]*)`)")

// matcher is one label matcher of a PromQL selector.
type matcher struct {
	label, op, value string
}

func (m matcher) String() string { return fmt.Sprintf("%s%s%q", m.label, m.op, m.value) }

func promMatchers(q string) []matcher {
	var out []matcher
	for _, s := range promMatcher().FindAllStringSubmatch(q, -1) {
		v := s[3] + s[4] + s[5]
		v = strings.NewReplacer(`\\`, `\`, `\"`, `"`, `\'`, `'`).Replace(v)
		out = append(out, matcher{label: s[1], op: s[2], value: v})
	}
	return out
}

// selects says whether the matcher keeps a series whose label is name.
// Prometheus anchors a regular expression at both ends (RE2).
func (m matcher) selects(name string) (bool, error) {
	switch m.op {
	case "=":
		return name == m.value, nil
	case "!=":
		return name != m.value, nil
	}
	re, err := regexp.Compile("^(?:" + m.value + ")$")
	if err != nil {
		return false, err
	}
	if m.op == "=~" {
		return re.MatchString(name), nil
	}
	return !re.MatchString(name), nil
}

// SightOfProm judges a rendered PromQL query: it selects the canary when
// one of its matchers keeps a canary-side name and drops every name that
// carries the primary's traffic, or is ingress-nginx's canary label set
// (canary!="", which Flagger's own NGINX query uses:
// pkg/metrics/observers/nginx.go).
func SightOfProm(q string, n Names) Sight {
	var why []string
	unknown := false
	for _, m := range promMatchers(q) {
		if m.label == "canary" && (m.op == "!=" && m.value == "" || m.op == "=~" && (m.value == ".+" || m.value == ".*.+")) {
			return Sight{Side: Canary, By: m.String()}
		}
		canary, other := n.samples(m.label)
		mentions := mentionsAny(m.value, n)
		if m.op == "!=" || m.op == "!~" {
			if !mentions {
				continue
			}
		}
		keepsCanary, keepsOther := false, false
		var bad error
		for _, s := range canary {
			ok, err := m.selects(s)
			bad = err
			keepsCanary = keepsCanary || ok
		}
		var otherKept string
		for _, s := range other {
			ok, err := m.selects(s)
			bad = err
			if ok && otherKept == "" {
				otherKept = s
			}
			keepsOther = keepsOther || ok
		}
		if bad != nil {
			unknown = unknown || mentions
			continue
		}
		switch {
		case keepsCanary && !keepsOther:
			return Sight{Side: Canary, By: m.String()}
		case keepsOther && mentions:
			why = append(why, fmt.Sprintf("%s also selects %s", m, n.describe(m.label, otherKept)))
		case mentions && !keepsCanary:
			unknown = true
		}
	}
	if unknown {
		return Sight{Side: Unknown}
	}
	slices.Sort(why)
	why = slices.Compact(why)
	if len(why) == 0 {
		why = []string{fmt.Sprintf("no matcher names the canary (target %s, pods %s-<hash>-<id>, Service %s-canary)", n.Target, n.Target, n.Service)}
	}
	return Sight{Side: Blind, Why: why}
}

// keyed is a key and the value it is compared with in a query of
// another provider: tag:value (Datadog), key = 'value' (New Relic, SQL).
var keyed = lazyregexp.New(`([A-Za-z_][A-Za-z0-9_.]*)\s*(?:==|=|:)\s*['"]?([A-Za-z0-9_.*%-]+)`)

// SightOfText judges a query of another provider (Datadog, New Relic,
// CloudWatch, ...) by the keys it compares with the Canary's names, as
// SightOfProm does with label matchers; a wildcard (* or %) takes what
// it matches. A name written any other way (a Graphite path segment, an
// application name the app reports itself) could be either side: Unknown.
func SightOfText(q string, n Names) Sight {
	var why []string
	covered := 0
	for _, s := range keyed().FindAllStringSubmatch(q, -1) {
		key, value := s[1], s[2]
		if !mentionsAny(value, n) {
			continue
		}
		for _, name := range names(n) {
			covered += strings.Count(value, name)
		}
		m := matcher{label: key, op: "=", value: value}
		if strings.ContainsAny(value, "*%") {
			re := regexp.QuoteMeta(value)
			re = strings.NewReplacer(`\*`, ".*", "%", ".*").Replace(re)
			m = matcher{label: key, op: "=~", value: re}
		}
		canary, other := n.samples(key)
		keepsCanary, otherKept := false, ""
		for _, c := range canary {
			ok, _ := m.selects(c)
			keepsCanary = keepsCanary || ok
		}
		for _, o := range other {
			if ok, _ := m.selects(o); ok && otherKept == "" {
				otherKept = o
			}
		}
		switch {
		case keepsCanary && otherKept == "":
			return Sight{Side: Canary, By: key + ":" + value}
		case otherKept != "":
			why = append(why, fmt.Sprintf("%s %s also selects %s", key, value, n.describe(key, otherKept)))
		default:
			return Sight{Side: Unknown}
		}
	}
	mentions := 0
	for _, name := range names(n) {
		mentions += strings.Count(q, name)
	}
	if mentions > covered {
		return Sight{Side: Unknown}
	}
	if len(why) == 0 {
		why = []string{fmt.Sprintf("it names neither the target %s nor the canary Service %s-canary", n.Target, n.Service)}
	}
	return Sight{Side: Blind, Why: why}
}

func names(n Names) []string {
	var out []string
	for _, s := range []string{n.Target, n.Service, n.Ingress} {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func mentionsAny(v string, n Names) bool {
	for _, s := range names(n) {
		if strings.Contains(v, s) {
			return true
		}
	}
	return false
}
