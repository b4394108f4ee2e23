package helm_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/helm"
	"backfire.dev/backfire/internal/source"
)

func writeChart(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const tinyChart = "apiVersion: v2\nname: c\nversion: 0.1.0\n"

// A template linked to a file outside the path the user named is not
// rendered: Helm's loader follows the link (and only logs it), so the
// file, whatever it is, would end up in the objects and the reports.
// Inside the named path, links are followed as Helm follows them.
func TestChartLinksLeavingTheNamedPathAreRefused(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret.txt")
	writeChart(t, dir, map[string]string{
		"secret.txt":                  "password: hunter2\n",
		"repo/common/cm.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared}\n",
		"repo/chart/Chart.yaml":       tinyChart,
		"repo/chart/templates/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
	})
	chart := filepath.Join(dir, "repo", "chart")
	if err := os.Symlink("../../common/cm.yaml", filepath.Join(chart, "templates", "shared.yaml")); err != nil {
		t.Fatal(err)
	}
	r, err := helm.New(helm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Named through the repository, the link stays inside what was named.
	if streams, errs := r.Render(source.Input{Path: chart, Kind: source.Chart, Root: filepath.Join(dir, "repo")}); len(errs) > 0 || len(streams) != 2 {
		t.Fatalf("inside the repository: %d streams, errors %v", len(streams), errs)
	}
	// Named alone, it leaves the chart.
	_, errs := r.Render(source.Input{Path: chart, Kind: source.Chart})
	if len(errs) != 1 || !strings.Contains(errs[0].Message, "templates/shared.yaml is a symbolic link to "+filepath.Join(dir, "repo", "common", "cm.yaml")+", outside "+chart) {
		t.Errorf("chart alone: %v", errs)
	}
	if err := os.Symlink(secret, filepath.Join(chart, "templates", "env.yaml")); err != nil {
		t.Fatal(err)
	}
	streams, errs := r.Render(source.Input{Path: chart, Kind: source.Chart, Root: filepath.Join(dir, "repo")})
	if len(streams) != 0 || len(errs) != 1 || !strings.Contains(errs[0].Message, "templates/env.yaml is a symbolic link to "+secret) {
		t.Errorf("link to a secret: %d streams, errors %v", len(streams), errs)
	}
	// A file .helmignore leaves out is not loaded, so not looked at.
	writeChart(t, chart, map[string]string{".helmignore": "templates/env.yaml\n"})
	if streams, errs := r.Render(source.Input{Path: chart, Kind: source.Chart, Root: filepath.Join(dir, "repo")}); len(errs) > 0 || len(streams) != 2 {
		t.Errorf("ignored link: %d streams, errors %v", len(streams), errs)
	}
}

// A chart whose output is larger than the bound is an error at the chart.
func TestChartOutputIsBounded(t *testing.T) {
	chart := t.TempDir()
	writeChart(t, chart, map[string]string{
		"Chart.yaml":          tinyChart,
		"templates/many.yaml": "{{- range until 2000 }}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c{{ . }}}\n{{- end }}\n",
	})
	r, err := helm.New(helm.Options{MaxOutput: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	streams, errs := r.Render(source.Input{Path: chart, Kind: source.Chart})
	if len(streams) != 0 || len(errs) != 1 || !strings.Contains(errs[0].Message, "more than the 64 KiB a scan reads from one input; not scanned (raise --max-file-size)") {
		t.Errorf("%d streams, errors %v", len(streams), errs)
	}
	big, _ := helm.New(helm.Options{})
	if streams, errs := big.Render(source.Input{Path: chart, Kind: source.Chart}); len(errs) > 0 || len(streams) != 1 {
		t.Errorf("default bound: %d streams, errors %v", len(streams), errs)
	}
}

// Values larger than the bound are refused before the templates run: a
// template may write a value any number of times, and the bound on what
// it rendered is checked only once it is rendered. A --values file past
// the bound is not read whole.
func TestChartValuesAreBoundedBeforeRendering(t *testing.T) {
	chart := t.TempDir()
	writeChart(t, chart, map[string]string{
		"Chart.yaml":         tinyChart,
		"values.yaml":        "big: " + strings.Repeat("x", 100<<10) + "\n",
		"templates/cm.yaml":  "{{- range until 100000 }}{{ $.Values.big }}{{ end }}\n",
		"templates/ran.yaml": "{{ fail \"the templates ran\" }}\n",
	})
	r, err := helm.New(helm.Options{MaxOutput: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	streams, errs := r.Render(source.Input{Path: chart, Kind: source.Chart})
	if len(streams) != 0 || len(errs) != 1 || errs[0].File != filepath.ToSlash(filepath.Join(chart, "Chart.yaml")) ||
		!strings.Contains(errs[0].Message, `chart "c": its values hold more than the 64 KiB a scan reads from one input; not rendered (raise --max-file-size)`) {
		t.Errorf("%d streams, errors %v", len(streams), errs)
	}
	big := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(big, []byte("big: "+strings.Repeat("x", 100<<10)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := helm.New(helm.Options{MaxOutput: 64 << 10, ValueFiles: []string{big}}); err == nil || !strings.Contains(err.Error(), "--values "+big+": larger than the 64 KiB a scan reads from one input") {
		t.Errorf("--values past the bound: %v", err)
	}
}

// A template that asks for gigabytes (`repeat`, `seq`) or billions of
// iterations (`range until`, nested ranges multiplied) is refused before
// the engine runs, at the call's line: Helm's engine writes a template
// into one string and cannot be stopped part way. Counts written in the
// template and counts from the chart's values are both read; the other
// templates of the chart are not rendered either, and nothing else is
// refused.
func TestTemplateAmplificationIsBoundedBeforeRendering(t *testing.T) {
	for _, c := range []struct {
		name, template, values, want string
		line                         int
	}{
		{"repeat", "a: 1\n{{ repeat 2000000000 \"xx\" }}\n", "", `{{ repeat 2000000000 "xx" }} writes about 3814 MiB`, 2},
		{"range until from values", "{{- range $i := until (int .Values.shards) }}\n- {{ $i }}\n{{- end }}\n", "shards: 100000000\n", "{{ range $i := until (int .Values.shards) }} runs 1e+08 times", 1},
		{"nested ranges", "{{- range until 5000 }}\n{{- range until 5000 }}x{{ end }}\n{{- end }}\n", "", "{{ range until 5000 }} runs 2.5e+07 times (nested ranges multiplied)", 2},
		{"range over an integer", "\n\n{{ range 100000000 }}x{{ end }}\n", "", "{{ range 100000000 }} runs 1e+08 times", 3},
		{"piped repeat from values", "{{ .Values.pad | repeat 3000000000 }}\n", "pad: ab\n", "{{ repeat 3000000000 }} writes about 5722 MiB", 1},
		{"seq", "{{ seq 1000000000 }}\n", "", "{{ seq 1000000000 }} writes about 1907 MiB", 1},
	} {
		chart := t.TempDir()
		files := map[string]string{
			"Chart.yaml":       tinyChart,
			"templates/t.yaml": c.template,
		}
		if c.values != "" {
			files["values.yaml"] = c.values
		}
		writeChart(t, chart, files)
		r, err := helm.New(helm.Options{})
		if err != nil {
			t.Fatal(err)
		}
		streams, errs := r.Render(source.Input{Path: chart, Kind: source.Chart})
		if len(streams) != 0 || len(errs) != 1 || !strings.Contains(errs[0].Message, c.want) ||
			errs[0].File != filepath.ToSlash(filepath.Join(chart, "templates/t.yaml")) || errs[0].Line != c.line {
			t.Errorf("%s: %d streams, errors %+v", c.name, len(streams), errs)
		}
	}
	// A chart that ranges over its replicas renders as before.
	chart := t.TempDir()
	writeChart(t, chart, map[string]string{
		"Chart.yaml":       tinyChart,
		"values.yaml":      "replicas: 3\n",
		"templates/t.yaml": "{{- range $i := until (int .Values.replicas) }}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c{{ $i }}}\ndata: {pad: {{ repeat 100 \"x\" | quote }}}\n{{- end }}\n",
	})
	r, _ := helm.New(helm.Options{})
	if streams, errs := r.Render(source.Input{Path: chart, Kind: source.Chart}); len(errs) > 0 || len(streams) != 1 || len(streams[0].Documents) != 3 {
		t.Errorf("a chart ranging over its replicas: %d streams, errors %v", len(streams), errs)
	}
}
