package report

import (
	"bytes"
	"cmp"
	_ "embed"
	"fmt"
	"html/template"
	"image/color"
	"io"
	"slices"
	"strings"

	"gonum.org/v1/plot/vg"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/redact"
	"backfire.dev/backfire/internal/result"
	"backfire.dev/backfire/internal/svgplot"
)

// HTMLOptions tune the HTML report.
type HTMLOptions struct {
	// ReadFile reads a finding's file for the excerpt around its line;
	// nil shows no excerpts.
	ReadFile func(name string) ([]byte, error)
	// Context is how many lines the excerpt shows on each side (default 4).
	Context int
	// Version names the backfire that wrote the report, in its header.
	Version string
}

// HTML writes one self-contained page, laid out as the dashboards of
// cluster linters are (Polaris's is the familiar one): summary cards by
// severity, the findings by rule as stacked bars, filters by severity,
// rule, namespace and file, then the findings grouped by object, each
// with its place, message and fix in view and its mechanism, assumptions,
// the YAML around its line and the patch folded until opened. Its style,
// script and chart are inline: it fetches nothing, and without the script
// it shows everything, unfiltered.
func HTML(w io.Writer, r *result.Result, opts HTMLOptions) error {
	if opts.Context <= 0 {
		opts.Context = 4
	}
	data := htmlData(r, opts)
	if len(r.Findings) > 0 {
		svg, err := summaryChart(data.Rules)
		if err != nil {
			return err
		}
		// Our own SVG, inlined; the XML declaration is not allowed in HTML.
		if i := bytes.Index(svg, []byte("<svg")); i >= 0 {
			svg = svg[i:]
		}
		data.Chart = template.HTML(svg)
	}
	return htmlPageTemplate.Execute(w, data)
}

var severities = []finding.Severity{finding.Error, finding.Warning, finding.Info}

// Severity colours as dashboards and alerts use them: red, orange, blue
// (the error, warning and info colours of Material Design's palette).
var severityColor = map[finding.Severity]color.RGBA{
	finding.Error:   {R: 0xd3, G: 0x2f, B: 0x2f, A: 0xff},
	finding.Warning: {R: 0xed, G: 0x6c, B: 0x02, A: 0xff},
	finding.Info:    {R: 0x02, G: 0x88, B: 0xd1, A: 0xff},
}

// summaryChart draws the findings per rule, most first, stacked by
// severity.
func summaryChart(rules []htmlRule) ([]byte, error) {
	byCount := slices.Clone(rules)
	slices.SortStableFunc(byCount, func(a, b htmlRule) int { return cmp.Compare(b.Total(), a.Total()) })
	names := make([]string, len(byCount))
	for i, r := range byCount {
		names[i] = r.ID + " " + r.Slug
	}
	var stacks []svgplot.Stack
	for _, s := range severities {
		st := svgplot.Stack{Name: s.String(), Color: severityColor[s], Values: make([]float64, len(byCount))}
		for i, r := range byCount {
			st.Values[i] = float64(r.Count[s])
		}
		stacks = append(stacks, st)
	}
	return svgplot.HorizontalStackedBarsSVG("", "findings", 18*vg.Centimeter, 0.75*vg.Centimeter, names, stacks)
}

type htmlPage struct {
	Version string
	Summary result.Summary
	// Cards are the summary's numbers.
	Errors, Warnings, Infos    int
	ObjectsWithFindings, Shown int
	Rules                      []htmlRule
	Namespaces, Files          []htmlOption
	Objects                    []htmlObject
	InputErrors                []string
	Chart                      template.HTML
}

type htmlRule struct {
	ID, Slug, Summary string
	Count             map[finding.Severity]int
}

func (r htmlRule) Total() int {
	return r.Count[finding.Error] + r.Count[finding.Warning] + r.Count[finding.Info]
}

// N is the count of one severity, by name (for the template).
func (r htmlRule) N(severity string) int {
	s, _ := finding.ParseSeverity(severity)
	return r.Count[s]
}

// htmlOption is one choice of a filter, with how many findings it keeps.
type htmlOption struct {
	Value, Label string
	N            int
}

type htmlObject struct {
	Title, Kind, Namespace, File, Origin string
	Errors, Warnings, Infos              int
	Findings                             []htmlFinding
}

type htmlFinding struct {
	ID, Rule, Slug, Severity, Where, EditFile, Namespace, Container string
	Message, ValuesSource                                           string
	Mechanism, Assumptions                                          []string
	Fix, FixCommand                                                 string
	Excerpt                                                         []excerptLine
	Line                                                            int
}

type excerptLine struct {
	N    int
	Text string
	Hit  bool
}

// noNamespace labels objects without one (cluster-scoped, or written
// without metadata.namespace) in the namespace filter.
const noNamespace = "(none)"

func htmlData(r *result.Result, opts HTMLOptions) htmlPage {
	p := htmlPage{Version: opts.Version, Summary: r.Summary, Shown: len(r.Findings)}
	rules := map[string]*htmlRule{}
	namespaces, files := map[string]int{}, map[string]int{}
	sources := map[string][]string{}
	var last string
	for i, f := range r.Findings {
		rule := rules[f.Rule]
		if rule == nil {
			rule = &htmlRule{ID: f.Rule, Slug: f.Slug, Count: map[finding.Severity]int{}}
			rules[f.Rule] = rule
		}
		rule.Count[f.Severity]++
		ns := f.Object.Namespace
		if ns == "" {
			ns = noNamespace
		}
		at := EditAt(f)
		namespaces[ns]++
		files[at.File]++

		group := f.File + "\x00" + f.Object.String()
		if group != last {
			p.Objects = append(p.Objects, htmlObject{Title: f.Object.String(), Kind: f.Object.Kind, Namespace: ns, File: f.File, Origin: f.Origin})
			last = group
		}
		o := &p.Objects[len(p.Objects)-1]
		switch f.Severity {
		case finding.Error:
			p.Errors++
			o.Errors++
		case finding.Warning:
			p.Warnings++
			o.Warnings++
		default:
			p.Infos++
			o.Infos++
		}
		hf := htmlFinding{
			ID: fmt.Sprintf("finding-%d", i+1), Rule: f.Rule, Slug: f.Slug, Severity: f.Severity.String(),
			Where: fmt.Sprintf("%s:%d:%d", at.File, at.Line, at.Column), EditFile: at.File, Line: at.Line,
			Namespace: ns, Container: f.Container,
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
			lines, ok := sources[at.File]
			if !ok {
				if data, err := opts.ReadFile(at.File); err == nil {
					lines = strings.Split(string(data), "\n")
				}
				sources[at.File] = lines
			}
			hf.Excerpt = excerpt(lines, at.Line, opts.Context)
		}
		o.Findings = append(o.Findings, hf)
	}
	p.ObjectsWithFindings = len(p.Objects)
	summaries := map[string]string{}
	for _, rr := range r.Rules {
		summaries[rr.ID] = rr.Summary
	}
	for _, rule := range rules {
		rule.Summary = summaries[rule.ID]
		p.Rules = append(p.Rules, *rule)
	}
	slices.SortFunc(p.Rules, func(a, b htmlRule) int { return cmp.Compare(a.ID, b.ID) })
	p.Namespaces, p.Files = options(namespaces), options(files)
	for _, e := range r.Errors {
		p.InputErrors = append(p.InputErrors, e.Error())
	}
	return p
}

// options lists a filter's values in order, with their counts.
func options(counts map[string]int) []htmlOption {
	var out []htmlOption
	for v, n := range counts {
		out = append(out, htmlOption{Value: v, Label: v, N: n})
	}
	slices.SortFunc(out, func(a, b htmlOption) int { return cmp.Compare(a.Value, b.Value) })
	return out
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

//go:embed html.tmpl
var htmlTemplateText string

var htmlPageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"plural": func(n int, one, many string) string {
		if n == 1 {
			return one
		}
		return many
	},
}).Parse(htmlTemplateText))
