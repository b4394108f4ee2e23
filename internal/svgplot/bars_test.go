package svgplot

import (
	"fmt"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
)

func TestStackedBarsNameEveryCategoryAndStack(t *testing.T) {
	svg, err := StackedBarsSVG("findings", "count", 6*vg.Inch, 3*vg.Inch, []string{"BF101", "BF102"},
		[]Stack{{Name: "error", Values: []float64{1, 0}}, {Name: "warning", Values: []float64{0, 4}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<svg", "BF101", "BF102", "error", "warning", "findings"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	if _, err := StackedBarsSVG("x", "y", vg.Inch, vg.Inch, []string{"a"}, []Stack{{Name: "s", Values: []float64{1, 2}}}); err == nil {
		t.Error("accepted a stack with more values than categories")
	}
}

// The horizontal chart puts the first category at the top, writes each
// bar's total at its end, and draws the legend above the plot area: every
// legend text is above every bar's label.
func TestHorizontalStackedBarsKeepTheLegendOffTheBars(t *testing.T) {
	svg, err := HorizontalStackedBarsSVG("findings by rule", "findings", 6*vg.Inch, vg.Centimeter, []string{"BF101 a", "BF102 b", "BF401 c"},
		[]Stack{{Name: "error", Values: []float64{3, 0, 40}}, {Name: "warning", Values: []float64{1, 2, 0}}})
	if err != nil {
		t.Fatal(err)
	}
	s := string(svg)
	for _, want := range []string{"BF101 a", "BF401 c", ">4<", ">40<", ">2<", "error", "warning"} {
		if !strings.Contains(s, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	// The text elements' y (SVG's y grows downwards).
	yOf := func(text string) float64 {
		i := strings.Index(s, ">"+text+"<")
		if i < 0 {
			t.Fatalf("no text %q", text)
		}
		j := strings.LastIndex(s[:i], "<text")
		var x, y float64
		if _, err := fmt.Sscanf(s[j:], `<text x="%g" y="%g"`, &x, &y); err != nil {
			t.Fatalf("text %q: %v in %q", text, err, s[j:i])
		}
		return y
	}
	if yOf("error") >= yOf("BF101 a") || yOf("warning") >= yOf("BF101 a") {
		t.Errorf("legend at y %.1f/%.1f, not above the top bar's label at %.1f", yOf("error"), yOf("warning"), yOf("BF101 a"))
	}
	if yOf("BF101 a") >= yOf("BF401 c") {
		t.Errorf("the first category is not at the top: y %.1f, last %.1f", yOf("BF101 a"), yOf("BF401 c"))
	}
	if _, err := HorizontalStackedBarsSVG("x", "y", vg.Inch, vg.Inch, []string{"a"}, []Stack{{Name: "s", Values: []float64{1, 2}}}); err == nil {
		t.Error("accepted a stack with more values than categories")
	}
}
