package svgplot

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"strings"
	"sync"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Key is one legend entry of a Figure: a line (its colour, dash pattern
// and width) or, with Fill, a filled box.
type Key struct {
	Name   string
	Colour color.Color
	Dash   []vg.Length
	Width  vg.Length
	Fill   bool
	// Mark is a band's event mark: a small triangle pointing down.
	Mark bool
	// UnderWidth and UnderColour draw the pale band a line has where a
	// later line hides it (0: none).
	UnderWidth  vg.Length
	UnderColour color.Color
}

// Figure is one panel for a page: its title and legend are the page's
// text, which wraps on a narrow screen and stays readable, and the SVG is
// the plotted area with its axes only.
type Figure struct {
	Title string
	Keys  []Key
	// Note explains a drawing convention of the panel (CoveredNote).
	Note string
	SVG  []byte
	// Narrow lets the plot shrink to a phone's width instead of scrolling
	// sideways: for a plot drawn narrow, with text large enough to stay
	// readable when scaled down (BarsFigure's bars).
	Narrow bool
}

// Figures draws each panel as its own figure, width by height (a state
// band panel is shorter), without its title and legend.
func Figures(xlabel string, width, height vg.Length, panels []Panel) ([]Figure, error) {
	if len(panels) == 0 {
		return nil, fmt.Errorf("chart: no panels")
	}
	var out []Figure
	for _, p := range panels {
		pl, keys, err := panelPlot(p, xlabel, false)
		if err != nil {
			return nil, err
		}
		sans(pl, vg.Points(11))
		pl.Title.Text = ""
		h := height
		if len(p.Bands) > 0 {
			h = max(height/2, vg.Length(len(p.Bands))*vg.Centimeter+1.6*vg.Centimeter)
		}
		canvas := vgsvg.New(width, h)
		pl.Draw(draw.Crop(draw.New(canvas), vg.Millimeter, -2*vg.Millimeter, vg.Millimeter, -2*vg.Millimeter))
		svg, err := writeSVG(canvas)
		if err != nil {
			return nil, err
		}
		f := Figure{Title: p.Title, Keys: keys, SVG: svg}
		for _, k := range keys {
			if k.UnderWidth > 0 {
				f.Note = CoveredNote
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// Tile is one number at the top of a page, as the scan report's summary
// cards: Tone "bad" or "good" colours it.
type Tile struct {
	Value, Label, Tone string
}

// Section is a titled part of a page after the results (the fix, the
// assumptions).
type Section struct {
	ID, Title string
	Body      template.HTML
}

// Page is one self-contained page in the scan report's look: a header,
// tiles, the results (a body the caller built with html/template, then
// the figures), and the sections after them.
type Page struct {
	Title, Subtitle string
	Tiles           []Tile
	Results         template.HTML
	Figures         []Figure
	// Charts are whole SVG documents (with their own legends), after the
	// figures.
	Charts   [][]byte
	Sections []Section
}

// HTML returns one self-contained page: a title, a body the caller built
// (already escaped: use html/template to build it), and the charts inline.
func HTML(title string, body template.HTML, svgs ...[]byte) ([]byte, error) {
	return Page{Title: title, Results: body, Charts: svgs}.HTML()
}

// HTML renders the page; it needs nothing from the network.
func (p Page) HTML() ([]byte, error) {
	type figure struct {
		Title, Note string
		Keys        []template.HTML
		SVG         template.HTML
		Narrow      bool
	}
	var figs []figure
	for _, f := range p.Figures {
		fg := figure{Title: f.Title, Note: f.Note, SVG: template.HTML(stripXMLHeader(f.SVG)), Narrow: f.Narrow} // our own SVG, inlined
		for _, k := range f.Keys {
			fg.Keys = append(fg.Keys, keyHTML(k))
		}
		figs = append(figs, fg)
	}
	charts := make([]template.HTML, len(p.Charts))
	for i, s := range p.Charts {
		charts[i] = template.HTML(stripXMLHeader(s)) // our own SVG, inlined
	}
	var buf bytes.Buffer
	err := page().Execute(&buf, struct {
		Page
		Figs   []figure
		Inline []template.HTML
	}{p, figs, charts})
	return buf.Bytes(), err
}

// keyHTML is a legend entry: a small drawing of the line or box, then its
// name (escaped).
func keyHTML(k Key) template.HTML {
	r, g, b, _ := k.Colour.RGBA()
	hex := fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, b>>8)
	var mark string
	switch {
	case k.Mark:
		mark = fmt.Sprintf(`<path d="M10 2 L20 2 L15 12 Z" fill="%s"/>`, hex)
	case k.Fill:
		mark = fmt.Sprintf(`<rect x="2" y="1" width="26" height="12" fill="%s"/>`, hex)
	default:
		// Points to CSS pixels, so the key shows the chart's line.
		px := func(l vg.Length) string { return fmt.Sprintf("%.1f", float64(l)*4/3) }
		var dash []string
		for _, d := range k.Dash {
			dash = append(dash, px(d))
		}
		da := ""
		if len(dash) > 0 {
			da = ` stroke-dasharray="` + strings.Join(dash, " ") + `"`
		}
		mark = fmt.Sprintf(`<line x1="1" y1="7" x2="29" y2="7" stroke="%s" stroke-width="%s"%s/>`, hex, px(k.Width), da)
		if k.UnderWidth > 0 && k.UnderColour != nil {
			ur, ug, ub, _ := k.UnderColour.RGBA()
			mark = fmt.Sprintf(`<line x1="1" y1="7" x2="29" y2="7" stroke="#%02x%02x%02x" stroke-width="%s"/>`, ur>>8, ug>>8, ub>>8, px(k.UnderWidth)) + mark
		}
	}
	return template.HTML(`<svg class="key" width="30" height="14" viewBox="0 0 30 14" aria-hidden="true">` + mark + `</svg><span>` +
		template.HTMLEscapeString(k.Name) + `</span>`)
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

// page has the scan report's look (internal/report/html.tmpl): its colours,
// fonts, dark header, cards and panels, and its narrow-screen rules.
var page = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
:root{--error:#d32f2f;--good:#1a7f37;--ink:#1f2328;--muted:#59636e;--line:#d1d9e0;--page:#f6f8fa;--card:#fff}
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:var(--page)}
header.top{background:#24292f;color:#fff;padding:.9rem 1.5rem}
header.top h1{margin:0;font-size:1.25rem;font-weight:600;overflow-wrap:anywhere}
header.top p{margin:.2rem 0 0;color:#d0d7de;font-size:.9rem;overflow-wrap:anywhere}
main{max-width:78rem;margin:0 auto;padding:1rem 1.5rem 3rem}
h2{font-size:1.1rem;margin:1.5rem 0 .6rem}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85em}
code{overflow-wrap:anywhere}
#cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(9.5rem,1fr));gap:.75rem;margin-top:1rem}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:.75rem 1rem;border-top:4px solid var(--line)}
.card .n{display:block;font-size:1.9rem;font-weight:650;line-height:1.1;overflow-wrap:break-word}
.card .label{color:var(--muted);font-size:.85rem}
.card.bad{border-top-color:var(--error)}.card.bad .n{color:var(--error)}
.card.good{border-top-color:var(--good)}.card.good .n{color:var(--good)}
.panel{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:1rem;margin:1rem 0 0}
.panel>:first-child{margin-top:0}.panel>:last-child{margin-bottom:0}
.scroll{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:.9rem}
td,th{border-bottom:1px solid var(--line);padding:.3rem .5rem;text-align:right;vertical-align:top}
td:first-child,th:first-child{text-align:left;color:var(--muted)}
th{font-weight:600}
figure.chart figcaption{font-weight:600;margin-bottom:.4rem}
ul.legend{list-style:none;margin:0 0 .4rem;padding:0;display:flex;flex-wrap:wrap;gap:.25rem 1.1rem;font-size:.85rem}
ul.legend li{display:flex;align-items:center;gap:.35rem}
ul.legend svg.key{flex:none}
figure.chart .note{color:var(--muted);font-size:.8rem;margin:0 0 .4rem}
.plot{overflow-x:auto}
.plot svg{display:block;width:100%;max-width:52rem;min-width:30rem;height:auto}
.plot.narrow svg{max-width:30rem;min-width:0}
td.least,b.least{font-weight:650;color:var(--good)}
table.compare td:first-child,table.compare th:first-child{position:sticky;left:0;background:var(--card)}
table.compare td{white-space:nowrap}
dl.remedies dt{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85em;font-weight:600;margin-top:.5rem}
dl.remedies dd{margin:0 0 0 1rem}
pre{background:#f6f8fa;border:1px solid var(--line);border-radius:6px;padding:.6rem .8rem;overflow-x:auto;margin:.4rem 0}
pre.patch{white-space:pre-wrap;overflow-wrap:anywhere}
.fix b{color:var(--good)}
@media (max-width:40rem){main{padding:.5rem .75rem 2rem}header.top{padding:.7rem .9rem}
#cards{grid-template-columns:repeat(auto-fit,minmax(6.5rem,1fr));gap:.5rem}
.card{padding:.5rem .7rem}.card .n{font-size:1.5rem}.panel{padding:.75rem}
.plot svg{min-width:26rem}.plot.narrow svg{min-width:0}}
</style></head>
<body>
<header class="top"><h1>{{.Title}}</h1>{{if .Subtitle}}<p>{{.Subtitle}}</p>{{end}}</header>
<main>
{{if .Tiles}}<section id="summary" aria-label="Summary"><div id="cards">{{range .Tiles}}
<div class="card{{if .Tone}} {{.Tone}}{{end}}"><span class="n">{{.Value}}</span><span class="label">{{.Label}}</span></div>{{end}}
</div></section>{{end}}
<section id="results"><h2>Results</h2>
{{if .Results}}<div class="panel">{{.Results}}</div>{{end}}
{{range .Figs}}<figure class="chart panel"><figcaption>{{.Title}}</figcaption>
{{if .Keys}}<ul class="legend">{{range .Keys}}<li>{{.}}</li>{{end}}</ul>{{end}}{{if .Note}}<p class="note">{{.Note}}</p>{{end}}
<div class="plot{{if .Narrow}} narrow{{end}}">{{.SVG}}</div></figure>
{{end}}{{range .Inline}}<figure class="chart panel"><div class="plot">{{.}}</div></figure>
{{end}}</section>
{{range .Sections}}<section id="{{.ID}}"><h2>{{.Title}}</h2><div class="panel">{{.Body}}</div></section>
{{end}}</main>
</body></html>
`))
})
