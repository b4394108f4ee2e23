package analysis

import (
	"strings"
	"testing"
)

// Measurement and run rules of utils/evaluate/evaluate.go and
// analysis/analysis.go, one row per branch.
func TestFailureOf(t *testing.T) {
	const prom = `provider: {prometheus: {query: "up"}}`
	for _, tc := range []struct {
		name, doc string
		possible  bool
		seconds   float64
		says      string
	}{
		{"seed 000: failureLimit 2, interval 20s", `{name: m, interval: 20s, failureLimit: 2, successCondition: "result[0] < 0.05", ` + prom + `}`,
			true, 40, "the 3rd failed measurement, 2 x 20 s = 40 s"},
		{"failureLimit unset is 0", `{name: m, interval: 1m, failureCondition: "result[0] > 0.05", ` + prom + `}`,
			true, 0, "failureLimit unset (0)"},
		{"initialDelay adds to the first", `{name: m, interval: 30s, initialDelay: 2m, failureLimit: 3, successCondition: "result[0] < 1", ` + prom + `}`,
			true, 210, "120 s + 3 x 30 s = 210 s"},
		{"no interval: measured once", `{name: m, successCondition: "result[0] < 1", ` + prom + `}`,
			true, 0, "measured once"},
		{"negative failureLimit never fails", `{name: m, interval: 1m, failureLimit: -1, successCondition: "result[0] < 1", ` + prom + `}`,
			false, 0, "failureLimit -1"},
		{"count below failureLimit+1", `{name: m, interval: 1m, count: 2, failureLimit: 2, successCondition: "result[0] < 1", ` + prom + `}`,
			false, 0, "count 2 is below failureLimit 2 + 1"},
		{"consecutiveSuccessLimit fails at the count", `{name: m, interval: 1m, count: 5, failureLimit: -1, consecutiveSuccessLimit: 3, successCondition: "result[0] < 1", ` + prom + `}`,
			true, 240, "count of 5 measurements ends without 3 successes in a row"},
		{"no conditions: always Successful", `{name: m, interval: 1m, ` + prom + `}`,
			false, 0, "neither successCondition nor failureCondition"},
		{"failureCondition never true, with successCondition: only Inconclusive", `{name: m, interval: 1m, successCondition: "result[0] < 1", failureCondition: "false", ` + prom + `}`,
			false, 0, "Inconclusive"},
		{"failureCondition never true alone", `{name: m, interval: 1m, failureCondition: "(1 > 2)", ` + prom + `}`,
			false, 0, "never true"},
		{"successCondition always true", `{name: m, interval: 1m, successCondition: "true", ` + prom + `}`,
			false, 0, "always true"},
		{"successCondition not false", `{name: m, interval: 1m, successCondition: "!false", ` + prom + `}`,
			false, 0, "always true"},
		{"a condition that reads the result can fail", `{name: m, interval: 1m, successCondition: "default(result[0], 0) < 1", failureCondition: "isNil(result)", ` + prom + `}`,
			true, 0, "fails the run"},
		{"successCondition always false fails", `{name: m, interval: 1m, successCondition: "false", ` + prom + `}`,
			true, 0, "fails the run"},
		{"job: judged by the Job, not conditions", `{name: m, provider: {job: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}}}`,
			true, 0, "measured once"},
		{"kayenta marginal 0 cannot fail", `{name: m, provider: {kayenta: {threshold: {pass: 90, marginal: 0}}}}`,
			false, 0, "threshold.marginal 0"},
		{"kayenta below marginal fails", `{name: m, provider: {kayenta: {threshold: {pass: 90, marginal: 75}}}}`,
			true, 0, "measured once"},
	} {
		m := metric(t, tc.doc)
		f := FailureOf(m, QueryOf(m))
		if f.Possible != tc.possible || f.Seconds != tc.seconds || !strings.Contains(f.Text, tc.says) {
			t.Errorf("%s: possible %v seconds %v %q; want %v %v and %q", tc.name, f.Possible, f.Seconds, f.Text, tc.possible, tc.seconds, tc.says)
		}
	}
}

func TestConstantConditions(t *testing.T) {
	for cond, want := range map[string]struct{ value, ok bool }{
		"true": {true, true}, "false": {false, true}, " ( false ) ": {false, true},
		"1 == 1": {true, true}, "0 > 1": {false, true}, "2.5 >= 2.5": {true, true},
		"not true": {false, true}, "!(1 < 2)": {false, true},
		"result[0] < 1": {false, false}, "isNil(result)": {false, false}, "default(result, 0) == 0": {false, false},
		"len(result) > 0 || true": {false, false}, // not evaluated: assumed able to fail
	} {
		v, ok := constant(cond)
		if v != want.value || ok != want.ok {
			t.Errorf("constant(%q) = %v, %v; want %v, %v", cond, v, ok, want.value, want.ok)
		}
	}
}

func TestSecondsAndOrdinal(t *testing.T) {
	if Seconds(40) != "40 s" || Seconds(2.5) != "2.5 s" || Ordinal(1) != "1st" || Ordinal(12) != "12th" || Ordinal(23) != "23rd" {
		t.Errorf("%s %s %s %s %s", Seconds(40), Seconds(2.5), Ordinal(1), Ordinal(12), Ordinal(23))
	}
}
