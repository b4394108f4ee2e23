package rolloutview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"
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

// CompareSVG draws the requests each remedy failed at the inputs given,
// stacked by cause.
func CompareSVG(c *Comparison) ([]byte, error) {
	b := c.Result.Base
	var names []string
	// The colours of the causes in the timeline chart.
	stacks := []svgplot.Stack{{Name: "errors of " + c.Broken, Colour: svgplot.Orange}, {Name: "too few Ready pods", Colour: svgplot.Red}, {Name: "no Ready endpoint", Colour: svgplot.Purple}}
	for _, t := range b.Tried {
		names = append(names, t.Remedy)
		stacks[0].Values = append(stacks[0].Values, t.FailedByCause.BrokenVersion)
		stacks[1].Values = append(stacks[1].Values, t.FailedByCause.TooFewReady)
		stacks[2].Values = append(stacks[2].Values, t.FailedByCause.NoEndpoint)
	}
	title := fmt.Sprintf("Failed requests by cause over %s (%s of %s's requests failing, pods starting in %s, %.0f rps)",
		seconds(b.Horizon), percent(b.Case.ErrorRate), c.Broken, b.Case.Start, b.Case.RPS)
	return svgplot.StackedBarsSVG(title, "failed requests", 26*vg.Centimeter, 10*vg.Centimeter, names, stacks)
}

var compareBody = template.Must(template.New("compare").Parse(`<p>Rollout <b>{{.Rollout}}</b>, Argo Rollouts {{.Version}}: a rollback within the rollback window from {{.Broken}}, tried {{len .Result.Remedies}} ways.</p>
<pre>{{.Text}}</pre>`))

// CompareHTML writes one self-contained page: the text and the chart.
func CompareHTML(c *Comparison) ([]byte, error) {
	svg, err := CompareSVG(c)
	if err != nil {
		return nil, err
	}
	var text, b bytes.Buffer
	if err := CompareText(&text, c); err != nil {
		return nil, err
	}
	if err := compareBody.Execute(&b, struct {
		*Comparison
		Text string
	}{c, text.String()}); err != nil {
		return nil, err
	}
	b2 := c.Result.Base
	return svgplot.Page{Title: "backfire simulate rollout --compare: " + c.Rollout, Subtitle: "Argo Rollouts " + c.Version,
		Tiles:   []svgplot.Tile{{Value: fmt.Sprint(len(c.Result.Remedies)), Label: "remedies tried"}, {Value: b2.Least, Label: "loses least at these inputs"}},
		Results: template.HTML(b.String()), Charts: [][]byte{svg}}.HTML() // built by html/template above
}
