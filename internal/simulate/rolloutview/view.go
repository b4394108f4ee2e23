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
	"slices"
	"strings"
	"sync"
	"text/tabwriter"

	"gonum.org/v1/plot/vg"

	"backfire.dev/backfire/internal/model/rollout"
	"backfire.dev/backfire/internal/simulate/rolloutsim"
	"backfire.dev/backfire/internal/svgplot"
)

// Schema names the JSON document.
const Schema = "backfire/v1/simulation"

// Report is one simulation and, with --fix, the same scenario with the
// rules' fix applied.
type Report struct {
	// Kind is Rollout, or Canary for Flagger; "" is Rollout.
	Kind    string
	Rollout string
	Inputs  map[string]any
	Run     *rolloutsim.Timeline
	// Fixed is the run with the fix, and Fix says what was changed.
	Fixed *rolloutsim.Timeline
	Fix   []string
}

type document struct {
	Schema     string             `json:"schema,omitempty"`
	Kind       string             `json:"kind,omitempty"`
	Controller string             `json:"controller,omitempty"`
	Rollout    string             `json:"rollout"`
	Scenario   string             `json:"scenario"`
	Version    string             `json:"version"`
	Inputs     map[string]any     `json:"inputs,omitempty"`
	Notes      []string           `json:"notes,omitempty"`
	Timeline   []rolloutsim.Row   `json:"timeline"`
	Totals     rolloutsim.Totals  `json:"totals"`
	Fix        []string           `json:"fix,omitempty"`
	Fixed      *document          `json:"fixed,omitempty"`
	Canary     string             `json:"canaryRevision"`
	Stable     string             `json:"stableRevision"`
	Broken     string             `json:"brokenRevision,omitempty"`
	Events     []rolloutsim.Event `json:"events,omitempty"`
}

func doc(rollout string, inputs map[string]any, r *rolloutsim.Timeline) *document {
	return &document{Controller: r.Controller, Events: r.Events, Rollout: rollout, Scenario: r.Scenario, Version: r.Version, Inputs: inputs, Notes: r.Notes,
		Timeline: r.Timeline, Totals: r.Totals, Canary: r.Canary, Stable: r.Stable, Broken: r.Broken}
}

// JSON writes the document.
func JSON(w io.Writer, rep *Report) error {
	d := doc(rep.Rollout, rep.Inputs, rep.Run)
	d.Schema = Schema
	if rep.Kind != "" && rep.Kind != "Rollout" {
		d.Kind = rep.Kind
	}
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
		a.Analysis != b.Analysis || int(a.FailedRps) != int(b.FailedRps) ||
		int(a.Failed.BrokenVersion) != int(b.Failed.BrokenVersion) || int(a.Failed.NoEndpoint) != int(b.Failed.NoEndpoint)
}

// Text writes the timeline (the seconds in which something changed) and
// the totals.
func Text(w io.Writer, rep *Report) error {
	r := rep.Run
	fmt.Fprintf(w, "%s %s, scenario %s, %s %s: %s -> %s\n", kind(rep), rep.Rollout, r.Scenario, controller(r), rollout.VersionName(r.Version), r.Stable, r.Canary)
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  - %s\n", n)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	reconcile, stable, analysis := "reconcile", "stable", "analysis"
	if r.Controller == rolloutsim.Flagger {
		reconcile, stable, analysis = "tick", "primary", "phase"
	}
	fmt.Fprintf(tw, "t(s)\t%s\tstep\tweight\t%% to %s\tcanary desired\tavailable\tready\t%s desired\tready\toffered rps\tserved\tfailed\t%s\ttoo few Ready\tno endpoint\t%s\t\n",
		reconcile, r.Canary, stable, brokenColumn(r), analysis)
	for i, row := range r.Timeline {
		if i > 0 && !changed(r.Timeline[i-1], row) && i != len(r.Timeline)-1 {
			continue
		}
		fmt.Fprintf(tw, "%.0f\t%d\t%s\t%d\t%.0f\t%d\t%d\t%d\t%d\t%d\t%.0f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%s\t\n", row.T, row.Reconcile, stepText(row.StepIndex), row.Weight, row.TargetShare,
			row.CanaryDesired, row.CanaryAvailable, row.CanaryReady, row.StableDesired, row.StableReady, row.OfferedRps, row.ServedRps, row.FailedRps,
			row.Failed.BrokenVersion, row.Failed.TooFewReady, row.Failed.NoEndpoint, row.Analysis)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Events) > 0 {
		fmt.Fprintln(w, "\nAnalysis ticks:")
		for _, e := range r.Events {
			fmt.Fprintf(w, "  t=%.0fs tick %d: %s\n", e.T, e.Tick, e.What)
		}
	}
	fmt.Fprintln(w)
	cols := []*rolloutsim.Timeline{r}
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
	for _, line := range totalLines(r) {
		fmt.Fprint(tw, line.name)
		for _, c := range cols {
			fmt.Fprint(tw, "\t"+line.value(c.Totals))
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if rep.Fixed != nil {
		if t := Trade(r, rep.Fixed); t != "" {
			fmt.Fprintf(w, "\n%s\n", t)
		}
	}
	return nil
}

// brokenColumn names the cause "answered with errors by the version
// rolled back from" for a run (none in a deploy).
func brokenColumn(r *rolloutsim.Timeline) string {
	if r.Broken == "" {
		return "errors (none broken)"
	}
	return "errors of " + r.Broken
}

type totalLine struct {
	name  string
	value func(rolloutsim.Totals) string
}

func totalLines(r *rolloutsim.Timeline) []totalLine {
	share := func(part, all float64) string {
		if all == 0 {
			return "0"
		}
		return fmt.Sprintf("%.0f (%.1f%%)", part, 100*part/all)
	}
	lines := []totalLine{
		{"outcome", func(t rolloutsim.Totals) string { return t.Outcome }},
		{"failed requests", func(t rolloutsim.Totals) string {
			return fmt.Sprintf("%.0f of %.0f (%.1f%%)", t.FailedRequests, t.OfferedRequests, 100*t.FailedShare)
		}},
		{"  answered with errors by " + r.Broken + ", the version rolled back from", func(t rolloutsim.Totals) string {
			return share(t.FailedByCause.BrokenVersion, t.OfferedRequests)
		}},
		{"  too few Ready pods for their share (readiness failing under load)", func(t rolloutsim.Totals) string {
			return share(t.FailedByCause.TooFewReady, t.OfferedRequests)
		}},
		{"  no Ready endpoint at all", func(t rolloutsim.Totals) string { return share(t.FailedByCause.NoEndpoint, t.OfferedRequests) }},
	}
	if r.Broken == "" {
		lines = slices.Delete(lines, 2, 3) // no version is broken
	} else {
		lines = append(lines, totalLine{r.Broken + " got requests until", func(t rolloutsim.Totals) string {
			if t.BrokenUntil == 0 {
				return "never"
			}
			return fmt.Sprintf("t=%.0fs", t.BrokenUntil)
		}})
	}
	lines = append(lines, totalLine{"window of canary-side failures", func(t rolloutsim.Totals) string {
		if t.WindowSeconds == 0 {
			return "none: no request sent to the canary failed"
		}
		return fmt.Sprintf("%.0fs from t=%.0fs, %.0f of %.0f failed (%.1f%%)", t.WindowSeconds, t.WindowStart, t.WindowFailed, t.WindowOffered, 100*t.WindowFailedShare)
	}})
	return append(lines, moreLines...)
}

var moreLines = []totalLine{
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

// Trade says, when the fix loses more requests than the Rollout as
// written, where the difference comes from, cause by cause.
func Trade(asWritten, fixed *rolloutsim.Timeline) string {
	a, f := asWritten.Totals, fixed.Totals
	if f.FailedRequests <= a.FailedRequests {
		return ""
	}
	ac, fc := a.FailedByCause, f.FailedByCause
	s := fmt.Sprintf("With the fix, %.0f more requests fail (as written -> with the fix: errors of %s %.0f -> %.0f, too few Ready pods %.0f -> %.0f, no Ready endpoint %.0f -> %.0f); "+
		"%s gets requests until %s as written, %s with the fix.",
		f.FailedRequests-a.FailedRequests, asWritten.Broken, ac.BrokenVersion, fc.BrokenVersion, ac.TooFewReady, fc.TooFewReady, ac.NoEndpoint, fc.NoEndpoint,
		asWritten.Broken, secondsOrNever(a.BrokenUntil), secondsOrNever(f.BrokenUntil))
	if fc.BrokenVersion > ac.BrokenVersion && fc.TooFewReady+fc.NoEndpoint < ac.TooFewReady+ac.NoEndpoint {
		s += " The fix trades a burst on the canary for a longer stay on the version rolled back from: how broken that version is decides which loses more (simulate rollout --compare weighs both)."
	}
	return s
}

func secondsOrNever(t float64) string {
	if t == 0 {
		return "never"
	}
	return fmt.Sprintf("t=%.0fs", t)
}

// runSeries are one run's lines: colour says what is drawn, the dash
// pattern which run (solid as written, dashed with the fix).
type runSeries struct {
	weight, share, ready, desired, broken, tooFew, noEndpoint svgplot.Series
}

func series(r *rolloutsim.Timeline, dash int, suffix string) runSeries {
	n := len(r.Timeline)
	x := make([]float64, n)
	col := func() []float64 { return make([]float64, n) }
	w, sh, rd, ds, br, tf, ne := col(), col(), col(), col(), col(), col(), col()
	for i, row := range r.Timeline {
		x[i] = row.T
		w[i], sh[i], rd[i], ds[i] = float64(row.Weight), row.TargetShare, float64(row.CanaryReady), float64(row.CanaryDesired)
		br[i], tf[i], ne[i] = row.Failed.BrokenVersion, row.Failed.TooFewReady, row.Failed.NoEndpoint
	}
	line := func(name string, y []float64, colour int) svgplot.Series {
		return svgplot.Series{Name: name + suffix, X: x, Y: y, Step: true, Colour: colour, Dash: dash}
	}
	return runSeries{
		weight:     line("weight written to the router", w, svgplot.Blue),
		share:      line("% of requests to "+r.Canary, sh, svgplot.Red),
		desired:    line("canary pods asked for", ds, svgplot.Blue),
		ready:      line("Ready canary pods", rd, svgplot.Red),
		broken:     line("errors of "+r.Broken, br, svgplot.Orange),
		tooFew:     line("too few Ready pods", tf, svgplot.Red),
		noEndpoint: line("no Ready endpoint", ne, svgplot.Purple),
	}
}

// panels are three panels over time: the canary's traffic weight, its pods
// (asked for and Ready), and failed requests by cause. With the fix, its
// run is drawn dashed in the same colours.
func panels(rep *Report) []svgplot.Panel {
	p := series(rep.Run, 0, "")
	weights := []svgplot.Series{p.weight, p.share}
	pods := []svgplot.Series{p.desired, p.ready}
	// A cause that failed nothing in a run is left out: its line would lie
	// under the others at 0 (the totals still list it).
	failed := nonZero(p.broken, p.tooFew, p.noEndpoint)
	if rep.Fixed != nil {
		f := series(rep.Fixed, 1, ", with the fix")
		weights = append(weights, f.weight, f.share)
		pods = append(pods, f.desired, f.ready)
		failed = append(failed, nonZero(f.broken, f.tooFew, f.noEndpoint)...)
	}
	offered := svgplot.Series{Name: "offered", X: p.weight.X, Y: make([]float64, len(p.weight.X)), Step: true, Colour: svgplot.Grey, Dash: 2}
	for i, row := range rep.Run.Timeline {
		offered.Y[i] = row.OfferedRps
	}
	failed = append(failed, offered)
	title := "Traffic to " + rep.Run.Canary + " (" + controller(rep.Run) + " " + rep.Run.Version + ")"
	if rep.Fixed != nil {
		title += ": solid as written, dashed with the fix"
	}
	return []svgplot.Panel{
		{Title: title, YLabel: "weight, %", Series: weights, Seconds: true},
		{Title: "Canary pods", YLabel: "pods", Series: pods, Seconds: true},
		{Title: "Failed requests per second, by cause", YLabel: "rps", Series: failed, Seconds: true},
	}
}

func xlabel(rep *Report) string { return "time since the " + rep.Run.Scenario + " started" }

// SVG draws the panels stacked, each with its legend.
func SVG(rep *Report) ([]byte, error) {
	return svgplot.SVG(xlabel(rep), 24*vg.Centimeter, 7*vg.Centimeter, panels(rep))
}

func nonZero(all ...svgplot.Series) []svgplot.Series {
	var out []svgplot.Series
	for _, s := range all {
		if slices.ContainsFunc(s.Y, func(v float64) bool { return v != 0 }) {
			out = append(out, s)
		}
	}
	return out
}

var results = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("results").Parse(`<p>{{.KindName}} <b>{{.Rollout}}</b>, scenario <b>{{.Run.Scenario}}</b>,
{{.Controller}} {{.Run.Version}}: from revision {{.Run.Stable}} to {{.Run.Canary}}.</p>
<div class="scroll"><table class="totals"><tr><th></th><th>as written</th>{{if .Fixed}}<th>with the fix</th>{{end}}</tr>
{{range .Lines}}<tr><td>{{.Name}}</td>{{range .Values}}<td>{{.}}</td>{{end}}</tr>{{end}}</table></div>
{{if .Trade}}<p>{{.Trade}}</p>{{end}}`))
})

var fixSection = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("fix").Parse(`<p>The run "with the fix" applies the rules' fixes for this Rollout:</p>
<ul class="fix">{{range .}}<li>{{.}}</li>{{end}}</ul>`))
})

var inputsSection = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("inputs").Parse(`<ul>{{range .}}<li>{{.}}</li>{{end}}</ul>`))
})

// HTML writes one self-contained page in the scan report's look: tiles,
// the totals and the charts, then the fix and the inputs.
func HTML(rep *Report) ([]byte, error) {
	figs, err := svgplot.Figures(xlabel(rep), 16*vg.Centimeter, 6*vg.Centimeter, panels(rep))
	if err != nil {
		return nil, err
	}
	type line struct {
		Name   string
		Values []string
	}
	var lines []line
	for _, l := range totalLines(rep.Run) {
		v := []string{l.value(rep.Run.Totals)}
		if rep.Fixed != nil {
			v = append(v, l.value(rep.Fixed.Totals))
		}
		lines = append(lines, line{strings.TrimSpace(l.name), v})
	}
	var res, fix, inputs bytes.Buffer
	trade := ""
	if rep.Fixed != nil {
		trade = Trade(rep.Run, rep.Fixed)
	}
	if err := results().Execute(&res, struct {
		*Report
		Lines                []line
		Trade                string
		KindName, Controller string
	}{rep, lines, trade, kind(rep), controller(rep.Run)}); err != nil {
		return nil, err
	}
	var sections []svgplot.Section
	if rep.Fixed != nil {
		if err := fixSection().Execute(&fix, rep.Fix); err != nil {
			return nil, err
		}
		sections = append(sections, svgplot.Section{ID: "fix", Title: "The fix", Body: template.HTML(fix.String())}) // built by html/template
	}
	if len(rep.Run.Notes) > 0 {
		if err := inputsSection().Execute(&inputs, rep.Run.Notes); err != nil {
			return nil, err
		}
		sections = append(sections, svgplot.Section{ID: "inputs", Title: "Inputs", Body: template.HTML(inputs.String())})
	}
	if len(rep.Run.Events) > 0 {
		var ev bytes.Buffer
		if err := ticksSection().Execute(&ev, rep.Run.Events); err != nil {
			return nil, err
		}
		sections = append(sections, svgplot.Section{ID: "ticks", Title: "Analysis ticks", Body: template.HTML(ev.String())}) // built by html/template
	}
	sub := fmt.Sprintf("%s %s, %s from revision %s to %s", controller(rep.Run), rep.Run.Version, rep.Run.Scenario, rep.Run.Stable, rep.Run.Canary)
	return svgplot.Page{Title: "backfire simulate rollout: " + rep.Rollout + " (" + rep.Run.Scenario + ")", Subtitle: sub,
		Tiles: tiles(rep), Results: template.HTML(res.String()), Figures: figs, Sections: sections}.HTML()
}

// tiles are the page's headline numbers: the requests each run failed, and
// the seconds the canary had weight and no Ready endpoint.
func tiles(rep *Report) []svgplot.Tile {
	a := rep.Run.Totals
	out := []svgplot.Tile{{Value: fmt.Sprintf("%.0f", a.FailedRequests), Label: fmt.Sprintf("failed requests as written (%.1f%%)", 100*a.FailedShare), Tone: "bad"}}
	if rep.Fixed != nil {
		f := rep.Fixed.Totals
		tone := "good"
		if f.FailedRequests > a.FailedRequests {
			tone = "bad"
		}
		out = append(out, svgplot.Tile{Value: fmt.Sprintf("%.0f", f.FailedRequests), Label: fmt.Sprintf("failed requests with the fix (%.1f%%)", 100*f.FailedShare), Tone: tone})
	}
	if a.FailedRequests == 0 {
		out[0].Tone = "good"
	}
	out = append(out, svgplot.Tile{Value: fmt.Sprintf("%.0f s", a.ZeroEndpointSeconds), Label: "at 0 Ready canary endpoints with weight, as written"},
		svgplot.Tile{Value: a.Outcome, Label: "outcome, as written"})
	return out
}

// firstSentence shortens a fix's description for the text report (the
// JSON keeps it whole).
func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i > 0 {
		return s[:i+1]
	}
	return s
}

var ticksSection = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("ticks").Parse(`<ul>{{range .}}<li>t={{.T}}s, tick {{.Tick}}: {{.What}}</li>{{end}}</ul>`))
})

// kind names the object a report plays.
func kind(rep *Report) string {
	if rep.Kind == "" {
		return "Rollout"
	}
	return rep.Kind
}

// controller names the controller a run plays.
func controller(r *rolloutsim.Timeline) string {
	if r.Controller == "" {
		return rolloutsim.ArgoRollouts
	}
	return r.Controller
}
