package helm

import (
	"path/filepath"
	"slices"
	"testing"

	"backfire.dev/backfire/internal/source"
	"backfire.dev/backfire/internal/testutil"
)

// A template's .Values references are listed by the stream Render names,
// a subchart's under its alias, with the alias as the parent sets it;
// $context.Values too, and not .Chart.Values.
func TestValuesRefs(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{
		"app/Chart.yaml":                      "apiVersion: v2\nname: app\nversion: 1.0.0\ndependencies:\n- name: db\n  version: 1.0.0\n  alias: store\n",
		"app/values.yaml":                     "a: 1\n",
		"app/templates/web.yaml":              "x: {{ toYaml .Values.web.resources }}\ny: {{ $.Values.a }} {{ .Values.web.resources }}\n",
		"app/templates/workers.yaml":          "{{ $context := . }}{{ range .Values.workers }}r: {{ toYaml (default $context.Values.resources .resources) }} {{ .Chart.Values.no }}\n{{ end }}\n",
		"app/templates/_helpers.tpl":          "{{ define \"x\" }}{{ .Values.hidden }}{{ end }}\n",
		"app/charts/db/Chart.yaml":            "apiVersion: v2\nname: db\nversion: 1.0.0\n",
		"app/charts/db/templates/ss.yaml":     "r: {{ toYaml .Values.resources }}\n",
		"app/charts/db/templates/nothing.txt": "none\n",
	})
	r, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	chart := filepath.Join(dir, "app")
	refs, err := r.ValuesRefs(source.Input{Path: chart, Kind: source.Chart})
	if err != nil {
		t.Fatal(err)
	}
	if got := refs[filepath.Join(chart, "templates", "web.yaml")]; !slices.Equal(got, []string{"web.resources", "a"}) {
		t.Errorf("web.yaml: %v", got)
	}
	// Through a variable that holds the root context, as a range keeps it.
	if got := refs[filepath.Join(chart, "templates", "workers.yaml")]; !slices.Equal(got, []string{"workers", "resources"}) {
		t.Errorf("workers.yaml: %v", got)
	}
	if got := refs[filepath.Join(chart, "charts", "store", "templates", "ss.yaml")]; !slices.Equal(got, []string{"store.resources"}) {
		t.Errorf("the subchart's template: %v (all: %v)", got, refs)
	}
	if len(refs) != 3 {
		t.Errorf("refs %v, want web.yaml, workers.yaml and ss.yaml only", refs)
	}
}
