package svgplot

import (
	"bytes"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
)

func TestSVGHasEveryPanelAndSeries(t *testing.T) {
	svg, err := SVG("t (s)", 6*vg.Inch, 2*vg.Inch, []Panel{
		{Title: "weight", YLabel: "%", Series: []Series{{Name: "canary weight", X: []float64{0, 10, 20}, Y: []float64{0, 100, 100}, Step: true}}},
		{Title: "pods", YLabel: "pods", Series: []Series{{Name: "ready", X: []float64{0, 10}, Y: []float64{2, 0}}, {Name: "desired", X: []float64{0, 10}, Y: []float64{2, 2}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := string(svg)
	for _, want := range []string{"<svg", "weight", "pods", "canary weight", "ready", "desired", "t (s)"} {
		if !strings.Contains(s, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
}

func TestSVGRejectsMismatchedSeries(t *testing.T) {
	_, err := SVG("x", vg.Inch, vg.Inch, []Panel{{Series: []Series{{Name: "bad", X: []float64{1, 2}, Y: []float64{1}}}}})
	if err == nil {
		t.Fatal("want an error for a series with 2 x and 1 y values")
	}
	if _, err := SVG("x", vg.Inch, vg.Inch, nil); err == nil {
		t.Fatal("want an error for no panels")
	}
}

func TestHTMLInlinesSVGWithoutXMLHeader(t *testing.T) {
	page, err := HTML("A <title>", "<p>body</p>", []byte("<?xml version=\"1.0\"?>\n<svg id=\"x\"></svg>"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(page, []byte("<?xml")) || !bytes.Contains(page, []byte(`<svg id="x"></svg>`)) {
		t.Fatalf("SVG not inlined cleanly:\n%s", page)
	}
	if !bytes.Contains(page, []byte("A &lt;title&gt;")) {
		t.Fatalf("title not escaped:\n%s", page)
	}
	if bytes.Contains(page, []byte("http://")) && !bytes.Contains(page, []byte("http://www.w3.org/")) {
		t.Fatalf("page refers to the network:\n%s", page)
	}
}
