// Command eval scans the pinned real-world sources of hack/eval/sources.txt
// with a backfire binary and writes what it found, machine-readable, for
// docs/evaluation.md. It is run by hack/eval/run.sh, never in CI: the sources
// are third-party repositories that are fetched outside it and never
// committed here.
//
// For each source it writes OUT/scans/<name>.json (backfire's own JSON
// report) and adds a row to OUT/summary.json; OUT/findings.tsv lists every
// finding, one a line, for judging; OUT/table.md is the per-source table.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// source is one line of sources.txt.
type source struct {
	Name   string            `json:"name"`
	Kind   string            `json:"kind"` // chart or dir
	Repo   string            `json:"repository"`
	Commit string            `json:"commit"`
	Path   string            `json:"path"`
	Deps   map[string]pinned `json:"dependencies,omitempty"`
	// Values are values files of the chart (values=FILE, relative to the
	// chart), for charts that render nothing with their defaults.
	Values []string `json:"values,omitempty"`
}

// pinned is a directory of a repository at a commit.
type pinned struct {
	Repo   string `json:"repository"`
	Commit string `json:"commit"`
	Path   string `json:"path"`
}

// dir is where checkout.sh extracted it.
func (p pinned) dir(checkouts string) string {
	return filepath.Join(checkouts, strings.ReplaceAll(p.Repo, "/", "+")+"@"+p.Commit, filepath.FromSlash(p.Path))
}

// chartDir is the name of a chart's scratch copy: its directory's name, or,
// for a chart at a repository's root, the name in its Chart.yaml, which is
// what helm prints in its "# Source:" headers.
func (s source) chartDir(checkouts string) string {
	if base := filepath.Base(s.Path); base != "." {
		return base
	}
	b, err := os.ReadFile(filepath.Join(pinned{s.Repo, s.Commit, s.Path}.dir(checkouts), "Chart.yaml"))
	var meta struct {
		Name string `json:"name"`
	}
	if err != nil || yaml.Unmarshal(b, &meta) != nil || meta.Name == "" {
		return "chart"
	}
	return meta.Name
}

// report is the part of backfire's JSON report the evaluation reads.
type report struct {
	Findings []finding `json:"findings"`
	Errors   []struct {
		File    string `json:"file"`
		Line    int    `json:"line"`
		Message string `json:"message"`
	} `json:"errors"`
	Summary struct {
		Files     int `json:"files"`
		Documents int `json:"documents"`
		Objects   int `json:"objects"`
		Skipped   int `json:"skipped"`
	} `json:"summary"`
}

type finding struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Object   struct {
		Kind      string `json:"kind"`
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"object"`
	Container *string `json:"container"`
	File      string  `json:"file"`
	Line      int     `json:"line"`
	Path      string  `json:"path"`
	Message   string  `json:"message"`
	// ValuesSource is "values.yaml:LINE key" when the field was set in a
	// values file.
	ValuesSource *string        `json:"valuesSource"`
	Evidence     map[string]any `json:"evidence"`
}

// row is one source's result in summary.json.
type row struct {
	source
	Rendered bool           `json:"rendered"` // false: the scan reported errors and no objects
	Exit     int            `json:"exitCode"`
	Files    int            `json:"files"`
	Objects  int            `json:"objects"`
	Errors   []string       `json:"errors,omitempty"`
	ByRule   map[string]int `json:"findingsByRule"`
	Findings int            `json:"findings"`
}

func main() {
	sourcesFile := flag.String("sources", "hack/eval/sources.txt", "the pinned sources")
	checkouts := flag.String("checkouts", "", "the tree hack/eval/checkout.sh extracted")
	bin := flag.String("backfire", "", "the backfire binary to run")
	out := flag.String("out", "", "where results are written")
	only := flag.String("only", "", "scan only the sources whose name contains this")
	judgements := flag.String("judgements", "", "verdicts to join with the findings (hack/eval/judgements.tsv)")
	helmBin := flag.String("helm", "", "a helm binary: check each chart finding's line against `helm template` output")
	flag.Parse()
	if *checkouts == "" || *bin == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: eval -checkouts DIR -backfire BIN -out DIR [-sources FILE]")
		os.Exit(2)
	}
	if err := run(*sourcesFile, *checkouts, *bin, *out, *only, *judgements, *helmBin); err != nil {
		fmt.Fprintln(os.Stderr, "eval:", err)
		os.Exit(1)
	}
}

func run(sourcesFile, checkouts, bin, out, only, judgementsFile, helmBin string) error {
	sources, err := readSources(sourcesFile)
	if err != nil {
		return err
	}
	bin, err = filepath.Abs(bin)
	if err != nil {
		return err
	}
	scratch := filepath.Join(out, "work")
	if err := os.RemoveAll(scratch); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(out, "scans"), 0o755); err != nil {
		return err
	}
	var rows []row
	var lines []string
	var all []judged
	var positions, arithmetic []string
	for _, s := range sources {
		if only != "" && !strings.Contains(s.Name, only) {
			continue
		}
		r, rep, err := scan(s, checkouts, scratch, bin, out)
		if err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
		fmt.Fprintf(os.Stderr, "%-36s objects %4d findings %3d errors %d\n", s.Name, r.Objects, r.Findings, len(r.Errors))
		rows = append(rows, r)
		if s.Kind == "chart" {
			for _, line := range checkValuesSources(filepath.Join(scratch, s.Name), rep.Findings) {
				positions = append(positions, s.Name+"\t"+line)
			}
		}
		var objects map[objectKey]map[string]any
		if s.Kind == "dir" {
			top := pinned{s.Repo, s.Commit, s.Path}.dir(checkouts)
			objects = indexDir(top)
			for _, line := range checkFileLines(top, rep.Findings) {
				positions = append(positions, s.Name+"\t"+line)
			}
		}
		if helmBin != "" && s.Kind == "chart" && len(rep.Findings) > 0 {
			p, rendered, err := checkPositionsAndRender(helmBin, filepath.Join(scratch, s.Name), s.chartDir(checkouts), rep.Findings, s.Values...)
			if err != nil {
				return fmt.Errorf("%s: %w", s.Name, err)
			}
			for _, line := range p {
				positions = append(positions, s.Name+"\t"+line)
			}
			objects = indexHelmOutput(rendered)
		}
		for _, f := range rep.Findings {
			if objects == nil {
				break // a chart without a helm binary to render it
			}
			check := "MISMATCH object not found"
			if obj := objects[objectKey{f.File, f.Object.Kind, f.Object.Name}]; obj != nil {
				check = recompute(f, obj)
			}
			if check != "-" {
				arithmetic = append(arithmetic, fmt.Sprintf("%s\t%s\t%s/%s\t%s", s.Name, f.Rule, f.Object.Kind, f.Object.Name, check))
			}
		}
		for _, f := range rep.Findings {
			all = append(all, judged{source: s.Name, finding: f})
			c := ""
			if f.Container != nil {
				c = *f.Container
			}
			lines = append(lines, strings.Join([]string{s.Name, f.Rule, f.Severity,
				f.Object.Kind + "/" + f.Object.Name, c, fmt.Sprintf("%s:%d", f.File, f.Line), f.Path,
				strings.Join(strings.Fields(f.Message), " ")}, "\t"))
		}
	}
	js, err := json.MarshalIndent(rows, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "summary.json"), append(js, '\n'), 0o644); err != nil {
		return err
	}
	tsv := "source\trule\tseverity\tobject\tcontainer\tposition\tpath\tmessage\n" + strings.Join(lines, "\n") + "\n"
	if err := os.WriteFile(filepath.Join(out, "findings.tsv"), []byte(tsv), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "table.md"), []byte(table(rows)), 0o644); err != nil {
		return err
	}
	if len(arithmetic) > 0 {
		if err := os.WriteFile(filepath.Join(out, "arithmetic.tsv"), []byte(strings.Join(arithmetic, "\n")+"\n"), 0o644); err != nil {
			return err
		}
	}
	if len(positions) > 0 {
		if err := os.WriteFile(filepath.Join(out, "positions.tsv"), []byte(strings.Join(positions, "\n")+"\n"), 0o644); err != nil {
			return err
		}
	}
	if judgementsFile == "" {
		return nil
	}
	js2, err := readJudgements(judgementsFile)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "judged.md"), []byte(judge(all, js2)), 0o644)
}

// scan prepares one source, runs backfire on it from the directory that
// holds it (so every reported path is relative to the repository or to the
// chart's parent) and reads the report.
func scan(s source, checkouts, scratch, bin, out string) (row, report, error) {
	r := row{source: s}
	var rep report
	top := pinned{s.Repo, s.Commit, s.Path}.dir(checkouts)
	if _, err := os.Stat(top); err != nil {
		return r, rep, fmt.Errorf("not checked out (run hack/eval/checkout.sh): %w", err)
	}
	wd, arg := top, "."
	if s.Kind == "chart" {
		// A scratch copy named after the chart, with its pinned dependencies
		// in charts/, as `helm dependency build` would leave it.
		wd = filepath.Join(scratch, s.Name)
		arg = s.chartDir(checkouts)
		if err := copyChart(top, filepath.Join(wd, arg), s.Deps, checkouts); err != nil {
			return r, rep, err
		}
	}
	args := []string{"scan", "--format", "json", "--fail-on", "none", arg}
	for _, v := range s.Values {
		args = append(args, "--values", filepath.Join(arg, filepath.FromSlash(v)))
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = wd
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		r.Exit = exit.ExitCode()
	} else if err != nil {
		return r, rep, err
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		return r, rep, fmt.Errorf("backfire exited %d without a JSON report: %v\n%s", r.Exit, err, stderr.String())
	}
	name := strings.ReplaceAll(s.Name, "/", "_") + ".json"
	if err := os.WriteFile(filepath.Join(out, "scans", name), stdout.Bytes(), 0o644); err != nil {
		return r, rep, err
	}
	r.Files, r.Objects = rep.Summary.Files, rep.Summary.Objects
	r.Rendered = r.Objects > 0 || len(rep.Errors) == 0
	for _, e := range rep.Errors {
		r.Errors = append(r.Errors, fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Message))
	}
	r.ByRule = map[string]int{}
	for _, f := range rep.Findings {
		r.ByRule[f.Rule]++
	}
	r.Findings = len(rep.Findings)
	return r, rep, nil
}

// copyChart copies a chart and puts each dependency it lists that deps pins
// into its charts/ folder, recursively (Kibana needs common too).
func copyChart(from, to string, deps map[string]pinned, checkouts string) error {
	if err := copyTree(from, to); err != nil {
		return err
	}
	names, err := dependencyNames(to)
	if err != nil {
		return err
	}
	for _, n := range names {
		p, ok := deps[n]
		if !ok {
			continue // left missing: backfire reports it, and the table says so
		}
		if err := copyChart(p.dir(checkouts), filepath.Join(to, "charts", n), deps, checkouts); err != nil {
			return err
		}
	}
	return nil
}

// dependencyNames reads Chart.yaml (apiVersion v2) and requirements.yaml (v1).
func dependencyNames(chart string) ([]string, error) {
	var names []string
	for _, f := range []string{"Chart.yaml", "requirements.yaml"} {
		b, err := os.ReadFile(filepath.Join(chart, f))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return nil, err
		}
		var doc struct {
			Dependencies []struct {
				Name string `json:"name"`
			} `json:"dependencies"`
		}
		if err := yaml.Unmarshal(b, &doc); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for _, d := range doc.Dependencies {
			names = append(names, d.Name)
		}
	}
	return names, nil
}

func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil // symlinks in charts point outside them
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
}

func readSources(file string) ([]source, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []source
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 5 || (fields[1] != "chart" && fields[1] != "dir") {
			return nil, fmt.Errorf("%s:%d: want name, chart|dir, repository, commit, path", file, n)
		}
		s := source{Name: fields[0], Kind: fields[1], Repo: fields[2], Commit: fields[3], Path: fields[4], Deps: map[string]pinned{}}
		for _, d := range fields[5:] {
			if v, ok := strings.CutPrefix(d, "values="); ok {
				s.Values = append(s.Values, v)
				continue
			}
			name, spec, ok1 := strings.Cut(d, "=")
			repo, rest, ok2 := strings.Cut(spec, "@")
			commit, path, ok3 := strings.Cut(rest, ":")
			if !ok1 || !ok2 || !ok3 {
				return nil, fmt.Errorf("%s:%d: dependency %q is not name=owner/repo@commit:path", file, n, d)
			}
			s.Deps[name] = pinned{repo, commit, path}
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

// table is the per-source Markdown table of docs/evaluation.md.
func table(rows []row) string {
	rules := map[string]bool{}
	for _, r := range rows {
		for id := range r.ByRule {
			rules[id] = true
		}
	}
	ids := make([]string, 0, len(rules))
	for id := range rules {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var b strings.Builder
	b.WriteString("| source | objects | errors | " + strings.Join(ids, " | ") + " | findings |\n")
	b.WriteString("|---|--:|--:|" + strings.Repeat("--:|", len(ids)) + "--:|\n")
	total := row{ByRule: map[string]int{}}
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %d | %d |", r.Name, r.Objects, len(r.Errors))
		for _, id := range ids {
			fmt.Fprintf(&b, " %s |", count(r.ByRule[id]))
			total.ByRule[id] += r.ByRule[id]
		}
		fmt.Fprintf(&b, " %d |\n", r.Findings)
		total.Objects += r.Objects
		total.Findings += r.Findings
		total.Exit += len(r.Errors)
	}
	fmt.Fprintf(&b, "| **total** | **%d** | **%d** |", total.Objects, total.Exit)
	for _, id := range ids {
		fmt.Fprintf(&b, " **%d** |", total.ByRule[id])
	}
	fmt.Fprintf(&b, " **%d** |\n", total.Findings)
	return b.String()
}

func count(n int) string {
	if n == 0 {
		return "·"
	}
	return fmt.Sprint(n)
}

// judged is one finding of one source.
type judged struct {
	source  string
	finding finding
	verdict *judgement
}

// judgement is one line of judgements.tsv.
type judgement struct {
	Source, Rule, Object, File, Path, Verdict, Why string
	used                                           bool
}

func (j *judgement) matches(source string, f finding) bool {
	object := f.Object.Kind + "/" + f.Object.Name
	prefix, wild := strings.CutSuffix(j.Object, "*") // charts that name objects with randAlphaNum
	return j.Source == source && j.Rule == f.Rule && (j.Object == object || wild && strings.HasPrefix(object, prefix)) &&
		(j.File == "*" || j.File == f.File) && (j.Path == "*" || j.Path == f.Path)
}

func readJudgements(file string) ([]*judgement, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var out []*judgement
	for n, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 7 {
			return nil, fmt.Errorf("%s:%d: want 7 tab-separated fields, got %d", file, n+1, len(f))
		}
		switch f[5] {
		case "right", "wrong", "debatable":
		default:
			return nil, fmt.Errorf("%s:%d: verdict %q is not right, wrong or debatable", file, n+1, f[5])
		}
		out = append(out, &judgement{Source: f[0], Rule: f[1], Object: f[2], File: f[3], Path: f[4], Verdict: f[5], Why: f[6]})
	}
	return out, nil
}

// judge joins findings with their verdicts: the most specific judgement
// (file and path given) wins over a wildcard one.
func judge(all []judged, js []*judgement) string {
	counts := map[string]map[string]int{} // rule -> verdict -> n
	var unjudged []judged
	for i := range all {
		a := &all[i]
		best := -1
		for _, j := range js {
			if !j.matches(a.source, a.finding) {
				continue
			}
			score := 0
			if j.File != "*" {
				score++
			}
			if j.Path != "*" {
				score++
			}
			if score > best {
				best, a.verdict = score, j
			}
		}
		v := "unjudged"
		if a.verdict != nil {
			a.verdict.used = true
			v = a.verdict.Verdict
		} else {
			unjudged = append(unjudged, *a)
		}
		if counts[a.finding.Rule] == nil {
			counts[a.finding.Rule] = map[string]int{}
		}
		counts[a.finding.Rule][v]++
	}
	var b strings.Builder
	rules := make([]string, 0, len(counts))
	for r := range counts {
		rules = append(rules, r)
	}
	sort.Strings(rules)
	verdicts := []string{"right", "debatable", "wrong", "unjudged"}
	b.WriteString("| rule | " + strings.Join(verdicts, " | ") + " |\n|---|--:|--:|--:|--:|\n")
	total := map[string]int{}
	for _, r := range rules {
		fmt.Fprintf(&b, "| %s |", r)
		for _, v := range verdicts {
			fmt.Fprintf(&b, " %s |", count(counts[r][v]))
			total[v] += counts[r][v]
		}
		b.WriteString("\n")
	}
	b.WriteString("| **total** |")
	for _, v := range verdicts {
		fmt.Fprintf(&b, " **%d** |", total[v])
	}
	b.WriteString("\n\n")
	b.WriteString("| source | rule | object | position | verdict | why |\n|---|---|---|---|---|---|\n")
	for _, a := range all {
		v, why := "**unjudged**", ""
		if a.verdict != nil {
			v, why = a.verdict.Verdict, a.verdict.Why
			if v != "right" {
				v = "**" + v + "**"
			}
		}
		c := ""
		if a.finding.Container != nil {
			c = " (" + *a.finding.Container + ")"
		}
		fmt.Fprintf(&b, "| %s | %s %s | %s/%s%s | `%s:%d` | %s | %s |\n", a.source, a.finding.Rule, a.finding.Severity,
			a.finding.Object.Kind, a.finding.Object.Name, c, a.finding.File, a.finding.Line, v, strings.ReplaceAll(why, "|", "\\|"))
	}
	if len(unjudged) > 0 {
		b.WriteString("\n## Unjudged\n\n")
		for _, a := range unjudged {
			fmt.Fprintf(&b, "- %s\t%s\t%s/%s\t%s\t%s: %s\n", a.source, a.finding.Rule, a.finding.Object.Kind, a.finding.Object.Name,
				a.finding.File, a.finding.Path, strings.Join(strings.Fields(a.finding.Message), " "))
		}
	}
	var stale []string
	for _, j := range js {
		if !j.used {
			stale = append(stale, fmt.Sprintf("- %s %s %s %s %s (%s)", j.Source, j.Rule, j.Object, j.File, j.Path, j.Verdict))
		}
	}
	if len(stale) > 0 {
		b.WriteString("\n## Judgements no finding matched\n\n" + strings.Join(stale, "\n") + "\n")
	}
	return b.String()
}

// checkPositions renders the chart with `helm template` (backfire's defaults:
// release-name, namespace default) and checks that each finding's line, counted
// from the line after its document's "# Source:" header, is the field the
// finding names (or one of its parents, for a defaulted field). It returns one
// line per finding: ok or MISMATCH, with what that line holds.
func checkPositions(helmBin, dir, chart string, findings []finding) ([]string, error) {
	lines, _, err := checkPositionsAndRender(helmBin, dir, chart, findings)
	return lines, err
}

// checkPositionsAndRender is checkPositions that also returns helm's output.
func checkPositionsAndRender(helmBin, dir, chart string, findings []finding, values ...string) ([]string, []byte, error) {
	// The Kubernetes version backfire renders for, written out: a helm built
	// without its release flags defaults to an old one.
	args := []string{"template", "release-name", chart, "--include-crds", "--kube-version", "v1.37.0"}
	for _, v := range values {
		args = append(args, "--values", filepath.Join(chart, filepath.FromSlash(v)))
	}
	cmd := exec.Command(helmBin, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	outb, err := cmd.Output()
	if err != nil {
		return []string{fmt.Sprintf("helm template failed: %v: %s", err, strings.Join(strings.Fields(stderr.String()), " "))}, nil, nil
	}
	// Each document's lines, by its source template.
	docs := map[string][][]string{}
	var cur *[]string
	for _, line := range strings.Split(string(outb), "\n") {
		if src, ok := strings.CutPrefix(line, "# Source: "); ok {
			docs[src] = append(docs[src], nil)
			cur = &docs[src][len(docs[src])-1]
			continue
		}
		if line == "---" {
			cur = nil
			continue
		}
		if cur != nil {
			*cur = append(*cur, line)
		}
	}
	var out []string
	for _, f := range findings {
		verdict, seen := "MISMATCH", ""
		for _, doc := range docs[f.File] {
			if f.Line < 1 || f.Line > len(doc) || !mentions(doc, f.Object.Name) {
				continue
			}
			text := strings.TrimSpace(doc[f.Line-1])
			seen = text
			// The field itself or a parent (a defaulted field points at the
			// deepest that exists), or, for an absent field of a container,
			// the container's list item.
			if holdsField(text, f) {
				verdict = "ok"
				break
			}
		}
		if len(docs[f.File]) == 0 {
			verdict = "MISMATCH (no such template in helm's output)"
		}
		out = append(out, fmt.Sprintf("%s\t%s:%d\t%s\t%s\t%q", f.Rule, f.File, f.Line, f.Path, verdict, seen))
	}
	return out, outb, nil
}

// checkValuesSources checks that the values file line a finding names as the
// source of its value holds the key it names ("values.yaml:294
// master.livenessProbe (5 keys)": line 294 is "livenessProbe:").
func checkValuesSources(dir string, findings []finding) []string {
	var out []string
	for _, f := range findings {
		if f.ValuesSource == nil {
			continue
		}
		verdict, seen := "MISMATCH", ""
		loc, key, _ := strings.Cut(*f.ValuesSource, " ")
		key, _, _ = strings.Cut(key, " ")
		file, lineText, ok := strings.Cut(loc, ":")
		n, err := strconv.Atoi(lineText)
		if b, rerr := os.ReadFile(filepath.Join(dir, file)); ok && err == nil && rerr == nil {
			lines := strings.Split(string(b), "\n")
			if n >= 1 && n <= len(lines) {
				seen = strings.TrimSpace(lines[n-1])
				last := key[strings.LastIndex(key, ".")+1:]
				if strings.HasPrefix(seen, last+":") {
					verdict = "ok"
				}
			}
		} else if strings.HasPrefix(*f.ValuesSource, "--set") {
			verdict = "ok (a --set expression)"
		}
		out = append(out, fmt.Sprintf("%s\tvaluesSource %s\t%s\t%s\t%q", f.Rule, *f.ValuesSource, f.Path, verdict, seen))
	}
	return out
}

// checkFileLines checks the line of each finding in a plain file: it must
// hold the field the finding names, a parent, or the container's item, as
// checkPositions accepts them in helm's output.
func checkFileLines(dir string, findings []finding) []string {
	var out []string
	for _, f := range findings {
		verdict, seen := "MISMATCH", ""
		if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.File))); err == nil {
			lines := strings.Split(string(b), "\n")
			if f.Line >= 1 && f.Line <= len(lines) {
				seen = strings.TrimSpace(lines[f.Line-1])
				if holdsField(seen, f) {
					verdict = "ok"
				}
			}
		}
		out = append(out, fmt.Sprintf("%s\t%s:%d\t%s\t%s\t%q", f.Rule, f.File, f.Line, f.Path, verdict, seen))
	}
	return out
}

// holdsField tells whether a trimmed line is the field a finding names (a
// YAML key or a JSON "key"), one of its parents, or, for an absent field of
// a container, the container's list item.
func holdsField(text string, f finding) bool {
	keys := pathKeys(f.Path)
	field, value, _ := strings.Cut(strings.TrimPrefix(text, "- "), ":")
	field = strings.Trim(strings.TrimSpace(field), `"{`)
	value = strings.Trim(strings.TrimSpace(value), `"',`)
	// A list item that starts with another field ("- image: x", or "{" in
	// JSON) is accepted for a field under a list index: its position is the
	// item's, and which item it is is not checked here.
	item := field == "name" && f.Container != nil && value == *f.Container ||
		(strings.HasPrefix(text, "- ") || text == "{") && strings.Contains(f.Path, "[")
	return keys[field] || item
}

// pathKeys are the field names of a path: "a.b[0].c" -> a, b, c.
func pathKeys(p string) map[string]bool {
	keys := map[string]bool{}
	for _, k := range strings.Split(p, ".") {
		k, _, _ = strings.Cut(k, "[")
		keys[k] = true
	}
	return keys
}

// mentions tells whether a document has a "name: <name>" line (its
// metadata.name, or a container's).
func mentions(doc []string, name string) bool {
	for _, l := range doc {
		key, value, ok := strings.Cut(strings.TrimSpace(l), ":")
		if ok && key == "name" && strings.Trim(strings.TrimSpace(value), `"'`) == name {
			return true
		}
	}
	return false
}
