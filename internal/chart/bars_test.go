package chart

import (
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
