package fixplan

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/testutil"
)

// A chart whose values.yaml repeats a key, as Mastodon's repeats
// redis.replica: Helm reads it (the last occurrence is in effect), so fix
// must too, rather than refuse the whole chart.
const repeatedTemplate = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: db
spec:
  replicas: {{ .Values.redis.replica.count }}
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      containers:
        - name: db
          image: postgres:16
          livenessProbe:
            {{- toYaml .Values.livenessProbe | nindent 12 }}
          resources:
            {{- toYaml .Values.resources | nindent 12 }}
`

const psqlProbe = `livenessProbe:
  exec:
    command: ["sh", "-c", "psql -c 'SELECT 1'"]
  periodSeconds: 10
  failureThreshold: 3
`

const repeatedRedis = "redis:\n  replica:\n    count: 1\n  replica:\n    count: 2\n"

// fixRepeated fixes the chart with values, checks that a second run has
// nothing left to do, and returns the values file written and its notes.
func fixRepeated(t *testing.T, values string) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	t.Chdir(dir)
	testutil.WriteFiles(t, "dup", map[string]string{
		"Chart.yaml":        "apiVersion: v2\nname: dup\nversion: 0.1.0\n",
		"values.yaml":       values,
		"templates/db.yaml": repeatedTemplate,
	})
	o := chartOptions("dup", "")
	p, err := Plan(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Errors) > 0 {
		t.Fatalf("input errors: %v", p.Errors)
	}
	// BF101's readiness probe has no values key in this chart: it is
	// left, with its reason, whatever the repeated key.
	for _, r := range []string{"BF102", "BF201"} {
		if !slices.ContainsFunc(p.Fixed, func(f finding.Finding) bool { return f.Rule == r }) {
			t.Errorf("%s not fixed", r)
		}
	}
	var notes []string
	for _, f := range p.Files {
		if f.Path != filepath.Join("dup", "values.yaml") {
			t.Errorf("%s written; want only values.yaml", f.Path)
		}
		notes = append(notes, f.Notes...)
	}
	if errs := p.Write(); len(errs) > 0 {
		t.Fatal(errs)
	}
	again, err := Plan(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Files) > 0 || len(again.Fixed) > 0 || len(again.Left) > len(p.Left) {
		t.Errorf("second run: %d files, %d fixed, %d left (first %d left)", len(again.Files), len(again.Fixed), len(again.Left), len(p.Left))
	}
	got, err := os.ReadFile(filepath.Join("dup", "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(got), notes
}

// The repeated key is elsewhere: the fixes go through, and it stays.
func TestChartRepeatedValuesKeyElsewhere(t *testing.T) {
	got, _ := fixRepeated(t, repeatedRedis+psqlProbe+"resources: {}\n")
	if !strings.HasPrefix(got, repeatedRedis) {
		t.Errorf("the repeated key changed:\n%s", got)
	}
}

// The probe itself is repeated: the fix goes to the last occurrence, the
// one Helm renders, and the first stays as it was.
func TestChartRepeatedValuesKeyEdited(t *testing.T) {
	first := "livenessProbe:\n  httpGet:\n    path: /unused\n    port: 80\n"
	got, notes := fixRepeated(t, first+psqlProbe+"resources: {}\n"+repeatedRedis)
	if !strings.HasPrefix(got, first+"livenessProbe:\n") || !strings.Contains(got, "livenessProbe:\n  tcpSocket:") {
		t.Errorf("values.yaml:\n%s", got)
	}
	if !strings.Contains(strings.Join(notes, "\n"), "livenessProbe is repeated (line 1 and line 5)") {
		t.Errorf("notes %q", notes)
	}
}
