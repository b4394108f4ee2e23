package svgplot

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// State is one state a band can be in, with its colour.
type State struct {
	Name string
	// Colour picks palette[Colour-1].
	Colour int
}

// Band is one row of a state chart: which state holds from when to when.
type Band struct {
	Name  string
	Spans []Span
	// Marks are the x of events on the row (a probe's kills), drawn as
	// small dark triangles hanging from its top edge, over the states.
	Marks []float64
}

// Span is a stretch of x in one state (an index into Panel.States).
type Span struct {
	From, To float64
	State    int
}

// bands draws each Band as a row of filled rectangles, the first on top:
// a colour per state, so a state that flips often reads as stripes, not as
// a wall of vertical lines.
type bands struct {
	rows    []Band
	colours []color.Color
}

// markColour is the colour of Band.Marks: the page's ink, apart from every
// state colour.
var markColour = color.RGBA{R: 0x1f, G: 0x23, B: 0x28, A: 0xff}

// markSize is the width and height of a mark's triangle.
const markSize = 5 * vg.Length(1)

func newBands(rows []Band, states []State) bands {
	b := bands{rows: rows}
	for _, s := range states {
		b.colours = append(b.colours, palette[(max(s.Colour, 1)-1)%len(palette)])
	}
	return b
}

// merged joins neighbouring spans in the same state, so a long stay is
// one rectangle.
func merged(spans []Span) []Span {
	var out []Span
	for _, s := range spans {
		if n := len(out); n > 0 && out[n-1].State == s.State && out[n-1].To == s.From {
			out[n-1].To = s.To
			continue
		}
		out = append(out, s)
	}
	return out
}

// Plot implements plot.Plotter.
func (b bands) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	n := len(b.rows)
	for i, row := range b.rows {
		y := float64(n - 1 - i)
		top, bottom := trY(y+0.35), trY(y-0.35)
		for _, s := range merged(row.Spans) {
			if s.State < 0 || s.State >= len(b.colours) || !(s.To > s.From) {
				continue
			}
			x0, x1 := trX(s.From), trX(s.To)
			c.FillPolygon(b.colours[s.State], c.ClipPolygonXY([]vg.Point{{X: x0, Y: bottom}, {X: x1, Y: bottom}, {X: x1, Y: top}, {X: x0, Y: top}}))
		}
		for _, m := range row.Marks {
			if math.IsNaN(m) || math.IsInf(m, 0) {
				continue
			}
			x := trX(m)
			c.FillPolygon(markColour, c.ClipPolygonXY([]vg.Point{{X: x - markSize/2, Y: top}, {X: x + markSize/2, Y: top}, {X: x, Y: top - markSize}}))
		}
	}
}

// DataRange implements plot.DataRanger.
func (b bands) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	for _, row := range b.rows {
		for _, s := range row.Spans {
			xmin, xmax = min(xmin, s.From), max(xmax, s.To)
		}
	}
	if xmin > xmax {
		xmin, xmax = 0, 1
	}
	return xmin, xmax, -0.5, float64(len(b.rows)) - 0.5
}

// swatch is a state's legend thumbnail: a filled box.
type swatch struct{ color.Color }

// Thumbnail implements plot.Thumbnailer.
func (s swatch) Thumbnail(c *draw.Canvas) {
	r := c.Rectangle
	c.FillPolygon(s.Color, []vg.Point{r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}})
}

// markThumb is the legend thumbnail of Band.Marks.
type markThumb struct{}

// Thumbnail implements plot.Thumbnailer.
func (markThumb) Thumbnail(c *draw.Canvas) {
	r := c.Rectangle
	mid := (r.Min.X + r.Max.X) / 2
	c.FillPolygon(markColour, []vg.Point{{X: mid - markSize, Y: r.Max.Y}, {X: mid + markSize, Y: r.Max.Y}, {X: mid, Y: r.Min.Y}})
}
