// Package rolloutview formats a rollout simulation: a text timeline, the
// backfire/v1/simulation JSON document, an SVG chart and a self-contained
// HTML page. It only formats; the numbers come from rolloutsim.
package rolloutview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"
	"text/tabwriter"

	"gonum.org/v1/plot/vg"

	"backfire.dev/backfire/internal/chart"
	"backfire.dev/backfire/internal/simulate/rolloutsim"
)

// Schema names the JSON document.
const Schema = "backfire/v1/simulation"

// Report is one simulation and, with --fix, the same scenario with the
// rules' fix applied.
type Report struct {
	Rollout string
	Inputs  map[string]any
	Run     *rolloutsim.Result
	// Fixed is the run with the fix, and Fix says what was changed.
	Fixed *rolloutsim.Result
	Fix   []string
}

type document struct {
	Schema   string            `json:"schema,omitempty"`
	Rollout  string            `json:"rollout"`
	Scenario string            `json:"scenario"`
	Version  string            `json:"version"`
	Inputs   map[string]any    `json:"inputs,omitempty"`
	Notes    []string          `json:"notes,omitempty"`
	Timeline []rolloutsim.Row  `json:"timeline"`
	Totals   rolloutsim.Totals `json:"totals"`
	Fix      []string          `json:"fix,omitempty"`
	Fixed    *document         `json:"fixed,omitempty"`
	Canary   string            `json:"canaryRevision"`
	Stable   string            `json:"stableRevision"`
}

func doc(rollout string, inputs map[string]any, r *rolloutsim.Result) *document {
	return &document{Rollout: rollout, Scenario: r.Scenario, Version: r.Version, Inputs: inputs, Notes: r.Notes,
		Timeline: r.Timeline, Totals: r.Totals, Canary: r.Canary, Stable: r.Stable}
}

// JSON writes the document.
func JSON(w io.Writer, rep *Report) error {
	d := doc(rep.Rollout, rep.Inputs, rep.Run)
	d.Schema = Schema
	if rep.Fixed != nil {
		d.Fix = rep.Fix
		d.Fixed = doc(rep.Rollout, nil, rep.Fixed)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(d)
}

func stepText(p *int32) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

// changed reports whether a row differs from the previous one in what a
// reader follows: the text timeline prints only those rows.
func changed(a, b rolloutsim.Row) bool {
	return stepText(a.StepIndex) != stepText(b.StepIndex) || a.Weight != b.Weight || a.TargetShare != b.TargetShare || a.CanaryDesired != b.CanaryDesired ||
		a.CanaryReady != b.CanaryReady || a.StableDesired != b.StableDesired || a.StableReady != b.StableReady ||
		a.Analysis != b.Analysis || int(a.FailedRps) != int(b.FailedRps)
}

// Text writes the timeline (the seconds in which something changed) and
// the totals.
func Text(w io.Writer, rep *Report) error {
	r := rep.Run
	fmt.Fprintf(w, "Rollout %s, scenario %s, Argo Rollouts %s: %s -> %s\n", rep.Rollout, r.Scenario, r.Version, r.Stable, r.Canary)
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  - %s\n", n)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "t(s)\treconcile\tstep\tweight\t%% to %s\tcanary desired\tavailable\tready\tstable desired\tready\toffered rps\tserved\tfailed\tanalysis\t\n", r.Canary)
	for i, row := range r.Timeline {
		if i > 0 && !changed(r.Timeline[i-1], row) && i != len(r.Timeline)-1 {
			continue
		}
		fmt.Fprintf(tw, "%.0f\t%d\t%s\t%d\t%.0f\t%d\t%d\t%d\t%d\t%d\t%.0f\t%.1f\t%.1f\t%s\t\n", row.T, row.Reconcile, stepText(row.StepIndex), row.Weight, row.TargetShare,
			row.CanaryDesired, row.CanaryAvailable, row.CanaryReady, row.StableDesired, row.StableReady, row.OfferedRps, row.ServedRps, row.FailedRps, row.Analysis)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	cols := []*rolloutsim.Result{r}
	head := []string{"", "as written"}
	if rep.Fixed != nil {
		cols = append(cols, rep.Fixed)
		head = append(head, "with the fix")
		fmt.Fprintln(w, "With the fix, the rules' fixes for this Rollout applied:")
		for _, f := range rep.Fix {
			fmt.Fprintf(w, "  - %s\n", firstSentence(f))
		}
		fmt.Fprintln(w)
	}
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, line := range totalLines {
		fmt.Fprint(tw, line.name)
		for _, c := range cols {
			fmt.Fprint(tw, "\t"+line.value(c.Totals))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

var totalLines = []struct {
	name  string
	value func(rolloutsim.Totals) string
}{
	{"outcome", func(t rolloutsim.Totals) string { return t.Outcome }},
	{"failed requests", func(t rolloutsim.Totals) string {
		return fmt.Sprintf("%.0f of %.0f (%.1f%%)", t.FailedRequests, t.OfferedRequests, 100*t.FailedShare)
	}},
	{"incident window", func(t rolloutsim.Totals) string {
		if t.WindowSeconds == 0 {
			return "none: the canary never failed a request"
		}
		return fmt.Sprintf("%.0fs from t=%.0fs, %.0f of %.0f failed (%.1f%%)", t.WindowSeconds, t.WindowStart, t.WindowFailed, t.WindowOffered, 100*t.WindowFailedShare)
	}},
	{"seconds at 0 Ready canary endpoints with weight > 0", func(t rolloutsim.Totals) string { return fmt.Sprintf("%.0f", t.ZeroEndpointSeconds) }},
	{"seconds the weight needed more canary pods than Ready", func(t rolloutsim.Totals) string {
		if t.ShortSeconds == 0 {
			return "0"
		}
		return fmt.Sprintf("%.0f (up to %d%% on %d Ready)", t.ShortSeconds, t.PeakShortWeight, t.ReadyAtPeak)
	}},
	{"canary Ready dropping to 0", func(t rolloutsim.Totals) string { return fmt.Sprintf("%d times", t.ReadyFlaps) }},
	{"peak rps per Ready canary pod", func(t rolloutsim.Totals) string { return fmt.Sprintf("%.1f", t.PeakRpsPerCanaryPod) }},
	{"reconciles", func(t rolloutsim.Totals) string { return fmt.Sprint(t.Reconciles) }},
}

type panels struct {
	weight, share, ready, desired, failed, offered chart.Series
}

func series(r *rolloutsim.Result, suffix string) panels {
	n := len(r.Timeline)
	x := make([]float64, n)
	col := func() []float64 { return make([]float64, n) }
	w, sh, rd, ds, f, o := col(), col(), col(), col(), col(), col()
	for i, row := range r.Timeline {
		x[i] = row.T
		w[i], sh[i], rd[i], ds[i] = float64(row.Weight), row.TargetShare, float64(row.CanaryReady), float64(row.CanaryDesired)
		f[i], o[i] = row.FailedRps, row.OfferedRps
	}
	return panels{
		weight:  chart.Series{Name: "weight written to the router" + suffix, X: x, Y: w, Step: true},
		share:   chart.Series{Name: "% of requests sent to " + r.Canary + suffix, X: x, Y: sh, Step: true},
		ready:   chart.Series{Name: "Ready canary pods" + suffix, X: x, Y: rd, Step: true},
		desired: chart.Series{Name: "canary pods asked for" + suffix, X: x, Y: ds, Step: true},
		failed:  chart.Series{Name: "failed rps" + suffix, X: x, Y: f, Step: true},
		offered: chart.Series{Name: "offered rps", X: x, Y: o, Step: true},
	}
}

// SVG draws three panels over time: the canary's traffic weight, its pods
// (asked for and Ready), and requests (offered and failed).
func SVG(rep *Report) ([]byte, error) {
	p := series(rep.Run, "")
	weights := []chart.Series{p.weight, p.share}
	pods := []chart.Series{p.desired, p.ready}
	reqs := []chart.Series{p.offered, p.failed}
	if rep.Fixed != nil {
		f := series(rep.Fixed, " (fixed)")
		weights = append(weights, f.share)
		pods = append(pods, f.ready)
		reqs = append(reqs, f.failed)
	}
	return chart.SVG("seconds since the "+rep.Run.Scenario+" started", 22*vg.Centimeter, 7*vg.Centimeter, []chart.Panel{
		{Title: "Traffic to the canary (Argo Rollouts " + rep.Run.Version + ")", YLabel: "weight, %", Series: weights},
		{Title: "Canary pods", YLabel: "pods", Series: pods},
		{Title: "Requests per second", YLabel: "rps", Series: reqs},
	})
}

var body = template.Must(template.New("body").Parse(`<p>Rollout <b>{{.Rollout}}</b>, scenario <b>{{.Run.Scenario}}</b>,
Argo Rollouts {{.Run.Version}}: from revision {{.Run.Stable}} to {{.Run.Canary}}.</p>
{{if .Run.Notes}}<ul>{{range .Run.Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .Fix}}<p>With the fix: {{range $i, $f := .Fix}}{{if $i}}; {{end}}{{$f}}{{end}}</p>{{end}}
<table class="totals"><tr><th></th><th>as written</th>{{if .Fixed}}<th>with the fix</th>{{end}}</tr>
{{range .Lines}}<tr><td>{{.Name}}</td>{{range .Values}}<td>{{.}}</td>{{end}}</tr>{{end}}</table>`))

// HTML writes one self-contained page: the summary and the chart.
func HTML(rep *Report) ([]byte, error) {
	svg, err := SVG(rep)
	if err != nil {
		return nil, err
	}
	type line struct {
		Name   string
		Values []string
	}
	var lines []line
	for _, l := range totalLines {
		v := []string{l.value(rep.Run.Totals)}
		if rep.Fixed != nil {
			v = append(v, l.value(rep.Fixed.Totals))
		}
		lines = append(lines, line{l.name, v})
	}
	var b bytes.Buffer
	if err := body.Execute(&b, struct {
		*Report
		Lines []line
	}{rep, lines}); err != nil {
		return nil, err
	}
	return chart.HTML("backfire simulate rollout: "+rep.Rollout+" ("+rep.Run.Scenario+")", template.HTML(b.String()), svg)
}

// firstSentence shortens a fix's description for the text report (the
// JSON keeps it whole).
func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i > 0 {
		return s[:i+1]
	}
	return s
}
