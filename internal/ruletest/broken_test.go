package ruletest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/ruletest"
)

type oneReplica struct {
	Replicas int `json:"replicas" doc:"spec.replicas"`
}

// replicasOne reports a Deployment with one replica; its fix sets patch.
func replicasOne(id string, patch map[string]any) *rules.Rule {
	return &rules.Rule{
		ID: id, Slug: "one-replica-" + strings.ToLower(id), Severity: finding.Warning,
		Summary:  "a Deployment with one replica",
		Kinds:    []string{"Deployment"},
		Evidence: []any{oneReplica{}},
		Fix:      rules.FixFields{Sets: []string{"spec.replicas", "spec.minReadySeconds"}},
		Check: &rules.Scan{Run: func(p *rules.Pass) {
			d := p.Object.Typed.(*appsv1.Deployment)
			if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 {
				return
			}
			p.Report(rules.Report{
				Path:      field.NewPath("spec", "replicas"),
				Message:   "one replica",
				Mechanism: []string{"One pod serves: when it restarts, nothing does."},
				Evidence:  oneReplica{Replicas: 1},
				Fix:       &finding.Fix{Type: finding.StrategicMergePatch, Description: "Run two.", Patch: fix.At("spec", patch)},
			})
		}},
	}
}

// brokenCatalog is the catalog of testdata/broken: a rule with good and
// broken fixtures, a rule whose fix fixes nothing, a rule without fixtures.
func brokenCatalog() []*rules.Rule {
	noFixtures := replicasOne("BF992", map[string]any{"replicas": 2})
	return []*rules.Rule{
		replicasOne("BF990", map[string]any{"replicas": 2}),
		replicasOne("BF991", map[string]any{"minReadySeconds": 5}),
		noFixtures,
	}
}

// problems runs the registry-driven fixture check over the broken catalog,
// as ruletest.Run does, and returns each case's problems by name
// ("BF990 positive/want-deleted"; "BF992" for the rule's own).
func problems(t *testing.T) map[string][]string {
	t.Helper()
	update := *ruletest.Update
	*ruletest.Update = false // the broken goldens stay broken
	defer func() { *ruletest.Update = update }()
	t.Chdir(filepath.Join("testdata", "broken"))
	out := map[string][]string{}
	cat := brokenCatalog()
	for _, r := range cat {
		cases, ps := ruletest.Cases(r, cat)
		if len(ps) > 0 {
			out[r.ID] = ps
		}
		for _, c := range cases {
			if ps := c.Check(); len(ps) > 0 {
				out[r.ID+" "+c.Name()] = ps
			}
		}
	}
	return out
}

// The harness that runs every rule's fixtures from the registry fails each
// way a fixture set can be wrong, and passes the good fixtures: a deleted
// expectation, an expectation on the wrong line, a negative that fires or
// expects, prose that changed, a fix that fixes nothing, a rule without
// fixtures.
func TestHarnessCatchesBrokenFixtures(t *testing.T) {
	got := problems(t)
	want := map[string][]string{
		"BF990 positive/want-deleted":    {"a positive fixture with no # want BF990", "want-deleted.yaml:7: unexpected BF990"},
		"BF990 positive/want-wrong-line": {"want-wrong-line.yaml:7: unexpected BF990", "want-wrong-line.yaml:5: want BF990, which did not report there"},
		"BF990 positive/prose-changed":   {"report differs from testdata/BF990/positive/prose-changed.golden"},
		"BF990 negative/fires":           {"fires.yaml:7: unexpected BF990"},
		"BF990 negative/expects":         {"a negative fixture expects BF990", "expects.yaml:7: want BF990, which did not report there"},
		"BF991 positive/fix-fails-1":     {"BF991 still fires after its fix"},
		"BF991 positive/fix-fails-2":     {"BF991 still fires after its fix"},
		"BF991 positive/fix-fails-3":     {"BF991 still fires after its fix"},
		"BF992":                          {"BF992: 0 positive fixtures", "BF992: 0 negative fixtures"},
	}
	for name, subs := range want {
		ps := got[name]
		if len(ps) != len(subs) {
			t.Errorf("%s: %d problems, want %d: %q", name, len(ps), len(subs), ps)
			continue
		}
		for _, sub := range subs {
			if !slices.ContainsFunc(ps, func(p string) bool { return strings.Contains(p, sub) }) {
				t.Errorf("%s: no problem says %q: %q", name, sub, ps)
			}
		}
	}
	for name, ps := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: unexpected problems (a good fixture must pass): %q", name, ps)
		}
	}
}

// ruletest.Run, which the catalog's test calls with the registry, fails
// on the broken catalog, in exactly the broken cases: it runs here in a
// child process, since a failing subtest would fail this test too.
func TestRunFailsOnBrokenFixtures(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("testdata", "broken"))
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("RULESTEST_BROKEN_CHILD") == "1" {
		ruletest.Run(t, brokenCatalog(), func(*rules.Rule) string { return dir })
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRunFailsOnBrokenFixtures$", "-test.v")
	cmd.Env = append(os.Environ(), "RULESTEST_BROKEN_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("Run passed the broken fixtures:\n%s", out)
	}
	failed := regexp.MustCompile(`--- FAIL: TestRunFailsOnBrokenFixtures/(\S+)`).FindAllStringSubmatch(string(out), -1)
	var names []string
	for _, m := range failed {
		names = append(names, m[1])
	}
	slices.Sort(names)
	want := []string{"BF990", "BF990/negative/expects", "BF990/negative/fires", "BF990/positive/prose-changed",
		"BF990/positive/want-deleted", "BF990/positive/want-wrong-line", "BF991", "BF991/positive/fix-fails-1",
		"BF991/positive/fix-fails-2", "BF991/positive/fix-fails-3", "BF992"}
	if !slices.Equal(names, want) {
		t.Errorf("failed subtests %q, want %q\n%s", names, want, out)
	}
}

// The fixture run compares what a rule asks the index with what it
// declares: an undeclared question and a declared read no fixture asks
// are both reported; the declaration that matches passes.
func TestReadsAreChecked(t *testing.T) {
	t.Chdir(filepath.Join("testdata", "broken"))
	asksConfigMap := func(reads ...string) *rules.Rule {
		r := replicasOne("BF990", map[string]any{"replicas": 2})
		run := r.ScanCheck().Run
		r.Check = &rules.Scan{Run: func(p *rules.Pass) {
			p.Index.Get("ConfigMap", p.Object.Namespace, "settings")
			run(p)
		}}
		r.Reads = reads
		return r
	}
	r := asksConfigMap("Service")
	cases, _ := ruletest.Cases(r, nil)
	got := ruletest.ReadProblems(r, cases)
	want := []string{
		"BF990 asks the index about ConfigMap, which its Reads do not declare",
		"BF990 declares it reads Service, which none of its fixtures asks the index about: add a fixture that does, or drop the declaration",
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems %q, want %q", got, want)
	}
	r = asksConfigMap("ConfigMap")
	if got := ruletest.ReadProblems(r, cases); len(got) > 0 {
		t.Errorf("a rule that declares what it asks: %q", got)
	}
}

// A patch that sets a field the rule's Fix.Sets do not declare fails its
// fixture: the composition of fixes relies on the declaration.
func TestFixSetsAreChecked(t *testing.T) {
	t.Chdir(filepath.Join("testdata", "broken"))
	r := replicasOne("BF990", map[string]any{"replicas": 2})
	r.Fix.Sets = []string{"spec.minReadySeconds"}
	c := ruletest.Case{Rule: r, File: filepath.Join("testdata", "BF990", "positive", "good-1.yaml"), Positive: true}
	got := c.Check()
	want := []string{`BF990's fix sets spec.replicas, which its Fix.Sets ["spec.minReadySeconds"] do not declare`}
	if !slices.Equal(got, want) {
		t.Errorf("problems %q, want %q", got, want)
	}
}
