package rollouts

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"backfire.dev/backfire/internal/model/analysis"
	"backfire.dev/backfire/internal/model/rollout"
)

// revisionLabel finds a label (or tag) that names a revision, used as a
// matcher: rollouts_pod_template_hash="...", version=~"...", Datadog's
// version:..., destination_version!="...". A word is not enough: "canary"
// or "v2" inside a Service's or an application's name selects nothing by
// revision (the Service a query names is resolved instead: resolveService).
// It must start a word, so that "conversion" is not "version".
var revisionLabel = regexp.MustCompile(`(?i)(?:^|[^a-z0-9_-])((?:[a-z]+[_-])*(?:rollouts[-_]pod[-_]template[-_]hash|pod[-_]template[-_]hash|version|revision)|canary)\s*(=~|!~|!=|=|:)`)

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
	analysis.Metric
	verdict verdict
	why     string
	query   analysis.Query
	// resolved is the query with the args substituted, and used the args.
	resolved string
	used     []analysis.Arg
	// failsAfter is when the run fails if every measurement fails.
	failsAfter analysis.Failure
	// services says what the Services the query names select, for a
	// blind finding: "Service reviews-stable is the Rollout's stableService".
	services []string
	// wordArgs are args whose value names a revision only by a word
	// ("canary"), for the finding's assumptions.
	wordArgs []string
}

// revisionWord is a word that people put in names to mean a revision.
var revisionWord = regexp.MustCompile(`(?i)(?:^|[^a-z0-9])(canary|stable|preview|baseline|green|blue|v[0-9]+)(?:[^a-z0-9]|$)`)

// wordArgs lists the args a query uses whose value carries a revision
// word but names neither of the Rollout's Services nor one of the input's.
func wordArgs(used []analysis.Arg, svc serviceNames) []string {
	var known map[string]map[string]string
	if svc.services != nil {
		known = svc.services()
	}
	var out []string
	for _, a := range used {
		if !a.Known || a.Text == svc.canary || a.Text == svc.stable {
			continue
		}
		if _, ok := known[a.Text]; ok {
			continue
		}
		if m := revisionWord.FindStringSubmatch(a.Text); m != nil {
			out = append(out, fmt.Sprintf("args.%s is %q: the word %q in a name selects nothing by revision, and %q is neither the Rollout's canaryService nor a Service of the input. backfire assumes the query reads the traffic of both versions; if it names nothing at all, its result is empty and the run errors instead of failing, which aborts the rollback as well", a.Name, a.Text, m[1], a.Text))
		}
	}
	return out
}

// resolveServices resolves the Services a query names (whole names): the
// Rollout's stableService, which a rollback still points at the broken
// version, and the Services of the input, by their selectors. A name that
// merely contains "canary" selects nothing by revision.
func resolveServices(text string, svc serviceNames) []string {
	var out []string
	if svc.stable != "" && analysis.NamesWord(text, svc.stable) {
		out = append(out, fmt.Sprintf("Service %s is the Rollout's stableService, which during a rollback still selects the broken version", svc.stable))
	}
	if svc.services == nil {
		return out
	}
	all := svc.services()
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if n == svc.stable || n == svc.canary || !analysis.NamesWord(text, n) {
			continue
		}
		sel := all[n]
		what := "both versions' pods: nothing in it follows the pod-template hash"
		for k := range sel {
			if revisionLabel.MatchString(k + "=") {
				what = "a fixed label, which a rollback does not move to the version rolled back to"
			}
		}
		out = append(out, fmt.Sprintf("Service %s selects %s, %s", n, selectorText(sel), what))
	}
	return out
}

func selectorText(sel map[string]string) string {
	if len(sel) == 0 {
		return "every pod (no selector)"
	}
	keys := make([]string, 0, len(sel))
	for k := range sel {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, k+"="+sel[k])
	}
	return strings.Join(parts, ",")
}

type serviceNames struct {
	canary, stable string
	// reach lists names whose presence shows a web or job metric reaches
	// the service (the Rollout's, its Services'); computed only for them.
	reach func() []string
	// services are the Services of the input in the Rollout's namespace,
	// by name, with their selectors.
	services func() map[string]map[string]string
}

// checkMetric decides whether a metric can tell canary from stable.
func checkMetric(tm analysis.Metric, args map[string]analysis.Arg, svc serviceNames) metricCheck {
	q := analysis.QueryOf(tm.Metric)
	mc := metricCheck{Metric: tm, query: q, failsAfter: analysis.FailureOf(tm.Metric, q)}
	if tm.DryRun {
		mc.verdict, mc.why = inert, "dry-run metric: its result does not fail the run"
		return mc
	}
	if !mc.failsAfter.Possible {
		mc.verdict, mc.why = inert, mc.failsAfter.Text
		return mc
	}
	if q.Provider == "" {
		mc.verdict, mc.why = inert, "no provider backfire reads"
		return mc
	}
	mc.resolved, mc.used = analysis.Substitute(strings.Join(q.Texts, "\n"), args)
	// A metric that cannot see any version's health (a constant, a count
	// of objects) does not judge the broken version either.
	if sight := analysis.SightOf(q, mc.resolved); !sight.Sees {
		mc.verdict, mc.why = inert, sight.Why
		return mc
	}
	for _, a := range mc.used {
		if a.Latest {
			mc.verdict, mc.why = separated, fmt.Sprintf("args.%s is valueFrom.podTemplateHashValue: Latest", a.Name)
			return mc
		}
	}
	if analysis.ComparesScopes(tm.Metric, args) {
		mc.verdict, mc.why = separated, "Kayenta compares its experiment scope with a different control scope"
		return mc
	}
	if m := revisionLabel.FindStringSubmatch(mc.resolved); m != nil {
		mc.verdict, mc.why = separated, fmt.Sprintf("its %s selects by %s %s", q.What, m[1], m[2])
		return mc
	}
	if svc.canary != "" && analysis.NamesWord(mc.resolved, svc.canary) {
		mc.verdict, mc.why = separated, fmt.Sprintf("its %s names the canary Service %s, which the controller points at the canary's pods by their pod-template hash", q.What, svc.canary)
		return mc
	}
	mc.services = resolveServices(mc.resolved, svc)
	mc.wordArgs = wordArgs(mc.used, svc)
	for _, a := range mc.used {
		switch {
		case a.Secret != "" && !a.Known:
			mc.verdict, mc.why = unknown, fmt.Sprintf("its %s takes args.%s from Secret %s", q.What, a.Name, a.Secret)
			return mc
		case a.Missing:
			mc.verdict, mc.why = unknown, fmt.Sprintf("its %s uses args.%s, which neither the Rollout nor the template gives a value", q.What, a.Name)
			return mc
		}
	}
	if q.Provider == "web" || q.Provider == "job" {
		if r := analysis.ReachOf(q, mc.resolved, mc.used, svc.reach()); !r.Reaches {
			mc.verdict, mc.why = inert, r.Why
			return mc
		}
	}
	mc.verdict = blind
	return mc
}

// brokenShare is the traffic the broken version (the stable, during a
// rollback) still serves when a run that starts at step i measures.
func brokenShare(ro *v1alpha1.Rollout, step int32) (share string, weight int32, zero bool) {
	maxWeight := rollout.MaxTrafficWeight(ro)
	w := rollout.SetWeightAt(ro, step)
	return pct(maxWeight-min(w, maxWeight), maxWeight), w, w >= maxWeight
}
