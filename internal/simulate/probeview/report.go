package probeview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
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
	FailureThreshold    int    `json:"failureThreshold"`
	FailsDuringRecovery bool   `json:"failsDuringRecovery"`
}

type jsonKill struct {
	AtSeconds  float64 `json:"atSeconds"`
	Probe      string  `json:"probe"`
	RunSeconds float64 `json:"runSeconds"`
	InRecovery bool    `json:"inRecovery"`
}

type jsonRun struct {
	Label               string     `json:"label"`
	Liveness            *jsonProbe `json:"liveness,omitempty"`
	Startup             *jsonProbe `json:"startup,omitempty"`
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
}

func toJSONProbe(p *probesim.Probe) *jsonProbe {
	if p == nil {
		return nil
	}
	return &jsonProbe{p.Name, p.Handler, p.InitialDelay.N, p.Period.N, p.Timeout.N, p.Failure.N, p.FailsDuringRecovery}
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
		jr := jsonRun{Label: run.Label, Liveness: toJSONProbe(run.Liveness), Startup: toJSONProbe(run.Startup),
			Restarts: res.Restarts, RestartsPerDay: round(res.RestartsPerDay), RecoverySeconds: round(res.RecoverySeconds),
			RecoveriesStarted: res.RecoveriesStarted, RecoveriesCompleted: res.RecoveriesCompleted, LoopEnds: res.LoopEnds,
			NeverEndsByArith: run.NeverEnds, BudgetSeconds: run.Budget, Verdict: run.Verdict(), Kills: []jsonKill{}}
		for _, k := range res.Kills {
			jr.Kills = append(jr.Kills, jsonKill{round(k.At), k.Probe, round(k.Run), k.InRecovery})
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

// SVG draws the runs: cumulative restarts, the server's state, and the
// liveness probe's latency against its timeout, over hours.
func (r *Report) SVG() ([]byte, error) {
	var restarts, states []svgplot.Series
	for _, run := range r.runs() {
		restarts = append(restarts, restartSeries(run))
		states = append(states, stateSeries(run))
	}
	panels := []svgplot.Panel{
		{Title: "Restarts (cumulative)", YLabel: "restarts", Series: restarts},
		{Title: "Server: 2 serving, 1 recovering, 0 stopped", YLabel: "state", Series: states},
	}
	if lat := latencySeries(&r.AsWritten); lat != nil {
		panels = append(panels, svgplot.Panel{Title: "Liveness probe answers, as written", YLabel: "seconds", Series: lat})
	}
	return svgplot.SVG("hours", 9*vg.Inch, 2.6*vg.Inch, panels)
}

func restartSeries(run *Run) svgplot.Series {
	s := svgplot.Series{Name: run.Label, Step: true, X: []float64{0}, Y: []float64{0}}
	for i, k := range run.Result.Kills {
		s.X, s.Y = append(s.X, k.At/3600), append(s.Y, float64(i+1))
	}
	s.X, s.Y = append(s.X, run.Result.Duration/3600), append(s.Y, float64(len(run.Result.Kills)))
	return s
}

var stateLevel = map[probesim.State]float64{probesim.Serving: 2, probesim.Recovering: 1, probesim.Stopped: 0}

func stateSeries(run *Run) svgplot.Series {
	s := svgplot.Series{Name: run.Label, Step: true}
	for _, sp := range run.Result.Spans {
		s.X, s.Y = append(s.X, sp.From/3600, sp.To/3600), append(s.Y, stateLevel[sp.State], stateLevel[sp.State])
	}
	if len(s.X) == 0 {
		s.X, s.Y = []float64{0, run.Result.Duration / 3600}, []float64{2, 2}
	}
	return s
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

var body = template.Must(template.New("body").Parse(`<p>{{.Object}}, container <code>{{.Container}}</code>{{if .Server}} ({{.Server}}){{end}}, from <code>{{.File}}</code>.
Latency {{.Latency}}; recovery after a kill {{.Recovery}}; {{.Hours}} simulated.</p>
<table id="summary"><tr><th></th>{{range .Runs}}<th>{{.Label}}</th>{{end}}</tr>
{{range .Rows}}<tr><td>{{.Name}}</td>{{range .Cells}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
{{if .Fix}}<p>Fix ({{.Fix.Rule}}): {{.Fix.Fix.Description}}</p><pre>{{printf "%s" .Fix.Fix.Patch}}</pre>{{end}}
<ul>{{range .Assumptions}}<li>assumed: {{.}}</li>{{end}}</ul>`))

// HTML writes one self-contained page: the summary table and the chart.
func (r *Report) HTML() ([]byte, error) {
	svg, err := r.SVG()
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
	add("restarts", func(run *Run) string { return fmt.Sprint(run.Result.Restarts) })
	add("restarts per day", func(run *Run) string { return fmt.Sprintf("%.1f", run.Result.RestartsPerDay) })
	add("time in recovery", func(run *Run) string { return dur(run.Result.RecoverySeconds) })
	add("the loop ends", func(run *Run) string { return run.Verdict() })
	var b bytes.Buffer
	if err := body.Execute(&b, map[string]any{"Object": r.Object.String(), "Container": r.Container, "Server": r.Server, "File": r.File,
		"Latency": r.Latency, "Recovery": dur(r.Recovery), "Hours": dur(r.Hours * 3600), "Runs": r.runs(), "Rows": rows, "Fix": r.Fix, "Assumptions": r.Assumptions}); err != nil {
		return nil, err
	}
	return svgplot.HTML("simulate probe: "+r.Object.String()+" "+r.Container, template.HTML(b.String()), svg) // built by html/template above
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
