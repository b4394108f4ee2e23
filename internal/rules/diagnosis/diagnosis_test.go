package diagnosis

import (
	"strings"
	"testing"

	"backfire.dev/backfire/internal/config"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/observe"
	"backfire.dev/backfire/internal/rules"
)

var observed = &rules.Rule{ID: "BF910", Slug: "observed", Severity: finding.Warning, Summary: "test", Kinds: []string{"Pod"}, Check: &Check{Run: func(p *Pass) {
	p.Report(finding.Finding{Container: "a", Path: "status.containerStatuses[0].restartCount", Message: "restarted"})
	p.Note("nothing else to say")
}}}

var observedPanics = &rules.Rule{ID: "BF911", Slug: "observed-panics", Severity: finding.Error, Summary: "test", Check: &Check{Run: func(p *Pass) {
	panic("observed rule panics")
}}}

// always is a scan rule, which Run skips.
var always = &rules.Rule{ID: "BF900", Slug: "always", Severity: finding.Warning, Summary: "test", Check: &rules.Scan{Run: func(p *rules.Pass) {
	p.Report(rules.Report{Message: "found " + p.Object.Name})
}}}

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

const livePod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\nspec:\n  containers: [{name: a, image: busybox}]\nstatus:\n  containerStatuses:\n  - name: a\n    restartCount: 4\n"

func observation(t *testing.T, src string) *observe.Observation {
	t.Helper()
	o := objects(t, src).Objects()[0]
	p, ok := observe.PodOf(o)
	if !ok {
		t.Fatal("not a pod")
	}
	return observe.Observe(p, nil, nil)
}

// Diagnose rules report at the pod's status, keep their notes, and a panic
// is an error at the pod; scan's engine never runs them.
func TestRunDiagnose(t *testing.T) {
	obs := observation(t, livePod)
	res := Run([]*rules.Rule{always, observed, observedPanics}, obs, &rules.Options{Config: &config.Config{}})
	if len(res.Findings) != 1 {
		t.Fatalf("findings %v", res.Findings)
	}
	f := res.Findings[0]
	if f.Rule != "BF910" || f.Severity != finding.Warning || f.File != "e.yaml" || f.Line != 10 || f.Object.Name != "a" || f.Mechanism == nil {
		t.Errorf("finding %+v", f)
	}
	if len(res.Notes) != 1 || res.Notes[0] != "BF910 Pod a: nothing else to say" {
		t.Errorf("notes %q", res.Notes)
	}
	if len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Message, "internal error: rule BF911 failed on Pod a") {
		t.Errorf("errors %v", res.Errors)
	}
	if scanned := rules.Run(objects(t, livePod), []*rules.Rule{observed, observedPanics}, &rules.Options{Config: &config.Config{}}); len(scanned.Findings)+len(scanned.Errors) != 0 {
		t.Errorf("scan ran a diagnose rule: %+v", scanned)
	}
}

func TestRunDiagnoseHonoursConfigAndIgnore(t *testing.T) {
	cfg := &config.Config{Severity: map[string]string{"BF910": "info"}}
	res := Run([]*rules.Rule{observed}, observation(t, livePod), &rules.Options{Config: cfg})
	if len(res.Findings) != 1 || res.Findings[0].Severity != finding.Info {
		t.Errorf("severity override: %+v", res.Findings)
	}
	ignoredPod := strings.Replace(livePod, "  name: a\n", "  name: a\n  annotations: {backfire.dev/ignore: BF910}\n", 1)
	res = Run([]*rules.Rule{observed}, observation(t, ignoredPod), &rules.Options{Config: &config.Config{}})
	if len(res.Findings) != 0 || res.Suppressed != 1 {
		t.Errorf("ignored: %+v", res)
	}
}
