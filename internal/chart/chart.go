// Package chart draws the time-series charts of the simulators and reports
// with gonum/plot, as SVG that needs nothing from the network, and wraps them
// in one self-contained HTML page.
package chart

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Series is one line: Y[i] at X[i].
type Series struct {
	Name string
	X, Y []float64
	// Step draws the line as steps (a value holds until the next point),
	// which is how weights and pod counts change.
	Step bool
}

// Panel is one chart with its own y axis; panels share the x axis label.
type Panel struct {
	Title  string
	YLabel string
	Series []Series
}

// palette is readable on white and in grey print.
var palette = []color.Color{
	color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
}

// SVG stacks the panels vertically, each height tall, and returns the SVG
// document.
func SVG(xlabel string, width, height vg.Length, panels []Panel) ([]byte, error) {
	if len(panels) == 0 {
		return nil, fmt.Errorf("chart: no panels")
	}
	canvas := vgsvg.New(width, height*vg.Length(len(panels)))
	dc := draw.New(canvas)
	tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadY: vg.Millimeter * 2, PadX: vg.Millimeter * 2,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	for i, p := range panels {
		pl, err := panelPlot(p, xlabel)
		if err != nil {
			return nil, err
		}
		pl.Draw(tiles.At(dc, 0, i))
	}
	var buf bytes.Buffer
	if _, err := canvas.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func panelPlot(p Panel, xlabel string) (*plot.Plot, error) {
	pl := plot.New()
	pl.Title.Text = p.Title
	pl.X.Label.Text = xlabel
	pl.Y.Label.Text = p.YLabel
	pl.Legend.Top = true
	pl.Add(plotter.NewGrid())
	for i, s := range p.Series {
		if len(s.X) != len(s.Y) {
			return nil, fmt.Errorf("chart: series %q has %d x and %d y values", s.Name, len(s.X), len(s.Y))
		}
		xy := make(plotter.XYs, len(s.X))
		for j := range s.X {
			xy[j].X, xy[j].Y = s.X[j], s.Y[j]
		}
		line, err := plotter.NewLine(xy)
		if err != nil {
			return nil, fmt.Errorf("chart: series %q: %w", s.Name, err)
		}
		if s.Step {
			line.StepStyle = plotter.PreStep
		}
		line.Color = palette[i%len(palette)]
		line.Width = vg.Points(1.5)
		pl.Add(line)
		pl.Legend.Add(s.Name, line)
	}
	return pl, nil
}

var page = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:70em;color:#222}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:right}
th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}
figure{margin:1em 0}pre{background:#f7f7f7;padding:.8em;overflow-x:auto}</style></head>
<body><h1>{{.Title}}</h1>{{.Body}}{{range .Charts}}<figure class="chart">{{.}}</figure>{{end}}</body></html>
`))

// HTML returns one self-contained page: a title, a body the caller built
// (already escaped: use html/template to build it), and the charts inline.
func HTML(title string, body template.HTML, svgs ...[]byte) ([]byte, error) {
	charts := make([]template.HTML, len(svgs))
	for i, s := range svgs {
		charts[i] = template.HTML(stripXMLHeader(s)) // our own SVG, inlined
	}
	var buf bytes.Buffer
	err := page.Execute(&buf, struct {
		Title  string
		Body   template.HTML
		Charts []template.HTML
	}{title, body, charts})
	return buf.Bytes(), err
}

// stripXMLHeader drops the <?xml ...?> line, which is not allowed inside
// HTML.
func stripXMLHeader(svg []byte) []byte {
	if bytes.HasPrefix(svg, []byte("<?xml")) {
		if i := bytes.Index(svg, []byte("?>")); i >= 0 {
			return bytes.TrimLeft(svg[i+2:], "\r\n")
		}
	}
	return svg
}
