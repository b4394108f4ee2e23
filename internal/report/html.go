package report

import (
	"bufio"
	"cmp"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"
	"sync"

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
	// Version names the backfire that wrote the report, in its header.
	Version string
}

// HTML writes one self-contained page, laid out as the dashboards of
// cluster linters are (Polaris's is the familiar one): summary cards by
// severity, the findings by rule as stacked bars, filters by severity,
// rule, namespace and file, then the findings grouped by object, each
// with its place, message and fix in view and its mechanism, assumptions,
// the YAML around its line and the patch folded until opened. Its style,
// script and data are inline: it fetches nothing.
//
// The findings travel as compact JSON (pageData), every text once in a
// table of strings, and the page's script draws the rows a screenful at a
// time: a report of 10,000 objects repeats the same mechanisms thousands of
// times, which as HTML made a page of tens of megabytes.
func HTML(w io.Writer, r *result.Result, opts HTMLOptions) error {
	if opts.Context <= 0 {
		opts.Context = 4
	}
	data := htmlData(r, opts)
	js, err := json.Marshal(compact(data))
	if err != nil {
		return err
	}
	// json.Marshal writes <, > and & as \u003c, \u003e and \u0026, so no
	// text of the input can close the script element it is in.
	data.Data = template.JS(js)
	data.DocsURL = DocsURL
	bw := bufio.NewWriterSize(w, 1<<16)
	if err := htmlPageTemplate().Execute(bw, data); err != nil {
		return err
	}
	return bw.Flush()
}

// pageData is what the page's script draws from. S is the table of
// strings; every other text is an index into it (-1: none).
type pageData struct {
	S []string `json:"s"`
	// R: the rules, [ID, slug, summary].
	R [][3]int `json:"r"`
	// O: the objects, [title, namespace, file, origin].
	O [][4]int `json:"o"`
	// F: the findings, in the report's order: [object, severity (0 error,
	// 1 warning, 2 info), rule, line, column, edit file, container,
	// message, values source, fix, patch command, [mechanism...],
	// [assumptions...], first excerpt line, [excerpt lines...]].
	F [][]any `json:"f"`
}

type interner struct {
	index map[string]int
	s     []string
}

func (in *interner) id(s string) int {
	if s == "" {
		return -1
	}
	if i, ok := in.index[s]; ok {
		return i
	}
	in.index[s] = len(in.s)
	in.s = append(in.s, s)
	return len(in.s) - 1
}

func (in *interner) ids(ss []string) []int {
	out := make([]int, len(ss))
	for i, s := range ss {
		out[i] = in.id(s)
	}
	return out
}

// compact turns the page's data into pageData.
func compact(p htmlPage) pageData {
	in := &interner{index: map[string]int{}}
	var d pageData
	ruleIndex := map[string]int{}
	for i, rule := range p.Rules {
		ruleIndex[rule.ID] = i
		d.R = append(d.R, [3]int{in.id(rule.ID), in.id(rule.Slug), in.id(rule.Summary)})
	}
	sev := map[string]int{"error": 0, "warning": 1, "info": 2}
	for oi, o := range p.Objects {
		d.O = append(d.O, [4]int{in.id(o.Title), in.id(o.Namespace), in.id(o.File), in.id(o.Origin)})
		for _, f := range o.Findings {
			first, lines := 0, []int{}
			if len(f.Excerpt) > 0 {
				first = f.Excerpt[0].N
				for _, l := range f.Excerpt {
					// A blank line is an empty string, not "none".
					if l.Text == "" {
						lines = append(lines, -2)
						continue
					}
					lines = append(lines, in.id(l.Text))
				}
			}
			d.F = append(d.F, []any{oi, sev[f.Severity], ruleIndex[f.Rule], f.Line, f.Column, in.id(f.EditFile), in.id(f.Container),
				in.id(f.Message), in.id(f.ValuesSource), in.id(f.Fix), in.id(f.FixCommand),
				in.ids(f.Mechanism), in.ids(f.Assumptions), first, lines})
		}
	}
	d.S = in.s
	if d.S == nil {
		d.S = []string{}
	}
	return d
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
	// Data is pageData as JSON; DocsURL is where the rules' pages are.
	Data    template.JS
	DocsURL string
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
	Line, Column                                                    int
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
			Where: fmt.Sprintf("%s:%d:%d", at.File, at.Line, at.Column), EditFile: at.File, Line: at.Line, Column: at.Column,
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

var htmlPageTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page").Funcs(template.FuncMap{
		"plural": func(n int, one, many string) string {
			if n == 1 {
				return one
			}
			return many
		},
	}).Parse(htmlTemplateText))
})
