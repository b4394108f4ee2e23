package helm_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"

	"backfire.dev/backfire/internal/helm"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/source"
	"backfire.dev/backfire/internal/testutil"
)

const databaseTemplate = "templates/database/database-ss.yaml"

// render renders a chart and fails the test on any error.
func render(t *testing.T, opts helm.Options, chart string) []source.Stream {
	t.Helper()
	r, err := helm.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	streams, errs := r.Render(source.Input{Path: chart, Kind: source.Chart})
	if len(errs) > 0 {
		t.Fatalf("render %s: %v", chart, errs)
	}
	return streams
}

// renderErrors renders a chart that must fail and returns its errors.
func renderErrors(t *testing.T, opts helm.Options, chart string) []load.Error {
	t.Helper()
	r, err := helm.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	streams, errs := r.Render(source.Input{Path: chart, Kind: source.Chart})
	if len(errs) == 0 {
		t.Fatalf("render %s: no error, %d streams", chart, len(streams))
	}
	return errs
}

// document finds the stream whose name ends in suffix and parses its only
// object of the given kind.
func document(t *testing.T, streams []source.Stream, suffix, kind string) (source.Stream, *load.Document) {
	t.Helper()
	for _, s := range streams {
		if !strings.HasSuffix(s.Name, suffix) {
			continue
		}
		f := load.ParseDocuments(s.Name, s.Documents)
		if len(f.Errors) > 0 {
			t.Fatalf("%s: %v", s.Name, f.Errors)
		}
		for _, d := range f.Documents {
			if d.Kind == kind {
				return s, d
			}
		}
		t.Fatalf("%s has no %s", s.Name, kind)
	}
	var names []string
	for _, s := range streams {
		names = append(names, s.Name)
	}
	t.Fatalf("no stream ends in %s; have %v", suffix, names)
	return source.Stream{}, nil
}

// field decodes the value at a dotted path of the document.
func field(t *testing.T, d *load.Document, path string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(d.JSON, &v); err != nil {
		t.Fatal(err)
	}
	for _, s := range load.SplitPath(path) {
		switch x := v.(type) {
		case map[string]any:
			v = x[s.Key]
		case []any:
			if s.Index >= len(x) {
				return nil
			}
			v = x[s.Index]
		default:
			return nil
		}
	}
	return v
}

// valuesTrace is what a finding at path would say about its value.
func valuesTrace(s source.Stream, d *load.Document, path string) string {
	if s.Trace == nil {
		return ""
	}
	pos, _ := d.Locate(path)
	if v := s.Trace(d, path, pos).Values; v != nil {
		return v.Text
	}
	return ""
}

// lineOf returns the 1-based line of the first line of data equal to text
// after trimming; 0 when absent.
func lineOf(data []byte, text string) int {
	for i, l := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(l) == text {
			return i + 1
		}
	}
	return 0
}

const liveness = "spec.template.spec.containers[0].livenessProbe"

func TestHarborDatabaseStatefulSet(t *testing.T) {
	chart := testutil.Corpus(t, "harbor-helm")
	streams := render(t, helm.Options{}, chart)
	s, d := document(t, streams, databaseTemplate, "StatefulSet")

	if want := filepath.ToSlash(filepath.Join(chart, databaseTemplate)); s.Name != want {
		t.Errorf("stream name %q, want %q: the chart as given, then the template", s.Name, want)
	}
	if got := field(t, d, "metadata.name"); got != "release-name-harbor-database" {
		t.Errorf("name %v: the default release name is release-name", got)
	}
	if got := field(t, d, "metadata.namespace"); got != "default" {
		t.Errorf("namespace %v, want default", got)
	}
	if got := field(t, d, liveness+".exec.command[0]"); got != "/docker-healthcheck.sh" {
		t.Errorf("liveness exec %v", got)
	}
	for key, want := range map[string]float64{"initialDelaySeconds": 300, "periodSeconds": 10, "timeoutSeconds": 1, "failureThreshold": 3} {
		if got := field(t, d, liveness+"."+key); got != want {
			t.Errorf("liveness %s = %v, want %v", key, got, want)
		}
	}

	// The position is the line under the document's "# Source:" header.
	pos, exact := d.Locate(liveness + ".timeoutSeconds")
	if want := lineOf(s.Documents[d.Index], "timeoutSeconds: 1"); !exact || pos.Line != want || want == 0 {
		t.Errorf("timeoutSeconds at %v (exact %v), want the first rendered timeoutSeconds line %d", pos, exact, want)
	}

	// And the value comes from values.yaml, line 1074 of the corpus copy.
	values := filepath.ToSlash(filepath.Join(chart, "values.yaml"))
	if got, want := valuesTrace(s, d, liveness+".timeoutSeconds"), values+":1074 database.internal.livenessProbe.timeoutSeconds"; got != want {
		t.Errorf("values source %q, want %q", got, want)
	}
	// A whole probe names the values block that fills it.
	if got, want := valuesTrace(s, d, liveness), values+":1071 database.internal.livenessProbe (5 keys)"; got != want {
		t.Errorf("values source of the probe %q, want %q", got, want)
	}
	// The exec command is written in the template, not in values.
	if got := valuesTrace(s, d, liveness+".exec.command[0]"); got != "" {
		t.Errorf("the hard-coded command has values source %q", got)
	}
	// resources is absent: a defaulted field was set nowhere.
	if got := valuesTrace(s, d, "spec.template.spec.containers[0].resources"); got != "" {
		t.Errorf("absent resources has values source %q", got)
	}

	if !strings.HasPrefix(s.Origin.Text, `rendered from chart harbor 1.4.0-dev (release "release-name", namespace "default", values: values.yaml)`) {
		t.Errorf("origin %q", s.Origin.Text)
	}
	for _, s := range streams {
		if strings.HasSuffix(s.Name, "NOTES.txt") || strings.HasPrefix(filepath.Base(s.Name), "_") {
			t.Errorf("%s is not a manifest and must not be a stream", s.Name)
		}
		if strings.TrimSpace(string(s.Data)) == "" {
			t.Errorf("%s rendered empty and must be skipped", s.Name)
		}
	}
}

// probeChart is a small chart that takes its probe from values the way
// harbor's database does, so that values precedence is tested without
// rendering harbor (whose auto-TLS generates RSA keys on every render).
var probeChart = map[string]string{
	"Chart.yaml": chartYAML,
	"values.yaml": `database:
  internal:
    livenessProbe:
      initialDelaySeconds: 300
      periodSeconds: 10
      timeoutSeconds: 1
      failureThreshold: 3
`,
	"templates/db.yaml": `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  template:
    spec:
      containers:
      - name: database
        image: postgres:17
        livenessProbe:
          exec:
            command: ["/docker-healthcheck.sh"]
          initialDelaySeconds: {{ .Values.database.internal.livenessProbe.initialDelaySeconds }}
          periodSeconds: {{ .Values.database.internal.livenessProbe.periodSeconds }}
          timeoutSeconds: {{ .Values.database.internal.livenessProbe.timeoutSeconds }}
          failureThreshold: {{ .Values.database.internal.livenessProbe.failureThreshold }}
`,
}

func TestValuesOrder(t *testing.T) {
	chart := t.TempDir()
	testutil.WriteFiles(t, chart, probeChart)
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{
		"a.yaml": "database:\n  internal:\n    livenessProbe:\n      timeoutSeconds: 5\n      periodSeconds: 20\n",
		"b.yaml": "# later files win\ndatabase:\n  internal:\n    livenessProbe:\n      timeoutSeconds: 7\n",
	})
	a, b := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	values := filepath.ToSlash(filepath.Join(chart, "values.yaml"))
	const key = "database.internal.livenessProbe.timeoutSeconds"
	for _, tc := range []struct {
		name   string
		opts   helm.Options
		want   any
		source string
	}{
		{"chart default", helm.Options{}, 1.0, values + ":6 " + key},
		{"one file", helm.Options{ValueFiles: []string{a}}, 5.0, a + ":4 " + key},
		{"last file wins", helm.Options{ValueFiles: []string{a, b}}, 7.0, b + ":5 " + key},
		{"order matters", helm.Options{ValueFiles: []string{b, a}}, 5.0, a + ":4 " + key},
		{"--set over files", helm.Options{ValueFiles: []string{a, b}, Set: []string{key + "=9"}}, 9.0, "--set " + key + "=9"},
		{"last --set wins", helm.Options{Set: []string{key + "=9", key + "=10"}}, 10.0, "--set " + key + "=10"},
		{"--set-string after --set", helm.Options{Set: []string{key + "=9"}, SetString: []string{key + "=11"}}, 11.0, "--set-string " + key + "=11"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, d := document(t, render(t, tc.opts, chart), "templates/db.yaml", "StatefulSet")
			if got := field(t, d, liveness+".timeoutSeconds"); got != tc.want {
				t.Errorf("timeoutSeconds %v, want %v", got, tc.want)
			}
			if got := valuesTrace(s, d, liveness+".timeoutSeconds"); got != tc.source {
				t.Errorf("values source %q, want %q", got, tc.source)
			}
		})
	}
	// A key the files did not set still comes from the chart: periodSeconds
	// from a.yaml, failureThreshold from values.yaml.
	s, d := document(t, render(t, helm.Options{ValueFiles: []string{a, b}}, chart), "templates/db.yaml", "StatefulSet")
	if got := valuesTrace(s, d, liveness+".periodSeconds"); got != a+":5 database.internal.livenessProbe.periodSeconds" {
		t.Errorf("periodSeconds source %q", got)
	}
	if got := valuesTrace(s, d, liveness+".failureThreshold"); got != values+":7 database.internal.livenessProbe.failureThreshold" {
		t.Errorf("failureThreshold source %q", got)
	}
	// Set by three files, the probe has no single parent: each file is
	// named with its keys, highest precedence first.
	want := b + ":5 database.internal.livenessProbe.timeoutSeconds; " +
		a + ":5 database.internal.livenessProbe.periodSeconds; " +
		values + ":4,7 database.internal.livenessProbe.{initialDelaySeconds,failureThreshold}"
	if got := valuesTrace(s, d, liveness); got != want {
		t.Errorf("probe sources\n%q\nwant\n%q", got, want)
	}
	// Set by one file, the probe names the block.
	s, d = document(t, render(t, helm.Options{}, chart), "templates/db.yaml", "StatefulSet")
	if got, want := valuesTrace(s, d, liveness), values+":3 database.internal.livenessProbe (4 keys)"; got != want {
		t.Errorf("probe source %q, want %q", got, want)
	}
}

func TestReleaseNameAndNamespace(t *testing.T) {
	chart := testutil.Corpus(t, "harbor-helm")
	s, d := document(t, render(t, helm.Options{ReleaseName: "prod", Namespace: "registry"}, chart), databaseTemplate, "StatefulSet")
	if got := field(t, d, "metadata.name"); got != "prod-harbor-database" {
		t.Errorf("name %v", got)
	}
	if got := field(t, d, "metadata.namespace"); got != "registry" {
		t.Errorf("namespace %v", got)
	}
	if !strings.Contains(s.Origin.Text, `release "prod", namespace "registry"`) {
		t.Errorf("origin %q", s.Origin.Text)
	}
}

func TestOptionErrors(t *testing.T) {
	for _, tc := range []struct {
		opts helm.Options
		want string
	}{
		{helm.Options{ValueFiles: []string{filepath.Join(t.TempDir(), "missing.yaml")}}, "missing.yaml: no such file"},
		{helm.Options{Set: []string{"a.b"}}, `--set "a.b"`},
		{helm.Options{KubeVersion: "one.two"}, `--kube-version "one.two"`},
		{helm.Options{ReleaseName: "Not_A_Name"}, `--release-name "Not_A_Name"`},
	} {
		_, err := helm.New(tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want it to contain %q", tc.opts, err, tc.want)
		}
	}
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{"bad.yaml": "a: [1,\n"})
	if _, err := helm.New(helm.Options{ValueFiles: []string{filepath.Join(dir, "bad.yaml")}}); err == nil || !strings.Contains(err.Error(), "bad.yaml") {
		t.Errorf("unparsable values file: %v", err)
	}
}

const chartYAML = "apiVersion: v2\nname: demo\nversion: 0.1.0\n"

// capabilities renders what a chart sees of the cluster.
const capabilitiesTemplate = `apiVersion: v1
kind: ConfigMap
metadata:
  name: caps
data:
  kube: {{ .Capabilities.KubeVersion.Version | quote }}
  monitoring: {{ .Capabilities.APIVersions.Has "monitoring.coreos.com/v1" | quote }}
  install: {{ .Release.IsInstall | quote }}
`

func TestCapabilities(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{"Chart.yaml": chartYAML, "templates/caps.yaml": capabilitiesTemplate})
	for _, tc := range []struct {
		opts             helm.Options
		kube, monitoring string
	}{
		{helm.Options{}, helm.DefaultKubeVersion, "false"},
		{helm.Options{KubeVersion: "1.29.3", APIVersions: []string{"monitoring.coreos.com/v1"}}, "v1.29.3", "true"},
	} {
		_, d := document(t, render(t, tc.opts, dir), "templates/caps.yaml", "ConfigMap")
		if got := field(t, d, "data.kube"); got != tc.kube {
			t.Errorf("%+v: kube version %v, want %v", tc.opts, got, tc.kube)
		}
		if got := field(t, d, "data.monitoring"); got != tc.monitoring {
			t.Errorf("%+v: monitoring API %v, want %v", tc.opts, got, tc.monitoring)
		}
		if got := field(t, d, "data.install"); got != "true" {
			t.Errorf("IsInstall %v: helm template renders an install", got)
		}
	}

	// A chart's kubeVersion constraint is checked against --kube-version.
	testutil.WriteFiles(t, dir, map[string]string{"Chart.yaml": chartYAML + "kubeVersion: \">=1.30.0\"\n"})
	errs := renderErrors(t, helm.Options{KubeVersion: "1.29.0"}, dir)
	if !strings.Contains(errs[0].Message, ">=1.30.0") || !strings.HasSuffix(errs[0].File, "Chart.yaml") {
		t.Errorf("kubeVersion mismatch: %v", errs)
	}
}

func TestBrokenCharts(t *testing.T) {
	workload := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n"
	for _, tc := range []struct {
		name  string
		files map[string]string
		file  string // the error's file, relative to the chart
		line  int
		want  string // in the message
	}{
		{
			name: "bad template syntax",
			files: map[string]string{
				"templates/ok.yaml":  workload,
				"templates/bad.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Values.name \n",
			},
			// Go's parser reports where the file ended, and where the
			// unclosed action started.
			file: "templates/bad.yaml", line: 5, want: "template does not parse: unclosed action started at DIR/templates/bad.yaml:4",
		},
		{
			name: "missing required value",
			files: map[string]string{
				"values.yaml":       "database:\n  password: \"\"\n",
				"templates/ok.yaml": workload,
				"templates/db.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: db\ndata:\n  password: {{ required \"database.password is required: set it with --set database.password=...\" .Values.database.password }}\n",
			},
			file: "templates/db.yaml", line: 6, want: "database.password is required: set it with --set database.password=...",
		},
		{
			name: "fail in a helper",
			files: map[string]string{
				"templates/_helpers.tpl": "{{- define \"demo.check\" -}}\n{{- fail \"demo needs an ingress host\" -}}\n{{- end -}}\n",
				"templates/ing.yaml":     "{{ include \"demo.check\" . }}\n",
			},
			// Helm reports the line that includes the helper.
			file: "templates/ing.yaml", line: 1, want: "template failed: demo needs an ingress host",
		},
		{
			name: "nil pointer in values",
			files: map[string]string{
				"templates/x.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: {{ .Values.missing.deeper.key }}\n",
			},
			file: "templates/x.yaml", line: 6, want: "nil pointer",
		},
		{
			name: "missing dependency",
			files: map[string]string{
				"Chart.yaml":        chartYAML + "dependencies:\n- name: postgresql\n  version: 15.x.x\n  repository: oci://registry-1.docker.io/bitnamicharts\n",
				"templates/ok.yaml": workload,
			},
			file: "Chart.yaml", line: 5, want: `dependency "postgresql" (version "15.x.x") is listed in Chart.yaml but missing from the charts/ directory`,
		},
		{
			name:  "invalid Chart.yaml",
			files: map[string]string{"Chart.yaml": "name: [\n"},
			file:  "", want: "cannot load Helm chart",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if _, ok := tc.files["Chart.yaml"]; !ok {
				tc.files["Chart.yaml"] = chartYAML
			}
			testutil.WriteFiles(t, dir, tc.files)
			errs := renderErrors(t, helm.Options{}, dir)
			e := errs[0]
			want := dir
			if tc.file != "" {
				want = filepath.ToSlash(filepath.Join(dir, tc.file))
			}
			tc.want = strings.ReplaceAll(tc.want, "DIR", filepath.ToSlash(dir))
			if e.File != want || e.Line != tc.line || !strings.Contains(e.Message, tc.want) {
				t.Errorf("got %s:%d %q\nwant %s:%d and a message with %q", e.File, e.Line, e.Message, want, tc.line, tc.want)
			}
		})
	}
}

func TestPackagedChart(t *testing.T) {
	ch, err := loader.Load(testutil.Corpus(t, "harbor-helm"))
	if err != nil {
		t.Fatal(err)
	}
	tgz, err := chartutil.Save(ch, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, d := document(t, render(t, helm.Options{}, tgz), databaseTemplate, "StatefulSet")
	if want := filepath.ToSlash(tgz) + "/" + databaseTemplate; s.Name != want {
		t.Errorf("name %q, want %q", s.Name, want)
	}
	if got := field(t, d, liveness+".initialDelaySeconds"); got != 300.0 {
		t.Errorf("initialDelaySeconds %v", got)
	}
	if got := valuesTrace(s, d, liveness+".timeoutSeconds"); got != filepath.ToSlash(tgz)+"/values.yaml:1074 database.internal.livenessProbe.timeoutSeconds" {
		t.Errorf("values source %q", got)
	}
}

func TestSubchartsCRDsAndHooks(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{
		"Chart.yaml":  chartYAML + "dependencies:\n- name: cache\n  version: 1.0.0\n",
		"values.yaml": "cache:\n  image: redis:7\n",
		"crds/widget.yaml": `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
`,
		"templates/hook.yaml": `apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations:
    "helm.sh/hook": pre-install
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: migrate
        image: migrate:1
`,
		"templates/empty.yaml":            "{{- if false }}\nkind: Never\n{{- end }}\n",
		"charts/cache/Chart.yaml":         "apiVersion: v2\nname: cache\nversion: 1.0.0\n",
		"charts/cache/values.yaml":        "image: redis:6\nport: 6379\n",
		"charts/cache/templates/sts.yaml": "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: cache\nspec:\n  template:\n    spec:\n      containers:\n      - name: redis\n        image: {{ .Values.image }}\n        ports:\n        - containerPort: {{ .Values.port }}\n",
	})
	streams := render(t, helm.Options{}, dir)
	var names []string
	for _, s := range streams {
		names = append(names, strings.TrimPrefix(s.Name, filepath.ToSlash(dir)+"/"))
	}
	want := []string{"crds/widget.yaml", "charts/cache/templates/sts.yaml", "templates/hook.yaml"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("streams %v, want %v (CRDs first, hooks included, empty renders skipped)", names, want)
	}

	s, d := document(t, streams, "charts/cache/templates/sts.yaml", "StatefulSet")
	// The parent's values override the subchart's: the image comes from
	// the parent's values.yaml under the subchart's name.
	if got := field(t, d, "spec.template.spec.containers[0].image"); got != "redis:7" {
		t.Errorf("image %v", got)
	}
	parent, sub := filepath.ToSlash(filepath.Join(dir, "values.yaml")), filepath.ToSlash(filepath.Join(dir, "charts/cache/values.yaml"))
	if got := valuesTrace(s, d, "spec.template.spec.containers[0].image"); got != parent+":2 cache.image" {
		t.Errorf("image source %q", got)
	}
	if got := valuesTrace(s, d, "spec.template.spec.containers[0].ports[0].containerPort"); got != sub+":2 cache.port" {
		t.Errorf("port source %q", got)
	}
}

// Values provenance is claimed only where the rendered value is the
// value's own: not where a default replaced it, not where two values share
// a line.
func TestValuesProvenanceIsConservative(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{
		"Chart.yaml":  chartYAML,
		"values.yaml": "replicas: 0\nrepo: nginx\ntag: \"1.27\"\nport: 8080\nmetrics:\n  enabled: true\nname: web\n",
		"templates/deploy.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Values.name }}-app
spec:
  replicas: {{ .Values.replicas | default 2 }}
  template:
    spec:
      automountServiceAccountToken: true
      {{- if .Values.metrics.enabled }}
      enableServiceLinks: true
      {{- end }}
      containers:
      - name: web
        image: {{ .Values.repo }}:{{ .Values.tag }}
        ports:
        - containerPort: {{ .Values.port }}
`,
	})
	s, d := document(t, render(t, helm.Options{}, dir), "templates/deploy.yaml", "Deployment")
	if got := valuesTrace(s, d, "spec.replicas"); got != "" {
		t.Errorf("replicas rendered from the template's default 2, not from values (0); got source %q", got)
	}
	if got := valuesTrace(s, d, "spec.template.spec.containers[0].image"); got != "" {
		t.Errorf("image joins two values; got source %q", got)
	}
	if got := valuesTrace(s, d, "metadata.name"); got != "" {
		t.Errorf("the name is built around a value; got source %q", got)
	}
	// The if's "true" must not be claimed by the line its marker would
	// join (automountServiceAccountToken: true).
	for _, f := range []string{"automountServiceAccountToken", "enableServiceLinks"} {
		if got := valuesTrace(s, d, "spec.template.spec."+f); got != "" {
			t.Errorf("%s is written in the template; got source %q", f, got)
		}
	}
	if got := valuesTrace(s, d, "spec.template.spec.containers[0].ports[0].containerPort"); got != filepath.ToSlash(filepath.Join(dir, "values.yaml"))+":4 port" {
		t.Errorf("port source %q", got)
	}
}

// A scan renders charts on all cores with one Renderer.
func TestConcurrentRenders(t *testing.T) {
	chart := t.TempDir()
	testutil.WriteFiles(t, chart, probeChart)
	r, err := helm.New(helm.Options{Set: []string{"database.internal.livenessProbe.timeoutSeconds=4"}})
	if err != nil {
		t.Fatal(err)
	}
	const n = 4
	got := make(chan string, n)
	for range n {
		go func() {
			streams, errs := r.Render(source.Input{Path: chart, Kind: source.Chart})
			if len(errs) > 0 || len(streams) != 1 {
				got <- fmt.Sprint(errs)
				return
			}
			d := load.Parse(streams[0].Name, streams[0].Data).Documents[0]
			pos, _ := d.Locate(liveness + ".timeoutSeconds")
			got <- string(streams[0].Data) + streams[0].Trace(d, liveness+".timeoutSeconds", pos).Values.Text
		}()
	}
	first := <-got
	if !strings.HasSuffix(first, "--set database.internal.livenessProbe.timeoutSeconds=4") {
		t.Errorf("render: %s", first)
	}
	for range n - 1 {
		if g := <-got; g != first {
			t.Errorf("renders differ:\n%s\n%s", first, g)
		}
	}
}
