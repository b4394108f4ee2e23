package webhook

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"backfire.dev/backfire/internal/config"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/scan"
	"backfire.dev/backfire/internal/testutil"
)

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// request builds the AdmissionRequest the API server sends for one object
// written as YAML; old is the stored object of an UPDATE.
func request(t testing.TB, op admissionv1.Operation, obj, old []byte) *admissionv1.AdmissionRequest {
	t.Helper()
	raw, err := yaml.YAMLToJSON(obj)
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Metadata   metav1.ObjectMeta `json:"metadata"`
	}
	if err := yaml.Unmarshal(raw, &meta); err != nil {
		t.Fatal(err)
	}
	gv, _ := parseGV(meta.APIVersion)
	req := &admissionv1.AdmissionRequest{
		UID:       types.UID("uid-" + meta.Metadata.Name),
		Kind:      metav1.GroupVersionKind{Group: gv[0], Version: gv[1], Kind: meta.Kind},
		Namespace: meta.Metadata.Namespace, Name: meta.Metadata.Name,
		Operation: op,
		Object:    runtime.RawExtension{Raw: raw},
	}
	if old != nil {
		oldRaw, err := yaml.YAMLToJSON(old)
		if err != nil {
			t.Fatal(err)
		}
		req.OldObject = runtime.RawExtension{Raw: oldRaw}
	}
	return req
}

func parseGV(apiVersion string) ([2]string, bool) {
	if g, v, ok := strings.Cut(apiVersion, "/"); ok {
		return [2]string{g, v}, true
	}
	return [2]string{"", apiVersion}, false
}

// staticContext is a cluster's context objects without a cluster.
type staticContext struct{ objs []*object.Object }

func (s staticContext) Objects(ns string) []*object.Object {
	var out []*object.Object
	for _, o := range s.objs {
		if o.Namespace == ns || o.Namespace == "" {
			out = append(out, o)
		}
	}
	return out
}

func (staticContext) Gaps() []string { return nil }

func contextOf(t testing.TB, names ...string) staticContext {
	t.Helper()
	var c staticContext
	for _, n := range names {
		f := load.Parse(n, fixture(t, n))
		if len(f.Errors) > 0 {
			t.Fatal(f.Errors)
		}
		for _, d := range f.Documents {
			o, err := object.Decode(d)
			if err != nil {
				t.Fatal(err)
			}
			c.objs = append(c.objs, o)
		}
	}
	return c
}

func newJudge(t testing.TB, cfg *config.Config, ctx Context) *Judge {
	t.Helper()
	j, err := NewJudge(nil, rules.Options{Config: cfg}, ctx)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func rulesOf(v Verdict) []string {
	var ids []string
	for _, f := range v.Findings {
		if !slices.Contains(ids, f.Rule) {
			ids = append(ids, f.Rule)
		}
	}
	slices.Sort(ids)
	return ids
}

var deny = Policy{Mode: Deny, FailOn: finding.Error}

// The seed 003 StatefulSet is refused in deny mode with a message that
// names each error's rule, field and fix; its warnings ride along.
func TestDenyNamesRuleFieldAndFix(t *testing.T) {
	v := newJudge(t, nil, staticContext{}).Judge(request(t, admissionv1.Create, fixture(t, "bad-statefulset.yaml"), nil))
	if got, want := rulesOf(v), []string{"BF101", "BF102", "BF103", "BF201", "BF301", "BF601"}; !slices.Equal(got, want) {
		t.Fatalf("rules %v, want %v (the same as backfire scan on examples/registry-database.yaml)", got, want)
	}
	resp := deny.Respond(v)
	if resp.Allowed {
		t.Fatal("allowed; want refused")
	}
	msg := resp.Result.Message
	for _, want := range []string{
		"backfire refused StatefulSet registry/registry-database",
		"BF101 liveness-fails-during-recovery error StatefulSet registry/registry-database spec.template.spec.containers[0].livenessProbe (container database)",
		"330 s (300 + 3 x 10)",
		"fix: ", `strategic merge patch: {"spec":`,
		"backfire.dev/ignore",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("deny message lacks %q:\n%s", want, msg)
		}
	}
	// BF103 is a warning: below --fail-on error, so warned, not refused.
	if !slices.ContainsFunc(resp.Warnings, func(w string) bool { return strings.HasPrefix(w, "BF103 warning ") }) {
		t.Errorf("warnings %q lack BF103", resp.Warnings)
	}
	// (A fix's description may name BF103: its patch is composed with it.)
	refusedBF103 := regexp.MustCompile(`(?m)^\s*BF103 `)
	if refusedBF103.MatchString(msg) {
		t.Errorf("BF103 (a warning) refused under --fail-on error")
	}
	// --fail-on warning refuses it too.
	if msg := (Policy{Mode: Deny, FailOn: finding.Warning}).Respond(v).Result.Message; !refusedBF103.MatchString(msg) {
		t.Errorf("--fail-on warning did not refuse BF103:\n%s", msg)
	}
}

// The patch a warning or refusal proposes for a finding is the one the
// scan reports for it: composed with the other fixes on the object, so
// that two of them applied in turn do not undo each other (seed 003's
// BF101, BF102 and BF103 all set the liveness probe).
func TestPatchesAreTheScansAgreedOnes(t *testing.T) {
	v := newJudge(t, nil, staticContext{}).Judge(request(t, admissionv1.Create, fixture(t, "bad-statefulset.yaml"), nil))
	res, err := scan.Run(scan.Options{Paths: []string{filepath.Join("..", "..", "examples", "registry-database.yaml")}})
	if err != nil {
		t.Fatal(err)
	}
	scanned := map[string]string{}
	agreed := 0
	for _, f := range res.Findings {
		if f.Fix != nil {
			scanned[f.Rule] = string(f.Fix.Patch)
			if len(f.Fix.Own) > 0 {
				agreed++
			}
		}
	}
	if agreed == 0 {
		t.Fatal("no fix of the scan was composed with another's: the test would not tell")
	}
	for _, f := range v.Findings {
		if f.Fix == nil {
			continue
		}
		if got, want := string(f.Fix.Patch), scanned[f.Rule]; got != want {
			t.Errorf("%s: the webhook proposes\n%s\nthe scan\n%s", f.Rule, got, want)
		}
	}
}

func TestWarnModeAdmitsWithWarningsTheAPIServerKeeps(t *testing.T) {
	v := newJudge(t, nil, staticContext{}).Judge(request(t, admissionv1.Create, fixture(t, "bad-statefulset.yaml"), nil))
	resp := Policy{Mode: Warn, FailOn: finding.Error}.Respond(v)
	if !resp.Allowed {
		t.Fatalf("refused in warn mode: %v", resp.Result)
	}
	if len(resp.Warnings) != len(v.Findings) {
		t.Fatalf("%d warnings for %d findings: %q", len(resp.Warnings), len(v.Findings), resp.Warnings)
	}
	checkWarnings(t, resp.Warnings)
	if !strings.HasPrefix(resp.Warnings[0], "BF") {
		t.Errorf("warning %q does not start with the rule", resp.Warnings[0])
	}
}

// A judge that composes no fix (warn mode's) answers as one that does:
// warnings show no fix. On an UPDATE too, where the old object's run only
// tells which findings were there.
func TestWarnModeAnswersTheSameWithoutFixes(t *testing.T) {
	bad := fixture(t, "bad-statefulset.yaml")
	relabelled := []byte(strings.Replace(string(bad), "component: database\nspec:", "component: database\n    team: storage\nspec:", 1))
	warn := Policy{Mode: Warn, FailOn: finding.Error}
	full, bare := newJudge(t, nil, staticContext{}), newJudge(t, nil, staticContext{})
	bare.WithoutFixes()
	for _, req := range []*admissionv1.AdmissionRequest{
		request(t, admissionv1.Create, bad, nil),
		request(t, admissionv1.Update, relabelled, bad),
	} {
		vf, vb := full.Judge(req), bare.Judge(req)
		if len(vf.Findings) == 0 {
			t.Fatal("no findings: the test would not tell")
		}
		rf, rb := warn.Respond(vf), warn.Respond(vb)
		if !slices.Equal(rf.Warnings, rb.Warnings) || rf.Allowed != rb.Allowed || rf.Result.Message != rb.Result.Message {
			t.Errorf("%s: warn mode answers\n%q\nwith fixes composed, and\n%q\nwithout", req.Operation, rf.Warnings, rb.Warnings)
		}
		for i := range vf.Findings {
			if vf.Findings[i].Preexisting != vb.Findings[i].Preexisting {
				t.Errorf("%s %s: preexisting %v, without fixes %v", req.Operation, vf.Findings[i].Rule, vf.Findings[i].Preexisting, vb.Findings[i].Preexisting)
			}
		}
	}
}

func checkWarnings(t testing.TB, ws []string) {
	t.Helper()
	total := 0
	for _, w := range ws {
		n := utf8.RuneCountInString(w)
		if n > MaxWarningRunes || strings.ContainsFunc(w, unicode.IsControl) || !utf8.ValidString(w) {
			t.Errorf("warning the API server would cut or drop (%d runes): %q", n, w)
		}
		total += n
	}
	if total > MaxTotalRunes {
		t.Errorf("warnings total %d runes, over %d", total, MaxTotalRunes)
	}
}

func TestFitWarningsSaysHowManyWereLeftOut(t *testing.T) {
	var ws []string
	for i := range 40 {
		ws = append(ws, strings.Repeat("x", 300)+"\nline "+string(rune('a'+i%26)))
	}
	got := FitWarnings(ws)
	checkWarnings(t, got)
	kept := len(got) - 1
	last := got[kept]
	want := leftOut(len(ws) - kept)
	if last != want {
		t.Fatalf("last warning %q, want %q", last, want)
	}
	if kept < 10 {
		t.Errorf("kept only %d warnings of 256 runes in 4096", kept)
	}
	if strings.HasSuffix(got[0], "…") == false {
		t.Errorf("a cut warning does not end with an ellipsis: %q", got[0])
	}
	// Few short warnings pass unchanged.
	if short := FitWarnings([]string{"a", "b"}); !slices.Equal(short, []string{"a", "b"}) {
		t.Errorf("short warnings changed: %q", short)
	}
}

// An UPDATE of an object that already had a finding is not refused for
// it; a finding the update introduces is.
func TestUpdateJudgesOnlyWhatChanged(t *testing.T) {
	j := newJudge(t, nil, staticContext{})
	bad := fixture(t, "bad-statefulset.yaml")
	relabelled := []byte(strings.Replace(string(bad), "component: database\nspec:", "component: database\n    team: storage\nspec:", 1))
	if string(relabelled) == string(bad) {
		t.Fatal("the edit did not apply")
	}
	v := j.Judge(request(t, admissionv1.Update, relabelled, bad))
	if len(v.Findings) == 0 {
		t.Fatal("no findings on the new object: an UPDATE must still report them")
	}
	for _, f := range v.Findings {
		if !f.Preexisting {
			t.Errorf("%s %s counted as new", f.Rule, f.Path)
		}
	}
	resp := deny.Respond(v)
	if !resp.Allowed {
		t.Fatalf("an unrelated edit of an old bad object was refused: %s", resp.Result.Message)
	}
	if !slices.ContainsFunc(resp.Warnings, func(w string) bool { return strings.Contains(w, "BF101 error (already there before this update)") }) {
		t.Errorf("warnings %q do not report the old BF101", resp.Warnings)
	}

	// Shortening the liveness timeout of the healthy workload is new.
	healthy := fixture(t, "healthy-deployment.yaml")
	worse := []byte(strings.Replace(string(healthy), "timeoutSeconds: 3", "timeoutSeconds: 1", 1))
	if string(worse) == string(healthy) {
		t.Fatal("the edit did not apply")
	}
	v = j.Judge(request(t, admissionv1.Update, worse, healthy))
	if len(v.Findings) == 0 {
		t.Fatal("the 1 s liveness timeout gave no finding")
	}
	for _, f := range v.Findings {
		if f.Preexisting {
			t.Errorf("%s is new in this update, yet counted as preexisting", f.Rule)
		}
	}
	if resp := (Policy{Mode: Deny, FailOn: finding.Warning}).Respond(v); resp.Allowed {
		t.Errorf("a finding the update introduces was not refused: %v", rulesOf(v))
	}
}

func TestHealthyIsClean(t *testing.T) {
	v := newJudge(t, nil, staticContext{}).Judge(request(t, admissionv1.Create, fixture(t, "healthy-deployment.yaml"), nil))
	if len(v.Findings)+len(v.Errors)+len(v.RuleErrors) > 0 || v.Skipped != "" {
		t.Fatalf("healthy workload: %+v", v)
	}
	if resp := deny.Respond(v); !resp.Allowed || len(resp.Warnings) > 0 {
		t.Fatalf("healthy workload: %+v", resp)
	}
}

func TestSuppressionAndConfigWorkAsInScan(t *testing.T) {
	bad := string(fixture(t, "bad-statefulset.yaml"))
	annotated := strings.Replace(bad, "  namespace: registry\n", "  namespace: registry\n  annotations:\n    backfire.dev/ignore: \"BF101,BF102 # probe replaced next sprint\"\n", 1)
	v := newJudge(t, nil, staticContext{}).Judge(request(t, admissionv1.Create, []byte(annotated), nil))
	if got := rulesOf(v); slices.Contains(got, "BF101") || slices.Contains(got, "BF102") || !slices.Contains(got, "BF201") {
		t.Errorf("with the ignore annotation: %v", got)
	}
	cfg := &config.Config{Disable: []string{"BF201"}, Severity: map[string]string{"BF101": "warning"}}
	v = newJudge(t, cfg, staticContext{}).Judge(request(t, admissionv1.Create, []byte(bad), nil))
	if slices.Contains(rulesOf(v), "BF201") {
		t.Error("BF201 disabled in the configuration, yet reported")
	}
	for _, f := range v.Findings {
		if f.Rule == "BF101" && f.Severity != finding.Warning {
			t.Errorf("BF101 severity %s, configured warning", f.Severity)
		}
	}
	if _, err := NewJudge(nil, rules.Options{Config: &config.Config{Disable: []string{testutil.UnknownRule}}}, nil); err == nil {
		t.Error("an unknown rule in the configuration was accepted")
	}
}

// With the cluster's ScaledObject and AnalysisTemplate the Rollout is
// judged on them; without cluster access the findings say what was
// assumed.
func TestCrossObjectContext(t *testing.T) {
	req := request(t, admissionv1.Create, fixture(t, "rollout.yaml"), nil)
	with := newJudge(t, nil, contextOf(t, "rollout-context.yaml")).Judge(req)
	alone := newJudge(t, nil, nil).Judge(req)

	bf401 := func(v Verdict) Judged {
		for _, f := range v.Findings {
			if f.Rule == "BF401" {
				return f
			}
		}
		t.Fatalf("no BF401 in %v", rulesOf(v))
		return Judged{}
	}
	if m := bf401(with).Message; !strings.Contains(m, "over the autoscaler's range") {
		t.Errorf("with the ScaledObject, BF401 says %q", m)
	}
	// Without the ScaledObject the Rollout runs spec.replicas' default:
	// no autoscaler range, no weight jump over it.
	if slices.Contains(rulesOf(alone), "BF401") {
		t.Errorf("without a cluster, BF401 still knows the autoscaler: %v", rulesOf(alone))
	}
	if len(alone.Findings) == 0 {
		t.Fatal("no findings on the Rollout alone")
	}
	if !slices.Contains(rulesOf(with), "BF402") {
		t.Errorf("with the AnalysisTemplate, no BF402: %v", rulesOf(with))
	}
	for _, f := range alone.Findings {
		if !slices.Contains(f.Assumptions, NoClusterGap) {
			t.Errorf("%s without cluster access does not say so: %q", f.Rule, f.Assumptions)
		}
	}
	if msg := (Policy{Mode: Deny, FailOn: finding.Warning}).Respond(alone).Result.Message; !strings.Contains(msg, "\nassumed: "+NoClusterGap) {
		t.Errorf("the refusal does not say what was assumed:\n%s", msg)
	}
	if ws := deny.Respond(with).Warnings; hasSubstring(ws, "backfire assumed") {
		t.Errorf("with the cluster's context, warnings still assume: %q", ws)
	}
	for _, f := range with.Findings {
		if slices.Contains(f.Assumptions, NoClusterGap) {
			t.Errorf("%s with the cluster's context claims it had none", f.Rule)
		}
	}
}

func TestNotJudged(t *testing.T) {
	j := newJudge(t, nil, nil)
	del := request(t, admissionv1.Delete, fixture(t, "bad-statefulset.yaml"), nil)
	if v := j.Judge(del); v.Skipped == "" || len(v.Findings) > 0 {
		t.Errorf("DELETE judged: %+v", v)
	}
	cm := request(t, admissionv1.Create, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: shop}\n"), nil)
	if v := j.Judge(cm); !strings.Contains(v.Skipped, "ConfigMap") {
		t.Errorf("ConfigMap: %+v", v)
	}
	if resp := deny.Respond(j.Judge(cm)); !resp.Allowed {
		t.Error("a kind the rules do not read was refused")
	}
	// A wrong type is a warning, never a refusal: the API server's own
	// validation answers for it.
	bad := request(t, admissionv1.Create, []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x, namespace: shop}\nspec: {replicas: \"two\"}\n"), nil)
	v := j.Judge(bad)
	resp := deny.Respond(v)
	if len(v.Errors) == 0 || !resp.Allowed || len(resp.Warnings) != 1 || !strings.Contains(resp.Warnings[0], "could not check") {
		t.Errorf("undecodable object: %+v / %+v", v, resp)
	}
}

// A rule that panics is an error for that rule, reported as a warning; the
// other rules still judge the object.
func TestPanickingRuleIsAnErrorForThatRule(t *testing.T) {
	boom := &rules.Rule{ID: "BF999", Slug: "boom", Severity: finding.Error, Check: &rules.Scan{Run: func(*rules.Pass) { panic("boom") }}}
	fine := &rules.Rule{ID: "BF998", Slug: "fine", Severity: finding.Error, Kinds: []string{"StatefulSet"},
		Check: &rules.Scan{Run: func(p *rules.Pass) { p.Report(rules.Report{Message: "reported"}) }}}
	j, err := NewJudge([]*rules.Rule{boom, fine}, rules.Options{}, staticContext{})
	if err != nil {
		t.Fatal(err)
	}
	v := j.Judge(request(t, admissionv1.Create, fixture(t, "bad-statefulset.yaml"), nil))
	if len(v.RuleErrors) != 1 || !strings.Contains(v.RuleErrors[0].Message, "rule BF999 failed") {
		t.Fatalf("rule errors %v", v.RuleErrors)
	}
	if got := rulesOf(v); !slices.Equal(got, []string{"BF998"}) {
		t.Fatalf("findings %v", got)
	}
	resp := deny.Respond(v)
	if resp.Allowed || !slices.ContainsFunc(resp.Warnings, func(w string) bool { return strings.Contains(w, "could not check") }) {
		t.Errorf("response %+v", resp)
	}
}

func TestDenyMessageIsBounded(t *testing.T) {
	var v Verdict
	for range 25 {
		v.Findings = append(v.Findings, Judged{Finding: finding.Finding{Rule: "BF101", Severity: finding.Error, Message: "m"}})
	}
	msg := deny.Respond(v).Result.Message
	if n := strings.Count(msg, "BF101 "); n != maxRefusedShown {
		t.Errorf("%d findings shown, want %d", n, maxRefusedShown)
	}
	if !strings.Contains(msg, "and 15 more") {
		t.Errorf("message does not say how many were left out:\n%s", msg)
	}
}

func TestWarningsMostSevereFirst(t *testing.T) {
	v := newJudge(t, nil, nil).Judge(request(t, admissionv1.Create, fixture(t, "bad-statefulset.yaml"), nil))
	ws := Policy{Mode: Warn}.Respond(v).Warnings
	// Without a cluster, what was assumed comes first.
	if len(ws) == 0 || ws[0] != "backfire assumed: "+NoClusterGap {
		t.Fatalf("first warning %q, want the assumption", ws)
	}
	rank := map[string]int{"error": 3, "warning": 2, "info": 1}
	prev := 4
	for _, w := range ws[1:] {
		sev := strings.Fields(w)[1]
		if rank[sev] == 0 || rank[sev] > prev {
			t.Fatalf("warnings not most severe first: %q", ws)
		}
		prev = rank[sev]
	}
}

// A client that calls the webhook directly with `Exec: null` and
// `TcpSocket:` beside `exec:` is judged on the exec probe the API server
// would keep (decoded case-sensitively, as the scan decodes it), and told
// of the fields it drops. Read case-insensitively, it was a tcpSocket
// probe, and deny mode admitted it.
func TestFieldNamesDifferingInCaseAreReadAsTheAPIServerReadsThem(t *testing.T) {
	obj := []byte("apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db, namespace: data}\nspec:\n  template:\n    spec:\n      containers:\n      - name: postgres\n        image: postgres:16\n        livenessProbe:\n          exec: {command: [psql, -c, select 1]}\n          Exec: null\n          TcpSocket: {port: 5432}\n")
	v := newJudge(t, nil, staticContext{}).Judge(request(t, admissionv1.Create, obj, nil))
	if got := rulesOf(v); !slices.Contains(got, "BF101") || !slices.Contains(got, "BF102") {
		t.Errorf("rules %v, want BF101 and BF102", got)
	}
	resp := deny.Respond(v)
	if resp.Allowed {
		t.Error("allowed; want refused")
	}
	for _, field := range []string{"livenessProbe.Exec", "livenessProbe.TcpSocket"} {
		if !slices.ContainsFunc(resp.Warnings, func(w string) bool {
			return strings.Contains(w, `unknown field "spec.template.spec.containers[0].`+field+`"`)
		}) {
			t.Errorf("warnings %q do not name %s", resp.Warnings, field)
		}
	}
}
