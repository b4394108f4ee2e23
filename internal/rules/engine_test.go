package rules

import (
	"strings"
	"testing"

	"backfire.dev/backfire/internal/config"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/testutil"
)

func objects(t *testing.T, src string) *index.Index {
	t.Helper()
	f := load.Parse("e.yaml", []byte(src))
	var objs []*object.Object
	for _, d := range f.Documents {
		o, err := object.Decode(d)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o)
	}
	return index.Build(objs)
}

var always = &Rule{ID: "BF900", Slug: "always", Severity: finding.Warning, Summary: "test", Check: &Scan{Run: func(p *Pass) {
	p.Report(Report{Message: "found " + p.Object.Name})
}}}

var panics = &Rule{ID: "BF901", Slug: "panics", Severity: finding.Error, Summary: "test", Kinds: []string{"Pod"}, Check: &Scan{Run: func(p *Pass) {
	var s []int
	_ = s[3]
}}}

const two = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  annotations: {backfire.dev/ignore: \"BF900 # known\"}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n"

// A rule that panics becomes an error at the object; the other rules and
// objects are still checked, and suppression counts what it silenced.
func TestRunIsolatesPanicsAndSuppresses(t *testing.T) {
	ix := objects(t, two)
	res := Run(ix, []*Rule{always, panics}, &Options{Config: &config.Config{}})
	if len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Message, "internal error: rule BF901 failed on Pod a") || res.Errors[0].Line != 1 {
		t.Errorf("errors %v", res.Errors)
	}
	if len(res.Findings) != 1 || res.Findings[0].Object.Name != "b" || len(res.Suppressed) != 1 {
		t.Errorf("findings %v, suppressed %v: want only b, with a's suppressed", res.Findings, res.Suppressed)
	}
}

func TestEnabledAndSeverityOverride(t *testing.T) {
	off := &Rule{ID: "BF902", Slug: "off", Severity: finding.Info, Summary: "test", DefaultOff: true, Check: always.Check}
	catalog := []*Rule{always, off}
	cfg := &config.Config{Enable: []string{"bf902"}, Disable: []string{"BF900"}, Severity: map[string]string{"BF902": "error"}}
	rs, err := Enabled(catalog, &Options{Config: cfg})
	if err != nil || len(rs) != 1 || rs[0] != off {
		t.Fatalf("enabled %v, %v", rs, err)
	}
	res := Run(objects(t, two), rs, &Options{Config: cfg})
	if len(res.Findings) != 2 || res.Findings[0].Severity != finding.Error {
		t.Errorf("findings %v", res.Findings)
	}
	for _, bad := range []*config.Config{{Disable: []string{testutil.UnknownRule}}, {Severity: map[string]string{testutil.UnknownRule: "error"}}, {Severity: map[string]string{"BF101": "fatal"}}} {
		if _, err := Enabled(catalog, &Options{Config: bad}); err == nil {
			t.Errorf("accepted %+v", bad)
		}
	}
}

// Issue 8: an override written in lower case was validated but not
// applied, and "none" was accepted and produced findings of no severity.
func TestSeverityOverrideAnyCaseAndNoneRefused(t *testing.T) {
	cfg := &config.Config{Severity: map[string]string{"bf900": "error"}}
	rs, err := Enabled([]*Rule{always}, &Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	res := Run(objects(t, two), rs, &Options{Config: cfg})
	if len(res.Findings) != 1 || res.Findings[0].Severity != finding.Error {
		t.Errorf("bf900: error not applied: %v", res.Findings)
	}
	none := &config.Config{Severity: map[string]string{"BF900": "none"}}
	if _, err := Enabled([]*Rule{always}, &Options{Config: none}); err == nil || !strings.Contains(err.Error(), `"none" is not error, warning or info`) {
		t.Errorf("severity none: %v", err)
	}
}

// The rules run on one object share what they store under a key; the
// next object starts empty.
func TestSharedIsPerObject(t *testing.T) {
	type key struct{}
	made := map[string]int{}
	share := func(p *Pass) {
		p.Shared(key{}, func() any { made[p.Object.Name]++; return p.Object.Name })
		if got := p.Shared(key{}, func() any { return "again" }); got != p.Object.Name {
			t.Errorf("shared value %v on %s", got, p.Object.Name)
		}
	}
	one := &Rule{ID: "BF903", Slug: "one", Summary: "test", Check: &Scan{Run: share}}
	other := &Rule{ID: "BF904", Slug: "other", Summary: "test", Check: &Scan{Run: share}}
	Run(objects(t, two), []*Rule{one, other}, &Options{Config: &config.Config{}})
	if made["a"] != 1 || made["b"] != 1 {
		t.Errorf("made %v, want once per object", made)
	}
}
