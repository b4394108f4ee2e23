package scan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/helm"
	"backfire.dev/backfire/internal/kustomize"
	"backfire.dev/backfire/internal/testutil"
)

func write(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: %s}\nspec:\n  containers:\n  - name: web\n    image: nginx\n"

func podYAML(name string) string { return strings.Replace(pod, "%s", name, 1) }

func TestDirectoryWalk(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.yaml", podYAML("a"))
	write(t, dir, "sub/b.yml", podYAML("b"))
	write(t, dir, "sub/c.json", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"c"}}`)
	write(t, dir, "values.yaml", "replicaCount: 3\n")                 // not an object: skipped
	write(t, dir, ".github/workflows/ci.yml", "on: push\njobs: {}\n") // walked, skipped
	write(t, dir, "README.md", "# not a manifest")
	write(t, dir, ".git/config.yaml", podYAML("git"))
	write(t, dir, "node_modules/x.yaml", podYAML("nm"))
	write(t, dir, "vendor/y.yaml", podYAML("vendor"))
	write(t, dir, "empty.yaml", "")
	res, err := Run(Options{Paths: []string{dir}, KeepObjects: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) > 0 {
		t.Fatalf("errors: %v", res.Errors)
	}
	var names []string
	for _, o := range res.Objects {
		names = append(names, o.Name)
	}
	if strings.Join(names, ",") != "a,b,c" {
		t.Errorf("objects %v, want a,b,c", names)
	}
	if res.Summary.Skipped != 2 || res.Summary.Files != 6 {
		t.Errorf("summary %+v", res.Summary)
	}
}

// Every kind of bad input is reported with its file (and line where it has
// one), and the good files beside it are still scanned.
func TestBadInputsDoNotStopTheScan(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "good.yaml", podYAML("good"))
	write(t, dir, "binary.yaml", "\x00\x01\x02garbage")
	write(t, dir, "malformed.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: [}\n")
	write(t, dir, "wrongtype.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: w}\nspec:\n  containers:\n  - name: c\n    livenessProbe: {timeoutSeconds: \"5\"}\n")
	write(t, dir, "dupkey.yaml", "apiVersion: v1\nkind: Pod\nkind: Service\nmetadata: {name: d}\n")
	write(t, dir, "utf8.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: \"\xc3\x28\"}\n")
	huge := filepath.Join(dir, "huge.yaml")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(100 << 20); err != nil { // 100 MB, sparse
		t.Fatal(err)
	}
	f.Close()

	res, err := Run(Options{Paths: []string{dir}, KeepObjects: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"binary.yaml":    "binary file",
		"malformed.yaml": ":3: invalid YAML",
		"wrongtype.yaml": ":7:37: Pod: field spec.containers.livenessProbe.timeoutSeconds must be an integer, not string",
		"dupkey.yaml":    `:3:1: key "kind" already defined at line 2`,
		"utf8.yaml":      ":3: invalid UTF-8",
		"huge.yaml":      "larger than 64 MiB",
	}
	got := map[string]string{}
	for _, e := range res.Errors {
		got[filepath.Base(e.File)] = e.Error()
	}
	for file, msg := range want {
		if !strings.Contains(got[file], msg) {
			t.Errorf("%s: error %q, want it to contain %q", file, got[file], msg)
		}
	}
	if len(res.Errors) != len(want) {
		t.Errorf("%d errors, want %d: %v", len(res.Errors), len(want), res.Errors)
	}
	if len(res.Objects) != 1 || res.Objects[0].Name != "good" {
		t.Errorf("objects %v, want only good", res.Objects)
	}
}

func TestMissingPathAndExplicitEmpty(t *testing.T) {
	dir := t.TempDir()
	empty := write(t, dir, "empty.yaml", "# nothing\n")
	res, err := Run(Options{Paths: []string{filepath.Join(dir, "missing.yaml"), empty}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) != 2 || !strings.Contains(res.Errors[0].Message, "no such file") || !strings.Contains(res.Errors[1].Message, "empty input") {
		t.Errorf("errors %v", res.Errors)
	}
}

// The shared corpus of real manifests (charts rendered, overlays built)
// reads without a panic, and without an error except where the corpus itself
// is broken for kubectl too.
func TestCorpusReads(t *testing.T) {
	charts, err := helm.New(helm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Each expected error: file suffix, line, and why kubectl fails the same way.
	expected := []struct {
		file string
		line int
	}{
		// `linkerd.io/inject: {{args.linkerd-enabled}}` unquoted: a flow mapping
		// used as a key ("invalid map key" from kubectl).
		{"traffic-management/rollout-linkerd.yaml", 101},
		// resources: ../../manifests/notifications, outside the corpus copy.
		{"argo-rollouts-examples/notifications/kustomization.yaml", 5},
		// pulls ../experiment/http-benchmark.yaml from a sibling directory,
		// which kustomize's default load restrictor refuses.
		{"rollouts-demo/examples/preview-testing/kustomization.yaml", 6},
	}
	seen := 0
	for _, dir := range []string{"argo-rollouts-examples", "rollouts-demo"} {
		res, err := Run(Options{Paths: []string{testutil.Corpus(t, dir)}, Charts: charts, Kustomize: kustomize.New()})
		if err != nil {
			t.Fatal(err)
		}
	errors:
		for _, e := range res.Errors {
			for _, x := range expected {
				if strings.HasSuffix(e.File, x.file) && e.Line == x.line {
					seen++
					continue errors
				}
			}
			t.Errorf("%s: %v", dir, e)
		}
		if res.Summary.Objects < 10 {
			t.Errorf("%s: only %d objects", dir, res.Summary.Objects)
		}
	}
	if seen != len(expected) {
		t.Errorf("%d of the %d known corpus errors reported", seen, len(expected))
	}
}

// A large file (mapped, not read) that is truncated while it is scanned
// is an error at the file; it used to crash the process (SIGBUS).
func TestFileTruncatedWhileScannedIsAnError(t *testing.T) {
	dir := t.TempDir()
	big := write(t, dir, "big.yaml", strings.Repeat(podYAML("p")+"---\n", (17<<20)/len(podYAML("p"))))
	res, _, err := run(Options{Paths: []string{big}}, tuning{window: window, mapped: func(path string) {
		if err := os.Truncate(path, 0); err != nil {
			t.Fatal(err)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) != 1 || res.Errors[0].File != big || !strings.Contains(res.Errors[0].Message, "the file shrank while it was being read") {
		t.Errorf("errors %v", res.Errors)
	}
}

// A password written literally in a probe command is masked in the
// findings before any report sees them, spilled (JSON) or kept.
func TestLiteralPasswordsAreMasked(t *testing.T) {
	data := mustRead(t, "../rules/probes/testdata/BF101/positive/mysqladmin-liveness.yaml")
	data = strings.Replace(data, `-p"$MYSQL_ROOT_PASSWORD"`, `-phunter2`, 1)
	file := write(t, t.TempDir(), "db.yaml", data)
	for _, spill := range []bool{false, true} {
		res, err := Run(Options{Paths: []string{file}, Spill: spill})
		if err != nil {
			t.Fatal(err)
		}
		out := jsonOf(t, res)
		res.Spill.Close()
		if strings.Contains(out, "hunter2") || !strings.Contains(out, "mysqladmin ping -uroot -p****") {
			t.Errorf("spill %v: %s", spill, out)
		}
	}
}

// A scan that composes no fix (Options.NoFixes) finds the same findings,
// at the same places, with the same messages; only fixes that the
// composition would have rewritten differ, and at least one does in the
// corpus (so the test would see a scan that dropped the findings' fixes
// or composed them anyway).
func TestNoFixesSameFindings(t *testing.T) {
	// The corpus, and an object whose probe fixes compose (BF104's raises
	// what BF103 computed from).
	dir := []string{filepath.Join("..", "..", "testdata"), filepath.Join("..", "fixcompose", "testdata")}
	full, err := Run(Options{Paths: dir})
	if err != nil {
		t.Fatal(err)
	}
	bare, err := Run(Options{Paths: dir, NoFixes: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(full.Findings) == 0 || len(full.Findings) != len(bare.Findings) {
		t.Fatalf("%d findings composed, %d not", len(full.Findings), len(bare.Findings))
	}
	rewritten := 0
	for i := range full.Findings {
		f, b := full.Findings[i], bare.Findings[i]
		if f.Fingerprint != b.Fingerprint || f.File != b.File || f.Line != b.Line || f.Column != b.Column || f.Message != b.Message || f.Severity != b.Severity {
			t.Errorf("finding %d: %s %s:%d %q, without composing %s %s:%d %q", i, f.Rule, f.File, f.Line, f.Message, b.Rule, b.File, b.Line, b.Message)
		}
		if (f.Fix == nil) != (b.Fix == nil) {
			t.Errorf("finding %d (%s): fix %v, without composing %v", i, f.Rule, f.Fix, b.Fix)
			continue
		}
		if f.Fix != nil && (string(f.Fix.Patch) != string(b.Fix.Patch) || f.Fix.Description != b.Fix.Description) {
			rewritten++
		}
	}
	if rewritten == 0 {
		t.Error("no fix was rewritten by the composition: the corpus no longer tells a composed scan from one that is not")
	}
	if len(full.Errors) != len(bare.Errors) {
		t.Errorf("%d errors composed, %d not", len(full.Errors), len(bare.Errors))
	}
}
