package fixplan

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/config"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/helm"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/scan"
	"backfire.dev/backfire/internal/testutil"
)

// Real public charts (testdata/corpus, see SOURCES.md), fixed as a user
// would: each pattern by which charts let their values reach a probe or
// the resources, found from the chart's own templates.

// copyChart copies a chart of the corpus into a temporary directory, and
// runs the test from there (paths in the output are relative to it).
func copyChart(t *testing.T, corpus, name string) string {
	t.Helper()
	goldens = filepath.Join(testutil.RepoRoot(t), "internal", "fixplan", "testdata", "charts")
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, name), os.DirFS(testutil.Corpus(t, corpus))); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	return name
}

// goldens is where the golden diffs of these tests are (set before a test
// leaves the repository).
var goldens string

// chartOptions are the options of these tests. BF303 is off: the
// Bitnami charts' default budget on one replica is reported, and no value
// of theirs reaches unhealthyPodEvictionPolicy, so its fix is left by
// design (a template change) and would hide what these tests check.
func chartOptions(chart, valuesOut string) Options {
	o := options(chart)
	o.Scan.Rules.Config = &config.Config{Disable: []string{"BF303"}}
	o.Helm = &helm.Options{}
	o.ValuesOut = valuesOut
	return o
}

// fixChart plans, checks the diff against its golden file, writes, then
// checks that nothing is left to do and that a scan of the result (with
// the values file of --values-out) reports none of the fixed findings.
func fixChart(t *testing.T, o Options, goldenName string) *FixPlan {
	t.Helper()
	p, err := Plan(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Errors) > 0 {
		t.Fatalf("input errors: %v", p.Errors)
	}
	var diff bytes.Buffer
	if err := p.Diff(&diff); err != nil {
		t.Fatal(err)
	}
	golden(t, filepath.Join(goldens, goldenName), diff.Bytes())
	if errs := p.Write(); len(errs) > 0 {
		t.Fatal(errs)
	}
	again, err := Plan(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Files) > 0 || len(again.Fixed) > 0 || len(again.Left) != len(p.Left) {
		t.Errorf("second run: %d files, %d fixed, %d left (first %d left)", len(again.Files), len(again.Fixed), len(again.Left), len(p.Left))
	}
	so := o.Scan
	h := *o.Helm
	if o.ValuesOut != "" {
		h.ValueFiles = append(h.ValueFiles, o.ValuesOut)
	}
	r, err := helm.New(h)
	if err != nil {
		t.Fatal(err)
	}
	so.Charts = r
	res, err := scan.Run(so)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Findings {
		for _, fx := range p.Fixed {
			if keyOf(f) == keyOf(fx) {
				t.Errorf("%s on %s is still reported after the fix: %s", f.Rule, f.Object, f.Message)
			}
		}
	}
	return p
}

// routeOf is the route fix took for a block of an object.
func routeOf(p *FixPlan, name, block string) *Route {
	for i, r := range p.Routes {
		if r.Object.Name == name && strings.HasSuffix(r.Block, block) {
			return &p.Routes[i]
		}
	}
	return nil
}

func assertFixed(t *testing.T, p *FixPlan, rules ...string) {
	t.Helper()
	var got []string
	for _, f := range p.Fixed {
		if !slices.Contains(got, f.Rule) {
			got = append(got, f.Rule)
		}
	}
	for _, r := range rules {
		if !slices.Contains(got, r) {
			t.Errorf("%s not fixed (fixed %v)", r, got)
		}
	}
	for _, l := range p.Left {
		t.Errorf("left %s on %s: %s", l.Finding.Rule, l.Finding.Object, l.Reason)
	}
}

// Bitnami's PostgreSQL writes the liveness handler (pg_isready) in the
// template after the probe's numbers, so no key under
// primary.livenessProbe can replace it; primary.customLivenessProbe
// replaces the whole probe. Its resources come from a size preset while
// primary.resources is empty: the fix is written there whole, the
// preset's values kept and the cpu limit gone (BF202).
func TestChartCustomProbeAndPreset(t *testing.T) {
	chart := copyChart(t, "bitnami-postgresql", "postgresql")
	p := fixChart(t, chartOptions(chart, ""), "postgresql-in-place.diff")
	assertFixed(t, p, "BF101", "BF202", "BF601")
	// The image stops PostgreSQL with SIGTERM (BF601): the preStop hook
	// goes to primary.lifecycleHooks, which the template prints whole.
	if r := routeOf(p, "release-name-postgresql", "containers[postgresql].lifecycle"); r == nil || r.How != "whole" || !slices.Equal(r.Keys, []string{"primary.lifecycleHooks"}) {
		t.Errorf("lifecycle route %+v, want primary.lifecycleHooks whole", r)
	}
	if r := routeOf(p, "release-name-postgresql", "containers[postgresql].livenessProbe"); r == nil || r.How != "whole" || !slices.Equal(r.Keys, []string{"primary.customLivenessProbe"}) {
		t.Errorf("liveness route %+v, want primary.customLivenessProbe whole", r)
	}
	if r := routeOf(p, "release-name-postgresql", "containers[postgresql].resources"); r == nil || r.How != "whole" || !strings.Contains(r.Why, "preset") {
		t.Errorf("resources route %+v, want primary.resources whole, for the preset", r)
	}
}

// The same through --values-out, into a file the user already has: their
// keys and comments stay.
func TestChartValuesOutKeepsTheUsersFile(t *testing.T) {
	chart := copyChart(t, "bitnami-postgresql", "postgresql")
	mine := "# my settings\nauth:\n  postgresPassword: not-a-secret # mine\n"
	if err := os.WriteFile("my-values.yaml", []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	p := fixChart(t, chartOptions(chart, "my-values.yaml"), "postgresql-values-out.diff")
	assertFixed(t, p, "BF101", "BF202")
	got, _ := os.ReadFile("my-values.yaml")
	if !strings.HasPrefix(string(got), "# my settings\nauth:\n  postgresPassword: not-a-secret # mine\n") {
		t.Errorf("the user's keys and comments are not kept:\n%s", got)
	}
	values, _ := os.ReadFile(filepath.Join(chart, "values.yaml"))
	if orig, _ := os.ReadFile(filepath.Join(goldens, "..", "..", "..", "..", "testdata", "corpus", "bitnami-postgresql", "values.yaml")); !bytes.Equal(values, orig) {
		t.Error("the chart's values.yaml changed with --values-out")
	}
}

// Bitnami's MongoDB ships its startupProbe switched off, with a literal
// exec handler in the template; BF101 asks for a tcpSocket startupProbe:
// customStartupProbe holds it.
func TestChartStartupProbeSwitchedOff(t *testing.T) {
	chart := copyChart(t, "bitnami-mongodb", "mongodb")
	p := fixChart(t, chartOptions(chart, ""), "mongodb-in-place.diff")
	assertFixed(t, p, "BF101", "BF202")
	if r := routeOf(p, "release-name-mongodb", "containers[mongodb].startupProbe"); r == nil || !slices.Equal(r.Keys, []string{"customStartupProbe"}) {
		t.Errorf("startup route %+v, want customStartupProbe", r)
	}
}

// Elastic's Elasticsearch chart sets a cpu limit in values.yaml and prints
// resources with toYaml: in place the key goes; in a values file of its
// own it is set to null, which deletes a chart default (Helm's
// documentation: "Deleting a default key").
func TestChartDeletesADefault(t *testing.T) {
	chart := copyChart(t, "elastic-elasticsearch", "elasticsearch")
	p := fixChart(t, chartOptions(chart, ""), "elasticsearch-in-place.diff")
	assertFixed(t, p, "BF202")
	values, _ := os.ReadFile(filepath.Join(chart, "values.yaml"))
	if strings.Contains(string(values), "limits:\n    cpu:") {
		t.Errorf("the cpu limit stays in values.yaml")
	}
}

func TestChartDeletesADefaultWithNull(t *testing.T) {
	chart := copyChart(t, "elastic-elasticsearch", "elasticsearch")
	p := fixChart(t, chartOptions(chart, "fix.yaml"), "elasticsearch-values-out.diff")
	assertFixed(t, p, "BF202")
	got, _ := os.ReadFile("fix.yaml")
	if !strings.Contains(string(got), "resources:\n  limits:\n    cpu: null # backfire fix: BF202\n") {
		t.Errorf("values file:\n%s", got)
	}
}

// Prometheus's Alertmanager prints its livenessProbe and resources maps
// whole (toYaml), resources empty ({}): the keys the fix needs do not
// exist yet, and are added under the maps.
func TestChartMapsPrintedWhole(t *testing.T) {
	chart := copyChart(t, "prometheus-alertmanager", "alertmanager")
	p := fixChart(t, chartOptions(chart, ""), "alertmanager-in-place.diff")
	assertFixed(t, p, "BF102", "BF201")
	if r := routeOf(p, "release-name-alertmanager", "containers[alertmanager].resources"); r == nil || r.How != "map" {
		t.Errorf("resources route %+v, want the map resources", r)
	}
	values, _ := os.ReadFile(filepath.Join(chart, "values.yaml"))
	if !strings.Contains(string(values), "# placeholder: size from observed use (backfire fix)") {
		t.Errorf("the request sizes are not marked as placeholders")
	}
	// and the plan names each, with its line in values.yaml: never
	// written silently.
	lines := strings.Split(string(values), "\n")
	var got []string
	for _, ph := range p.Placeholders {
		if ph.File != filepath.Join(chart, "values.yaml") || ph.Line < 1 || ph.Line > len(lines) || !strings.Contains(lines[ph.Line-1], "placeholder") {
			t.Errorf("placeholder %+v is not at its line in values.yaml", ph)
		}
		got = append(got, ph.Field)
	}
	if strings.Join(got, " ") != "resources.requests.cpu resources.requests.memory resources.limits.memory" {
		t.Errorf("placeholders %v, want the requests and the memory limit", got)
	}
}

// A chart that uses Bitnami's PostgreSQL as a dependency under an alias:
// the values go under the alias, in the parent chart's values.yaml; the
// subchart's own files stay.
func TestChartSubchartAlias(t *testing.T) {
	copyChart(t, "bitnami-postgresql", filepath.Join("app", "charts", "postgresql"))
	testutil.WriteFiles(t, "app", map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: app\nversion: 1.0.0\ndependencies:\n- name: postgresql\n  version: 17.x.x\n  alias: db\n",
		"values.yaml": "# The application's database.\ndb:\n  auth:\n    database: app\n",
	})
	p := fixChart(t, chartOptions("app", ""), "subchart-alias.diff")
	assertFixed(t, p, "BF101", "BF202")
	for _, f := range p.Files {
		if f.Path != filepath.Join("app", "values.yaml") {
			t.Errorf("%s written; want only the parent's values.yaml", f.Path)
		}
	}
	if r := routeOf(p, "release-name-db", "livenessProbe"); r == nil || !slices.Equal(r.Keys, []string{"db.primary.customLivenessProbe"}) {
		t.Errorf("route %+v, want db.primary.customLivenessProbe", r)
	}
}

// Harbor's chart writes the database's resources with
// `if .Values.database.internal.resources`, a key its values.yaml does
// not set: the map is written under the key the container's other fields
// come from. A variant whose template writes them literally is left, with
// the template's line.
func TestChartResourcesLiteralInTemplateLeft(t *testing.T) {
	chart := copyChart(t, "harbor-helm", "harbor")
	tmpl := filepath.Join(chart, "templates", "database", "database-ss.yaml")
	data, err := os.ReadFile(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	literal := "        resources:\n          requests:\n            cpu: 500m\n            memory: 1Gi\n          limits:\n            cpu: \"1\"\n            memory: 1Gi\n"
	text := string(data)
	i := strings.Index(text, "{{- if .Values.database.internal.resources }}")
	j := strings.Index(text[i:], "{{- end }}")
	if i < 0 || j < 0 {
		t.Fatal("the template's resources block is not where it was")
	}
	text = text[:i] + literal + text[i+j+len("{{- end }}\n"):]
	if err := os.WriteFile(tmpl, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	line := 1 + strings.Count(text[:strings.Index(text, "limits:\n            cpu:")], "\n") + 1
	p, err := Plan(chartOptions(chart, ""))
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, l := range p.Left {
		if l.Finding.Rule == "BF202" && l.Finding.Object.Name == "release-name-harbor-database" {
			found = true
			want := tmpl + ":" + strconv.Itoa(line) + " writes resources.limits.cpu"
			if !strings.Contains(l.Reason, want) || !strings.Contains(l.Reason, `"cpu":null`) {
				t.Errorf("reason %q lacks %q or the patch", l.Reason, want)
			}
		}
	}
	if !found {
		t.Errorf("BF202 on the database is not left: fixed %d, left %v", len(p.Fixed), p.Left)
	}
}

// Harbor's values.yaml documented the database's probe timeouts as "1 to
// 5 seconds" above the keys, and shipped 1 (goharbor/harbor-helm 1c1e847;
// the comments are put back in a copy of the chart at its pinned commit).
// The finding says the default is the documented lower bound, and the fix
// stays inside the range: with "1 to 2 seconds" instead, the timeouts fix
// wants (3 and 5) are written as 2, and the summary says so.
func TestChartDocumentedRange(t *testing.T) {
	for _, tc := range []struct {
		upper  string
		want   []string // lines the values file must have after the fix
		range_ bool
	}{
		{"5", []string{"      timeoutSeconds: 3  # backfire fix: BF101, BF102, BF103", "      timeoutSeconds: 5  # backfire fix: BF101, BF102, BF103"}, false},
		{"2", []string{"      timeoutSeconds: 2  # backfire fix: BF101, BF102, BF103"}, true},
	} {
		t.Run("1 to "+tc.upper, func(t *testing.T) {
			chart := copyChart(t, "harbor-helm", "harbor")
			values := filepath.Join(chart, "values.yaml")
			data, _ := os.ReadFile(values)
			text := string(data)
			db := strings.Index(text, "\ndatabase:\n")
			for _, probe := range []string{"livenessProbe", "readinessProbe"} {
				at := db + strings.Index(text[db:], "    ## "+upper(probe[:1])+probe[1:len(probe)-5]+" probe values\n    "+probe+":\n")
				if at < db {
					t.Fatalf("the database's %s is not where it was", probe)
				}
				end := at + strings.Index(text[at:], "\n")
				text = text[:at] + "    # The timeout used in " + probe + "; 1 to " + tc.upper + " seconds" + text[end:]
			}
			if err := os.WriteFile(values, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			o := chartOptions(chart, "")
			so := o.Scan
			so.Charts, _ = helm.New(helm.Options{})
			res, err := scan.Run(so)
			if err != nil {
				t.Fatal(err)
			}
			var said bool
			for _, f := range res.Findings {
				if f.Rule == "BF102" && f.Object.Name == "release-name-harbor-database" {
					said = strings.Contains(f.Mechanism[len(f.Mechanism)-1], `as "The timeout used in livenessProbe; 1 to `+tc.upper+` seconds" and ships 1, its lower bound`)
				}
			}
			if !said {
				t.Error("BF102 on the database does not say the default is the documented lower bound")
			}
			p, err := Plan(o)
			if err != nil {
				t.Fatal(err)
			}
			if errs := p.Write(); len(errs) > 0 {
				t.Fatal(errs)
			}
			got, _ := os.ReadFile(values)
			for _, w := range tc.want {
				if !strings.Contains(string(got), w+"\n") {
					t.Errorf("values.yaml lacks %q", w)
				}
			}
			if tc.range_ != (len(p.Ranges) == 2) {
				t.Errorf("ranges %v", p.Ranges)
			}
		})
	}
}

func upper(s string) string { return strings.ToUpper(s) }

// kube-state-metrics (prometheus-community) ships its startupProbe
// switched off (`if .Values.startupProbe.enabled`), with the handler in
// the template and the numbers from the values. A fix that wants the
// startupProbe the chart prints, with failureThreshold 30, turns the
// switch on and sets only that number.
func TestChartSwitchTurnedOn(t *testing.T) {
	chart := copyChart(t, "prometheus-kube-state-metrics", "kube-state-metrics")
	r, err := helm.New(helm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := newTrial(r, chart)
	if err != nil {
		t.Fatal(err)
	}
	o := options(chart)
	o.Scan.Charts, o.Scan.KeepObjects = r, true
	res, err := scan.Run(o.Scan)
	if err != nil {
		t.Fatal(err)
	}
	var dep *object.Object
	for _, obj := range res.Objects {
		if obj.Kind == "Deployment" {
			dep = obj
		}
	}
	if dep == nil {
		t.Fatal("no Deployment rendered")
	}
	on, err := tr.render(keySet{"startupProbe.enabled": true})
	if err != nil {
		t.Fatal(err)
	}
	path := load.SplitPath("spec.template.spec.containers[0].startupProbe")
	sp, ok := load.ValueAt(on[objKey{dep.Doc.File, dep.Ref}], path)
	if !ok {
		t.Fatal("the switch does not print a startupProbe")
	}
	probe := cloneValue(sp).(map[string]any)
	probe["failureThreshold"] = 30.0
	c := fix.Change{Target: dep.Ref, Patch: map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"containers": []any{map[string]any{"name": "kube-state-metrics", "startupProbe": probe}}}}}}}
	rt, err := tr.routeObject(dep, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(rt.routes) != 1 || rt.routes[0].how != "map" || !fix.Equal(rt.routes[0].keys, keySet{"startupProbe.enabled": true, "startupProbe.failureThreshold": 30.0}) {
		t.Errorf("routes %+v, unreached %v; want the switch on and failureThreshold 30", rt.routes, rt.unreached)
	}
}

// k8s-pod-cpu-booster renders its webhook's Deployment in the template
// that also calls genCA and genSignedCert for the webhook's certificate.
// Trial renders once left such a file out, Deployment included: no
// values key was ever tried on it. Made deterministic, they render it,
// and the trace ties its fields to their keys.
func TestChartWorkloadBesideGeneratedCertificate(t *testing.T) {
	chart := copyChart(t, "k8s-pod-cpu-booster", "booster")
	r, err := helm.New(helm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := newTrial(r, chart)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.noise) > 0 || len(tr.unstable) > 0 {
		t.Errorf("two trial renders differ: noise %v, unstable %v", tr.noise, tr.unstable)
	}
	o := options(chart)
	o.Scan.Charts, o.Scan.KeepObjects = r, true
	res, err := scan.Run(o.Scan)
	if err != nil {
		t.Fatal(err)
	}
	var dep *object.Object
	for _, obj := range res.Objects {
		if obj.Kind == "Deployment" && obj.Name == "mutating-webhook" {
			dep = obj
		}
	}
	if dep == nil {
		t.Fatal("no webhook Deployment rendered")
	}
	for _, tc := range []struct {
		patch map[string]any
		want  keySet
	}{
		{map[string]any{"replicas": 2.0}, keySet{"webhook.replicaCount": 2.0}},
		{map[string]any{"template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "mutating-webhook", "imagePullPolicy": "IfNotPresent"}}}}},
			keySet{"webhook.imagePullPolicy": "IfNotPresent"}},
	} {
		rt, err := tr.routeObject(dep, fix.Change{Target: dep.Ref, Patch: map[string]any{"spec": tc.patch}})
		if err != nil {
			t.Fatal(err)
		}
		if len(rt.routes) != 1 || !fix.Equal(rt.routes[0].keys, tc.want) {
			t.Errorf("routes %+v, unreached %v; want %v", rt.routes, rt.unreached, tc.want)
		}
	}
}

// A chart kept at charts/<name> in its repository, as many are, is the
// chart fix renders, not a subchart: its values.yaml is edited. Its
// findings were left with "the fix changes nothing in the files it
// edits", since any charts/ folder in the path was taken for a
// subchart's.
func TestChartInAChartsFolder(t *testing.T) {
	chart := copyChart(t, "prometheus-alertmanager", filepath.Join("charts", "alertmanager"))
	p, err := Plan(chartOptions(chart, ""))
	if err != nil {
		t.Fatal(err)
	}
	assertFixed(t, p, "BF102", "BF201")
	if len(p.Files) != 1 || p.Files[0].Path != filepath.Join(chart, "values.yaml") {
		for _, f := range p.Files {
			t.Errorf("writes %s; want only %s", f.Path, filepath.Join(chart, "values.yaml"))
		}
	}
}

// groundhog2k's RabbitMQ chart computes the server's memory setting
// (total_memory_available_override_value in the rabbitmq.conf of its
// ConfigMap) from resources.limits.memory, and rolls the StatefulSet on a
// change of that file (checksum/rabbit-config). Setting resources changes
// both, as the chart intends: the route is kept, and says so. Before, the
// route was refused ("it also changes ...checksum/rabbit-config") and
// BF201 was left as out of the values' reach.
func TestChartDerivedChangesAccepted(t *testing.T) {
	chart := copyChart(t, "groundhog2k-rabbitmq", "rabbitmq")
	p := fixChart(t, chartOptions(chart, ""), "rabbitmq-in-place.diff")
	assertFixed(t, p, "BF201")
	r := routeOf(p, "release-name-rabbitmq", "containers[rabbitmq].resources")
	if r == nil || r.How != "map" || !slices.Equal(r.Keys, []string{"resources"}) {
		t.Fatalf("resources route %+v, want the map resources", r)
	}
	for _, w := range []string{"checksum/rabbit-config", "ConfigMap release-name-rabbitmq-config data[rabbitmq.conf]"} {
		if !strings.Contains(r.Why, w) {
			t.Errorf("route's reason %q does not say the chart computes %s", r.Why, w)
		}
	}
}

// A change outside the block is accepted only when the chart computes it
// from the keys: a ConfigMap's or Secret's data, a digest annotation.
func TestDerivedChange(t *testing.T) {
	sum := func(c byte) string { return strings.Repeat(string(c), 64) }
	for _, tc := range []struct {
		kind, path string
		old, new   any
		want       bool
	}{
		{"ConfigMap", "data[rabbitmq.conf]", "a", "b", true},
		{"Secret", "stringData.password", "a", "b", true},
		{"StatefulSet", "spec.template.metadata.annotations[checksum/config]", sum('a'), sum('b'), true},
		{"StatefulSet", "spec.template.metadata.annotations[owner]", "a", "b", false},
		{"StatefulSet", "spec.template.metadata.annotations[checksum/config]", sum('a'), "b", false},
		{"StatefulSet", "spec.replicas", 1.0, 2.0, false},
		{"Deployment", "data.x", "a", "b", false},
	} {
		e := fieldEdit{path: load.SplitPath(tc.path), old: tc.old, new: tc.new, had: true, has: true}
		if got := derivedChange(tc.kind, e); got != tc.want {
			t.Errorf("derivedChange(%s %s) = %v, want %v", tc.kind, tc.path, got, tc.want)
		}
	}
}

// InfluxDB Enterprise's chart prints meta.resources and data.resources
// (`toYaml .Values.data.resources`) and leaves both commented out in
// values.yaml (`# resources: {}`): no trace ties a rendered line to them
// and the values tree does not have them. The template that renders each
// StatefulSet names them: the keys are added, and BF201 is fixed.
func TestChartKeyCommentedOutInValues(t *testing.T) {
	chart := copyChart(t, "influxdb-enterprise", "influxdb-enterprise")
	p, err := Plan(chartOptions(chart, ""))
	if err != nil {
		t.Fatal(err)
	}
	for name, key := range map[string]string{
		"release-name-influxdb-enterprise-meta": "meta.resources",
		"release-name-influxdb-enterprise-data": "data.resources",
	} {
		if r := routeOf(p, name, "containers[influxdb-enterprise].resources"); r == nil || r.How != "map" || !slices.Equal(r.Keys, []string{key}) {
			t.Errorf("%s: resources route %+v, want the map %s", name, r, key)
		}
	}
	for _, l := range p.Left {
		if l.Finding.Rule == "BF201" {
			t.Errorf("left BF201 on %s: %s", l.Finding.Object, l.Reason)
		}
	}
}

// InfluxDB 2's chart writes the liveness handler (httpGet) in the template
// and reads every number from livenessProbe.* with a `default`. No values
// key reaches the handler BF101 changes, but livenessProbe.timeoutSeconds,
// livenessProbe.failureThreshold and readinessProbe.timeoutSeconds reach
// what BF102 and BF103 need (a scan with them set reports neither).
// BF102 and BF103 must not be left with "the chart's values do not reach".
func TestChartNumbersReachedBesideATemplateHandler(t *testing.T) {
	chart := copyChart(t, "influxdb2", "influxdb2")
	p, err := Plan(chartOptions(chart, ""))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range p.Left {
		if l.Finding.Rule == "BF102" || l.Finding.Rule == "BF103" {
			t.Errorf("left %s on %s: %s", l.Finding.Rule, l.Finding.Object, l.Reason)
		}
		// The handler is left, and said unreached alone: the numbers
		// composed with it are reached.
		unreached, _, _ := strings.Cut(l.Reason, ": change the template")
		if l.Finding.Rule == "BF101" && (strings.Contains(unreached, "timeoutSeconds") || strings.Contains(unreached, "failureThreshold")) {
			t.Errorf("BF101 says numbers a values key reaches are unreached: %s", unreached)
		}
	}
	fixed := map[string]bool{}
	for _, f := range p.Fixed {
		fixed[f.Rule] = true
	}
	for _, rule := range []string{"BF102", "BF103"} {
		if !fixed[rule] {
			t.Errorf("%s not fixed", rule)
		}
	}
}
