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

// CompareSchema names the JSON document of a comparison.
const CompareSchema = "backfire/v1/rollout-comparison"

// Comparison is a remedy comparison for one Rollout.
type Comparison struct {
	Rollout string
	Version string
	// Broken is the revision rolled back from.
	Broken string
	Inputs map[string]any
	Notes  []string
	Result *rolloutsim.Comparison
}

// CompareJSON writes the comparison.
func CompareJSON(w io.Writer, c *Comparison) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Schema  string         `json:"schema"`
		Rollout string         `json:"rollout"`
		Version string         `json:"version"`
		Inputs  map[string]any `json:"inputs,omitempty"`
		Notes   []string       `json:"notes,omitempty"`
		*rolloutsim.Comparison
	}{CompareSchema, c.Rollout, c.Version, c.Inputs, slices.Concat(c.Notes, c.Result.Notes), c.Result})
}

func seconds(v float64) string {
	if v < 0 {
		return "not within the cap"
	}
	return svgplot.SecondsLabel(v)
}

func percent(v float64) string {
	if v < 0.001 && v > 0 {
		return fmt.Sprintf("%.2f%%", 100*v)
	}
	return fmt.Sprintf("%.1f%%", 100*v)
}

// CompareText writes the remedies, how each did at the inputs given, and
// which lost least in each case of the sweep.
func CompareText(w io.Writer, c *Comparison) error {
	r := c.Result
	fmt.Fprintf(w, "Rollout %s, Argo Rollouts %s: a rollback within the rollback window from %s, tried %d ways.\n", c.Rollout, rollout.VersionName(c.Version), c.Broken, len(r.Remedies))
	for _, n := range slices.Concat(c.Notes, r.Notes) {
		fmt.Fprintf(w, "  - %s\n", n)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, rem := range r.Remedies {
		fmt.Fprintf(tw, "  %s\t%s\n", rem.Name, rem.Change)
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	b := r.Base
	fmt.Fprintf(w, "\nAt these inputs (%s, the version rolled back from, failing %s of its requests; pods starting in %s; %.0f rps), over %s, the time the slowest remedy took to settle (a run that settled earlier repeats its last second):\n",
		c.Broken, percent(b.Case.ErrorRate), b.Case.Start, b.Case.RPS, seconds(b.Horizon))
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "remedy\tfailed\terrors of %s\ttoo few Ready pods\tno Ready endpoint\t%s got requests until\tsettled at\toutcome\t\n", c.Broken, c.Broken)
	for _, t := range b.Tried {
		mark := ""
		if t.Remedy == b.Least {
			mark = " *"
		}
		fmt.Fprintf(tw, "%s%s\t%.0f (%s)\t%.0f\t%.0f\t%.0f\t%s\t%s\t%s\t\n", t.Remedy, mark, t.FailedRequests, percent(t.FailedShare),
			t.FailedByCause.BrokenVersion, t.FailedByCause.TooFewReady, t.FailedByCause.NoEndpoint, seconds(t.BrokenUntil), seconds(t.Settled), t.Outcome)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "* loses least: %s.\n", b.Least)
	if len(r.Cases) == 0 {
		return nil
	}

	fmt.Fprintf(w, "\nOver what the manifest cannot know, %d cases (the share of requests failed, each case over its own slowest remedy; * loses least):\n", len(r.Cases))
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"errors of " + c.Broken, "pod start", "rps"}
	for _, rem := range r.Remedies {
		head = append(head, rem.Name)
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, cr := range r.Cases {
		cells := []string{percent(cr.Case.ErrorRate), cr.Case.Start, fmt.Sprintf("%.0f", cr.Case.RPS)}
		for _, t := range cr.Tried {
			cell := percent(t.FailedShare)
			if t.Remedy == cr.Least {
				cell = "*" + cell
			}
			cells = append(cells, cell)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var wins []string
	for _, rem := range r.Remedies {
		if n := r.Wins[rem.Name]; n > 0 {
			wins = append(wins, fmt.Sprintf("%s in %d", rem.Name, n))
		}
	}
	fmt.Fprintf(w, "Loses least: %s of %d cases.\n", strings.Join(wins, ", "), len(r.Cases))
	return nil
}

// failedByCause gives each remedy's name and its failed requests stacked by
// cause, in the colours of the causes in the timeline chart.
func failedByCause(c *Comparison) ([]string, []svgplot.Stack) {
	var names []string
	stacks := []svgplot.Stack{{Name: "errors of " + c.Broken, Colour: svgplot.Orange}, {Name: "too few Ready pods", Colour: svgplot.Red}, {Name: "no Ready endpoint", Colour: svgplot.Purple}}
	for _, t := range c.Result.Base.Tried {
		names = append(names, t.Remedy)
		stacks[0].Values = append(stacks[0].Values, t.FailedByCause.BrokenVersion)
		stacks[1].Values = append(stacks[1].Values, t.FailedByCause.TooFewReady)
		stacks[2].Values = append(stacks[2].Values, t.FailedByCause.NoEndpoint)
	}
	return names, stacks
}

// CompareSVG draws the requests each remedy failed at the inputs given,
// stacked by cause.
func CompareSVG(c *Comparison) ([]byte, error) {
	b := c.Result.Base
	names, stacks := failedByCause(c)
	title := fmt.Sprintf("Failed requests by cause over %s (%s of %s's requests failing, pods starting in %s, %.0f rps)",
		seconds(b.Horizon), percent(b.Case.ErrorRate), c.Broken, b.Case.Start, b.Case.RPS)
	return svgplot.StackedBarsSVG(title, "failed requests", 26*vg.Centimeter, 10*vg.Centimeter, names, stacks)
}

// compareFigure draws the requests each remedy failed at the inputs given,
// stacked by cause, for the page: one horizontal bar per remedy, its name
// beside it and its total at its end, so that it reads at a phone's width.
func compareFigure(c *Comparison) (svgplot.Figure, error) {
	b := c.Result.Base
	names, stacks := failedByCause(c)
	f, err := svgplot.BarsFigure(fmt.Sprintf("Failed requests by cause at these inputs, over %s", seconds(b.Horizon)),
		"failed requests", 12*vg.Centimeter, vg.Centimeter, vg.Points(12), names, stacks)
	f.Narrow = true
	return f, err
}

var compareResults = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("compare").Parse(`<p>Rollout <b>{{.Rollout}}</b>, Argo Rollouts {{.Version}}: a rollback within the rollback window from {{.Broken}}, tried {{len .Result.Remedies}} ways (the remedies are described after the results).</p>
<p>At these inputs: {{.Broken}}, the version rolled back from, failing {{.ErrorRate}} of its requests; pods starting in {{.Result.Base.Case.Start}}; {{.RPS}} rps. Each run is counted over {{.Horizon}}, the time the slowest remedy took to settle (a run that settled earlier repeats its last second). <b class="least">In bold</b>: the remedy that loses least.</p>
<div class="scroll"><table class="compare"><tr><th>remedy</th><th>failed</th><th>errors of {{.Broken}}</th><th>too few Ready pods</th><th>no Ready endpoint</th><th>{{.Broken}} got requests until</th><th>settled at</th><th>outcome</th></tr>
{{range .Base}}<tr><td{{if .Least}} class="least"{{end}}>{{.Remedy}}</td><td{{if .Least}} class="least"{{end}}>{{.Failed}}</td>{{range .Cells}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table></div>`))
})

var compareSweep = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("sweep").Parse(`<p>Over what the manifest cannot know, {{len .Rows}} cases: the share of requests each remedy failed, each case over its own slowest remedy; in bold, the one that lost least.</p>
<div class="scroll"><table class="compare sweep"><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td{{if .Least}} class="least"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</table></div>
<p>Loses least: {{.Wins}}.</p>`))
})

var compareRemedies = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("remedies").Parse(`<dl class="remedies">{{range .}}<dt>{{.Name}}</dt><dd>{{.Change}}</dd>{{end}}</dl>`))
})

// CompareHTML writes one self-contained page in the look of the other
// simulate pages: tiles, the results at the inputs (a chart by cause and
// a table), the sweep, then the remedies and the inputs.
func CompareHTML(c *Comparison) ([]byte, error) {
	fig, err := compareFigure(c)
	if err != nil {
		return nil, err
	}
	r := c.Result
	b := r.Base
	type baseRow struct {
		Remedy, Failed string
		Least          bool
		Cells          []string
	}
	var base []baseRow
	for _, t := range b.Tried {
		base = append(base, baseRow{Remedy: t.Remedy, Failed: fmt.Sprintf("%.0f (%s)", t.FailedRequests, percent(t.FailedShare)), Least: t.Remedy == b.Least,
			Cells: []string{fmt.Sprintf("%.0f", t.FailedByCause.BrokenVersion), fmt.Sprintf("%.0f", t.FailedByCause.TooFewReady), fmt.Sprintf("%.0f", t.FailedByCause.NoEndpoint),
				seconds(t.BrokenUntil), seconds(t.Settled), t.Outcome}})
	}
	var res bytes.Buffer
	if err := compareResults().Execute(&res, struct {
		*Comparison
		ErrorRate, RPS, Horizon string
		Base                    []baseRow
	}{c, percent(b.Case.ErrorRate), fmt.Sprintf("%.0f", b.Case.RPS), seconds(b.Horizon), base}); err != nil {
		return nil, err
	}
	var sections []svgplot.Section
	if len(r.Cases) > 0 {
		type cell struct {
			Text  string
			Least bool
		}
		head := []string{"errors of " + c.Broken, "pod start", "rps"}
		for _, rem := range r.Remedies {
			head = append(head, rem.Name)
		}
		var rows [][]cell
		for _, cr := range r.Cases {
			row := []cell{{Text: percent(cr.Case.ErrorRate)}, {Text: cr.Case.Start}, {Text: fmt.Sprintf("%.0f", cr.Case.RPS)}}
			for _, t := range cr.Tried {
				row = append(row, cell{Text: percent(t.FailedShare), Least: t.Remedy == cr.Least})
			}
			rows = append(rows, row)
		}
		var wins []string
		for _, rem := range r.Remedies {
			if n := r.Wins[rem.Name]; n > 0 {
				wins = append(wins, fmt.Sprintf("%s in %d", rem.Name, n))
			}
		}
		var sw bytes.Buffer
		if err := compareSweep().Execute(&sw, struct {
			Head []string
			Rows [][]cell
			Wins string
		}{head, rows, fmt.Sprintf("%s of %d cases", strings.Join(wins, ", "), len(r.Cases))}); err != nil {
			return nil, err
		}
		sections = append(sections, svgplot.Section{ID: "sweep", Title: "Over the sweep", Body: template.HTML(sw.String())}) // built by html/template
	}
	var rem, inputs bytes.Buffer
	if err := compareRemedies().Execute(&rem, r.Remedies); err != nil {
		return nil, err
	}
	sections = append(sections, svgplot.Section{ID: "remedies", Title: "The remedies", Body: template.HTML(rem.String())}) // built by html/template
	if notes := slices.Concat(c.Notes, r.Notes); len(notes) > 0 {
		if err := inputsSection().Execute(&inputs, notes); err != nil {
			return nil, err
		}
		sections = append(sections, svgplot.Section{ID: "inputs", Title: "Inputs", Body: template.HTML(inputs.String())}) // built by html/template
	}
	// Numbers in the tiles, as on the other pages; the remedies' names in
	// the labels, where they wrap.
	tiles := []svgplot.Tile{{Value: fmt.Sprint(len(r.Remedies)), Label: "remedies tried"}}
	for _, t := range b.Tried {
		switch {
		case t.Remedy == b.Least:
			tiles = append(tiles, svgplot.Tile{Value: fmt.Sprintf("%.0f", t.FailedRequests), Label: fmt.Sprintf("failed requests (%s) with %s, which loses least at these inputs", percent(t.FailedShare), t.Remedy), Tone: "good"})
		case t.Remedy == "as-written":
			tiles = append(tiles, svgplot.Tile{Value: fmt.Sprintf("%.0f", t.FailedRequests), Label: fmt.Sprintf("failed requests (%s) as written", percent(t.FailedShare)), Tone: "bad"})
		}
	}
	return svgplot.Page{Title: "backfire simulate rollout --compare: " + c.Rollout, Subtitle: "Argo Rollouts " + rollout.VersionName(c.Version) + ", a rollback within the window from " + c.Broken,
		Tiles: tiles, Results: template.HTML(res.String()), Figures: []svgplot.Figure{fig}, Sections: sections}.HTML() // built by html/template above
}
