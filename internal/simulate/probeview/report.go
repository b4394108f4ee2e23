package probeview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"sync"
	"text/tabwriter"

	"gonum.org/v1/plot/vg"

	"backfire.dev/backfire/internal/simulate/probesim"
	"backfire.dev/backfire/internal/svgplot"
)

// Schema names the JSON output.
const Schema = "backfire/simulate-probe/v1"

// Formats lists the output formats.
var Formats = []string{"text", "json", "svg", "html"}

func (r *Report) runs() []*Run {
	out := []*Run{&r.AsWritten}
	if r.Fixed != nil {
		out = append(out, r.Fixed)
	}
	return out
}

// Verdict says whether the loop ends, and why, in a line.
func (run *Run) Verdict() string {
	res := run.Result
	switch {
	case len(res.Kills) == 0 && run.NeverEnds && !run.AfterCrash:
		return fmt.Sprintf("no kill on a clean start; after a crash a recovery longer than %d s (the %s probe's D + F x P) never completes: --after-crash plays it", run.Budget, run.killer())
	case len(res.Kills) == 0:
		return "no kill: the probe never fires"
	case !res.LoopEnds && run.NeverEnds:
		return fmt.Sprintf("never: %d of %d recoveries completed; a recovery longer than %d s (the probe's D + F x P) never completes", res.RecoveriesCompleted, res.RecoveriesStarted, run.Budget)
	case !res.LoopEnds:
		return fmt.Sprintf("not within the simulated time: %d of %d recoveries completed", res.RecoveriesCompleted, res.RecoveriesStarted)
	}
	return fmt.Sprintf("yes: %d of %d recoveries completed", res.RecoveriesCompleted, res.RecoveriesStarted)
}

// killer names the probe whose arithmetic NeverEnds read: the startup
// probe when it fails during recovery, else liveness.
func (run *Run) killer() string {
	if run.Startup != nil && run.Startup.FailsDuringRecovery {
		return "startup"
	}
	return "liveness"
}

// Text writes the comparison for people.
func (r *Report) Text(w io.Writer) error {
	b := &bytes.Buffer{}
	server := ""
	if r.Server != "" {
		server = " (" + r.Server + ")"
	}
	fmt.Fprintf(b, "%s, container %s%s  %s\n", r.Object, r.Container, server, r.File)
	first := ""
	if r.AfterCrash {
		first = "; the first start is a crash recovery too"
	}
	fmt.Fprintf(b, "latency %s; recovery after a kill %s%s; %s simulated\n\n", r.Latency, dur(r.Recovery), first, dur(r.Hours*3600))
	tw := tabwriter.NewWriter(b, 0, 4, 2, ' ', 0)
	runs := r.runs()
	row := func(name string, f func(*Run) string) {
		fmt.Fprintf(tw, "%s", name)
		for _, run := range runs {
			fmt.Fprintf(tw, "\t%s", f(run))
		}
		fmt.Fprintln(tw)
	}
	row("", func(run *Run) string { return run.Label })
	row("liveness", func(run *Run) string { return Describe(run.Liveness) })
	row("  during recovery", func(run *Run) string { return DuringRecovery(run.Liveness) })
	row("startup", func(run *Run) string { return Describe(run.Startup) })
	row("  during recovery", func(run *Run) string { return DuringRecovery(run.Startup) })
	row("readiness", func(run *Run) string { return Describe(run.Readiness) })
	row("  during recovery", func(run *Run) string { return DuringRecovery(run.Readiness) })
	row("restarts", func(run *Run) string { return fmt.Sprint(run.Result.Restarts) })
	row("restarts per day", func(run *Run) string { return fmt.Sprintf("%.1f", run.Result.RestartsPerDay) })
	row("first kill", func(run *Run) string {
		if run.Result.FirstKill < 0 {
			return "-"
		}
		return "at " + dur(run.Result.FirstKill)
	})
	row("time in recovery", func(run *Run) string {
		return fmt.Sprintf("%s (%.1f%%)", dur(run.Result.RecoverySeconds), 100*run.Result.RecoverySeconds/run.Result.Duration)
	})
	row("the loop ends", func(run *Run) string { return run.Verdict() })
	for _, rr := range readyRows {
		row(rr.name, rr.cell)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.Fix != nil {
		fmt.Fprintf(b, "\nfix (%s): %s\n  %s\n", r.Fix.Rule, r.Fix.Fix.Description, r.Fix.Fix.Patch)
	} else {
		fmt.Fprintf(b, "\nno rule proposes a fix for container %s: nothing to compare\n", r.Container)
	}
	for _, a := range r.Assumptions {
		fmt.Fprintf(b, "assumed: %s\n", a)
	}
	_, err := w.Write(b.Bytes())
	return err
}

type jsonProbe struct {
	Name                string `json:"name"`
	Handler             string `json:"handler"`
	InitialDelaySeconds int    `json:"initialDelaySeconds"`
	PeriodSeconds       int    `json:"periodSeconds"`
	TimeoutSeconds      int    `json:"timeoutSeconds"`
	SuccessThreshold    int    `json:"successThreshold"`
	FailureThreshold    int    `json:"failureThreshold"`
	FailsDuringRecovery bool   `json:"failsDuringRecovery"`
}

type jsonKill struct {
	AtSeconds  float64 `json:"atSeconds"`
	Probe      string  `json:"probe"`
	RunSeconds float64 `json:"runSeconds"`
	InRecovery bool    `json:"inRecovery"`
	// ReadyAgainSeconds: from the kill to ready again; absent without a
	// readiness probe or when not ready again before the next kill.
	ReadyAgainSeconds *float64 `json:"readyAgainSeconds,omitempty"`
}

// jsonReady is a run's Ready condition summed (probesim.ReadyStats).
type jsonReady struct {
	NotReadySeconds        float64  `json:"notReadySeconds"`
	NotReadyPerDaySeconds  float64  `json:"notReadyPerDaySeconds"`
	NotReadyShare          float64  `json:"notReadyShare"`
	Episodes               int      `json:"notReadyEpisodes"`
	LongestNotReadySeconds float64  `json:"longestNotReadySeconds"`
	FirstReadySeconds      *float64 `json:"firstReadySeconds"`
	KillsReadyAgain        int      `json:"killsReadyAgain"`
	KillToReadyMaxSeconds  *float64 `json:"killToReadyMaxSeconds"`
}

type jsonRun struct {
	Label               string     `json:"label"`
	Liveness            *jsonProbe `json:"liveness,omitempty"`
	Startup             *jsonProbe `json:"startup,omitempty"`
	Readiness           *jsonProbe `json:"readiness,omitempty"`
	Restarts            int        `json:"restarts"`
	RestartsPerDay      float64    `json:"restartsPerDay"`
	RecoverySeconds     float64    `json:"recoverySeconds"`
	RecoveriesStarted   int        `json:"recoveriesStarted"`
	RecoveriesCompleted int        `json:"recoveriesCompleted"`
	LoopEnds            bool       `json:"loopEnds"`
	NeverEndsByArith    bool       `json:"neverEndsByArithmetic"`
	BudgetSeconds       int        `json:"budgetSeconds,omitempty"`
	Verdict             string     `json:"verdict"`
	Kills               []jsonKill `json:"kills"`
	// Ready is absent when the container has no readiness probe.
	Ready *jsonReady `json:"ready,omitempty"`
}

func toJSONProbe(p *probesim.Probe) *jsonProbe {
	if p == nil {
		return nil
	}
	return &jsonProbe{p.Name, p.Handler, p.InitialDelay.N, p.Period.N, p.Timeout.N, p.Success.N, p.Failure.N, p.FailsDuringRecovery}
}

// JSON writes the comparison as one document (schema Schema).
func (r *Report) JSON(w io.Writer) error {
	doc := map[string]any{
		"schema": Schema, "object": r.Object, "file": r.File, "container": r.Container, "server": r.Server,
		"latency": r.Latency, "recoverySeconds": r.Recovery, "afterCrash": r.AfterCrash, "hours": r.Hours, "assumptions": r.Assumptions,
	}
	var runs []jsonRun
	for _, run := range r.runs() {
		res := run.Result
		jr := jsonRun{Label: run.Label, Liveness: toJSONProbe(run.Liveness), Startup: toJSONProbe(run.Startup), Readiness: toJSONProbe(run.Readiness),
			Restarts: res.Restarts, RestartsPerDay: round(res.RestartsPerDay), RecoverySeconds: round(res.RecoverySeconds),
			RecoveriesStarted: res.RecoveriesStarted, RecoveriesCompleted: res.RecoveriesCompleted, LoopEnds: res.LoopEnds,
			NeverEndsByArith: run.NeverEnds, BudgetSeconds: run.Budget, Verdict: run.Verdict(), Kills: []jsonKill{}}
		for i, k := range res.Kills {
			jk := jsonKill{AtSeconds: round(k.At), Probe: k.Probe, RunSeconds: round(k.Run), InRecovery: k.InRecovery}
			if run.Readiness != nil && run.Ready.KillToReady[i] >= 0 {
				jk.ReadyAgainSeconds = ptr(round(run.Ready.KillToReady[i]))
			}
			jr.Kills = append(jr.Kills, jk)
		}
		if run.Readiness != nil {
			jr.Ready = toJSONReady(run)
		}
		runs = append(runs, jr)
	}
	doc["runs"] = runs
	if r.Fix != nil {
		doc["fix"] = map[string]any{"rule": r.Fix.Rule, "description": r.Fix.Fix.Description, "patch": r.Fix.Fix.Patch}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}

func round(x float64) float64 { return math.Round(x*1000) / 1000 }

func ptr(x float64) *float64 { return &x }

func toJSONReady(run *Run) *jsonReady {
	st, d := run.Ready, run.Result.Duration
	jr := &jsonReady{NotReadySeconds: round(st.NotReadySeconds), NotReadyPerDaySeconds: round(st.NotReadySeconds * 86400 / d),
		NotReadyShare: math.Round(st.NotReadySeconds/d*1e4) / 1e4, Episodes: st.Episodes, LongestNotReadySeconds: round(st.LongestSeconds)}
	if st.FirstReady >= 0 {
		jr.FirstReadySeconds = ptr(round(st.FirstReady))
	}
	if _, hi, back := killToReady(st); back > 0 {
		jr.KillsReadyAgain, jr.KillToReadyMaxSeconds = back, ptr(round(hi))
	}
	return jr
}

// killToReady is the shortest and longest time from a kill to ready
// again, over the kills the container came back from, and their number.
func killToReady(st probesim.ReadyStats) (lo, hi float64, back int) {
	lo = math.Inf(1)
	for _, s := range st.KillToReady {
		if s >= 0 {
			lo, hi, back = min(lo, s), max(hi, s), back+1
		}
	}
	return lo, hi, back
}

// readyRows are the summary's readiness figures, "-" for a run without a
// readiness probe.
var readyRows = []struct {
	name string
	cell func(*Run) string
}{
	{"not ready per day", func(run *Run) string {
		d := run.Result.Duration
		return withProbe(run, func() string {
			return fmt.Sprintf("%s (%.1f%%)", dur(run.Ready.NotReadySeconds*86400/d), 100*run.Ready.NotReadySeconds/d)
		})
	}},
	{"times not ready", func(run *Run) string { return withProbe(run, func() string { return fmt.Sprint(run.Ready.Episodes) }) }},
	{"longest not ready", func(run *Run) string { return withProbe(run, func() string { return dur(run.Ready.LongestSeconds) }) }},
	{"kill to ready again", func(run *Run) string {
		return withProbe(run, func() string {
			n := len(run.Ready.KillToReady)
			lo, hi, back := killToReady(run.Ready)
			switch {
			case n == 0:
				return "no kill"
			case back == 0 && n > run.Result.Restarts:
				// The last kill's restart falls after the run's end, so
				// the restarts row counts one fewer.
				return fmt.Sprintf("never ready again after any of the %d kills (the last one not restarted within the run)", n)
			case back == 0:
				return fmt.Sprintf("never ready again after any of the %d kills", n)
			}
			s := dur(hi)
			if lo < hi {
				s = dur(lo) + " to " + dur(hi)
			}
			if back < n {
				s += fmt.Sprintf("; %d of %d kills never ready again before the next kill", n-back, n)
			}
			return s
		})
	}},
}

func withProbe(run *Run, f func() string) string {
	if run.Readiness == nil {
		return "-"
	}
	return f()
}

// panels are the charts of the runs: cumulative restarts, the server's
// state, and the liveness probe's latency against its timeout, over hours.
func (r *Report) panels() []svgplot.Panel {
	var restarts []svgplot.Series
	var states []svgplot.Band
	for _, run := range r.runs() {
		restarts = append(restarts, restartSeries(run))
		states = append(states, stateBand(run))
	}
	panels := []svgplot.Panel{
		{Title: "Restarts (cumulative)", YLabel: "restarts", Series: restarts},
		{Title: "Server state", Bands: states, States: stateKeys, MarkName: "kill (the probe restarts the container)"},
	}
	var ready []svgplot.Band
	for _, run := range r.runs() {
		if run.Readiness != nil {
			ready = append(ready, readyBand(run))
		}
	}
	if ready != nil {
		panels = append(panels, svgplot.Panel{Title: "Ready (the readiness probe)", Bands: ready, States: readyKeys, MarkName: "kill (the probe restarts the container)"})
	}
	if lat := latencySeries(&r.AsWritten); lat != nil {
		panels = append(panels, svgplot.Panel{Title: "Liveness probe answers, as written", YLabel: "seconds", Series: lat})
	}
	return panels
}

// SVG draws the runs: cumulative restarts, the server's state, and the
// liveness probe's latency against its timeout, over hours.
func (r *Report) SVG() ([]byte, error) {
	return svgplot.SVG("hours", 9*vg.Inch, 2.6*vg.Inch, r.panels())
}

func restartSeries(run *Run) svgplot.Series {
	s := svgplot.Series{Name: run.Label, Step: true, X: []float64{0}, Y: []float64{0}}
	for i, k := range run.Result.Kills {
		s.X, s.Y = append(s.X, k.At/3600), append(s.Y, float64(i+1))
	}
	s.X, s.Y = append(s.X, run.Result.Duration/3600), append(s.Y, float64(len(run.Result.Kills)))
	return s
}

// stateKeys are the states of the server's band, in the order of
// stateIndex: green serving, orange recovering, grey stopped.
var stateKeys = []svgplot.State{
	{Name: "serving", Colour: svgplot.Green},
	{Name: "recovering", Colour: svgplot.Orange},
	{Name: "stopped (killed, shutting down, back-off)", Colour: svgplot.Grey},
}

var stateIndex = map[probesim.State]int{probesim.Serving: 0, probesim.Recovering: 1, probesim.Stopped: 2}

func stateBand(run *Run) svgplot.Band {
	b := svgplot.Band{Name: run.Label}
	for _, sp := range run.Result.Spans {
		b.Spans = append(b.Spans, svgplot.Span{From: sp.From / 3600, To: sp.To / 3600, State: stateIndex[sp.State]})
	}
	if len(b.Spans) == 0 {
		b.Spans = []svgplot.Span{{From: 0, To: run.Result.Duration / 3600, State: 0}}
	}
	// The kills on the band: where each grey stretch begins and why.
	for _, k := range run.Result.Kills {
		b.Marks = append(b.Marks, k.At/3600)
	}
	return b
}

// readyKeys are the states of the Ready band: green ready, red not ready.
var readyKeys = []svgplot.State{
	{Name: "ready (in the Service's endpoints)", Colour: svgplot.Green},
	{Name: "not ready", Colour: svgplot.Red},
}

// readyBand is the run's Ready condition over hours, not ready until its
// first change, with the kills marked.
func readyBand(run *Run) svgplot.Band {
	b := svgplot.Band{Name: run.Label}
	ready, from, end := false, 0.0, run.Result.Duration
	state := func(r bool) int {
		if r {
			return 0
		}
		return 1
	}
	for _, c := range run.Result.Condition {
		if c.At >= end {
			break
		}
		if c.At > from {
			b.Spans = append(b.Spans, svgplot.Span{From: from / 3600, To: c.At / 3600, State: state(ready)})
		}
		ready, from = c.Ready, c.At
	}
	b.Spans = append(b.Spans, svgplot.Span{From: from / 3600, To: end / 3600, State: state(ready)})
	for _, k := range run.Result.Kills {
		b.Marks = append(b.Marks, k.At/3600)
	}
	return b
}

func latencySeries(run *Run) []svgplot.Series {
	if run.Liveness == nil {
		return nil
	}
	lat := svgplot.Series{Name: "answer time"}
	for _, s := range run.Result.Samples {
		if s.Probe == "liveness" {
			lat.X, lat.Y = append(lat.X, s.T/3600), append(lat.Y, s.Latency)
		}
	}
	if len(lat.X) == 0 {
		return nil
	}
	to := float64(run.Liveness.Timeout.N)
	limit := svgplot.Series{Name: fmt.Sprintf("timeoutSeconds %d", run.Liveness.Timeout.N), X: []float64{0, run.Result.Duration / 3600}, Y: []float64{to, to}}
	return []svgplot.Series{lat, limit}
}

var results = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("results").Parse(`<p>{{.Object}}, container <code>{{.Container}}</code>{{if .Server}} ({{.Server}}){{end}}, from <code>{{.File}}</code>.
Latency {{.Latency}}; recovery after a kill {{.Recovery}}; {{.Hours}} simulated.</p>
<div class="scroll"><table id="summary"><tr><th></th>{{range .Runs}}<th>{{.Label}}</th>{{end}}</tr>
{{range .Rows}}<tr><td>{{.Name}}</td>{{range .Cells}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table></div>`))
})

var fixSection = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("fix").Parse(`{{if .}}<p class="fix"><b>{{.Rule}}</b>: {{.Fix.Description}}</p>
<p>The strategic merge patch it applies, which the run "with the {{.Rule}} fix" plays:</p><pre class="patch">{{printf "%s" .Fix.Patch}}</pre>
{{- else}}<p>No rule proposes a fix for this container: nothing to compare.</p>{{end}}`))
})

var assumptionsSection = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("assumptions").Parse(`<ul>{{range .}}<li>{{.}}</li>{{end}}</ul>`))
})

// HTML writes one self-contained page in the scan report's look: tiles,
// the summary table and the charts, then the fix and the assumptions.
func (r *Report) HTML() ([]byte, error) {
	figs, err := svgplot.Figures("hours", 16*vg.Centimeter, 6*vg.Centimeter, r.panels())
	if err != nil {
		return nil, err
	}
	type rowT struct {
		Name  string
		Cells []string
	}
	var rows []rowT
	add := func(name string, f func(*Run) string) {
		rw := rowT{Name: name}
		for _, run := range r.runs() {
			rw.Cells = append(rw.Cells, f(run))
		}
		rows = append(rows, rw)
	}
	add("liveness", func(run *Run) string {
		return Describe(run.Liveness) + ", " + DuringRecovery(run.Liveness) + " during recovery"
	})
	add("startup", func(run *Run) string { return Describe(run.Startup) })
	add("readiness", func(run *Run) string {
		if run.Readiness == nil {
			return "none"
		}
		return Describe(run.Readiness) + ", " + DuringRecovery(run.Readiness) + " during recovery"
	})
	add("restarts", func(run *Run) string { return fmt.Sprint(run.Result.Restarts) })
	add("restarts per day", func(run *Run) string { return fmt.Sprintf("%.1f", run.Result.RestartsPerDay) })
	add("time in recovery", func(run *Run) string { return dur(run.Result.RecoverySeconds) })
	add("the loop ends", func(run *Run) string { return run.Verdict() })
	for _, rr := range readyRows {
		add(rr.name, rr.cell)
	}
	var res, fix, assumed bytes.Buffer
	if err := results().Execute(&res, map[string]any{"Object": r.Object.String(), "Container": r.Container, "Server": r.Server, "File": r.File,
		"Latency": r.Latency, "Recovery": dur(r.Recovery), "Hours": dur(r.Hours * 3600), "Runs": r.runs(), "Rows": rows}); err != nil {
		return nil, err
	}
	if err := fixSection().Execute(&fix, r.Fix); err != nil {
		return nil, err
	}
	if err := assumptionsSection().Execute(&assumed, r.Assumptions); err != nil {
		return nil, err
	}
	title := "backfire simulate probe: " + r.Object.String() + ", container " + r.Container
	sub := fmt.Sprintf("%s simulated; latency %s; recovery after a kill %s", dur(r.Hours*3600), r.Latency, dur(r.Recovery))
	return svgplot.Page{Title: title, Subtitle: sub, Tiles: r.tiles(), Results: template.HTML(res.String()), Figures: figs, // built by html/template above
		Sections: []svgplot.Section{
			{ID: "fix", Title: "The fix", Body: template.HTML(fix.String())},
			{ID: "assumptions", Title: "Assumptions", Body: template.HTML(assumed.String())},
		}}.HTML()
}

// tiles are the page's headline numbers: restarts in each run, how much
// of the time the server spent recovering and each run's time not ready.
func (r *Report) tiles() []svgplot.Tile {
	var out []svgplot.Tile
	for _, run := range r.runs() {
		tone := "good"
		if run.Result.Restarts > 0 {
			tone = "bad"
		}
		out = append(out, svgplot.Tile{Value: fmt.Sprint(run.Result.Restarts), Label: "restarts " + run.Label, Tone: tone})
	}
	as := r.AsWritten.Result
	out = append(out, svgplot.Tile{Value: fmt.Sprintf("%d of %d", as.RecoveriesCompleted, as.RecoveriesStarted), Label: "recoveries completed, as written"})
	if as.Duration > 0 {
		out = append(out, svgplot.Tile{Value: fmt.Sprintf("%.0f%%", 100*as.RecoverySeconds/as.Duration), Label: "of the time in recovery, as written"})
	}
	for _, run := range r.runs() {
		if run.Readiness == nil || run.Result.Duration <= 0 {
			continue
		}
		share := run.Ready.NotReadySeconds / run.Result.Duration
		// Good when the only stretch not ready is the start's.
		tone := "good"
		if st := run.Ready; st.FirstReady < 0 || st.NotReadySeconds > st.FirstReady {
			tone = "bad"
		}
		out = append(out, svgplot.Tile{Value: fmt.Sprintf("%.1f%%", 100*share), Label: "of the time not ready " + run.Label, Tone: tone})
	}
	return out
}

// dur prints seconds as "5.5 min", "22.9 h", "45 s".
func dur(s float64) string {
	switch {
	case s >= 2*3600:
		return fmt.Sprintf("%.1f h", s/3600)
	case s >= 120:
		return fmt.Sprintf("%.1f min", s/60)
	}
	return fmt.Sprintf("%.0f s", s)
}
