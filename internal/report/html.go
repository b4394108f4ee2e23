package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strings"

	"gonum.org/v1/plot/vg"

	"backfire.dev/backfire/internal/chart"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/redact"
	"backfire.dev/backfire/internal/result"
)

// HTMLOptions tune the HTML report.
type HTMLOptions struct {
	// ReadFile reads a finding's file for the excerpt around its line;
	// nil shows no excerpts.
	ReadFile func(name string) ([]byte, error)
	// Context is how many lines the excerpt shows on each side (default 4).
	Context int
}

// HTML writes one self-contained page (no script, no network): a summary
// with counts by rule and severity drawn as a chart, then the findings
// grouped by object, each with its mechanism, its fix and the YAML around
// its line.
func HTML(w io.Writer, r *result.Result, opts HTMLOptions) error {
	if opts.Context <= 0 {
		opts.Context = 4
	}
	data := htmlData(r, opts)
	if len(r.Findings) > 0 {
		svg, err := summaryChart(r.Findings)
		if err != nil {
			return err
		}
		// Our own SVG, inlined in the summary; the XML declaration is not
		// allowed inside HTML.
		if i := bytes.Index(svg, []byte("<svg")); i >= 0 {
			svg = svg[i:]
		}
		data.Chart = template.HTML(svg)
	}
	var body bytes.Buffer
	if err := htmlBody.Execute(&body, data); err != nil {
		return err
	}
	page, err := chart.HTML("backfire report", template.HTML(body.String())) // built by html/template above
	if err != nil {
		return err
	}
	_, err = w.Write(page)
	return err
}

var severities = []finding.Severity{finding.Error, finding.Warning, finding.Info}

// summaryChart draws the count of findings per rule, stacked by severity.
func summaryChart(fs []finding.Finding) ([]byte, error) {
	counts := map[string]map[finding.Severity]int{}
	for _, f := range fs {
		if counts[f.Rule] == nil {
			counts[f.Rule] = map[finding.Severity]int{}
		}
		counts[f.Rule][f.Severity]++
	}
	ids := make([]string, 0, len(counts))
	for id := range counts {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var stacks []chart.Stack
	for _, s := range severities {
		st := chart.Stack{Name: s.String(), Values: make([]float64, len(ids))}
		for i, id := range ids {
			st.Values[i] = float64(counts[id][s])
		}
		stacks = append(stacks, st)
	}
	return chart.StackedBarsSVG("Findings by rule and severity", "findings", 7*vg.Inch, 3*vg.Inch, ids, stacks)
}

type htmlPage struct {
	Summary result.Summary
	Counts  []htmlCount
	Objects []htmlObject
	Errors  []string
	Chart   template.HTML
}

type htmlCount struct {
	Rule, Slug           string
	Error, Warning, Info int
}

type htmlObject struct {
	Title, File, Origin string
	Findings            []htmlFinding
}

type htmlFinding struct {
	ID, Rule, Slug, Severity, Where, Container string
	Message, ValuesSource                      string
	Mechanism, Assumptions                     []string
	Fix, FixCommand                            string
	Excerpt                                    []excerptLine
}

type excerptLine struct {
	N    int
	Text string
	Hit  bool
}

func htmlData(r *result.Result, opts HTMLOptions) htmlPage {
	p := htmlPage{Summary: r.Summary}
	byRule := map[string]*htmlCount{}
	files := map[string][]string{}
	var last string
	for i, f := range r.Findings {
		c := byRule[f.Rule]
		if c == nil {
			c = &htmlCount{Rule: f.Rule, Slug: f.Slug}
			byRule[f.Rule] = c
		}
		switch f.Severity {
		case finding.Error:
			c.Error++
		case finding.Warning:
			c.Warning++
		default:
			c.Info++
		}
		group := f.File + "\x00" + f.Object.String()
		if group != last {
			p.Objects = append(p.Objects, htmlObject{Title: f.Object.String(), File: f.File, Origin: f.Origin})
			last = group
		}
		at := EditAt(f)
		hf := htmlFinding{
			ID: fmt.Sprintf("finding-%d", i+1), Rule: f.Rule, Slug: f.Slug, Severity: f.Severity.String(),
			Where: fmt.Sprintf("%s:%d:%d", at.File, at.Line, at.Column), Container: f.Container,
			Message: f.Message, ValuesSource: f.ValuesSource,
			Mechanism: f.Mechanism, Assumptions: f.Assumptions,
		}
		if f.Fix != nil {
			hf.Fix = f.Fix.Description
			if len(f.Fix.Patch) > 0 {
				hf.FixCommand = patchCommand(f)
			}
		}
		if opts.ReadFile != nil && !at.OutputLine {
			lines, ok := files[at.File]
			if !ok {
				if data, err := opts.ReadFile(at.File); err == nil {
					lines = strings.Split(string(data), "\n")
				}
				files[at.File] = lines
			}
			hf.Excerpt = excerpt(lines, at.Line, opts.Context)
		}
		o := &p.Objects[len(p.Objects)-1]
		o.Findings = append(o.Findings, hf)
	}
	for _, c := range byRule {
		p.Counts = append(p.Counts, *c)
	}
	sort.Slice(p.Counts, func(i, j int) bool { return p.Counts[i].Rule < p.Counts[j].Rule })
	for _, e := range r.Errors {
		p.Errors = append(p.Errors, e.Error())
	}
	return p
}

// excerpt returns the lines around line (1-based), marking it.
func excerpt(lines []string, line, context int) []excerptLine {
	if line < 1 || line > len(lines) {
		return nil
	}
	var out []excerptLine
	for n := max(1, line-context); n <= min(len(lines), line+context); n++ {
		out = append(out, excerptLine{N: n, Text: lines[n-1], Hit: n == line})
	}
	// The manifest's lines may carry a probe's password, as its
	// findings' texts did before the scan masked them.
	texts := make([]string, len(out))
	for i, l := range out {
		texts[i] = l.Text
	}
	for i, t := range redact.Lines(texts) {
		out[i].Text = t
	}
	return out
}

var htmlBody = template.Must(template.New("body").Parse(`<style>
.error{color:#b00020}.warning{color:#8a5a00}.info{color:#00639b}
.finding{border-left:4px solid #ccc;padding:.2em 1em;margin:1em 0}
.finding.sev-error{border-color:#b00020}.finding.sev-warning{border-color:#d89000}.finding.sev-info{border-color:#00639b}
pre.excerpt{line-height:1.35}pre.excerpt .hit{background:#ffe9a8;display:block}
.where,code{font-family:ui-monospace,monospace}.origin{color:#555}
</style>
<section id="summary"><h2>Summary</h2>
<p>{{index .Summary.Findings "error"}} error, {{index .Summary.Findings "warning"}} warning, {{index .Summary.Findings "info"}} info
in {{.Summary.Objects}} objects ({{.Summary.Files}} files{{if .Summary.Suppressed}}; {{.Summary.Suppressed}} suppressed by annotation{{end}}).</p>
{{if .Counts}}<table id="counts"><tr><th>rule</th><th>error</th><th>warning</th><th>info</th></tr>
{{range .Counts}}<tr><td>{{.Rule}} {{.Slug}}</td><td>{{.Error}}</td><td>{{.Warning}}</td><td>{{.Info}}</td></tr>
{{end}}</table>{{end}}
{{if .Chart}}<figure class="chart" id="summary-chart">{{.Chart}}</figure>{{end}}
</section>
{{if .Errors}}<section id="errors"><h2>Input errors</h2><ul>{{range .Errors}}<li><code>{{.}}</code></li>{{end}}</ul></section>{{end}}
<section id="findings"><h2>Findings</h2>{{if not .Objects}}<p>No findings.</p>{{end}}
{{range .Objects}}<article class="object"><h3>{{.Title}}</h3><p class="where">{{.File}}</p>{{if .Origin}}<p class="origin">{{.Origin}}</p>{{end}}
{{range .Findings}}<div class="finding sev-{{.Severity}}" id="{{.ID}}" data-rule="{{.Rule}}">
<h4><span class="{{.Severity}}">{{.Severity}}</span> {{.Rule}} {{.Slug}}{{if .Container}} — container {{.Container}}{{end}}</h4>
<p class="where">{{.Where}}</p>
<p class="message">{{.Message}}</p>
{{if .ValuesSource}}<p>Value set at <code>{{.ValuesSource}}</code></p>{{end}}
{{if .Excerpt}}<pre class="excerpt">{{range .Excerpt}}<span{{if .Hit}} class="hit"{{end}}>{{printf "%5d" .N}}  {{.Text}}</span>
{{end}}</pre>{{end}}
<h5>Mechanism</h5><ol class="mechanism">{{range .Mechanism}}<li>{{.}}</li>{{end}}</ol>
{{if .Assumptions}}<h5>Assumed</h5><ul>{{range .Assumptions}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .Fix}}<h5>Fix</h5><p class="fix">{{.Fix}}</p>{{if .FixCommand}}<pre>{{.FixCommand}}</pre>{{end}}{{end}}
</div>
{{end}}</article>
{{end}}</section>
`))
