package rollouts

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"backfire.dev/backfire/internal/model/analysis"
	"backfire.dev/backfire/internal/model/rollout"
)

// revisionToken finds a label or word that names a revision: the pod
// template hash label, version, revision, canary. It must start a word, so
// that "conversion" is not "version".
var revisionToken = regexp.MustCompile(`(?i)(?:^|[^a-z0-9])(rollouts[-_]pod[-_]template[-_]hash|pod[-_]template[-_]hash|version|revision|canary)`)

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
}

type serviceNames struct {
	canary string
	// reach lists names whose presence shows a web or job metric reaches
	// the service (the Rollout's, its Services'); computed only for them.
	reach func() []string
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
	if m := revisionToken.FindStringSubmatch(mc.resolved); m != nil {
		mc.verdict, mc.why = separated, fmt.Sprintf("its %s names %q", q.What, m[1])
		return mc
	}
	if svc.canary != "" && strings.Contains(mc.resolved, svc.canary) {
		mc.verdict, mc.why = separated, fmt.Sprintf("its %s names the canary Service %s", q.What, svc.canary)
		return mc
	}
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
