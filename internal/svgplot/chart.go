// Package svgplot draws the time-series charts of the simulators and reports
// with gonum/plot, as SVG that needs nothing from the network, and wraps them
// in one self-contained HTML page.
package svgplot

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strconv"
	"time"

	stdfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Series is one line: Y[i] at X[i].
type Series struct {
	Name string
	X, Y []float64
	// Step draws the line as steps (Y[i] holds from X[i] until the next
	// point), which is how weights and pod counts change.
	Step bool
	// Colour picks palette[Colour-1]; 0 picks by the series' position.
	Colour int
	// Dash draws the line solid (0), dashed (1) or dotted (2), so that two
	// runs of one quantity share a colour and still tell apart in grey
	// print.
	Dash int
}

// Panel is one chart with its own y axis; panels share the x axis label.
// It draws either lines (Series) or state bands (Bands, coloured by
// States).
type Panel struct {
	Title  string
	YLabel string
	Series []Series
	// Bands draw one row each, the first on top, coloured by state.
	Bands  []Band
	States []State
	// MarkName names the bands' Marks in the legend ("kill").
	MarkName string
	// Seconds marks x values as seconds: the ticks then read 30s, 1m, 1h30m.
	Seconds bool
}

// dashes are the dash patterns of Series.Dash.
var dashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(1.5), vg.Points(2.5)}}

// palette is readable on white and in grey print.
var palette = []color.Color{
	color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
	color.RGBA{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff},
}

// The palette's colours, for Series.Colour.
const (
	Blue = iota + 1
	Red
	Green
	Orange
	Purple
	Grey
)

// SVG stacks the panels vertically, each height tall, and returns the SVG
// document: each panel with its title and its legend on its right.
func SVG(xlabel string, width, height vg.Length, panels []Panel) ([]byte, error) {
	if len(panels) == 0 {
		return nil, fmt.Errorf("chart: no panels")
	}
	canvas := vgsvg.New(width, height*vg.Length(len(panels)))
	dc := draw.New(canvas)
	tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadY: vg.Millimeter * 2, PadX: vg.Millimeter * 2,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	plots := make([]*plot.Plot, len(panels))
	var legend vg.Length
	for i, p := range panels {
		pl, _, err := panelPlot(p, xlabel, true)
		if err != nil {
			return nil, err
		}
		plots[i] = pl
		legend = max(legend, legendWidth(pl, tiles.At(dc, 0, i)))
	}
	// One legend width for all, so that the panels' time axes line up.
	for i, pl := range plots {
		drawLegendRight(pl, tiles.At(dc, 0, i), legend)
	}
	return writeSVG(canvas)
}

// writeSVG returns the canvas as an SVG document whose text falls back from
// Liberation Sans, which it was measured with, to faces of the same widths
// (Arial's metrics are Liberation Sans's).
func writeSVG(canvas *vgsvg.Canvas) ([]byte, error) {
	var buf bytes.Buffer
	if _, err := canvas.WriteTo(&buf); err != nil {
		return nil, err
	}
	return bytes.ReplaceAll(buf.Bytes(), []byte("font-family:Liberation Sans;"), []byte("font-family:Liberation Sans,Arial,Helvetica,sans-serif;")), nil
}

// sans sets every text of the plot in the sans-serif face (gonum's default
// is a serif), size points tall, the title bold.
func sans(pl *plot.Plot, size vg.Length) {
	for _, f := range []*font.Font{&pl.Title.TextStyle.Font, &pl.X.Label.TextStyle.Font, &pl.Y.Label.TextStyle.Font,
		&pl.X.Tick.Label.Font, &pl.Y.Tick.Label.Font, &pl.Legend.TextStyle.Font} {
		f.Variant = "Sans"
		f.Size = size
	}
	pl.Title.TextStyle.Font.Weight = stdfont.WeightBold
}

// panelPlot builds a panel's plot; with legend, the legend entries are
// added to it (a page draws its own). It returns the panel's legend keys.
func panelPlot(p Panel, xlabel string, legend bool) (*plot.Plot, []Key, error) {
	pl := plot.New()
	sans(pl, vg.Points(10))
	pl.Title.Text = p.Title
	pl.X.Label.Text = xlabel
	pl.Y.Label.Text = p.YLabel
	pl.Y.Tick.Marker = plainTicks{}
	if p.Seconds {
		pl.X.Tick.Marker = secondsTicks{}
	}
	pl.Add(plotter.NewGrid())
	var keys []Key
	if len(p.Bands) > 0 {
		b := newBands(p.Bands, p.States)
		pl.Add(b)
		names := make([]string, len(p.Bands))
		for i, row := range p.Bands {
			names[len(p.Bands)-1-i] = row.Name
		}
		pl.NominalY(names...)
		for i, st := range p.States {
			keys = append(keys, Key{Name: st.Name, Colour: b.colours[i], Fill: true})
			if legend {
				pl.Legend.Add(st.Name, swatch{b.colours[i]})
			}
		}
		if p.MarkName != "" {
			keys = append(keys, Key{Name: p.MarkName, Colour: markColour, Mark: true})
			if legend {
				pl.Legend.Add(p.MarkName, markThumb{})
			}
		}
		return pl, keys, nil
	}
	depth := coverDepths(p.Series)
	for _, s := range p.Series {
		if len(s.X) != len(s.Y) {
			return nil, nil, fmt.Errorf("chart: series %q has %d x and %d y values", s.Name, len(s.X), len(s.Y))
		}
	}
	// The pale bands first, under every line, where each line is hidden.
	bands := make([]*plotter.Line, len(p.Series))
	for i, s := range p.Series {
		if depth[i] == 0 {
			continue
		}
		for _, sp := range hiddenSpans(p.Series, i) {
			pts := clip(s, sp[0], sp[1])
			xy := make(plotter.XYs, len(pts))
			for j, pt := range pts {
				xy[j].X, xy[j].Y = pt[0], pt[1]
			}
			band, err := plotter.NewLine(xy)
			if err != nil {
				return nil, nil, fmt.Errorf("chart: series %q: %w", s.Name, err)
			}
			if s.Step {
				band.StepStyle = plotter.PostStep
			}
			band.Color = pale(palette[colourIndex(i, s)])
			band.Width = lineWidth + coverStep*vg.Length(depth[i])
			pl.Add(band)
			bands[i] = band
		}
	}
	covered := false
	for i, s := range p.Series {
		xy := make(plotter.XYs, len(s.X))
		for j := range s.X {
			xy[j].X, xy[j].Y = s.X[j], s.Y[j]
		}
		line, err := plotter.NewLine(xy)
		if err != nil {
			return nil, nil, fmt.Errorf("chart: series %q: %w", s.Name, err)
		}
		if s.Step {
			// The value holds from its point to the next: the line goes
			// across, then up or down.
			line.StepStyle = plotter.PostStep
		}
		line.Color = palette[colourIndex(i, s)]
		line.Dashes = dashes[s.Dash%len(dashes)]
		line.Width = lineWidth
		pl.Add(line)
		k := Key{Name: s.Name, Colour: line.Color, Dash: line.Dashes, Width: line.Width}
		thumbs := []plot.Thumbnailer{line}
		if b := bands[i]; b != nil {
			covered = true
			k.UnderColour, k.UnderWidth = b.Color, b.Width
			thumbs = []plot.Thumbnailer{b, line}
		}
		keys = append(keys, k)
		if legend {
			pl.Legend.Add(s.Name, thumbs...)
		}
	}
	if covered && legend {
		pl.Legend.Add("wide, pale: where a later line hides it")
	}
	return pl, keys, nil
}

// legendGap separates the plotted area from the legend on its right.
const legendGap = 4 * vg.Millimeter

// styleLegend sets the legend's look: small text, thumbnails long enough
// to show a dash pattern, entries from the top left of their area.
func styleLegend(l *plot.Legend) {
	l.TextStyle.Font.Size = vg.Points(9)
	l.TextStyle.Font.Variant = "Sans"
	l.ThumbnailWidth = vg.Points(26)
	l.Top, l.Left = true, true
}

func legendWidth(pl *plot.Plot, c draw.Canvas) vg.Length {
	leg := pl.Legend
	styleLegend(&leg)
	return leg.Rectangle(c).Size().X
}

// drawLegendRight draws the plot with its legend beside it, w wide (0: as
// wide as it needs), on the right of the plotted area, where no line can
// run under it.
func drawLegendRight(pl *plot.Plot, c draw.Canvas, w vg.Length) {
	leg := pl.Legend
	styleLegend(&leg)
	if w == 0 {
		w = leg.Rectangle(c).Size().X
	}
	if w == 0 {
		pl.Draw(c)
		return
	}
	pl.Legend = plot.NewLegend()
	pl.Draw(draw.Crop(c, 0, -(w + legendGap), 0, 0))
	area := draw.Crop(c, c.Size().X-w, 0, 0, 0)
	if pl.Title.Text != "" {
		// Start level with the plotted area, below the title.
		area = draw.Crop(area, 0, 0, 0, -(pl.Title.TextStyle.Rectangle(pl.Title.Text).Size().Y + pl.Title.Padding))
	}
	leg.Draw(area)
	pl.Legend = leg
}

// plainTicks are gonum's default ticks with their labels written without
// trailing zeros: 250, not 250.00.
type plainTicks struct{}

func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i, t := range ticks {
		if t.Label != "" {
			ticks[i].Label = strconv.FormatFloat(t.Value, 'g', 10, 64)
		}
	}
	return ticks
}

// secondsTicks labels an axis of seconds in seconds, minutes and hours at a
// round step (5s, 30s, 1m, 5m, 1h...), about six labels over the range.
type secondsTicks struct{}

var tickSteps = []float64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400}

func (secondsTicks) Ticks(lo, hi float64) []plot.Tick {
	step := tickSteps[len(tickSteps)-1]
	for _, s := range tickSteps {
		if (hi-lo)/s <= 7 {
			step = s
			break
		}
	}
	var ticks []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi; v += step {
		ticks = append(ticks, plot.Tick{Value: v, Label: SecondsLabel(v)})
		if half := v + step/2; half <= hi {
			ticks = append(ticks, plot.Tick{Value: half})
		}
	}
	return ticks
}

// SecondsLabel writes a tick's seconds: 0, 45s, 2m, 1m30s, 1h, 1h30m.
func SecondsLabel(v float64) string {
	d := time.Duration(math.Round(v)) * time.Second
	switch {
	case d == 0:
		return "0"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		m, s := int(d/time.Minute), int((d%time.Minute)/time.Second)
		if s == 0 {
			return fmt.Sprintf("%dm", m)
		}
		return fmt.Sprintf("%dm%02ds", m, s)
	default:
		h, m := int(d/time.Hour), int((d%time.Hour)/time.Minute)
		if m == 0 {
			return fmt.Sprintf("%dh", h)
		}
		return fmt.Sprintf("%dh%02dm", h, m)
	}
}
