//go:build fixeval

// Package fixeval evaluates backfire fix on the public charts of
// sources.txt: see run.sh. It is a test only for the test kube-apiserver
// it dry-runs the fixed objects against; it is built with -tags fixeval,
// never in CI.
package fixeval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"backfire.dev/backfire/internal/cluster/clustertest"
	"backfire.dev/backfire/internal/config"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fixplan"
	"backfire.dev/backfire/internal/helm"
	"backfire.dev/backfire/internal/kustomize"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/model/rollout"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/scan"
	"backfire.dev/backfire/internal/source"
)

var (
	checkouts = flag.String("checkouts", "", "the tree hack/fixeval/checkout.sh extracted")
	outDir    = flag.String("out", "", "where the results go")
	only      = flag.String("only", "", "only the sources whose name holds this")
)

type dep struct{ name, repo, commit, path string }

type src struct {
	name, kind, repo, commit, path string
	deps                           []dep
	set                            []string // Helm --set values the chart needs to render
}

// overlay is true for a Kustomize overlay: its folder's parent is copied
// with it, for the ../crd and ../rbac it names.
func (s src) overlay() bool { return s.kind == "kustomize" }

// outcome is what fix made of one chart.
type outcome struct {
	Name     string `json:"name"`
	Commit   string `json:"commit"`
	Findings int    `json:"findings"` // BF1xx and BF2xx before the fix
	// Fixed through the values, through a template edit; left.
	Values   int        `json:"fixedThroughValues"`
	Template int        `json:"fixedThroughTemplate"`
	Left     []leftItem `json:"left"`
	// After: BF1xx and BF2xx the rescan reports, fixed findings it still
	// reports, findings it reports that the scan did not, files a second
	// fix changes.
	Rescan     int `json:"rescan"`
	NotGone    int `json:"fixedStillReported"`
	Introduced int `json:"introduced"`
	SecondRun  int `json:"secondRunFiles"`
	// The server-side dry run of the objects whose rendering changed.
	Changed  int `json:"objectsChanged"`
	Accepted int `json:"acceptedAfter"`
	Rejected int `json:"rejectedAfterAcceptedBefore"`
	// The same with --values-out.
	OutFixed    int    `json:"valuesOutFixed"`
	OutLeft     int    `json:"valuesOutLeft"`
	OutAccepted int    `json:"valuesOutAccepted"`
	OutRejected int    `json:"valuesOutRejected"`
	Overlay     bool   `json:"overlay,omitempty"` // no --values-out pass
	Error       string `json:"error,omitempty"`
}

type leftItem struct {
	Rule, Object, Reason string
}

func readSources(t *testing.T) []src {
	f, err := os.Open("sources.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []src
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 5 || strings.HasPrefix(fs[0], "#") {
			continue
		}
		s := src{name: fs[0], kind: fs[1], repo: fs[2], commit: fs[3], path: fs[4]}
		for _, d := range fs[5:] {
			if v, ok := strings.CutPrefix(d, "set:"); ok {
				s.set = append(s.set, v)
				continue
			}
			name, spec, _ := strings.Cut(d, "=")
			repo, rest, _ := strings.Cut(spec, "@")
			commit, path, _ := strings.Cut(rest, ":")
			s.deps = append(s.deps, dep{name, repo, commit, path})
		}
		out = append(out, s)
	}
	return out
}

func checkout(repo, commit, path string) string {
	return filepath.Join(*checkouts, strings.ReplaceAll(repo, "/", "+")+"@"+commit, path)
}

// scratch copies a source's chart with its dependencies in charts/, or
// an overlay with its parent folder; it returns the path to scan.
func scratch(t *testing.T, s src) string {
	dir := filepath.Join(t.TempDir(), filepath.Base(strings.ReplaceAll(s.name, "/", "-")))
	if s.overlay() {
		if err := os.CopyFS(dir, os.DirFS(checkout(s.repo, s.commit, filepath.Dir(s.path)))); err != nil {
			t.Fatal(err)
		}
		return filepath.Join(dir, filepath.Base(s.path))
	}
	if err := os.CopyFS(dir, os.DirFS(checkout(s.repo, s.commit, s.path))); err != nil {
		t.Fatal(err)
	}
	for _, d := range s.deps {
		to := filepath.Join(dir, "charts", d.name)
		os.RemoveAll(to)
		if err := os.CopyFS(to, os.DirFS(checkout(d.repo, d.commit, d.path))); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func options(chart string, h helm.Options, valuesOut string) fixplan.Options {
	return fixplan.Options{
		Scan: scan.Options{Paths: []string{chart}, Kustomize: kustomize.New(), Rules: rules.Options{Config: &config.Config{}, RolloutsVersion: rollout.DefaultVersion}},
		Helm: &h, ValuesOut: valuesOut,
	}
}

func counted(f finding.Finding) bool {
	return strings.HasPrefix(f.Rule, "BF1") || strings.HasPrefix(f.Rule, "BF2")
}

func TestFixEvaluation(t *testing.T) {
	if *checkouts == "" || *outDir == "" {
		t.Skip("run with hack/fixeval/run.sh")
	}
	env := clustertest.Shared(t)
	var results []outcome
	for _, s := range readSources(t) {
		if *only != "" && !strings.Contains(s.name, *only) {
			continue
		}
		t.Run(s.name, func(t *testing.T) {
			o := evaluate(t, env, s)
			results = append(results, o)
			t.Logf("%s: %d findings, %d fixed through values, %d through a template, %d left", s.name, o.Findings, o.Values, o.Template, len(o.Left))
		})
	}
	write(t, results)
}

func evaluate(t *testing.T, env *clustertest.Env, s src) outcome {
	o := outcome{Name: s.name, Commit: s.commit}
	chart := scratch(t, s)
	pristine := scratch(t, s)
	opts := options(chart, helm.Options{Set: s.set}, "")

	p, err := fixplan.Plan(opts)
	if err != nil {
		o.Error = err.Error()
		return o
	}
	before, err := findings(chart, s.set)
	if err != nil {
		o.Error = err.Error()
		return o
	}
	for _, f := range before {
		if counted(f) {
			o.Findings++
		}
	}
	for _, f := range p.Fixed {
		if !counted(f) {
			continue
		}
		through := "values"
		for _, sp := range p.Spans[f.Instance()] {
			if s.overlay() || strings.Contains(filepath.ToSlash(sp.File), "/templates/") {
				through = "template"
			}
		}
		if through == "values" {
			o.Values++
		} else {
			o.Template++
		}
	}
	// The reasons name files in the scratch copy: relative to it, they
	// read the same on every run.
	scratchDir := filepath.Dir(chart)
	if s.overlay() {
		scratchDir = filepath.Dir(scratchDir)
	}
	for _, l := range p.Left {
		if counted(l.Finding) {
			o.Left = append(o.Left, leftItem{l.Finding.Rule, l.Finding.Object.String(), strings.ReplaceAll(l.Reason, scratchDir+string(filepath.Separator), "")})
		}
	}
	if errs := p.Write(); len(errs) > 0 {
		o.Error = fmt.Sprint(errs)
		return o
	}
	after, err := findings(chart, s.set)
	if err != nil {
		o.Error = err.Error()
		return o
	}
	o.Rescan, o.NotGone, o.Introduced = compare(before, after, p.Fixed)
	if again, err := fixplan.Plan(opts); err == nil {
		o.SecondRun = len(again.Files)
	}
	o.Changed, o.Accepted, o.Rejected = dryRun(t, env, render(t, s, pristine, nil), render(t, s, chart, nil))
	if s.overlay() {
		o.Overlay = true // --values-out is for charts
		return o
	}

	// The same with --values-out, on a fresh copy.
	chart2 := scratch(t, s)
	out := filepath.Join(t.TempDir(), "backfire-values.yaml")
	p2, err := fixplan.Plan(options(chart2, helm.Options{Set: s.set}, out))
	if err != nil {
		o.Error = "--values-out: " + err.Error()
		return o
	}
	for _, f := range p2.Fixed {
		if counted(f) {
			o.OutFixed++
		}
	}
	for _, l := range p2.Left {
		if counted(l.Finding) {
			o.OutLeft++
		}
	}
	if errs := p2.Write(); len(errs) > 0 {
		o.Error = fmt.Sprint(errs)
		return o
	}
	var values []string
	if _, err := os.Stat(out); err == nil {
		values = []string{out}
	}
	_, o.OutAccepted, o.OutRejected = dryRun(t, env, render(t, s, pristine, nil), render(t, s, chart2, values))
	return o
}

func findings(chart string, set []string) ([]finding.Finding, error) {
	r, err := helm.New(helm.Options{Set: set})
	if err != nil {
		return nil, err
	}
	so := scan.Options{Paths: []string{chart}, Charts: r, Kustomize: kustomize.New(), Rules: rules.Options{Config: &config.Config{}, RolloutsVersion: rollout.DefaultVersion}}
	res, err := scan.Run(so)
	if err != nil {
		return nil, err
	}
	return res.Findings, nil
}

// compare counts the rescan's BF1xx and BF2xx findings, the fixed ones
// it still reports, and those the scan before did not report.
func compare(before, after, fixed []finding.Finding) (rescan, notGone, introduced int) {
	key := func(f finding.Finding) finding.Identity { return f.Identity() }
	was := map[finding.Identity]bool{}
	for _, f := range before {
		was[key(f)] = true
	}
	gone := map[finding.Identity]bool{}
	for _, f := range fixed {
		gone[key(f)] = true
	}
	for _, f := range after {
		if counted(f) {
			rescan++
		}
		if gone[key(f)] {
			notGone++
		}
		if !was[key(f)] {
			introduced++
		}
	}
	return
}

func render(t *testing.T, s src, chart string, values []string) map[object.Ref][]byte {
	var r source.Renderer = kustomize.New()
	kind := source.Kustomization
	if !s.overlay() {
		h, err := helm.New(helm.Options{ValueFiles: values, Set: s.set})
		if err != nil {
			t.Fatal(err)
		}
		r, kind = h, source.Chart
	}
	streams, errs := r.Render(source.Input{Path: chart, Kind: kind, Explicit: true})
	if len(errs) > 0 {
		t.Fatalf("%s: %v", chart, errs)
	}
	out := map[object.Ref][]byte{}
	for _, s := range streams {
		f := load.Parse(s.Name, s.Data)
		if s.Documents != nil {
			f = load.ParseDocuments(s.Name, s.Documents)
		}
		for _, d := range f.Documents {
			if bytes.Contains(d.JSON, []byte(`"helm.sh/hook":"test`)) {
				continue // helm test's pods, named at random, not installed
			}
			u := &unstructured.Unstructured{}
			if u.UnmarshalJSON(d.JSON) != nil {
				continue
			}
			out[object.Ref{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}] = d.JSON
		}
	}
	return out
}

// dryRun creates, with dryRun=All, each object whose rendering changed,
// before and after: how many changed, how many the API server accepts
// after, and how many it rejects after though it accepted them before.
func dryRun(t *testing.T, env *clustertest.Env, before, after map[object.Ref][]byte) (changed, accepted, rejected int) {
	create := func(data []byte) error {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			return err
		}
		if u.GetNamespace() != "" {
			u.SetNamespace("fix-eval")
		}
		return env.DryRun(t, u)
	}
	for k, a := range after {
		b, ok := before[k]
		if !ok || bytes.Equal(a, b) {
			continue
		}
		changed++
		was := create(b) == nil
		err := create(a)
		switch {
		case err == nil:
			accepted++
		case was:
			rejected++
			t.Errorf("%s: rejected after the fix: %v", k, err)
		}
	}
	return
}

func write(t *testing.T, results []outcome) {
	sort.Slice(results, func(i, j int) bool { return results[i].Name < results[j].Name })
	data, _ := json.MarshalIndent(results, "", "  ")
	if err := os.WriteFile(filepath.Join(*outDir, "results.json"), append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	var b, l strings.Builder
	b.WriteString("| chart | findings | fixed: values | fixed: template | left | rescan | second run | dry run: changed / accepted / rejected | --values-out: fixed / left, accepted / rejected |\n")
	b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	var tot outcome
	for _, o := range results {
		note := ""
		if o.Error != "" {
			note = " (" + o.Error + ")"
		}
		valuesOut := fmt.Sprintf("%d / %d, %d / %d", o.OutFixed, o.OutLeft, o.OutAccepted, o.OutRejected)
		if o.Overlay {
			valuesOut = "(overlay)"
		}
		fmt.Fprintf(&b, "| %s%s | %d | %d | %d | %d | %d | %d files | %d / %d / %d | %s |\n",
			o.Name, note, o.Findings, o.Values, o.Template, len(o.Left), o.Rescan, o.SecondRun, o.Changed, o.Accepted, o.Rejected, valuesOut)
		tot.Findings += o.Findings
		tot.Values += o.Values
		tot.Template += o.Template
		tot.Left = append(tot.Left, o.Left...)
		tot.Rescan += o.Rescan
		tot.SecondRun += o.SecondRun
		tot.Changed += o.Changed
		tot.Accepted += o.Accepted
		tot.Rejected += o.Rejected
		tot.OutFixed += o.OutFixed
		tot.OutLeft += o.OutLeft
		tot.OutAccepted += o.OutAccepted
		tot.OutRejected += o.OutRejected
		for _, x := range o.Left {
			fmt.Fprintf(&l, "- %s, %s %s: %s\n", o.Name, x.Rule, x.Object, x.Reason)
		}
	}
	fmt.Fprintf(&b, "| **%d charts** | **%d** | **%d** | **%d** | **%d** | **%d** | %d files | %d / %d / %d | %d / %d, %d / %d |\n",
		len(results), tot.Findings, tot.Values, tot.Template, len(tot.Left), tot.Rescan, tot.SecondRun, tot.Changed, tot.Accepted, tot.Rejected, tot.OutFixed, tot.OutLeft, tot.OutAccepted, tot.OutRejected)
	if err := os.WriteFile(filepath.Join(*outDir, "table.md"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(*outDir, "left.md"), []byte(l.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
