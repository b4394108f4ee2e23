package analysis

import (
	"backfire.dev/backfire/internal/lazyregexp"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
)

// Failure is whether, and when, a metric fails its AnalysisRun if every
// measurement fails.
//
// A measurement's phase: evaluate.EvaluateResult (utils/evaluate/
// evaluate.go) with neither condition is Successful; with only
// successCondition, a result that misses it is Failed; with only
// failureCondition, a result that meets it is Failed; with both, Failed
// only when failureCondition is true, and Inconclusive when neither is.
//
// The run's phase: assessMetricFailureInconclusiveOrError (analysis/
// analysis.go) fails the metric once failed measurements exceed
// failureLimit (0 when unset; a negative limit never fails it), and
// assessMetricStatus ends it Successful once EffectiveCount measurements
// are taken (count, else 1 without an interval, else unbounded), except
// that with consecutiveSuccessLimit and a negative failureLimit a count
// reached without that many successes in a row is Failed.
//
// The first measurement is taken initialDelay after the run starts and
// the next ones one interval apart, so failureLimit+1 failures fail the
// run initialDelay + failureLimit x interval after it starts.
type Failure struct {
	Possible bool
	Seconds  float64
	// Text says how the time comes about, or why the metric cannot fail.
	Text     string
	Limit    int
	Interval time.Duration
	Delay    time.Duration
}

// When says when the run fails, for a message.
func (f Failure) When() string {
	if f.Seconds == 0 {
		return "at its first measurement, as soon as it starts"
	}
	return Seconds(f.Seconds) + " after it starts"
}

// FailureOf judges a metric whose provider is judged as q says.
func FailureOf(m *v1alpha1.Metric, q Query) Failure {
	f := Failure{}
	if m.FailureLimit != nil {
		f.Limit = m.FailureLimit.IntValue()
	}
	interval, _ := m.Interval.Duration()
	delay, _ := m.InitialDelay.Duration()
	f.Interval, f.Delay = interval, delay
	if why := neverFails(m, q); why != "" {
		f.Text = why
		return f
	}
	count := m.EffectiveCount()
	success := 0
	if m.ConsecutiveSuccessLimit != nil {
		success = m.ConsecutiveSuccessLimit.IntValue()
	}
	if f.Limit < 0 {
		if success > 0 && count != nil && count.IntValue() > 0 {
			// Fails only when the count is reached without enough
			// successes in a row: at the last measurement.
			n := count.IntValue()
			f.Possible = true
			f.Seconds = (delay + time.Duration(n-1)*interval).Seconds()
			f.Text = fmt.Sprintf("failureLimit %d and consecutiveSuccessLimit %d, the run fails when its count of %d measurements ends without %d successes in a row, %s after it starts", f.Limit, success, n, success, Seconds(f.Seconds))
			return f
		}
		f.Text = fmt.Sprintf("failureLimit %d: failed measurements never fail it", f.Limit)
		return f
	}
	if count != nil && count.IntValue() < f.Limit+1 {
		f.Text = fmt.Sprintf("count %d is below failureLimit %d + 1: it cannot fail", count.IntValue(), f.Limit)
		return f
	}
	f.Possible = true
	f.Seconds = (delay + time.Duration(f.Limit)*interval).Seconds()
	limit := "failureLimit " + strconv.Itoa(f.Limit)
	if m.FailureLimit == nil {
		limit = "failureLimit unset (0)"
	}
	switch {
	case interval == 0 && delay > 0:
		f.Text = fmt.Sprintf("%s, no interval and initialDelay %s, the metric is measured once, %s after the run starts, and a failed measurement fails the run", limit, m.InitialDelay, Seconds(f.Seconds))
	case interval == 0:
		f.Text = fmt.Sprintf("%s and no interval, the metric is measured once and the first failed measurement fails the run", limit)
	case delay > 0:
		f.Text = fmt.Sprintf("%s, interval %s and initialDelay %s, the %s failed measurement, %s + %d x %s = %s after the run starts, fails the run",
			limit, m.Interval, m.InitialDelay, Ordinal(f.Limit+1), Seconds(delay.Seconds()), f.Limit, Seconds(interval.Seconds()), Seconds(f.Seconds))
	default:
		f.Text = fmt.Sprintf("%s and interval %s, the %s failed measurement, %d x %s = %s after the run starts, fails the run",
			limit, m.Interval, Ordinal(f.Limit+1), f.Limit, Seconds(interval.Seconds()), Seconds(f.Seconds))
	}
	return f
}

// neverFails says why no measurement of the metric can be Failed, or "".
func neverFails(m *v1alpha1.Metric, q Query) string {
	switch q.Judged {
	case ByJob:
		return "" // a Job that fails is a failed measurement
	case ByScore:
		if k := m.Provider.Kayenta; k != nil && k.Threshold.Marginal <= 0 {
			return fmt.Sprintf("Kayenta threshold.marginal %d: no score (0-100) is below it, so no measurement is Failed", k.Threshold.Marginal)
		}
		return ""
	}
	success, failure := strings.TrimSpace(m.SuccessCondition), strings.TrimSpace(m.FailureCondition)
	switch {
	case success == "" && failure == "":
		return "neither successCondition nor failureCondition: every measurement that returns is Successful"
	case failure != "":
		if v, ok := constant(failure); ok && !v {
			if success != "" {
				return fmt.Sprintf("failureCondition %q is never true: a result that misses successCondition is Inconclusive (the rollout pauses), never Failed", failure)
			}
			return fmt.Sprintf("failureCondition %q is never true: every measurement is Successful", failure)
		}
	default:
		if v, ok := constant(success); ok && v {
			return fmt.Sprintf("successCondition %q is always true: no measurement is Failed", success)
		}
	}
	return ""
}

// readsResult finds what a condition can read of the measurement: result,
// and the helpers bound to it (isNil, default).
var readsResult = lazyregexp.New(`\b(result|isNil|default)\b`)

var comparison = lazyregexp.New(`^(-?[0-9.]+)\s*(==|!=|<=|>=|<|>)\s*(-?[0-9.]+)$`)

// constant evaluates a condition that does not read the result, when it
// is a literal or a comparison of two numbers; ok is false otherwise.
func constant(cond string) (value, ok bool) {
	c := strings.TrimSpace(cond)
	for len(c) >= 2 && c[0] == '(' && c[len(c)-1] == ')' {
		c = strings.TrimSpace(c[1 : len(c)-1])
	}
	if readsResult().MatchString(c) {
		return false, false
	}
	for _, not := range []string{"!", "not "} {
		if rest, found := strings.CutPrefix(c, not); found {
			v, ok := constant(rest)
			return !v, ok
		}
	}
	switch c {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	if m := comparison().FindStringSubmatch(c); m != nil {
		a, errA := strconv.ParseFloat(m[1], 64)
		b, errB := strconv.ParseFloat(m[3], 64)
		if errA != nil || errB != nil {
			return false, false
		}
		switch m[2] {
		case "==":
			return a == b, true
		case "!=":
			return a != b, true
		case "<":
			return a < b, true
		case "<=":
			return a <= b, true
		case ">":
			return a > b, true
		case ">=":
			return a >= b, true
		}
	}
	return false, false
}

// Seconds prints a duration in seconds: "40 s", "2.5 s".
func Seconds(s float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.1f", s), "0"), ".") + " s"
}

// Ordinal prints 1st, 2nd, 3rd, 11th.
func Ordinal(n int) string {
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
