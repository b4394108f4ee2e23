package rollouts_test

import (
	"backfire.dev/backfire/internal/catalog"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"backfire.dev/backfire/internal/config"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/rules/rollouts"
	"backfire.dev/backfire/internal/ruletest"
	"backfire.dev/backfire/internal/scan"
)

// scanWith runs one rule over files with a controller version and config.
func scanWith(t *testing.T, r *rules.Rule, version string, cfg *config.Config, paths ...string) *scan.Result {
	t.Helper()
	if cfg == nil {
		cfg = &config.Config{}
	}
	res, err := scan.Run(scan.Options{Paths: paths, Catalog: []*rules.Rule{r}, KeepObjects: true,
		Rules: rules.Options{Config: cfg, RolloutsVersion: version}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) > 0 {
		t.Fatalf("input errors: %v", res.Errors)
	}
	return res
}

func fixture(id, kind, name string) string { return filepath.Join("testdata", id, kind, name+".yaml") }

func only(t *testing.T, res *scan.Result, id string) finding.Finding {
	t.Helper()
	fs := ruletest.Of(res, id)
	if len(fs) != 1 {
		t.Fatalf("want one %s finding, got %d", id, len(fs))
	}
	return fs[0]
}

func joined(f finding.Finding) string {
	return f.Message + "\n" + strings.Join(f.Mechanism, "\n") + "\n" + strings.Join(f.Assumptions, "\n")
}

func TestBF401ControllerVersions(t *testing.T) {
	file := fixture("BF401", "positive", "fixed-replicas")
	if fs := ruletest.Of(scanWith(t, rollouts.BF401, "v1.3.9", nil, file), "BF401"); len(fs) != 0 {
		t.Errorf("v1.3.9 has no rollbackWindow, yet BF401 fired: %s", fs[0].Message)
	}
	for _, tc := range []struct {
		version string
		want    []string
		not     []string
	}{
		{"v1.8.2", []string{"canary.go:390", ":379 when the target", "trafficrouting.go:229", ":243", ":245 walks back", "gate (:266)", "abort branch (:199)", "from the v1.8.2 source"}, nil},
		{"v1.9.0", []string{"canary.go:379", "trafficrouting.go:234", ":250 walks back", "gate (:273)", "from the v1.9.0 source"}, nil},
		{"v1.7.2", []string{"v1.7.2 checks no capacity", "arrived in v1.8.1", "from the v1.8.2 source"}, []string{"capacity gate ("}},
		{"v1.5.0", []string{"canary.go:390"}, []string{"when the target still has replicas"}},
		{"v1.11.0", []string{"newer than the newest modelled release v1.10.2"}, nil},
	} {
		f := only(t, scanWith(t, rollouts.BF401, tc.version, nil, file), "BF401")
		text := joined(f)
		for _, w := range tc.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: finding lacks %q:\n%s", tc.version, w, text)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(text, n) {
				t.Errorf("%s: finding says %q:\n%s", tc.version, n, text)
			}
		}
		if f.Evidence["rolloutsVersion"] != tc.version {
			t.Errorf("%s: evidence version %v", tc.version, f.Evidence["rolloutsVersion"])
		}
	}
}

func TestBF401Threshold(t *testing.T) {
	file := fixture("BF401", "positive", "hpa-scaled") // backtrack weight 80
	high := &config.Config{Thresholds: config.Thresholds{RollbackWeight: 81}}
	if fs := ruletest.Of(scanWith(t, rollouts.BF401, "", high, file), "BF401"); len(fs) != 0 {
		t.Errorf("threshold 81 > backtrack 80, yet BF401 fired")
	}
	at := &config.Config{Thresholds: config.Thresholds{RollbackWeight: 80}}
	f := only(t, scanWith(t, rollouts.BF401, "", at, file), "BF401")
	// With threshold 80 the fix drops only the 80: the walk then finds 50.
	if !strings.Contains(f.Fix.Description, "finds setWeight 50") || strings.Contains(f.Fix.Description, "setWeight 50 (steps[2]) and") {
		t.Errorf("fix at threshold 80: %s", f.Fix.Description)
	}
}

// The harness checks that a fix silences the finding at its path; here no
// BF401 may remain on the object at all, wherever it would point.
func TestBF401FixLeavesNoFinding(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "BF401", "positive", "*.yaml"))
	for _, file := range files {
		res := scanWith(t, rollouts.BF401, "", nil, file)
		f := only(t, res, "BF401")
		if f.Fix.Type != finding.StrategicMergePatch {
			t.Fatalf("%s: fix is %s", file, f.Fix.Type)
		}
		var docs [][]byte
		for _, o := range res.Objects {
			doc := o.Doc.JSON
			if o.Ref == f.Object {
				out, err := strategicpatch.StrategicMergePatch(doc, f.Fix.Patch, o.Typed)
				if err != nil {
					t.Fatal(err)
				}
				doc = out
			}
			docs = append(docs, doc)
		}
		again := ruletest.Scan(t, []*rules.Rule{rollouts.BF401}, bytes.Join(docs, []byte("\n---\n")), "-")
		if fs := ruletest.Of(again, "BF401"); len(fs) != 0 {
			t.Errorf("%s: after the fix: %s", file, fs[0].Message)
		}
	}
}

func TestBF401SeedNumbers(t *testing.T) {
	f := only(t, scanWith(t, rollouts.BF401, "v1.8.2", nil, fixture("BF401", "positive", "fixed-replicas")), "BF401")
	if want := "a rollback within the window sends 100% of traffic to 2 pods sized for 20 (10x short)"; f.Message != want {
		t.Errorf("message %q, want %q", f.Message, want)
	}
	for k, want := range map[string]any{"backtrackWeight": int32(100), "canaryPods": int32(2), "replicas": int32(20), "neededPods": int32(20), "backtrackStep": 4} {
		if got := f.Evidence[k]; got != want {
			t.Errorf("evidence %s = %v (%T), want %v", k, got, got, want)
		}
	}
	if f.Path != "spec.strategy.canary.steps[4].setWeight" || f.Line != 34 {
		t.Errorf("points at %s line %d, want the final setWeight at line 34", f.Path, f.Line)
	}
}

func TestBF402ControllerVersions(t *testing.T) {
	file := fixture("BF402", "positive", "window-warning-datadog")
	old := only(t, scanWith(t, rollouts.BF402, "v1.7.1", nil, file), "BF402")
	if old.Severity != finding.Error || !strings.Contains(old.Message, "window or not") || !strings.Contains(joined(old), "v1.7.1 ignores rollbackWindow here") {
		t.Errorf("v1.7.1: %s %s", old.Severity, joined(old))
	}
	cur := only(t, scanWith(t, rollouts.BF402, "v1.7.2", nil, file), "BF402")
	if cur.Severity != finding.Warning || !strings.Contains(cur.Message, "further back than rollbackWindow.revisions 2") || !strings.Contains(joined(cur), "analysis.go:77-78 in the v1.8.2 source") {
		t.Errorf("v1.7.2: %s %s", cur.Severity, joined(cur))
	}
	none := only(t, scanWith(t, rollouts.BF402, "v1.7.0", nil, fixture("BF402", "positive", "no-window-error")), "BF402")
	if none.Severity != finding.Error || !strings.Contains(joined(none), "v1.7.0 has no way to skip analysis on a rollback") {
		t.Errorf("v1.7.0 without a window: %s %s", none.Severity, joined(none))
	}
	if got := cur.Evidence["timeToAbortSeconds"]; got != 180.0 {
		t.Errorf("time to abort %v, want 3 x 60 s = 180", got)
	}
}

const secretURL = `
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: web, namespace: shop}
spec:
  replicas: 4
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: web:1}]}
  strategy:
    canary:
      steps:
      - setWeight: 25
      - analysis: {templates: [{templateName: secret-check}]}
---
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: secret-check, namespace: shop}
spec:
  args:
  - name: url
    valueFrom: {secretKeyRef: {name: checks, key: url}}
  metrics:
  - name: check
    successCondition: result == true
    provider: {web: {url: "{{args.url}}", jsonPath: "{$.ok}"}}
`

func TestBF402QueryFromSecretIsInfo(t *testing.T) {
	res := ruletest.Scan(t, []*rules.Rule{rollouts.BF402}, []byte(secretURL), "-")
	f := only(t, res, "BF402")
	if f.Severity != finding.Info || !strings.Contains(f.Message, "from Secret checks (key url)") {
		t.Errorf("%s: %s", f.Severity, f.Message)
	}
}

// A revision is told by a label matcher, never by a word: "canary" in a
// Service's name selects nothing by revision unless the Service is the
// Rollout's canaryService (this Rollout names none).
func TestBF402RevisionWordsAreWholeWords(t *testing.T) {
	for _, tc := range []struct {
		query string
		fires bool
	}{
		{`sum(rate(checkout_conversion_total{app="web"}[5m]))`, true},      // "conversion" is not "version"
		{`sum(rate(requests_total{destination_version="v2"}[5m]))`, false}, // a version label
		{`sum(rate(requests_total{rollouts_pod_template_hash="abc"}[5m]))`, false},
		{`sum(rate(requests_total{service="web-canary"}[5m]))`, true},    // a word in a name
		{`sum(rate(requests_total{canary="true"}[5m]))`, false},          // a label named canary is a matcher
		{`count(kube_pod_info{namespace="shop", pod=~"web-.*"})`, false}, // counts pods: sees no version
		{`vector(1)`, false}, // a constant
	} {
		doc := strings.Replace(secretURL, `provider: {web: {url: "{{args.url}}", jsonPath: "{$.ok}"}}`,
			`provider: {prometheus: {address: "http://prom:9090", query: '`+tc.query+`'}}`, 1)
		res := ruletest.Scan(t, []*rules.Rule{rollouts.BF402}, []byte(doc), "-")
		fs := ruletest.Of(res, "BF402")
		if fired := len(fs) > 0 && fs[0].Severity != finding.Info; fired != tc.fires {
			t.Errorf("%s: fired %v, want %v", tc.query, fired, tc.fires)
		}
	}
}

// Odd but decodable Rollouts must not make any rule panic or report
// nonsense numbers.
func TestOddRollouts(t *testing.T) {
	base := `
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: odd}
spec:
  selector: {matchLabels: {app: odd}}
  template:
    metadata: {labels: {app: odd}}
    spec: {containers: [{name: odd, image: odd:1}]}
`
	for name, spec := range map[string]string{
		"empty canary":       "  strategy: {canary: {}}\n  rollbackWindow: {revisions: 2}\n",
		"no steps":           "  rollbackWindow: {revisions: 2}\n  strategy: {canary: {trafficRouting: {nginx: {stableIngress: x}}}}\n",
		"zero replicas":      "  replicas: 0\n  rollbackWindow: {revisions: 2}\n  strategy: {canary: {trafficRouting: {nginx: {stableIngress: x}}, steps: [{setWeight: 100}]}}\n",
		"zero max weight":    "  replicas: 5\n  rollbackWindow: {revisions: 2}\n  strategy: {canary: {trafficRouting: {maxTrafficWeight: 0, nginx: {stableIngress: x}}, steps: [{setWeight: 10}, {setWeight: 100}], analysis: {templates: [{templateName: t}]}}}\n",
		"negative weight":    "  replicas: 5\n  rollbackWindow: {revisions: 2}\n  strategy: {canary: {trafficRouting: {nginx: {stableIngress: x}}, steps: [{setWeight: -10}]}}\n",
		"only high weights":  "  replicas: 10\n  rollbackWindow: {revisions: 2}\n  strategy: {canary: {trafficRouting: {nginx: {stableIngress: x}}, steps: [{setWeight: 60}, {pause: {}}, {setWeight: 100}]}}\n",
		"step beyond steps":  "  strategy: {canary: {analysis: {startingStep: 9, templates: [{templateName: t}]}, steps: [{setWeight: 10}]}}\n",
		"blue-green window":  "  rollbackWindow: {revisions: 3}\n  revisionHistoryLimit: 1\n  strategy: {blueGreen: {activeService: a}}\n",
		"self-including tpl": "  strategy: {canary: {analysis: {templates: [{templateName: loop}]}, steps: [{setWeight: 10}]}}\n---\napiVersion: argoproj.io/v1alpha1\nkind: AnalysisTemplate\nmetadata: {name: loop}\nspec: {templates: [{templateName: loop}], metrics: [{name: m, provider: {prometheus: {query: 'up'}}}]}\n",
	} {
		res := ruletest.Scan(t, catalog.Family("rollouts"), []byte(base+spec), "-")
		if len(res.Errors) > 0 {
			t.Fatalf("%s: %v", name, res.Errors)
		}
		if name == "only high weights" && len(ruletest.Of(res, "BF401")) != 1 {
			t.Errorf("%s: 60%% at step 0 is 6 of 10 pods, 100%% needs 10: BF401 should fire", name)
		}
		for _, f := range res.Findings {
			if strings.Contains(f.Message, "Inf") || strings.Contains(f.Message, "NaN") {
				t.Errorf("%s: %s", name, f.Message)
			}
			if name == "only high weights" && f.Rule == "BF401" && f.Fix.Type != finding.ManualChange {
				t.Errorf("%s: dropping every step is not a fix: %s", name, f.Fix.Patch)
			}
		}
	}
}

// Each negative that measures neither version, or cannot fail, is silent
// for that reason alone: the one change that makes it measure the service,
// or able to fail, makes BF402 fire.
func TestBF402NegativesForTheirReason(t *testing.T) {
	for _, tc := range []struct{ file, from, to string }{
		{"job-sleeps", `command: [sleep, "60"]`, `command: [curl, -f, "http://checkout/healthz"]`},
		{"web-third-party", `https://www.githubstatus.com/api/v2/status.json`, `http://checkout.shop.svc/status.json`},
		{"only-inconclusive", `failureCondition: "false"`, `failureCondition: result[0] > 0.2`},
		{"no-conditions", `    interval: 1m`, "    interval: 1m\n    successCondition: result[0] < 1"},
		{"kayenta-compares-scopes", `app={{args.app}},track=new`, `app={{args.app}},track=baseline`},
	} {
		data, err := os.ReadFile(fixture("BF402", "negative", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(data, []byte(tc.from)) {
			t.Fatalf("%s: no %q", tc.file, tc.from)
		}
		changed := bytes.Replace(data, []byte(tc.from), []byte(tc.to), 1)
		res := ruletest.Scan(t, []*rules.Rule{rollouts.BF402}, changed, "-")
		if fs := ruletest.Of(res, "BF402"); len(fs) != 1 || fs[0].Severity != finding.Error {
			t.Errorf("%s with %q: want one BF402 error, got %d", tc.file, tc.to, len(fs))
		}
	}
}
