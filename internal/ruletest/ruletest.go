// Package ruletest runs rules over their fixtures, from the registry: Run
// walks every rule of a catalog and checks each of its fixtures
// (testdata/ID/positive/*.yaml and testdata/ID/negative/*.yaml in the
// rule's family package). What a fixture expects is written in it, as
// golang.org/x/tools/go/analysis/analysistest reads "// want" comments:
//
//	livenessProbe:   # want BF101
//
// says that the rule reports a finding at that line; "# want BF101 BF101"
// two findings. A finding placed in another file of the fixture (a
// diagnose rule's finding at a log line) is expected anywhere in the YAML
// with the file named after the fixture's own name: in NAME.yaml,
// "# want BF503 at database.log:11" expects a finding at line 11 of
// NAME.database.log. A positive fixture has at least one expectation and
// gets exactly the findings it expects; a negative fixture has none and
// gets none. Each fixture's text report must also match its golden file
// (NAME.golden, the prose), and every fix a scan rule proposes must apply
// and silence it.
package ruletest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"backfire.dev/backfire/internal/config"
	"backfire.dev/backfire/internal/diagnose"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fixcompose"
	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/observe"
	"backfire.dev/backfire/internal/report"
	"backfire.dev/backfire/internal/result"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/scan"
)

// Update rewrites golden files: go test ./internal/catalog -update (or a
// family's package)
var Update = flag.Bool("update", false, "rewrite golden files")

// MinFixtures is how many positive and how many negative fixtures a rule
// needs at least.
const MinFixtures = 3

// Run is the registry-driven fixture test: it checks every fixture of every
// rule of rs, and fails a rule that has too few. dir returns the directory
// of a rule's family package, where its testdata is; the rules that read
// the others' findings (BF901) run with all of rs.
func Run(t *testing.T, rs []*rules.Rule, dir func(*rules.Rule) string) {
	t.Helper()
	run(t, rs, rs, dir)
}

// RunFamily is Run for the rules of catalog whose family is the package the
// test runs in (its working directory), with the whole catalog as the
// context of the rules that read the others' findings. Each family's
// fixtures_test.go calls it, so go test ./internal/rules/... fails where a
// fixture is wrong, as the catalog's test of every rule does.
func RunFamily(t *testing.T, catalog []*rules.Rule) {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	var mine []*rules.Rule
	for _, r := range catalog {
		// A family is an import path; the test runs in its directory.
		if strings.HasSuffix(filepath.ToSlash(wd), "/"+strings.TrimPrefix(r.Family(), module())) {
			mine = append(mine, r)
		}
	}
	if len(mine) == 0 {
		t.Fatalf("no rule of the catalog is registered in %s", wd)
	}
	run(t, mine, catalog, func(*rules.Rule) string { return wd })
}

// module is the module's import path with its slash: what a family's
// import path starts with.
func module() string {
	type marker struct{}
	path := reflect.TypeOf(marker{}).PkgPath() // this package's import path
	return strings.TrimSuffix(path, "internal/ruletest")
}

func run(t *testing.T, rs, catalog []*rules.Rule, dir func(*rules.Rule) string) {
	t.Helper()
	for _, r := range rs {
		t.Run(r.ID, func(t *testing.T) {
			t.Chdir(dir(r))
			cases, problems := Cases(r, catalog)
			problems = append(problems, ReadProblems(r, cases)...)
			for _, p := range problems {
				t.Error(p)
			}
			for _, c := range cases {
				t.Run(c.Name(), func(t *testing.T) {
					for _, p := range c.Check() {
						t.Error(p)
					}
				})
			}
		})
	}
}

// ReadProblems compares what r asks the index on its fixtures (recorded,
// see index.Recorder) with what it declares in Rule.Reads: every question
// asked must be declared, and every declared read must be asked on some
// fixture (or the declaration is a guess).
func ReadProblems(r *rules.Rule, cases []Case) []string {
	asked := map[string]bool{}
	if r.ScanCheck() != nil {
		for _, c := range cases {
			res, err := scanFixture([]*rules.Rule{r}, true, nil, c.File)
			if err != nil {
				return []string{err.Error()}
			}
			ix := index.Build(res.Objects)
			// The rule's own questions: not the engine's about a copy.
			opts := &rules.Options{Config: &config.Config{}, EachObject: true}
			for _, o := range res.Objects {
				rec := &index.Recorder{}
				rules.RunObject(o, ix.View(index.Everywhere, rec), []*rules.Rule{r}, opts)
				for _, a := range rec.Asked() {
					asked[a] = true
				}
			}
		}
	}
	var problems []string
	for a := range asked {
		if !slices.Contains(r.Reads, a) {
			problems = append(problems, fmt.Sprintf("%s asks the index about %s, which its Reads do not declare", r.ID, a))
		}
	}
	for _, a := range r.Reads {
		if !asked[a] {
			problems = append(problems, fmt.Sprintf("%s declares it reads %s, which none of its fixtures asks the index about: add a fixture that does, or drop the declaration", r.ID, a))
		}
	}
	slices.Sort(problems)
	return problems
}

// A Case is one fixture of one rule, relative to the rule's family
// directory (the working directory when it is checked).
type Case struct {
	Rule     *rules.Rule
	File     string // testdata/ID/positive/NAME.yaml
	Positive bool
	// Context are the rules that run beside Rule, for a rule that reads
	// the others' findings.
	Context []*rules.Rule
}

// Name is the case's subtest name: "positive/NAME".
func (c Case) Name() string {
	return filepath.Base(filepath.Dir(c.File)) + "/" + filepath.Base(fixtureBase(c.File))
}

// fixtureBase is a fixture's path without its extension: the stem its
// golden file and its logs are named after.
func fixtureBase(file string) string { return strings.TrimSuffix(file, filepath.Ext(file)) }

// Cases lists the fixtures of r under testdata/ID in the working
// directory; the problems say where there are too few.
func Cases(r *rules.Rule, catalog []*rules.Rule) ([]Case, []string) {
	var cases []Case
	var problems []string
	for _, kind := range []string{"positive", "negative"} {
		files, _ := filepath.Glob(filepath.Join("testdata", r.ID, kind, "*.yaml"))
		if r.ScanCheck() == nil {
			// A diagnose rule also reads what kubectl prints (describe
			// pod, get pods, get events), kept as NAME.txt.
			printed, _ := filepath.Glob(filepath.Join("testdata", r.ID, kind, "*.txt"))
			files = append(files, printed...)
		}
		if len(files) < MinFixtures {
			problems = append(problems, fmt.Sprintf("%s: %d %s fixtures in testdata/%s/%s, want at least %d", r.ID, len(files), kind, r.ID, kind, MinFixtures))
		}
		for _, f := range files {
			c := Case{Rule: r, File: f, Positive: kind == "positive"}
			if s := r.ScanCheck(); s != nil && s.ReadsFindings {
				c.Context = catalog
			}
			cases = append(cases, c)
		}
	}
	return cases, problems
}

// Want is one expectation of a fixture.
type Want struct {
	Rule string
	File string
	Line int
}

func (w Want) String() string { return fmt.Sprintf("%s at %s:%d", w.Rule, w.File, w.Line) }

var wantComment = regexp.MustCompile(`#\s*want((?:\s+BF[0-9]{3})+)(?:\s+at\s+(\S+):([0-9]+))?\s*$`)

// Wants reads the expectations written in a fixture.
func Wants(file string) ([]Want, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var out []Want
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1)
	for n := 1; sc.Scan(); n++ {
		m := wantComment.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		at, line := file, n
		if m[2] != "" {
			at = fixtureBase(file) + "." + m[2]
			line, _ = strconv.Atoi(m[3])
		}
		for _, id := range strings.Fields(m[1]) {
			out = append(out, Want{Rule: id, File: at, Line: line})
		}
	}
	return out, sc.Err()
}

// Check runs the case and returns what is wrong with it, nil when nothing.
func (c Case) Check() []string {
	r := c.Rule
	wants, err := Wants(c.File)
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	for _, w := range wants {
		if w.Rule != r.ID {
			problems = append(problems, fmt.Sprintf("%s:%d: want %s in a fixture of %s", c.File, w.Line, w.Rule, r.ID))
		}
	}
	switch {
	case c.Positive && len(wants) == 0:
		problems = append(problems, fmt.Sprintf("%s: a positive fixture with no # want %s: write it on the line the finding points at", c.File, r.ID))
	case !c.Positive && len(wants) > 0:
		problems = append(problems, fmt.Sprintf("%s: a negative fixture expects %s", c.File, wants[0]))
	}

	var res *result.Result
	var text []byte
	if r.ScanCheck() == nil {
		d, err := diagnoseFixture(r, c.File)
		if err != nil {
			return append(problems, err.Error())
		}
		res, text = d.Result, diagnoseText(d)
	} else {
		s, err := scanFixture(c.rules(), true, nil, c.File)
		if err != nil {
			return append(problems, err.Error())
		}
		res, text = s, reportText(s)
	}
	if len(res.Errors) > 0 {
		return append(problems, fmt.Sprintf("fixture does not load: %v", res.Errors))
	}
	got := Of(res, r.ID)
	problems = append(problems, match(r.ID, got, wants)...)
	if p := golden(fixtureBase(c.File)+".golden", text); p != "" {
		problems = append(problems, p)
	}
	for _, f := range got {
		if f.Line < 1 || f.File == "" || len(f.Mechanism) == 0 {
			problems = append(problems, fmt.Sprintf("finding without a place or a mechanism: %+v", f))
		}
		if r.ScanCheck() != nil {
			problems = append(problems, setsProblems(r, res, f)...)
			problems = append(problems, fixProblems(r, c.rules(), res, f)...)
		}
	}
	return problems
}

// rules is what runs for the case: the rule, or its context with it.
func (c Case) rules() []*rules.Rule {
	if c.Context != nil {
		return c.Context
	}
	return []*rules.Rule{c.Rule}
}

// match pairs findings with expectations by file and line.
func match(id string, got []finding.Finding, wants []Want) []string {
	left := slices.Clone(wants)
	var problems []string
	for _, f := range got {
		i := slices.IndexFunc(left, func(w Want) bool { return w.Rule == id && w.File == f.File && w.Line == f.Line })
		if i < 0 {
			problems = append(problems, fmt.Sprintf("%s:%d: unexpected %s: %s (no # want %s on that line)", f.File, f.Line, id, f.Message, id))
			continue
		}
		left = slices.Delete(left, i, i+1)
	}
	for _, w := range left {
		if w.Rule == id {
			problems = append(problems, fmt.Sprintf("%s:%d: want %s, which did not report there", w.File, w.Line, id))
		}
	}
	return problems
}

// scanFixture runs rs over files (or stdin); with all, every rule of rs
// is enabled: a rule that is off by default is on for its own fixtures.
func scanFixture(rs []*rules.Rule, all bool, stdin []byte, paths ...string) (*scan.Result, error) {
	cfg := &config.Config{}
	for _, r := range rs {
		if all && r.DefaultOff {
			cfg.Enable = append(cfg.Enable, r.ID)
		}
	}
	opts := scan.Options{Paths: paths, Catalog: rs, KeepObjects: true, Rules: rules.Options{Config: cfg}}
	if stdin != nil {
		opts.Stdin = bytes.NewReader(stdin)
	}
	return scan.Run(opts)
}

// diagnoseFixture runs one diagnose rule over a fixture: NAME.yaml holds
// the pod and its events (kubectl get pod,events -o yaml), or NAME.txt what
// kubectl prints of them; NAME.CONTAINER.log the logs. A printed capture's
// "# want" comments are cut before it is read, so that the reader sees the
// capture as kubectl printed it, with its lines where they were.
func diagnoseFixture(r *rules.Rule, file string) (*diagnose.Diagnosis, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	if filepath.Ext(file) == ".txt" {
		data = cutWants(data)
	}
	base := fixtureBase(file)
	logs, _ := filepath.Glob(base + ".*.log")
	in := diagnose.Input{Pods: diagnose.Stream{Name: file, Data: data}, Catalog: []*rules.Rule{r}}
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			return nil, err
		}
		container := strings.TrimSuffix(strings.TrimPrefix(l, base+"."), ".log")
		in.Logs = append(in.Logs, observe.Log{Container: container, File: l, Data: b})
	}
	return diagnose.Run(in)
}

// cutWants removes the "# want" comment that ends a line, and the blanks
// before it.
func cutWants(data []byte) []byte {
	lines := bytes.SplitAfter(data, []byte("\n"))
	for i, l := range lines {
		body := bytes.TrimRight(l, "\r\n")
		if loc := wantComment.FindIndex(body); loc != nil {
			lines[i] = append(bytes.TrimRight(body[:loc[0]], " \t"), l[len(body):]...)
		}
	}
	return bytes.Join(lines, nil)
}

func reportText(res *result.Result) []byte {
	var b bytes.Buffer
	if err := report.Text(&b, res, report.TextOptions{}); err != nil {
		return []byte(err.Error())
	}
	return b.Bytes()
}

// diagnoseText is the text report followed by the notes: a negative
// fixture's golden says why nothing was found.
func diagnoseText(res *diagnose.Diagnosis) []byte {
	b := reportText(res.Result)
	for _, n := range res.Notes {
		b = append(b, "no evidence: "+n+"\n"...)
	}
	return b
}

// golden compares a report with its golden file, or rewrites the file
// with -update.
func golden(path string, got []byte) string {
	if *Update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			return err.Error()
		}
		return ""
	}
	want, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("no golden file (run with -update): %v", err)
	}
	if !bytes.Equal(want, got) {
		return fmt.Sprintf("report differs from %s (run with -update if intended):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
	return ""
}

// Scan runs only the given rules over files (or "-" with stdin).
func Scan(t testing.TB, rs []*rules.Rule, stdin []byte, paths ...string) *scan.Result {
	t.Helper()
	res, err := scanFixture(rs, false, stdin, paths...)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Of returns the findings of one rule.
func Of(res *scan.Result, id string) []finding.Finding {
	var out []finding.Finding
	for _, f := range res.Findings {
		if f.Rule == id {
			out = append(out, f)
		}
	}
	return out
}

// Golden compares the text report of res with a golden file.
func Golden(t *testing.T, path string, res *scan.Result) {
	t.Helper()
	if p := golden(path, reportText(res)); p != "" {
		t.Error(p)
	}
}

// CheckFix applies f's strategic merge patch to the object it targets, with
// the upstream patch code, checks that every probe still has exactly one
// handler, and scans the patched input again: r must no longer report the
// same object and container, wherever in it (a fix may move the path: BF102
// points at timeoutSeconds once it is set).
func CheckFix(t testing.TB, r *rules.Rule, res *scan.Result, f finding.Finding) {
	t.Helper()
	for _, p := range fixProblems(r, []*rules.Rule{r}, res, f) {
		t.Errorf("%s", p)
	}
}

// setsProblems checks that f's patch sets only what its rule declares it
// sets (Rule.Fix.Sets), which is what the composition of fixes relies on.
func setsProblems(r *rules.Rule, res *scan.Result, f finding.Finding) []string {
	if f.Fix == nil || f.Fix.Type != finding.StrategicMergePatch {
		return nil
	}
	target := f.Object
	if f.Fix.Target != nil {
		target = *f.Fix.Target
	}
	i := slices.IndexFunc(res.Objects, func(o *object.Object) bool { return o.Ref == target })
	if i < 0 {
		return nil // fixProblems says so
	}
	var problems []string
	for _, fd := range fixcompose.Fields(res.Objects[i], f.Fix.Patch) {
		if !fixcompose.Covers(r.Fix.Sets, fd.Path) {
			problems = append(problems, fmt.Sprintf("%s's fix sets %s, which its Fix.Sets %q do not declare", r.ID, fd.Path, r.Fix.Sets))
		}
	}
	return problems
}

// fixProblems checks f's fix as CheckFix says, rescanning with rs.
func fixProblems(r *rules.Rule, rs []*rules.Rule, res *scan.Result, f finding.Finding) []string {
	if f.Fix == nil {
		// The promise of every finding: what to change. Where no patch can
		// be computed, a ManualChange says it in words.
		return []string{r.ID + " finding has no fix: every scan finding carries one, a strategic merge patch or a finding.ManualChange that says the change (docs/contributing.md)"}
	}
	if f.Fix.Type != finding.StrategicMergePatch {
		return nil
	}
	target := f.Object
	if f.Fix.Target != nil {
		target = *f.Fix.Target
	}
	var problems []string
	var docs [][]byte
	patched := false
	for _, o := range res.Objects {
		doc := o.Doc.JSON
		if o.Ref == target && !patched {
			if o.Typed == nil {
				return []string{fmt.Sprintf("fix targets %s, a kind without a typed model", target)}
			}
			out, err := strategicpatch.StrategicMergePatch(doc, f.Fix.Patch, o.Typed)
			if err != nil {
				return []string{fmt.Sprintf("fix does not apply: %v\npatch: %s", err, f.Fix.Patch)}
			}
			problems = append(problems, oneHandler(out)...)
			doc, patched = out, true
		}
		docs = append(docs, doc)
	}
	if !patched {
		return []string{fmt.Sprintf("fix target %s not found", target)}
	}
	again, err := scanFixture(rs, true, bytes.Join(docs, []byte("\n---\n")), "-")
	if err != nil {
		return append(problems, err.Error())
	}
	if len(again.Errors) > 0 {
		return append(problems, fmt.Sprintf("patched object does not load: %v", again.Errors))
	}
	for _, g := range Of(again, r.ID) {
		if g.Object == f.Object && g.Container == f.Container {
			problems = append(problems, fmt.Sprintf("%s still fires after its fix %s: %s", r.ID, f.Fix.Patch, g.Message))
		}
	}
	return problems
}

// oneHandler says which probes of a patched object do not have exactly one
// handler (the API server rejects them).
func oneHandler(patched []byte) []string {
	var generic map[string]any
	if err := json.Unmarshal(patched, &generic); err != nil {
		return []string{err.Error()}
	}
	var problems []string
	walkProbes(generic, func(name string, p map[string]any) {
		n := 0
		for _, h := range []string{"exec", "httpGet", "tcpSocket", "grpc"} {
			if v, ok := p[h]; ok && v != nil {
				n++
			}
		}
		if n != 1 {
			problems = append(problems, fmt.Sprintf("after the fix, %s has %d handlers, want exactly 1: %v", name, n, p))
		}
	})
	return problems
}

func walkProbes(v any, fn func(string, map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if strings.HasSuffix(k, "Probe") {
				if p, ok := val.(map[string]any); ok {
					fn(k, p)
					continue
				}
			}
			walkProbes(val, fn)
		}
	case []any:
		for _, e := range x {
			walkProbes(e, fn)
		}
	}
}

// CorpusWant is one finding a corpus test expects: rule, severity, file
// (relative to the scanned root), object name, words its message must
// contain, and why it is right.
type CorpusWant struct {
	Rule, Severity, File, Object string
	Says                         []string
	Why                          string
}

// CheckExactly fails t unless findings are exactly wants, in any order;
// rel turns a finding's file into the form wants use.
func CheckExactly(t testing.TB, findings []finding.Finding, rel func(string) string, wants []CorpusWant) {
	t.Helper()
	var got []string
	for _, f := range findings {
		got = append(got, fmt.Sprintf("%s %s %s %s: %s", f.Rule, f.Severity, rel(f.File), f.Object.Name, f.Message))
	}
	matched := make([]bool, len(findings))
	for _, w := range wants {
		i := slices.IndexFunc(findings, func(f finding.Finding) bool {
			return f.Rule == w.Rule && f.Severity.String() == w.Severity && rel(f.File) == w.File && f.Object.Name == w.Object
		})
		if i < 0 {
			t.Errorf("missing %s %s on %s in %s (%s)\ngot:\n%s", w.Severity, w.Rule, w.Object, w.File, w.Why, strings.Join(got, "\n"))
			continue
		}
		matched[i] = true
		for _, s := range w.Says {
			if !strings.Contains(findings[i].Message, s) {
				t.Errorf("%s on %s: message lacks %q: %s", w.Rule, w.Object, s, findings[i].Message)
			}
		}
	}
	for i, ok := range matched {
		if !ok {
			t.Errorf("unexpected finding: %s", got[i])
		}
	}
}
