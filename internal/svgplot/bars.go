package svgplot

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strconv"

	stdfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Stack is one layer of a stacked bar chart: Values[i] on top of the
// layers before it at category i.
type Stack struct {
	Name   string
	Values []float64
	// Color, when set, replaces the palette's (severities have colours of
	// their own).
	Color color.Color
	// Colour picks palette[Colour-1] when Color is unset; 0 picks by the
	// stack's position.
	Colour int
}

// color is the colour of the stack at position i.
func (s Stack) color(i int) color.Color {
	switch {
	case s.Color != nil:
		return s.Color
	case s.Colour > 0:
		return palette[(s.Colour-1)%len(palette)]
	}
	return palette[i%len(palette)]
}

// StackedBarsSVG draws one bar per category, its height split by stack
// (counts of findings by rule, split by severity), and returns the SVG.
func StackedBarsSVG(title, ylabel string, width, height vg.Length, categories []string, stacks []Stack) ([]byte, error) {
	if len(categories) == 0 || len(stacks) == 0 {
		return nil, fmt.Errorf("chart: no categories or stacks")
	}
	pl := plot.New()
	sans(pl, vg.Points(10))
	pl.Title.Text = title
	pl.Y.Label.Text = ylabel
	pl.Add(plotter.NewGrid())
	barWidth := (width - vg.Centimeter*3) / vg.Length(2*len(categories))
	var below *plotter.BarChart
	for i, s := range stacks {
		if len(s.Values) != len(categories) {
			return nil, fmt.Errorf("chart: stack %q has %d values for %d categories", s.Name, len(s.Values), len(categories))
		}
		bars, err := plotter.NewBarChart(plotter.Values(s.Values), barWidth)
		if err != nil {
			return nil, fmt.Errorf("chart: stack %q: %w", s.Name, err)
		}
		bars.Color = s.color(i)
		bars.LineStyle.Width = 0
		if below != nil {
			bars.StackOn(below)
		}
		below = bars
		pl.Add(bars)
		pl.Legend.Add(s.Name, bars)
	}
	pl.NominalX(categories...)
	canvas := vgsvg.New(width, height)
	drawLegendRight(pl, draw.New(canvas), 0)
	return writeSVG(canvas)
}

// HorizontalStackedBarsSVG draws one horizontal bar per category, the
// first at the top, its length split by stack, with its total at its end,
// and the legend in a row of its own above the plot, where it can cover no
// bar and is the first thing seen when a narrow screen scrolls the chart.
// The height grows with the categories (rowHeight each). The title, when
// given, heads the plot; a page may rather caption the chart itself.
func HorizontalStackedBarsSVG(title, xlabel string, width, rowHeight vg.Length, categories []string, stacks []Stack) ([]byte, error) {
	return horizontalBars(title, xlabel, width, rowHeight, 0, categories, stacks, true)
}

// BarsFigure draws the same bars as HorizontalStackedBarsSVG for a page:
// the title and the legend are the figure's text, which wraps on a narrow
// screen, and the SVG is the plot alone, its text fontSize high.
func BarsFigure(title, xlabel string, width, rowHeight, fontSize vg.Length, categories []string, stacks []Stack) (Figure, error) {
	svg, err := horizontalBars("", xlabel, width, rowHeight, fontSize, categories, stacks, false)
	if err != nil {
		return Figure{}, err
	}
	f := Figure{Title: title, SVG: svg}
	for i, s := range stacks {
		f.Keys = append(f.Keys, Key{Name: s.Name, Colour: s.color(i), Fill: true})
	}
	return f, nil
}

// horizontalBars draws the bars, with the legend in a strip above the plot
// when legend is set; a fontSize of 0 keeps gonum's.
func horizontalBars(title, xlabel string, width, rowHeight, fontSize vg.Length, categories []string, stacks []Stack, legend bool) ([]byte, error) {
	if len(categories) == 0 || len(stacks) == 0 {
		return nil, fmt.Errorf("chart: no categories or stacks")
	}
	n := len(categories)
	pl := plot.New()
	pl.Title.Text = title
	pl.X.Label.Text = xlabel
	pl.X.Min = 0
	pl.X.Tick.Marker = plainTicks{}
	for _, f := range []*font.Font{&pl.Title.TextStyle.Font, &pl.X.Label.TextStyle.Font, &pl.X.Tick.Label.Font, &pl.Y.Tick.Label.Font} {
		f.Variant = "Sans"
		if fontSize > 0 {
			f.Size = fontSize
		}
	}
	pl.Title.TextStyle.Font.Weight = stdfont.WeightBold
	pl.Add(plotter.NewGrid())
	// Category i is drawn at y = n-1-i, so the first is at the top.
	flip := func(vs []float64) plotter.Values {
		out := make(plotter.Values, n)
		for i, v := range vs {
			out[n-1-i] = v
		}
		return out
	}
	totals := make([]float64, n)
	var legends []plot.Legend
	var below *plotter.BarChart
	for i, s := range stacks {
		if len(s.Values) != n {
			return nil, fmt.Errorf("chart: stack %q has %d values for %d categories", s.Name, len(s.Values), n)
		}
		bars, err := plotter.NewBarChart(flip(s.Values), rowHeight*0.6)
		if err != nil {
			return nil, fmt.Errorf("chart: stack %q: %w", s.Name, err)
		}
		bars.Horizontal = true
		bars.Color = s.color(i)
		bars.LineStyle.Width = 0
		if below != nil {
			bars.StackOn(below)
		}
		below = bars
		pl.Add(bars)
		// One legend per stack, side by side: gonum's legend stacks its
		// entries in a column.
		l := plot.NewLegend()
		l.Top, l.Left = true, true
		l.TextStyle.Font.Variant = "Sans"
		l.Add(s.Name, bars)
		legends = append(legends, l)
		for j, v := range s.Values {
			totals[j] += v
		}
	}
	var xys plotter.XYs
	var labels []string
	most := 0.0
	for i, t := range totals {
		xys = append(xys, plotter.XY{X: t, Y: float64(n - 1 - i)})
		labels = append(labels, total(t))
		most = max(most, t)
	}
	ends, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
	if err != nil {
		return nil, err
	}
	for i := range ends.TextStyle {
		ends.TextStyle[i].YAlign = draw.YCenter
		ends.TextStyle[i].Font.Variant = "Sans"
		if fontSize > 0 {
			ends.TextStyle[i].Font.Size = fontSize
		}
	}
	ends.Offset = vg.Point{X: vg.Points(4)}
	pl.Add(ends)
	pl.X.Max = most * 1.12 // room for the totals
	names := make([]string, n)
	for i, c := range categories {
		names[n-1-i] = c
	}
	pl.NominalY(names...)

	strip := vg.Points(22)
	if !legend {
		legends, strip = nil, 0
	}
	height := rowHeight*vg.Length(n) + 2*vg.Centimeter + strip
	canvas := vgsvg.New(width, height)
	dc := draw.New(canvas)
	x := vg.Points(6)
	for _, l := range legends {
		c := draw.Crop(dc, x, 0, height-strip, -vg.Points(4))
		r := l.Rectangle(c)
		l.Draw(c)
		x += r.Max.X - r.Min.X + vg.Points(18)
	}
	pl.Draw(draw.Crop(dc, 0, 0, 0, -strip))
	var buf bytes.Buffer
	if _, err := canvas.WriteTo(&buf); err != nil {
		return nil, err
	}
	// The text was measured with Liberation Sans, whose metrics are
	// Arial's: a browser without it falls back to a face of the same widths.
	return bytes.ReplaceAll(buf.Bytes(), []byte("font-family:Liberation Sans;"), []byte("font-family:Liberation Sans,Arial,Helvetica,sans-serif;")), nil
}

// total labels a bar's end: a count as it is, a sum of fractional counts
// (requests failed at a rate) without its float noise (10656.000000000047).
func total(t float64) string {
	switch r := math.Round(t); {
	case math.Abs(t-r) < 1e-6*max(1, math.Abs(t)):
		return strconv.FormatFloat(r, 'f', -1, 64)
	case math.Abs(t) >= 100:
		return strconv.FormatFloat(r, 'f', 0, 64)
	}
	return strconv.FormatFloat(t, 'g', 3, 64)
}
