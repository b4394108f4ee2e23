package svgplot

import (
	"cmp"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot/vg"
)

// A line drawn before another with the same values is hidden under it
// wherever they agree (a weight and the share of requests it sends, two runs
// at 0). Where it is hidden, and only there, a wide pale band of its colour
// is drawn under it, one step wider per line that covers it, so that it
// shows around the lines drawn over it; elsewhere it is an ordinary line.

// lineWidth and coverStep are the width of a line nothing covers and what
// each covering line adds (vg.Length is in points); maxDepth caps the
// widening.
const (
	lineWidth vg.Length = 1.5
	coverStep vg.Length = 1.75
	maxDepth            = 3
)

// CoveredNote says what a wide, pale line means, in the legend of a chart
// that has one.
const CoveredNote = "a wide, pale band shows a line where it runs under another drawn over it with the same values"

// coverDepths returns, for each series, how many lines drawn after it
// cover it in turn (0: it is on top wherever it is); a series is covered
// when a later one has its values over more than 0.5% of the x range and
// hides it there: a solid line, or a dashed one of the same colour, which
// would read as one solid line with it.
func coverDepths(series []Series) []int {
	depth := make([]int, len(series))
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		if len(s.X) > 0 {
			lo, hi = min(lo, s.X[0]), max(hi, s.X[len(s.X)-1])
		}
	}
	span := hi - lo
	if !(span > 0) {
		return depth
	}
	for i := len(series) - 1; i >= 0; i-- {
		for j := i + 1; j < len(series); j++ {
			hides := series[j].Dash == 0 || colourIndex(i, series[i]) == colourIndex(j, series[j])
			if hides && depth[j]+1 > depth[i] && coveredLength(series[i], series[j]) > 0.005*span {
				depth[i] = min(depth[j]+1, maxDepth)
			}
		}
	}
	return depth
}

// colourIndex is the palette index the series at position i is drawn in.
func colourIndex(i int, s Series) int {
	if s.Colour > 0 {
		return (s.Colour - 1) % len(palette)
	}
	return i % len(palette)
}

// coveredLength is the length of x over which b has a's values.
func coveredLength(a, b Series) float64 {
	var sum float64
	for _, sp := range coveredSpans(a, b) {
		sum += sp[1] - sp[0]
	}
	return sum
}

// coveredSpans are the stretches of x over which b has a's values, in
// order, neighbours joined.
func coveredSpans(a, b Series) [][2]float64 {
	if len(a.X) < 2 || len(b.X) < 2 || !slices.IsSorted(a.X) || !slices.IsSorted(b.X) {
		return nil
	}
	lo, hi := max(a.X[0], b.X[0]), min(a.X[len(a.X)-1], b.X[len(b.X)-1])
	if !(hi > lo) {
		return nil
	}
	xs := append(slices.Clone(a.X), b.X...)
	slices.Sort(xs)
	xs = slices.Compact(xs)
	var out [][2]float64
	for k := 0; k+1 < len(xs); k++ {
		x0, x1 := xs[k], xs[k+1]
		if x0 < lo || x1 > hi {
			continue
		}
		mid := (x0 + x1) / 2
		if !same(valueAt(a, mid), valueAt(b, mid)) {
			continue
		}
		// A sloped segment agrees only if its ends agree too.
		if (!a.Step || !b.Step) && (!same(valueAt(a, x0), valueAt(b, x0)) || !same(valueAt(a, x1), valueAt(b, x1))) {
			continue
		}
		out = join(out, [2]float64{x0, x1})
	}
	return out
}

// join appends sp to spans sorted by start, merging it into the last
// one it touches.
func join(spans [][2]float64, sp [2]float64) [][2]float64 {
	if n := len(spans); n > 0 && sp[0] <= spans[n-1][1] {
		spans[n-1][1] = max(spans[n-1][1], sp[1])
		return spans
	}
	return append(spans, sp)
}

// hiddenSpans are the stretches where series i lies under a later line
// that hides it (see coverDepths): where its pale band is drawn.
func hiddenSpans(series []Series, i int) [][2]float64 {
	var all [][2]float64
	for j := i + 1; j < len(series); j++ {
		if series[j].Dash == 0 || colourIndex(i, series[i]) == colourIndex(j, series[j]) {
			all = append(all, coveredSpans(series[i], series[j])...)
		}
	}
	slices.SortFunc(all, func(a, b [2]float64) int { return cmp.Compare(a[0], b[0]) })
	var out [][2]float64
	for _, sp := range all {
		out = join(out, sp)
	}
	return out
}

// clip returns the points of s drawn between x0 and x1, as it is drawn.
func clip(s Series, x0, x1 float64) [][2]float64 {
	pts := [][2]float64{{x0, valueAt(s, x0)}}
	for k, x := range s.X {
		if x > x0 && x < x1 {
			pts = append(pts, [2]float64{x, s.Y[k]})
		}
	}
	end := valueAt(s, x1)
	if s.Step {
		// The value that holds up to x1, not the one from it.
		end = pts[len(pts)-1][1]
	}
	return append(pts, [2]float64{x1, end})
}

// valueAt is the series' value at x, as it is drawn: a step holds Y[i]
// from X[i] to the next point; a line interpolates.
func valueAt(s Series, x float64) float64 {
	i, found := slices.BinarySearch(s.X, x)
	if found {
		if s.Step {
			// The last of equal x values is the one that holds.
			for i+1 < len(s.X) && s.X[i+1] == x {
				i++
			}
		}
		return s.Y[i]
	}
	if i == 0 || i == len(s.X) {
		return math.NaN()
	}
	if s.Step {
		return s.Y[i-1]
	}
	f := (x - s.X[i-1]) / (s.X[i] - s.X[i-1])
	return s.Y[i-1] + f*(s.Y[i]-s.Y[i-1])
}

func same(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*max(1, math.Abs(a), math.Abs(b))
}

// pale mixes c with white: the colour of a covered line.
func pale(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	mix := func(v uint32) uint8 { return uint8((v>>8)*55/100 + 255*45/100) }
	return color.RGBA{R: mix(r), G: mix(g), B: mix(b), A: 0xff}
}
