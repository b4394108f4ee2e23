package kustomize_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/kustomize"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/source"
	"backfire.dev/backfire/internal/testutil"
)

func build(t testing.TB, dir string) []source.Stream {
	t.Helper()
	streams, errs := kustomize.New().Render(source.Input{Path: dir, Kind: source.Kustomization})
	if len(errs) > 0 {
		t.Fatalf("build %s: %v", dir, errs)
	}
	return streams
}

func buildErrors(t *testing.T, dir string) []load.Error {
	t.Helper()
	streams, errs := kustomize.New().Render(source.Input{Path: dir, Kind: source.Kustomization})
	if len(errs) == 0 {
		t.Fatalf("build %s: no error, %d streams", dir, len(streams))
	}
	return errs
}

// output joins the streams back into one YAML stream, as kubectl prints it.
func output(streams []source.Stream) string {
	var b strings.Builder
	for i, s := range streams {
		if i > 0 {
			b.WriteString("---\n")
		}
		b.WriteString(strings.TrimLeft(string(s.Data), "\n"))
	}
	return b.String()
}

// The overlays of argoproj/rollouts-demo, and what each holds.
var overlays = map[string]struct {
	kinds     string // in output order
	namespace string // set by the overlay on every namespaced object
}{
	"analysis":           {kinds: "Service Service AnalysisTemplate Rollout Ingress Ingress"},
	"base":               {kinds: "Service Service Ingress Ingress"},
	"blue-green":         {kinds: "Service Service Rollout Ingress Ingress"},
	"canary":             {kinds: "Service Service Rollout Ingress Ingress"},
	"experiment":         {kinds: "Service Service AnalysisTemplate Experiment"},
	"istio":              {kinds: "Namespace Service Service AnalysisTemplate Rollout Gateway VirtualService", namespace: "rollouts-demo-istio"},
	"istio-subset":       {kinds: "Namespace Service AnalysisTemplate Rollout DestinationRule Gateway VirtualService", namespace: "rollouts-demo-istio"},
	"rollout-experiment": {kinds: "Service Service AnalysisTemplate Rollout Ingress"},
}

func TestRolloutsDemoOverlays(t *testing.T) {
	examples := testutil.Corpus(t, "rollouts-demo", "examples")
	dirs, _ := filepath.Glob(filepath.Join(examples, "*", "kustomization.yaml"))
	if len(dirs) != len(overlays)+1 {
		t.Errorf("%d overlays in the corpus, the test knows %d and preview-testing", len(dirs), len(overlays))
	}
	for name, want := range overlays {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(examples, name)
			streams := build(t, dir)

			// testdata/kubectl/<name>.yaml is `kubectl kustomize` output
			// (kubectl v1.32, kustomize v5.5.0) for the same directory.
			golden, err := os.ReadFile(filepath.Join("testdata", "kubectl", name+".yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if got := output(streams); got != string(golden) {
				t.Errorf("output differs from kubectl kustomize:\n%s", got)
			}

			var kinds []string
			for _, o := range decode(t, streams) {
				kinds = append(kinds, o.Kind)
				if o.Kind != "Namespace" && o.Namespace != want.namespace {
					t.Errorf("%s is in namespace %q, want %q", o.Ref, o.Namespace, want.namespace)
				}
				if o.Kind == "Rollout" || o.Kind == "AnalysisTemplate" {
					if o.Typed == nil {
						t.Errorf("%s was not decoded into the Argo Rollouts type", o.Ref)
					}
					if !strings.Contains(o.Doc.Origin.Text, "built by kustomization "+dir+" from "+examples) {
						t.Errorf("%s origin %q does not name the overlay and the resource file", o.Ref, o.Doc.Origin.Text)
					}
				}
			}
			if got := strings.Join(kinds, " "); got != want.kinds {
				t.Errorf("objects %s, want %s", got, want.kinds)
			}
		})
	}
}

// decode parses and decodes the streams as a scan does.
func decode(t *testing.T, streams []source.Stream) []*object.Object {
	t.Helper()
	var objs []*object.Object
	for _, s := range streams {
		f := load.ParseFrom(s.Name, s.Data, s.Line)
		if len(f.Errors) > 0 {
			t.Fatalf("%s: %v", s.Name, f.Errors)
		}
		for _, d := range f.Documents {
			d.Origin = s.Origin
			o, err := object.Decode(d)
			if err != nil {
				t.Fatalf("%s: %v", s.Name, err)
			}
			objs = append(objs, o)
		}
	}
	return objs
}

// preview-testing takes a resource from a sibling directory, which
// kustomize's default load restrictor refuses; kubectl kustomize fails the
// same way.
func TestPreviewTestingIsRefusedLikeKubectl(t *testing.T) {
	dir := testutil.Corpus(t, "rollouts-demo", "examples", "preview-testing")
	e := buildErrors(t, dir)[0]
	if e.File != filepath.Join(dir, "kustomization.yaml") || e.Line != 6 {
		t.Errorf("error at %s:%d, want the kustomization's line 6 (- ../experiment/http-benchmark.yaml)", e.File, e.Line)
	}
	if !strings.Contains(e.Message, "http-benchmark.yaml") || !strings.Contains(e.Message, "is not in or below") {
		t.Errorf("message %q should name the refused file and the restriction", e.Message)
	}
}

func TestBrokenOverlays(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		line  int // of the failing entry in the kustomization
		want  string
	}{
		{"missing resource", map[string]string{"kustomization.yaml": "resources:\n- service.yaml\n- deployment.yaml\n", "service.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n"}, 3, "deployment.yaml"},
		{"invalid kustomization", map[string]string{"kustomization.yaml": "resources: [\n"}, 0, "kustomize build failed"},
		{"unknown field", map[string]string{"kustomization.yaml": "resourcez:\n- a.yaml\n"}, 0, "resourcez"},
		{"malformed resource", map[string]string{"kustomization.yaml": "resources:\n- a.yaml\n", "a.yaml": "kind: [\n"}, 2, "a.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			testutil.WriteFiles(t, dir, tc.files)
			e := buildErrors(t, dir)[0]
			if e.File != filepath.Join(dir, "kustomization.yaml") || e.Line != tc.line || !strings.Contains(e.Message, tc.want) {
				t.Errorf("got %s:%d: %s\nwant the kustomization file, line %d and a message with %q", e.File, e.Line, e.Message, tc.line, tc.want)
			}
		})
	}
}

// A base with a Deployment and a Service in one file, and overlays that
// change some fields and leave others.
var traceFiles = map[string]string{
	"base/kustomization.yaml": "resources:\n- app.yaml\n",
	"base/app.yaml": `apiVersion: v1
kind: Service
metadata:
  name: db
spec:
  ports:
  - port: 5432
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: db
spec:
  replicas: 1
  template:
    spec:
      containers:
      - name: postgres
        image: postgres:17
        livenessProbe:
          exec:
            command: ["pg_isready"]
          timeoutSeconds: 1
          periodSeconds: 10
`,
	// prod renames, moves and scales, and leaves the probe alone.
	"prod/kustomization.yaml": `resources:
- ../base
namespace: prod
namePrefix: prod-
patches:
- target:
    kind: Deployment
  patch: |
    - op: replace
      path: /spec/replicas
      value: 3
`,
	// slow rewrites the probe's period.
	"slow/kustomization.yaml": `resources:
- ../base
patches:
- target:
    kind: Deployment
  patch: |
    - op: replace
      path: /spec/template/spec/containers/0/livenessProbe/periodSeconds
      value: 30
`,
}

func TestTraceToResourceFile(t *testing.T) {
	root := t.TempDir()
	testutil.WriteFiles(t, root, traceFiles)
	base := filepath.Join(root, "base", "app.yaml")
	const probe = "spec.template.spec.containers[0].livenessProbe"

	deployment := func(dir string) (source.Stream, *load.Document) {
		for _, s := range build(t, filepath.Join(root, dir)) {
			f := load.ParseFrom(s.Name, s.Data, s.Line)
			if len(f.Documents) == 1 && f.Documents[0].Kind == "Deployment" {
				return s, f.Documents[0]
			}
		}
		t.Fatalf("%s built no Deployment", dir)
		return source.Stream{}, nil
	}
	trace := func(s source.Stream, d *load.Document, path string) load.Trace {
		pos, _ := d.Locate(path)
		return s.Trace(d, path, pos)
	}

	s, d := deployment("prod")
	if s.Name != filepath.Join(root, "prod") {
		t.Errorf("stream name %q, want the overlay", s.Name)
	}
	if want := "built by kustomization " + filepath.Join(root, "prod") + " from " + base + "; the build changed metadata.name, metadata.namespace, spec.replicas"; s.Origin.Text != want {
		t.Errorf("origin\n%q\nwant\n%q", s.Origin.Text, want)
	}
	// Positions in the stream are lines of the whole build output: the
	// Service comes first (8 lines, with its namespace, and "---").
	if d.Line != 10 {
		t.Errorf("Deployment starts at line %d of the build output, want 10", d.Line)
	}
	prodK := filepath.Join(root, "prod", "kustomization.yaml")
	for _, tc := range []struct {
		path string
		file string // "": stays in the build output
		line int
	}{
		{probe + ".timeoutSeconds", base, 23},
		{probe, base, 20},
		{"spec.template.spec.containers[0].resources", base, 18}, // absent: the unchanged container
		{"spec.replicas", prodK, 11},                             // the inline patch's value
		{"metadata.name", "", 0},                                 // namePrefix is no patch
		{"", "", 0},                                              // the object as a whole was changed
	} {
		tr := trace(s, d, tc.path)
		if tr.File != tc.file || tr.Line != tc.line {
			t.Errorf("%s: traced to %s:%d, want %s:%d", tc.path, tr.File, tr.Line, tc.file, tc.line)
		}
	}

	s, d = deployment("slow")
	// The probe as a whole was not written by the patch (it set one field).
	if tr := trace(s, d, probe); tr.File != "" {
		t.Errorf("the patched probe was traced to %s:%d", tr.File, tr.Line)
	}
	if tr := trace(s, d, probe+".timeoutSeconds"); tr.File != base || tr.Line != 23 {
		t.Errorf("the unpatched timeout was traced to %s:%d, want %s:23", tr.File, tr.Line, base)
	}
	slowK := filepath.Join(root, "slow", "kustomization.yaml")
	if tr := trace(s, d, probe+".periodSeconds"); tr.File != slowK || tr.Line != 9 || tr.Column != 7 {
		t.Errorf("the patched period was traced to %s:%d:%d, want %s:9:7 (value: 30)", tr.File, tr.Line, tr.Column, slowK)
	}

	// Built from the base itself, nothing changed: the whole object traces.
	s, d = deployment("base")
	if tr := trace(s, d, ""); tr.File != base || tr.Line != 9 {
		t.Errorf("unchanged object traced to %s:%d, want %s:9", tr.File, tr.Line, base)
	}
	if strings.Contains(s.Origin.Text, "changed") {
		t.Errorf("origin %q claims a change", s.Origin.Text)
	}
}

// Origin annotations are how objects are traced; they must not reach the
// scanned objects, and the user's own buildMetadata is kept.
func TestOriginAnnotationsDoNotLeak(t *testing.T) {
	root := t.TempDir()
	testutil.WriteFiles(t, root, traceFiles)
	testutil.WriteFiles(t, root, map[string]string{"base/kustomization.yaml": "resources:\n- app.yaml\nbuildMetadata: [transformerAnnotations]\ncommonAnnotations:\n  team: db\n"})
	for _, s := range build(t, filepath.Join(root, "base")) {
		if strings.Contains(string(s.Data), "config.kubernetes.io/origin") {
			t.Errorf("origin annotation leaked into %s", s.Data)
		}
		if !strings.Contains(string(s.Data), "alpha.config.kubernetes.io/transformations") {
			t.Errorf("the kustomization asked for transformer annotations:\n%s", s.Data)
		}
		if !strings.Contains(s.Origin.Text, " from ") {
			t.Errorf("origin %q names no resource file", s.Origin.Text)
		}
	}
}

// A directory given relative to the working directory gets messages with
// relative paths, as the user wrote them, not kustomize's absolute ones.
func TestErrorPathsAreRelative(t *testing.T) {
	root := t.TempDir()
	testutil.WriteFiles(t, root, map[string]string{
		"overlay/kustomization.yaml": "resources:\n- ../common/app.yaml\n",
		"common/app.yaml":            "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n",
	})
	t.Chdir(root)
	e := buildErrors(t, "overlay")[0]
	if e.File != filepath.Join("overlay", "kustomization.yaml") || e.Line != 2 {
		t.Errorf("error at %s:%d, want overlay/kustomization.yaml:2", e.File, e.Line)
	}
	if strings.Contains(e.Message, root) || !strings.Contains(e.Message, "'common/app.yaml' is not in or below 'overlay'") {
		t.Errorf("message %q: want the paths relative to the working directory", e.Message)
	}
}

// A kustomization that asks for origin annotations gets them, as from
// kubectl.
func TestRequestedOriginAnnotationsStay(t *testing.T) {
	root := t.TempDir()
	testutil.WriteFiles(t, root, traceFiles)
	testutil.WriteFiles(t, root, map[string]string{"base/kustomization.yaml": "resources:\n- app.yaml\nbuildMetadata: [originAnnotations]\n"})
	for _, s := range build(t, filepath.Join(root, "base")) {
		if !strings.Contains(string(s.Data), "config.kubernetes.io/origin") {
			t.Errorf("requested origin annotation missing from\n%s", s.Data)
		}
		if s.Trace == nil {
			t.Errorf("%s: not traced", s.Origin.Text)
		}
	}
}
