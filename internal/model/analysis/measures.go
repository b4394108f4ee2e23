package analysis

import (
	"backfire.dev/backfire/internal/lazyregexp"
	"fmt"
	"slices"
	"strings"
)

// Sight is whether a metric can see a version's health at all.
type Sight struct {
	// Sees: the query reads something a broken version moves (requests,
	// errors, latency, saturation, restarts), or backfire cannot tell.
	Sees bool
	// Why says what it reads instead when it does not: "it counts
	// objects (kube_pod_info)", "it is a constant".
	Why string
}

// SightOf decides whether a PromQL query (the prometheus provider's, with
// its args substituted) can see a version's health. A query that names no
// series is a constant; one whose every series describes objects
// (kube-state-metrics' _info, _labels, _created, _spec_ and _metadata_
// series, which exist and keep their value whatever the pods answer)
// counts things the broken version cannot move. Neither judges the
// version, so neither aborts a rollback for a reason of the version's.
// Other providers are assumed to see.
func SightOf(q Query, resolved string) Sight {
	if q.Provider != "prometheus" {
		return Sight{Sees: true}
	}
	names := promSeries(resolved)
	if len(names) == 0 {
		return Sight{Why: "its query names no series: it is a constant, whatever either version does"}
	}
	for _, n := range names {
		if !objectSeries().MatchString(n) {
			return Sight{Sees: true}
		}
	}
	return Sight{Why: fmt.Sprintf("its query reads only %s, which describe%s objects (kube-state-metrics), not how the pods answer: the broken version cannot move it", strings.Join(names, ", "), plural(len(names), "s", ""))}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// objectSeries are kube-state-metrics series that describe an object's
// existence and spec: they are there, with the same value, whether the
// pods answer or not (kube-state-metrics docs/metrics: the _info, _labels,
// _annotations, _created and _spec_ families).
var objectSeries = lazyregexp.New(`^kube_[a-z_]+_(info|labels|annotations|created|owner|spec_[a-z_]+|metadata_[a-z_]+)$`)

var (
	promString   = lazyregexp.New(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`")
	promBraces   = lazyregexp.New(`\{[^{}]*\}|\[[^\[\]]*\]`)
	promGrouping = lazyregexp.New(`(?i)\b(by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)`)
	promIdent    = lazyregexp.New(`[A-Za-z_:][A-Za-z0-9_:]*`)
	promWords    = []string{"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "offset", "and", "or", "unless",
		"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values", "bottomk", "topk", "quantile", "limitk", "limit_ratio",
		"inf", "nan", "atan2", "start", "end"}
)

// promSeries lists the series names of a PromQL expression: identifiers
// that are neither functions (followed by "("), keywords, aggregations,
// label names nor strings.
func promSeries(expr string) []string {
	expr = promString().ReplaceAllString(expr, `""`)
	for {
		next := promBraces().ReplaceAllString(expr, " ")
		if next == expr {
			break
		}
		expr = next
	}
	expr = promGrouping().ReplaceAllString(expr, " ")
	var out []string
	for _, loc := range promIdent().FindAllStringIndex(expr, -1) {
		id := expr[loc[0]:loc[1]]
		if loc[0] > 0 && (expr[loc[0]-1] >= '0' && expr[loc[0]-1] <= '9' || expr[loc[0]-1] == '.') {
			continue // a number's exponent or unit: 1e3, 5m
		}
		rest := strings.TrimLeft(expr[loc[1]:], " \t\n")
		if strings.HasPrefix(rest, "(") || slices.Contains(promWords, strings.ToLower(id)) {
			continue
		}
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}
