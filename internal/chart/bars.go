package chart

import (
	"bytes"
	"fmt"

	"gonum.org/v1/plot"
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
	// Colour picks palette[Colour-1]; 0 picks by the stack's position.
	Colour int
}

// StackedBarsSVG draws one bar per category, its height split by stack
// (counts of findings by rule, split by severity), and returns the SVG.
func StackedBarsSVG(title, ylabel string, width, height vg.Length, categories []string, stacks []Stack) ([]byte, error) {
	if len(categories) == 0 || len(stacks) == 0 {
		return nil, fmt.Errorf("chart: no categories or stacks")
	}
	pl := plot.New()
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
		bars.Color = palette[i%len(palette)]
		if s.Colour > 0 {
			bars.Color = palette[(s.Colour-1)%len(palette)]
		}
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
	var buf bytes.Buffer
	if _, err := canvas.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
