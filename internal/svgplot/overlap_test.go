package svgplot

import (
	"regexp"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
)

// A step holds its value until the next point: from (0,0) to (10,100) the
// line runs across at 0 to x=10, then up. Before, it went up at x=0 (gonum's
// PreStep), a step early.
func TestStepHoldsUntilTheNextPoint(t *testing.T) {
	figs, err := Figures("x", 10*vg.Centimeter, 5*vg.Centimeter, []Panel{{Title: "p", Series: []Series{
		{Name: "w", X: []float64{0, 10, 20}, Y: []float64{0, 100, 100}, Step: true, Colour: Blue}}}})
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`<path d="M([0-9.]+),([0-9.]+)L([0-9.]+),([0-9.]+)[^"]*" style="fill:none;stroke:#1F77B4`).FindStringSubmatch(string(figs[0].SVG))
	if m == nil {
		t.Fatalf("no blue line in\n%s", figs[0].SVG)
	}
	if m[2] != m[4] || m[1] == m[3] {
		t.Errorf("the step's first move goes from (%s,%s) to (%s,%s): want across, at the same y", m[1], m[2], m[3], m[4])
	}
}

// A line a later one lies on is drawn wider and paler, the key shows it,
// and the figure says what that means; a dashed line of another colour
// hides nothing.
func TestCoveredLineIsDrawnWide(t *testing.T) {
	x := []float64{0, 10, 20}
	weight := Series{Name: "weight", X: x, Y: []float64{0, 100, 100}, Step: true, Colour: Blue}
	share := Series{Name: "share", X: x, Y: []float64{0, 100, 100}, Step: true, Colour: Red}
	offered := Series{Name: "offered", X: x, Y: []float64{0, 100, 100}, Step: true, Colour: Grey, Dash: 2}
	if d := coverDepths([]Series{weight, share}); d[0] != 1 || d[1] != 0 {
		t.Errorf("depths %v, want [1 0]", d)
	}
	if d := coverDepths([]Series{share, offered}); d[0] != 0 {
		t.Errorf("a dotted grey line covers a red one: depths %v", d)
	}
	if d := coverDepths([]Series{weight, {Name: "apart", X: x, Y: []float64{5, 50, 50}, Step: true}}); d[0] != 0 {
		t.Errorf("lines apart cover: depths %v", d)
	}
	figs, err := Figures("x", 10*vg.Centimeter, 5*vg.Centimeter, []Panel{{Title: "p", Series: []Series{weight, share}}})
	if err != nil {
		t.Fatal(err)
	}
	k := figs[0].Keys
	if len(k) != 2 || k[0].UnderWidth <= k[0].Width || k[1].UnderWidth != 0 || k[0].Width != k[1].Width || figs[0].Note != CoveredNote {
		t.Errorf("keys %+v, note %q", k, figs[0].Note)
	}
	svg, err := SVG("x", 10*vg.Centimeter, 5*vg.Centimeter, []Panel{{Title: "p", Series: []Series{weight, share}}})
	if err != nil || !strings.Contains(string(svg), "wide, pale") {
		t.Errorf("the SVG's legend does not say a line is under another: %v", err)
	}
}

// A state band fills a rectangle per stay in a state, in the state's
// colour, and merges neighbouring spans in the same state.
func TestBandsFillEachState(t *testing.T) {
	p := Panel{Title: "state", States: []State{{Name: "up", Colour: Green}, {Name: "down", Colour: Orange}},
		Bands: []Band{{Name: "run", Spans: []Span{{0, 1, 0}, {1, 2, 0}, {2, 3, 1}, {3, 4, 0}}}}}
	figs, err := Figures("h", 10*vg.Centimeter, 5*vg.Centimeter, []Panel{p})
	if err != nil {
		t.Fatal(err)
	}
	s := string(figs[0].SVG)
	if g, o := strings.Count(s, "fill:#2CA02C"), strings.Count(s, "fill:#FF7F0E"); g != 2 || o != 1 {
		t.Errorf("%d green and %d orange rectangles, want 2 and 1", g, o)
	}
	if len(figs[0].Keys) != 2 || !figs[0].Keys[0].Fill {
		t.Errorf("keys %+v", figs[0].Keys)
	}
}

// Tick labels carry no trailing zeros (gonum's default wrote "250.00" for
// a count of restarts).
func TestPlainTickLabels(t *testing.T) {
	var labels []string
	for _, tk := range (plainTicks{}).Ticks(0, 264) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if got := strings.Join(labels, " "); strings.Contains(got, ".") || !strings.Contains(got, "0") {
		t.Errorf("labels %q", got)
	}
	for _, tk := range (plainTicks{}).Ticks(0, 1.1) {
		if len(tk.Label) > 4 {
			t.Errorf("label %q", tk.Label)
		}
	}
}

// The pale band is drawn only where the line is hidden: the fix's restarts
// lie on the run as written until its first kill, and part from there.
func TestPaleOnlyWhereHidden(t *testing.T) {
	asWritten := Series{Name: "as written", X: []float64{0, 1, 2, 3, 24}, Y: []float64{0, 1, 2, 3, 3}, Step: true}
	fixed := Series{Name: "fixed", X: []float64{0, 24}, Y: []float64{0, 0}, Step: true}
	got := hiddenSpans([]Series{asWritten, fixed}, 0)
	if len(got) != 1 || got[0] != [2]float64{0, 1} {
		t.Fatalf("hidden %v, want [[0 1]]", got)
	}
	if pts := clip(asWritten, 0, 1); len(pts) != 2 || pts[0] != [2]float64{0, 0} || pts[1] != [2]float64{1, 0} {
		t.Errorf("the band's points %v, want the step at 0 from 0 to 1", pts)
	}
	// Two lines that meet again: two stretches, not one from the first to the last.
	other := Series{Name: "other", X: []float64{0, 1, 2, 3, 24}, Y: []float64{0, 5, 2, 9, 3}, Step: true}
	if got := hiddenSpans([]Series{asWritten, other}, 0); len(got) != 2 || got[0] != [2]float64{0, 1} || got[1] != [2]float64{2, 3} {
		t.Errorf("hidden %v, want [[0 1] [2 3]]", got)
	}
}
