package kustomize_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/source"
	"backfire.dev/backfire/internal/testutil"
)

// prodOverlay patches rollouts-demo's canary Rollout every way a
// kustomization can: a patchesStrategicMerge file and an inline one, a
// patchesJson6902 file, a patches path and an inline JSON 6902 patch.
// (Kustomize has no schema for a Rollout, so a strategic merge patch of
// its containers would replace the list; the probe is added by JSON 6902.)
var prodOverlay = map[string]string{
	"kustomization.yaml": `resources:
- CANARY
namePrefix: prod-
patchesStrategicMerge:
- replicas.yaml
- |-
  apiVersion: argoproj.io/v1alpha1
  kind: Rollout
  metadata:
    name: canary-demo
  spec:
    revisionHistoryLimit: 3
patchesJson6902:
- target: {group: argoproj.io, version: v1alpha1, kind: Rollout, name: canary-demo}
  path: steps.yaml
patches:
- path: probe.yaml
  target: {kind: Rollout, name: canary-.*}
- target:
    kind: Rollout
  patch: |-
    - op: add
      path: /spec/rollbackWindow
      value:
        revisions: 2
`,
	"replicas.yaml": `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: canary-demo
spec:
  replicas: 20
`,
	"steps.yaml": `- op: replace
  path: /spec/strategy/canary/steps/0/setWeight
  value: 50
`,
	"probe.yaml": `- op: add
  path: /spec/template/spec/containers/0/livenessProbe
  value:
    httpGet: {path: /, port: 8080}
    timeoutSeconds: 1
`,
}

// builtRollout builds dir and returns the Rollout's stream and document.
func builtRollout(t testing.TB, dir string) (source.Stream, *load.Document) {
	t.Helper()
	for _, s := range build(t, dir) {
		f := load.ParseFrom(s.Name, s.Data, s.Line)
		if len(f.Documents) == 1 && f.Documents[0].Kind == "Rollout" {
			return s, f.Documents[0]
		}
	}
	t.Fatalf("%s built no Rollout", dir)
	return source.Stream{}, nil
}

func TestPatchedFieldsPointAtThePatch(t *testing.T) {
	canary := testutil.Corpus(t, "rollouts-demo", "examples", "canary")
	abs, err := filepath.Abs(canary)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rel, err := filepath.Rel(dir, abs) // kustomize takes no absolute root
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for k, v := range prodOverlay {
		files[k] = strings.Replace(v, "CANARY", filepath.ToSlash(rel), 1)
	}
	testutil.WriteFiles(t, dir, files)
	s, d := builtRollout(t, dir)

	at := func(name string) string { return filepath.Join(dir, name) }
	base := filepath.Join(canary, "canary-rollout.yaml")

	// The upstream overlay itself patches nothing: its fields are in its
	// resource file.
	us, ud := builtRollout(t, canary)
	if pos, _ := ud.Locate("spec.replicas"); us.Trace(ud, "spec.replicas", pos) != (load.Trace{File: base, Line: 6, Column: 3}) {
		t.Errorf("rollouts-demo canary: spec.replicas traced to %+v, want %s:6:3", us.Trace(ud, "spec.replicas", pos), base)
	}
	const c0 = "spec.template.spec.containers[0]"
	for _, tc := range []struct {
		path, file string
		line, col  int
		why        string
	}{
		{"spec.replicas", at("replicas.yaml"), 6, 3, "patchesStrategicMerge file"},
		{"spec.revisionHistoryLimit", at("kustomization.yaml"), 12, 5, "inline patchesStrategicMerge"},
		{"spec.strategy.canary.steps[0].setWeight", at("steps.yaml"), 3, 3, "patchesJson6902 file: its value"},
		{c0 + ".livenessProbe", at("probe.yaml"), 3, 3, "patches path, JSON 6902: its value"},
		{c0 + ".livenessProbe.timeoutSeconds", at("probe.yaml"), 5, 5, "inside the value"},
		{c0 + ".livenessProbe.periodSeconds", at("probe.yaml"), 3, 3, "defaulted: the probe it hangs from"},
		{"spec.rollbackWindow", at("kustomization.yaml"), 24, 7, "inline JSON 6902 add: its value"},
		{"spec.rollbackWindow.revisions", at("kustomization.yaml"), 25, 9, "inside the inline value"},
		// Left alone by every patch: the base's resource file.
		{c0 + ".resources.requests.cpu", base, 27, 13, "unpatched"},
		{c0 + ".image", base, 18, 9, "unpatched"},
		{"spec.strategy.canary.steps[1]", base, 33, 9, "unpatched step"},
		// Neither the base nor a patch: the build output.
		{"metadata.name", "", 0, 0, "namePrefix is a transformer, not a patch"},
		{c0, "", 0, 0, "the container as a whole: base and patch"},
	} {
		pos, _ := d.Locate(tc.path)
		tr := s.Trace(d, tc.path, pos)
		if tr.File != tc.file || tr.Line != tc.line || tr.File != "" && tr.Column != tc.col {
			t.Errorf("%s (%s): traced to %s:%d:%d, want %s:%d:%d", tc.path, tc.why, tr.File, tr.Line, tr.Column, tc.file, tc.line, tc.col)
		}
	}
}

// A patch that targets another object, or writes a value the build does
// not have (a later patch changed it again), is not where the field was
// set.
func TestPatchMustTargetTheObjectAndHoldItsValue(t *testing.T) {
	root := t.TempDir()
	testutil.WriteFiles(t, root, traceFiles)
	testutil.WriteFiles(t, root, map[string]string{
		"twice/kustomization.yaml": `resources:
- ../base
patches:
- target: {kind: Service}
  patch: |-
    - op: replace
      path: /spec/replicas
      value: 7
- target: {kind: Deployment}
  patch: |-
    - op: replace
      path: /spec/replicas
      value: 2
- target: {kind: Deployment, name: db}
  patch: |-
    - op: replace
      path: /spec/replicas
      value: 4
`,
	})
	var s source.Stream
	var d *load.Document
	for _, st := range build(t, filepath.Join(root, "twice")) {
		f := load.Parse(st.Name, st.Data)
		if len(f.Documents) == 1 && f.Documents[0].Kind == "Deployment" {
			s, d = st, f.Documents[0]
		}
	}
	pos, _ := d.Locate("spec.replicas")
	tr := s.Trace(d, "spec.replicas", pos)
	if want := filepath.Join(root, "twice", "kustomization.yaml"); tr.File != want || tr.Line != 18 {
		t.Errorf("replicas traced to %s:%d, want the last patch's value at %s:18", tr.File, tr.Line, want)
	}
}

// A strategic merge patch of a Deployment's container (kustomize knows
// its schema: containers merge by name) points at the patch for the
// fields it sets, and leaves the container's other fields in the base.
func TestStrategicMergeOfAContainer(t *testing.T) {
	root := t.TempDir()
	testutil.WriteFiles(t, root, traceFiles)
	testutil.WriteFiles(t, root, map[string]string{
		"deep/kustomization.yaml": "resources:\n- ../base\npatches:\n- path: probe.yaml\n",
		"deep/probe.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: db
spec:
  template:
    spec:
      containers:
      - name: sidecar
        image: busybox:1.36
      - name: postgres
        livenessProbe:
          timeoutSeconds: 5
        resources:
          requests:
            memory: 1Gi
`,
	})
	var s source.Stream
	var d *load.Document
	for _, st := range build(t, filepath.Join(root, "deep")) {
		f := load.Parse(st.Name, st.Data)
		if len(f.Documents) == 1 && f.Documents[0].Kind == "Deployment" {
			s, d = st, f.Documents[0]
		}
	}
	patchFile, base := filepath.Join(root, "deep", "probe.yaml"), filepath.Join(root, "base", "app.yaml")
	var names []string
	pg := -1
	for i := 0; i < 2; i++ {
		pos, _ := d.Locate(fmt.Sprintf("spec.template.spec.containers[%d].name", i))
		line := strings.Split(string(s.Data), "\n")[pos.Line-1]
		names = append(names, strings.TrimSpace(line))
		if strings.Contains(line, "postgres") {
			pg = i
		}
	}
	if pg < 0 {
		t.Fatalf("no postgres container: %v", names)
	}
	c := fmt.Sprintf("spec.template.spec.containers[%d]", pg)
	for _, tc := range []struct {
		path, file string
		line       int
	}{
		{c + ".livenessProbe.timeoutSeconds", patchFile, 13},
		{c + ".resources.requests.memory", patchFile, 16},
		{c + ".livenessProbe", patchFile, 12}, // the patch wrote part of it
		{c + ".livenessProbe.periodSeconds", base, 24},
		{c + ".image", base, 19},
		{fmt.Sprintf("spec.template.spec.containers[%d].image", 1-pg), patchFile, 10},
	} {
		pos, _ := d.Locate(tc.path)
		tr := s.Trace(d, tc.path, pos)
		if tr.File != tc.file || tr.Line != tc.line {
			t.Errorf("%s: traced to %s:%d, want %s:%d", tc.path, tr.File, tr.Line, tc.file, tc.line)
		}
	}
}

// BenchmarkPatchTrace traces every field of the patched rollouts-demo
// Rollout: the patches are read once per build, each trace walks them.
//
//	go test ./internal/kustomize -run '^$' -bench PatchTrace -benchmem
func BenchmarkPatchTrace(b *testing.B) {
	canary, err := filepath.Abs(filepath.Join("..", "..", "testdata", "corpus", "rollouts-demo", "examples", "canary"))
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	rel, err := filepath.Rel(dir, canary)
	if err != nil {
		b.Fatal(err)
	}
	files := map[string]string{}
	for k, v := range prodOverlay {
		files[k] = strings.Replace(v, "CANARY", filepath.ToSlash(rel), 1)
	}
	testutil.WriteFiles(b, dir, files)
	s, d := builtRollout(b, dir)
	paths := []string{"spec.replicas", "spec.revisionHistoryLimit", "spec.strategy.canary.steps[0].setWeight",
		"spec.template.spec.containers[0].livenessProbe.timeoutSeconds", "spec.template.spec.containers[0].image", "metadata.name"}
	b.ReportAllocs()
	for b.Loop() {
		for _, p := range paths {
			pos, _ := d.Locate(p)
			s.Trace(d, p, pos)
		}
	}
}
