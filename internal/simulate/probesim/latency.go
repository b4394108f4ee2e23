package probesim

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Latency gives the time the server takes to answer a query probe sent at
// t seconds; n counts the probes sent so far, so that a sampled
// distribution is deterministic.
type Latency interface {
	At(t float64, n int) float64
	String() string
}

// Quantiles is a latency distribution given by a few quantiles
// ("p50=40ms,p99=1.2s"), sampled with a fixed seed: the same input gives
// the same run. Between two quantiles the latency is interpolated on a log
// scale; below the lowest it falls to half of it, above the highest it
// rises to twice it (an assumption the output states).
type Quantiles struct {
	Q, L []float64 // quantile in (0,1), latency in seconds; ascending
	text string
}

// ParseQuantiles reads "p50=40ms,p99=1.2s" (p0 < pN < p100, Go durations).
func ParseQuantiles(s string) (*Quantiles, error) {
	q := &Quantiles{text: s}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		k, v, ok := strings.Cut(part, "=")
		if !ok || !strings.HasPrefix(k, "p") {
			return nil, fmt.Errorf("latency %q: want pNN=DURATION, e.g. p50=40ms,p99=1.2s", part)
		}
		pct, err := strconv.ParseFloat(k[1:], 64)
		if err != nil || !(pct > 0 && pct < 100) { // NaN is in no range
			return nil, fmt.Errorf("latency %q: the percentile must be between 0 and 100", part)
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("latency %q: %q is not a positive duration", part, v)
		}
		q.Q, q.L = append(q.Q, pct/100), append(q.L, d.Seconds())
	}
	for i := 1; i < len(q.Q); i++ {
		if q.Q[i] <= q.Q[i-1] || q.L[i] < q.L[i-1] {
			return nil, fmt.Errorf("latency %q: percentiles and durations must both ascend", s)
		}
	}
	return q, nil
}

func (q *Quantiles) String() string { return q.text }

// At samples the distribution for the n-th probe: the same n always gives
// the same latency, whatever the time.
func (q *Quantiles) At(_ float64, n int) float64 {
	r := rand.New(rand.NewPCG(uint64(n)+1, 0x5eed))
	return q.Quantile(r.Float64())
}

// Quantile is the latency at quantile u.
func (q *Quantiles) Quantile(u float64) float64 {
	last := len(q.Q) - 1
	switch {
	case u <= q.Q[0]:
		return q.L[0] * (0.5 + 0.5*u/q.Q[0])
	case u >= q.Q[last]:
		return q.L[last] * (1 + (u-q.Q[last])/(1-q.Q[last]))
	}
	i, _ := slices.BinarySearch(q.Q, u)
	f := (u - q.Q[i-1]) / (q.Q[i] - q.Q[i-1])
	return math.Exp(math.Log(q.L[i-1]) + f*(math.Log(q.L[i])-math.Log(q.L[i-1])))
}

// Trace is measured latency over time: each sample holds until the next;
// after the last, the trace's median holds (the trace is a window, not
// the rest of the day).
type Trace struct {
	T, L   []float64 // seconds from the trace's start; seconds
	median float64
	name   string
}

// ParseTrace reads lines "OFFSET LATENCY" or "RFC3339-TIME LATENCY"
// (OFFSET a Go duration from the start, "90s"; LATENCY a Go duration),
// in time order; blank lines and # comments are skipped.
func ParseTrace(name string, data []byte) (*Trace, error) {
	tr := &Trace{name: name}
	var t0 time.Time
	sc := bufio.NewScanner(bytes.NewReader(data))
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		f := strings.Fields(strings.ReplaceAll(s, ",", " "))
		if len(f) != 2 {
			return nil, fmt.Errorf("%s:%d: want TIME LATENCY, got %q", name, line, s)
		}
		var at float64
		if ts, err := time.Parse(time.RFC3339Nano, f[0]); err == nil {
			if t0.IsZero() {
				t0 = ts
			}
			at = ts.Sub(t0).Seconds()
		} else if d, err := time.ParseDuration(f[0]); err == nil {
			at = d.Seconds()
		} else {
			return nil, fmt.Errorf("%s:%d: %q is neither an RFC 3339 time nor a duration", name, line, f[0])
		}
		l, err := time.ParseDuration(f[1])
		if err != nil || l < 0 {
			return nil, fmt.Errorf("%s:%d: %q is not a latency", name, line, f[1])
		}
		if n := len(tr.T); n > 0 && at < tr.T[n-1] {
			return nil, fmt.Errorf("%s:%d: time goes backwards (%s)", name, line, f[0])
		}
		tr.T, tr.L = append(tr.T, at), append(tr.L, l.Seconds())
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(tr.T) == 0 {
		return nil, fmt.Errorf("%s: no samples", name)
	}
	sorted := slices.Clone(tr.L)
	slices.Sort(sorted)
	tr.median = sorted[len(sorted)/2]
	return tr, nil
}

func (tr *Trace) String() string { return "trace " + tr.name }

// At is the sample in force at t.
func (tr *Trace) At(t float64, _ int) float64 {
	last := len(tr.T) - 1
	if t > tr.T[last] {
		return tr.median
	}
	i, found := slices.BinarySearch(tr.T, t)
	if !found {
		i--
	}
	return tr.L[max(i, 0)]
}
