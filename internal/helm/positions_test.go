package helm_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/releaseutil"

	"backfire.dev/backfire/internal/helm"
	"backfire.dev/backfire/internal/testutil"
)

// positionChart has a template that starts with blank lines and holds two
// documents, and probes printed by toYaml from a top-level values key and
// from a nested one.
var positionChart = map[string]string{
	"Chart.yaml": chartYAML,
	"values.yaml": `livenessProbe:
  exec:
    command: [pg_isready]
  initialDelaySeconds: 300
  periodSeconds: 10
  timeoutSeconds: 1
  failureThreshold: 3
db:
  probes:
    liveness:
      tcpSocket:
        port: 5432
      timeoutSeconds: 2
`,
	"templates/app.yaml": `{{/* blank lines before the first document */}}

{{ if true }}
---
# the config map comes first
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
data:
  a: "1"
{{ end }}
---


apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  template:
    spec:
      containers:
      - name: db
        image: postgres:17
        livenessProbe:
{{ toYaml .Values.livenessProbe | indent 10 }}
      - name: sidecar
        image: busybox:1.36
        livenessProbe:
          {{- toYaml .Values.db.probes.liveness | nindent 10 }}
{{- with .Values.db.probes }}
      - name: reader
        image: busybox:1.36
        livenessProbe:
          {{- toYaml .liveness | nindent 10 }}
{{- end }}
{{- with .Values.livenessProbe }}
      - name: writer
        image: busybox:1.36
        readinessProbe:
{{ toYaml . | indent 10 }}
{{- end }}
{{- range $i, $p := list .Values.livenessProbe }}
      - name: ranged
        image: busybox:1.36
        readinessProbe:
{{ toYaml . | indent 10 }}
{{- end }}
`,
}

// printedLine is the line, counted from the line after "# Source:", at
// which helm template prints text in the n-th document of a template's
// output (releaseutil.SplitManifests, printed by renderResources as
// "---\n# Source: name\n<doc>\n").
func printedLine(t *testing.T, out string, n int, text string) int {
	t.Helper()
	m := releaseutil.SplitManifests(out)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Sort(releaseutil.BySplitManifestsOrder(keys))
	printed := "---\n# Source: chart/templates/app.yaml\n" + m[keys[n]] + "\n"
	for i, l := range strings.Split(printed, "\n") {
		if strings.TrimSpace(l) == text {
			return i - 1 // the header is two lines
		}
	}
	t.Fatalf("document %d has no line %q", n, text)
	return 0
}

func TestPositionsAreHelmTemplates(t *testing.T) {
	chart := t.TempDir()
	testutil.WriteFiles(t, chart, positionChart)
	streams := render(t, helm.Options{}, chart)

	s, cm := document(t, streams, "templates/app.yaml", "ConfigMap")
	out := string(s.Data)
	if !strings.HasPrefix(out, "\n\n") {
		t.Fatalf("the template should render leading blank lines: %q", out[:10])
	}
	pos, _ := cm.Locate("data.a")
	if want := printedLine(t, out, 0, `a: "1"`); pos.Line != want || want != 7 {
		t.Errorf("ConfigMap data.a at line %d, helm template prints it at line %d (want 7)", pos.Line, want)
	}

	_, ss := document(t, streams, "templates/app.yaml", "StatefulSet")
	if ss.Index != 1 {
		t.Fatalf("the StatefulSet is document %d, want 1", ss.Index)
	}
	for path, text := range map[string]string{
		"metadata.name":              "name: db",
		liveness + ".timeoutSeconds": "timeoutSeconds: 1",
		"spec.template.spec.containers[1].livenessProbe.tcpSocket.port": "port: 5432",
	} {
		pos, exact := ss.Locate(path)
		if want := printedLine(t, out, 1, text); !exact || pos.Line != want {
			t.Errorf("%s at line %d, helm template prints it at line %d", path, pos.Line, want)
		}
	}
	if pos, _ := ss.Locate("metadata.name"); pos.Line != 4 {
		t.Errorf("metadata.name at line %d: the blank lines after --- are trimmed, want 4", pos.Line)
	}
}

func TestToYamlBlocksTraceToValues(t *testing.T) {
	chart := t.TempDir()
	testutil.WriteFiles(t, chart, positionChart)
	s, d := document(t, render(t, helm.Options{}, chart), "templates/app.yaml", "StatefulSet")
	values := filepath.ToSlash(filepath.Join(chart, "values.yaml"))
	sidecar := "spec.template.spec.containers[1].livenessProbe"
	for i, name := range []string{"db", "sidecar", "reader", "writer", "ranged"} {
		if got := field(t, d, fmt.Sprintf("spec.template.spec.containers[%d].name", i)); got != name {
			t.Fatalf("container %d is %v, want %s", i, got, name)
		}
	}
	if got := field(t, d, "spec.template.spec.containers[4].readinessProbe.timeoutSeconds"); got != 1.0 {
		t.Fatalf("the ranged probe rendered timeoutSeconds %v", got)
	}
	for path, want := range map[string]string{
		// A top-level key, its leaves and the whole block.
		liveness + ".timeoutSeconds":      values + ":6 livenessProbe.timeoutSeconds",
		liveness + ".initialDelaySeconds": values + ":4 livenessProbe.initialDelaySeconds",
		liveness:                          values + ":1 livenessProbe (4 keys)",
		// A nested key, two levels below it, and the whole block.
		sidecar + ".timeoutSeconds": values + ":13 db.probes.liveness.timeoutSeconds",
		sidecar + ".tcpSocket.port": values + ":12 db.probes.liveness.tcpSocket.port",
		sidecar:                     values + ":10 db.probes.liveness (2 keys)",
		// A list item has no values key of its own.
		liveness + ".exec.command[0]": "",
		// Inside {{ with .Values.x }}: toYaml .y and toYaml . are x.y and x.
		"spec.template.spec.containers[2].livenessProbe.timeoutSeconds": values + ":13 db.probes.liveness.timeoutSeconds",
		"spec.template.spec.containers[2].livenessProbe":                values + ":10 db.probes.liveness (2 keys)",
		"spec.template.spec.containers[3].readinessProbe":               values + ":1 livenessProbe (4 keys)",
		"spec.template.spec.containers[3].readinessProbe.periodSeconds": values + ":5 livenessProbe.periodSeconds",
		// Inside range the dot is an item, not a values key.
		"spec.template.spec.containers[4].readinessProbe": "",
	} {
		if got := valuesTrace(s, d, path); got != want {
			t.Errorf("%s: values source %q, want %q", path, got, want)
		}
	}

	// A --values file that overrides one key of the block: that key is
	// named in it, the others in values.yaml.
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{"prod.yaml": "livenessProbe:\n  timeoutSeconds: 5\n"})
	prod := filepath.Join(dir, "prod.yaml")
	s, d = document(t, render(t, helm.Options{ValueFiles: []string{prod}}, chart), "templates/app.yaml", "StatefulSet")
	if got, want := valuesTrace(s, d, liveness+".timeoutSeconds"), prod+":2 livenessProbe.timeoutSeconds"; got != want {
		t.Errorf("overridden timeoutSeconds: %q, want %q", got, want)
	}
	if got := valuesTrace(s, d, liveness); !strings.HasPrefix(got, prod+":2 livenessProbe.timeoutSeconds; "+values+":") {
		t.Errorf("probe set by two files: %q", got)
	}
}

// A toYaml block whose lines are not toYaml's output (a default merged
// in, a value printed differently) has no values source.
func TestToYamlBlockMustMatch(t *testing.T) {
	chart := t.TempDir()
	files := map[string]string{}
	for k, v := range positionChart {
		files[k] = v
	}
	files["templates/app.yaml"] = strings.Replace(files["templates/app.yaml"],
		"{{ toYaml .Values.livenessProbe | indent 10 }}", "{{ toYaml (merge (dict \"x\" 1) .Values.livenessProbe) | indent 10 }}", 1)
	testutil.WriteFiles(t, chart, files)
	s, d := document(t, render(t, helm.Options{}, chart), "templates/app.yaml", "StatefulSet")
	if got := valuesTrace(s, d, liveness+".timeoutSeconds"); got != "" {
		t.Errorf("a merged block was traced to %q", got)
	}
}

// Harbor writes resources with toYaml .Values.database.internal.resources
// | indent 10: with the seed's fix values, they trace to that file.
func TestHarborResourcesTraceToValues(t *testing.T) {
	chart := testutil.Corpus(t, "harbor-helm")
	fix := filepath.Join("testdata", "harbor-fix-values.yaml")
	s, d := document(t, render(t, helm.Options{ValueFiles: []string{fix}}, chart), databaseTemplate, "StatefulSet")
	res := "spec.template.spec.containers[0].resources"
	for path, want := range map[string]string{
		res + ".requests.memory": fix + ":25 database.internal.resources.requests.memory",
		res + ".limits.memory":   fix + ":27 database.internal.resources.limits.memory",
		res:                      fix + ":22 database.internal.resources (3 keys)",
	} {
		if got := valuesTrace(s, d, path); got != want {
			t.Errorf("%s: values source %q, want %q", path, got, want)
		}
	}
}

// The chart `helm create` writes (chartutil.Create) prints its probes with
// {{- with .Values.livenessProbe }} ... {{- toYaml . | nindent 12 }}: they
// trace to values.yaml.
func TestHelmCreateProbesTraceToValues(t *testing.T) {
	dir := t.TempDir()
	chart, err := chartutil.Create("web", dir)
	if err != nil {
		t.Fatal(err)
	}
	s, d := document(t, render(t, helm.Options{}, chart), "templates/deployment.yaml", "Deployment")
	values := filepath.ToSlash(filepath.Join(chart, "values.yaml"))
	data, err := os.ReadFile(values)
	if err != nil {
		t.Fatal(err)
	}
	probeLine := lineOf(data, "livenessProbe:")
	if probeLine == 0 {
		t.Fatal("the scaffold's values have no livenessProbe")
	}
	// Both keys sit under httpGet: the deepest common parent is named.
	if got, want := valuesTrace(s, d, liveness), fmt.Sprintf("%s:%d livenessProbe.httpGet (2 keys)", values, probeLine+1); got != want {
		t.Errorf("probe source %q, want %q", got, want)
	}
	if got, want := valuesTrace(s, d, liveness+".httpGet.path"), fmt.Sprintf("%s:%d livenessProbe.httpGet.path", values, probeLine+2); got != want {
		t.Errorf("path source %q, want %q", got, want)
	}
}
