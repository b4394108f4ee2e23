package fixplan

import (
	"backfire.dev/backfire/internal/catalog"
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/config"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/helm"
	"backfire.dev/backfire/internal/kustomize"
	"backfire.dev/backfire/internal/model/rollout"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/scan"
	"backfire.dev/backfire/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite golden diffs")

func options(paths ...string) Options {
	return Options{Scan: scan.Options{
		Paths: paths,
		Rules: rules.Options{Config: &config.Config{}, RolloutsVersion: rollout.DefaultVersion},
	}}
}

// harborOptions fixes the Harbor chart as these tests expect: about the
// database's template and values, with BF106 off (it rewrites the Redis
// template's readiness probe too, which the BF106 fixtures cover).
func harborOptions() Options {
	o := options("harbor")
	o.Helm = &helm.Options{}
	o.Scan.Rules.Config = &config.Config{Disable: []string{"BF106"}}
	return o
}

// copyFiles copies files into dir under the names given, and returns them.
func copyFiles(t *testing.T, dir string, files map[string]string) []string {
	t.Helper()
	var names []string
	for name, from := range files {
		data, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no golden file (run with -update): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("diff differs from %s (run with -update if intended):\n%s", path, got)
	}
}

// fixTwice plans, checks the diff against its golden file, writes, and
// checks that a second run finds nothing left to change.
func fixTwice(t *testing.T, goldenPath string, manual map[string]bool, o Options) *FixPlan {
	t.Helper()
	p, err := Plan(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Errors) > 0 {
		t.Fatalf("input errors: %v", p.Errors)
	}
	for _, l := range p.Left {
		if !manual[l.Finding.Rule] {
			t.Errorf("left %s on %s: %s", l.Finding.Rule, l.Finding.Object, l.Reason)
		}
	}
	if len(p.Fixed) == 0 {
		t.Fatal("nothing fixed")
	}
	var diff bytes.Buffer
	if err := p.Diff(&diff); err != nil {
		t.Fatal(err)
	}
	golden(t, goldenPath, diff.Bytes())
	if errs := p.Write(); len(errs) > 0 {
		t.Fatal(errs)
	}
	for _, f := range p.Files {
		if data, _ := os.ReadFile(f.Path); !bytes.Equal(data, f.New) {
			t.Errorf("%s: written contents differ from the plan", f.Path)
		}
	}
	again, err := Plan(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Files) > 0 || len(again.Fixed) > 0 {
		t.Errorf("a second run changes %d files, fixes %d findings; want none", len(again.Files), len(again.Fixed))
	}
	if len(again.Left) != len(p.Left) {
		t.Errorf("second run leaves %d findings, the first %d", len(again.Left), len(p.Left))
	}
	return p
}

// The examples of the README: every finding with a patch is fixed, the
// rescan proves it, and BF402 (a query to rewrite) is left, with its reason.
func TestExamples(t *testing.T) {
	dir := t.TempDir()
	root := testutil.RepoRoot(t)
	entries, _ := filepath.Glob(filepath.Join(root, "examples", "*.yaml"))
	files := map[string]string{}
	for _, e := range entries {
		files[filepath.Base(e)] = e
	}
	copyFiles(t, dir, files)
	t.Chdir(dir)
	p := fixTwice(t, filepath.Join(root, "internal", "fixplan", "testdata", "examples.diff"), map[string]bool{"BF402": true}, options("."))
	if len(p.Fixed) != 10 || len(p.Left) != 1 {
		t.Errorf("%d fixed, %d left; want 10 fixed, 1 left (BF107 and BF601 with the rest; BF402)", len(p.Fixed), len(p.Left))
	}
	if len(p.Placeholders) != 3 {
		t.Errorf("placeholders %v, want BF201's three request sizes", p.Placeholders)
	}
	data, _ := os.ReadFile("registry-database.yaml")
	if c := strings.Count(string(data), "# placeholder"); c != 3 {
		t.Errorf("%d placeholder comments in the fixed file, want 3", c)
	}
}

// Every rule's positive fixtures, fixed with the whole catalog: each one's
// findings are gone after the fix, except those whose fix is a change by
// hand (BF402's, BF303's overlapping budgets).
func TestPositiveFixtures(t *testing.T) {
	dir := t.TempDir()
	root := testutil.RepoRoot(t)
	fixtures := positiveManifestFixtures(root)
	if len(fixtures) < 30 {
		t.Fatalf("%d positive fixtures found", len(fixtures))
	}
	files := map[string]string{}
	for _, f := range fixtures {
		rule := filepath.Base(filepath.Dir(filepath.Dir(f)))
		files[filepath.Join(rule, filepath.Base(f))] = f
	}
	names := copyFiles(t, dir, files)
	t.Chdir(dir)
	// One fixture per run: fixtures reuse object names across files.
	var all bytes.Buffer
	for _, name := range names {
		o := options(name)
		// Rules that are off by default are on for their own fixtures.
		o.Scan.Rules.Config = &config.Config{Enable: []string{"BF203"}}
		p, err := Plan(o)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if len(p.Errors) > 0 {
			t.Errorf("%s: %v", name, p.Errors)
		}
		byHand := 0
		for _, l := range p.Left {
			if l.Finding.Fix != nil && l.Finding.Fix.Type == finding.ManualChange {
				byHand++
				continue
			}
			t.Errorf("%s: left %s: %s", name, l.Finding.Rule, l.Reason)
		}
		if len(p.Fixed) == 0 && byHand == 0 {
			t.Errorf("%s: nothing fixed", name)
		}
		if err := p.Diff(&all); err != nil {
			t.Fatal(err)
		}
		if errs := p.Write(); len(errs) > 0 {
			t.Errorf("%s: %v", name, errs)
		}
		again, err := Plan(o)
		if err != nil || len(again.Files) > 0 {
			t.Errorf("%s: a second run changes %d files (%v)", name, len(again.Files), err)
		}
	}
	golden(t, filepath.Join(root, "internal", "fixplan", "testdata", "positive-fixtures.diff"), all.Bytes())
}

const small = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  replicas: 3
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers:
      - name: api
        image: registry.example.com/api:1.0
        readinessProbe:
          httpGet: {path: /ready, port: 8080}
          failureThreshold: 1
`

func writeSmall(t *testing.T) (string, *FixPlan) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "api.yaml")
	if err := os.WriteFile(path, []byte(small), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Plan(options(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Files) != 1 {
		t.Fatalf("plan changes %d files, want 1", len(p.Files))
	}
	return path, p
}

func TestRuleFilter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "api.yaml")
	if err := os.WriteFile(path, []byte(small), 0o644); err != nil {
		t.Fatal(err)
	}
	o := options(path)
	o.Rules = []string{"BF102"}
	p, err := Plan(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Files) != 0 || len(p.Fixed) != 0 {
		t.Errorf("--rule BF102 on a file with only a BF104 finding changed %d files", len(p.Files))
	}
	o.Rules = []string{"BF104"}
	if p, _ = Plan(o); len(p.Fixed) != 1 || p.Fixed[0].Rule != "BF104" {
		t.Errorf("--rule BF104 fixed %v", p.Fixed)
	}
}

func TestWriteRefusesReadOnly(t *testing.T) {
	path, p := writeSmall(t)
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	errs := p.Write()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "read-only") {
		t.Fatalf("errors %v, want read-only", errs)
	}
	if data, _ := os.ReadFile(path); string(data) != small {
		t.Error("a read-only file was changed")
	}
	assertNoTemp(t, filepath.Dir(path))
}

func TestWriteRefusesFileChangedSinceScan(t *testing.T) {
	path, p := writeSmall(t)
	changed := strings.Replace(small, "replicas: 3", "replicas: 4", 1)
	if err := os.WriteFile(path, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	errs := p.Write()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "changed since it was scanned") {
		t.Fatalf("errors %v", errs)
	}
	if data, _ := os.ReadFile(path); string(data) != changed {
		t.Error("the newer contents were overwritten")
	}
}

func TestWriteRefusesSymlink(t *testing.T) {
	path, _ := writeSmall(t)
	link := filepath.Join(filepath.Dir(path), "link.yaml")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	p, err := Plan(options(link))
	if err != nil {
		t.Fatal(err)
	}
	errs := p.Write()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "symbolic link") {
		t.Fatalf("errors %v", errs)
	}
	if data, _ := os.ReadFile(path); string(data) != small {
		t.Error("the link's target was changed")
	}
}

func TestWriteKeepsModeAndLeavesNoTemp(t *testing.T) {
	path, p := writeSmall(t)
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	if errs := p.Write(); len(errs) > 0 {
		t.Fatal(errs)
	}
	info, _ := os.Stat(path)
	if info.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640 kept", info.Mode().Perm())
	}
	assertNoTemp(t, filepath.Dir(path))
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), "failureThreshold: 3") || !strings.Contains(string(data), "httpGet: {path: /ready, port: 8080}") {
		t.Errorf("fixed file:\n%s", data)
	}
}

func TestStdinIsLeft(t *testing.T) {
	o := options("-")
	o.Scan.Stdin = strings.NewReader(small)
	p, err := Plan(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Files) != 0 || len(p.Left) != 1 || !strings.Contains(p.Left[0].Reason, "standard input") {
		t.Errorf("stdin: files %d, left %+v", len(p.Files), p.Left)
	}
}

func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".backfire-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

// The Harbor chart, fixed through a values file of its own: the values
// that reach the fields are written to it, and the database's exec
// liveness handler, which the chart writes literally in
// templates/database/database-ss.yaml, is replaced there (BF101). The
// rescan renders a copy of the chart with both, and a second run changes
// nothing.
func TestHarborChartValuesOut(t *testing.T) {
	root := testutil.RepoRoot(t)
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "harbor"), os.DirFS(testutil.Corpus(t, "harbor-helm"))); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	o := harborOptions()
	o.ValuesOut = "backfire-values.yaml"
	p, err := Plan(o)
	if err != nil {
		t.Fatal(err)
	}
	template := filepath.Join("harbor", "templates", "database", "database-ss.yaml")
	if len(p.Files) != 2 || p.Files[0].Path != o.ValuesOut || p.Files[1].Path != filepath.ToSlash(template) {
		var names []string
		for _, f := range p.Files {
			names = append(names, f.Path)
		}
		t.Fatalf("files %v, want the values file and %s", names, template)
	}
	if len(p.Fixed) < 10 {
		t.Errorf("%d fixed", len(p.Fixed))
	}
	var bf101 bool
	for _, f := range p.Fixed {
		bf101 = bf101 || f.Rule == "BF101" && f.Container == "database"
	}
	for _, l := range p.Left {
		// BF201's resources: the chart prints a resources map it does
		// not set (`if .Values.database.internal.resources`): the map is
		// written under the key the container's other fields come from.
		if l.Finding.Rule == "BF101" || l.Finding.Rule == "BF201" {
			t.Errorf("%s left: %s", l.Finding.Rule, l.Reason)
		}
	}
	if !bf101 {
		t.Errorf("BF101 on the database is not fixed")
	}
	golden(t, filepath.Join(root, "internal", "fixplan", "testdata", "harbor-values-out.yaml"), p.Files[0].New)
	var diff bytes.Buffer
	if err := (&FixPlan{Files: p.Files[1:]}).Diff(&diff); err != nil {
		t.Fatal(err)
	}
	golden(t, filepath.Join(root, "internal", "fixplan", "testdata", "harbor-template.diff"), diff.Bytes())
	if errs := p.Write(); len(errs) > 0 {
		t.Fatal(errs)
	}
	again, err := Plan(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Files) > 0 || len(again.Fixed) > 0 || len(again.Left) != len(p.Left) {
		t.Errorf("second run: %d files, %d fixed, %d left (first left %d)", len(again.Files), len(again.Fixed), len(again.Left), len(p.Left))
	}
}

// A liveness handler written with a template action is not edited: BF101
// stays left with the reason, and the template keeps every byte.
func TestHarborTemplateActionNotEdited(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "harbor"), os.DirFS(testutil.Corpus(t, "harbor-helm"))); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	template := filepath.Join("harbor", "templates", "database", "database-ss.yaml")
	data, err := os.ReadFile(template)
	if err != nil {
		t.Fatal(err)
	}
	// The liveness command comes from the chart's own helper now.
	src := strings.Replace(string(data), "          exec:\n            command:\n            - /docker-healthcheck.sh\n          initialDelaySeconds: {{ .Values.database.internal.livenessProbe", "          exec:\n            command:\n            - {{ \"/docker-healthcheck.sh\" }}\n          initialDelaySeconds: {{ .Values.database.internal.livenessProbe", 1)
	if src == string(data) {
		t.Fatal("the liveness block of the template is not where the test expects it")
	}
	if err := os.WriteFile(template, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	o := harborOptions()
	o.ValuesOut = "backfire-values.yaml"
	p, err := Plan(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range p.Files {
		if f.Path != o.ValuesOut {
			t.Errorf("%s is changed", f.Path)
		}
	}
	var left bool
	for _, l := range p.Left {
		if l.Finding.Rule == "BF101" {
			left = strings.Contains(l.Reason, "livenessProbe.exec is written with template actions") && strings.Contains(l.Reason, `"tcpSocket"`)
		}
	}
	if !left {
		t.Errorf("BF101 is not left with the template's reason: %+v", p.Left)
	}
}

// Without --values-out the chart's own values.yaml is edited in place
// (only the values that change), with the database template's literal
// liveness handler, the copy of the chart is rendered again
// with it for the proof, and a second run changes nothing.
func TestHarborChartValuesInPlace(t *testing.T) {
	root := testutil.RepoRoot(t)
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "harbor"), os.DirFS(testutil.Corpus(t, "harbor-helm"))); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	o := harborOptions()
	p, err := Plan(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Files) != 2 || p.Files[1].Path != filepath.Join("harbor", "values.yaml") || p.Files[0].Path != "harbor/templates/database/database-ss.yaml" {
		t.Fatalf("files %v, want the chart's values.yaml and the database template", p.Files)
	}
	var diff bytes.Buffer
	if err := p.Diff(&diff); err != nil {
		t.Fatal(err)
	}
	golden(t, filepath.Join(root, "internal", "fixplan", "testdata", "harbor-values-in-place.diff"), diff.Bytes())
	if errs := p.Write(); len(errs) > 0 {
		t.Fatal(errs)
	}
	again, err := Plan(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Files) > 0 || len(again.Fixed) > 0 {
		t.Errorf("second run: %d files, %d fixed", len(again.Files), len(again.Fixed))
	}
}

// A chart whose values file is a symbolic link: the fixes that would
// write it are left with the reason, and neither the link nor its target
// is written.
func TestHarborChartSymlinkedValues(t *testing.T) {
	dir := t.TempDir()
	chart := filepath.Join(dir, "harbor")
	if err := os.CopyFS(chart, os.DirFS(testutil.Corpus(t, "harbor-helm"))); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "shared-values.yaml")
	if err := os.Rename(filepath.Join(chart, "values.yaml"), target); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(chart, "values.yaml")); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(target)
	o := options(chart)
	o.Helm = &helm.Options{}
	p, err := Plan(o)
	if err != nil {
		t.Fatal(err)
	}
	// The scan refuses the link, which leaves the chart named
	// (docs/inputs.md); within the path named, the write would refuse it.
	errs := p.Write()
	for _, e := range p.Errors {
		errs = append(errs, e)
	}
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "symbolic link") {
		t.Fatalf("errors %v", errs)
	}
	if after, _ := os.ReadFile(target); !bytes.Equal(before, after) {
		t.Error("the link's target was written")
	}
}

// A Kustomize overlay: the fix becomes a strategic-merge patch file in the
// overlay, listed under patches: in its kustomization (the base stays as it
// is); the overlay is built again with them for the proof, and a second
// run changes nothing.
func TestKustomizeOverlay(t *testing.T) {
	root := testutil.RepoRoot(t)
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(root, "internal", "fixplan", "testdata", "overlay"))); err != nil {
		t.Fatal(err)
	}
	base, _ := os.ReadFile(filepath.Join(dir, "base", "db.yaml"))
	t.Chdir(dir)
	o := options(filepath.Join("overlays", "prod"))
	o.Scan.Kustomize = kustomize.New()
	p := fixTwice(t, filepath.Join(root, "internal", "fixplan", "testdata", "overlay.diff"), nil, o)
	if len(p.Fixed) != 6 || len(p.Files) != 2 {
		t.Errorf("%d fixed in %d files, want 6 in the patch file and the kustomization", len(p.Fixed), len(p.Files))
	}
	if now, _ := os.ReadFile(filepath.Join(dir, "base", "db.yaml")); !bytes.Equal(now, base) {
		t.Error("the base was changed")
	}
}

// A base outside what the overlay may load: kustomize's own error, with
// the kustomization file, and nothing written.
func TestKustomizeBaseOutsideTheTree(t *testing.T) {
	root := testutil.RepoRoot(t)
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(root, "internal", "fixplan", "testdata", "overlay"))); err != nil {
		t.Fatal(err)
	}
	k := filepath.Join(dir, "overlays", "prod", "kustomization.yaml")
	data, _ := os.ReadFile(k)
	bad := strings.Replace(string(data), "- ../../base", "- ../../base/db.yaml", 1)
	if err := os.WriteFile(k, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	o := options(filepath.Join(dir, "overlays", "prod"))
	o.Scan.Kustomize = kustomize.New()
	p, err := Plan(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Errors) == 0 || !strings.Contains(p.Errors[0].Error(), "kustomization.yaml") || !strings.Contains(p.Errors[0].Error(), "kustomize build failed") {
		t.Errorf("errors %v", p.Errors)
	}
	if len(p.Files) != 0 {
		t.Errorf("%d files planned", len(p.Files))
	}
}

// An overlay that already patches the fields the fix sets: that patch is
// edited in place, not overruled by a second one.
func TestKustomizeOverlayEditsItsPatch(t *testing.T) {
	root := testutil.RepoRoot(t)
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(root, "internal", "fixplan", "testdata", "overlay"))); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	o := options(filepath.Join("overlays", "staging"))
	o.Scan.Kustomize = kustomize.New()
	p := fixTwice(t, filepath.Join(root, "internal", "fixplan", "testdata", "overlay-existing-patch.diff"), nil, o)
	if len(p.Files) != 1 || p.Files[0].Path != filepath.Join("overlays", "staging", "probes.yaml") {
		t.Errorf("files %v, want only the overlay's own probes.yaml", p.Files)
	}
}

// positiveManifestFixtures lists the positive fixtures of the rules scan
// runs; a diagnose rule's fixtures are what a pod did, not manifests to fix.
func positiveManifestFixtures(root string) []string {
	all, _ := filepath.Glob(filepath.Join(root, "internal", "rules", "*", "testdata", "BF*", "positive", "*.yaml"))
	var out []string
	for _, f := range all {
		if r := catalog.ByID(filepath.Base(filepath.Dir(filepath.Dir(f)))); r != nil && r.ScanCheck() != nil {
			out = append(out, f)
		}
	}
	return out
}

// A literal handler block the rendered object does not come from (a dead
// branch; the probe is built by toYaml) matches, is edited, and the proof
// shows BF101 still reported: the template is not written and the finding
// is left with the reason.
func TestTemplateEditNotProvenIsLeft(t *testing.T) {
	dir := t.TempDir()
	handler := "            command:\n            - /bin/sh\n            - -c\n            - exec pg_isready -h 127.0.0.1 -p 5432\n"
	testutil.WriteFiles(t, dir, map[string]string{
		"db/Chart.yaml": "apiVersion: v2\nname: db\nversion: 0.1.0\n",
		"db/values.yaml": "probe:\n  exec:\n    command:\n    - /bin/sh\n    - -c\n    - exec pg_isready -h 127.0.0.1 -p 5432\n" +
			"  initialDelaySeconds: 30\n  periodSeconds: 10\n  timeoutSeconds: 5\n  failureThreshold: 6\n",
		"db/templates/statefulset.yaml": `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: orders-postgresql
spec:
  replicas: 1
  serviceName: orders-postgresql
  selector: {matchLabels: {app: orders-postgresql}}
  template:
    metadata: {labels: {app: orders-postgresql}}
    spec:
      containers:
      - name: postgresql
        image: docker.io/bitnami/postgresql:16.4.0
        ports:
        - name: tcp-postgresql
          containerPort: 5432
        livenessProbe:
{{- if .Values.never }}
          exec:
` + handler + `{{- else }}
{{ toYaml .Values.probe | indent 10 }}
{{- end }}
`,
	})
	t.Chdir(dir)
	o := options("db")
	o.Helm = &helm.Options{}
	o.ValuesOut = "backfire-values.yaml"
	p, err := Plan(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range p.Files {
		if strings.Contains(f.Path, "templates") {
			t.Errorf("%s is changed though the edit is not proven", f.Path)
		}
	}
	var left bool
	for _, l := range p.Left {
		if l.Finding.Rule == "BF101" {
			left = strings.Contains(l.Reason, "the template edit was not proven") && strings.Contains(l.Reason, "still reported")
		}
	}
	if !left {
		t.Errorf("BF101 is not left with the proof's reason: fixed %d, left %+v", len(p.Fixed), p.Left)
	}
}

// copyShop copies the chart whose probe numbers its templates write
// literally into a temporary directory, and changes to it.
func copyShop(t *testing.T) string {
	t.Helper()
	root := testutil.RepoRoot(t)
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "shop"), os.DirFS(filepath.Join(root, "internal", "fixplan", "testdata", "shop"))); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	return root
}

// Probe numbers written literally in a chart's templates are edited
// there: a value replaced where it stands (its comment kept), a missing
// one added beside its siblings, next to the database's literal handler.
// The values file keeps every byte, the rescan of the written chart
// reports nothing, and a second run changes nothing.
func TestShopChartLiteralScalars(t *testing.T) {
	root := copyShop(t)
	values, _ := os.ReadFile(filepath.Join("shop", "values.yaml"))
	o := options("shop")
	o.Helm = &helm.Options{}
	p := fixTwice(t, filepath.Join(root, "internal", "fixplan", "testdata", "shop-templates.diff"), nil, o)
	var names []string
	for _, f := range p.Files {
		names = append(names, f.Path)
	}
	if want := []string{"shop/templates/api.yaml", "shop/templates/db.yaml"}; strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("files %v, want %v", names, want)
	}
	rules := map[string]bool{}
	for _, f := range p.Fixed {
		rules[f.Rule] = true
	}
	for _, r := range []string{"BF101", "BF102", "BF103", "BF104"} {
		if !rules[r] {
			t.Errorf("%s is not fixed: fixed %v", r, rules)
		}
	}
	if now, _ := os.ReadFile(filepath.Join("shop", "values.yaml")); !bytes.Equal(now, values) {
		t.Error("the values file was changed")
	}
	// The written chart, scanned on its own: the findings are gone.
	res, err := scan.Run(scan.Options{Paths: []string{"shop"}, Rules: o.Scan.Rules, Charts: mustHelm(t)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) > 0 || len(res.Findings) > 0 {
		t.Errorf("the fixed chart: errors %v, findings %v", res.Errors, res.Findings)
	}
}

func mustHelm(t *testing.T) *helm.Renderer {
	t.Helper()
	r, err := helm.New(helm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// With --values-out the literal numbers are still edited in the
// templates (they are not values), and no values file is written: no
// values key reaches any of the fields.
func TestShopChartLiteralScalarsWithValuesOut(t *testing.T) {
	copyShop(t)
	o := options("shop")
	o.Helm = &helm.Options{}
	o.ValuesOut = "backfire-values.yaml"
	p, err := Plan(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Files) != 2 || len(p.Left) > 0 || len(p.Fixed) != 5 {
		t.Errorf("%d files, %d fixed, left %+v; want the two templates, 5 fixed", len(p.Files), len(p.Fixed), p.Left)
	}
	for _, f := range p.Files {
		if !strings.HasPrefix(f.Path, "shop/templates/") {
			t.Errorf("%s is written", f.Path)
		}
	}
}

// Literal scalars the template does not write in the safe way are not
// edited: the finding that needs them is left with the reason and the
// line, the line keeps its bytes, and the other findings are still fixed.
// A second run leaves the finding again, with the same reason.
func TestShopChartScalarsNotEdited(t *testing.T) {
	cases := []struct {
		name, file, old, new, rule, reason string
	}{
		{"a template action on the line", "api.yaml",
			"          timeoutSeconds: 1   # seconds per check\n",
			"          timeoutSeconds: {{ .Values.livenessTimeout | default 1 }}   # seconds per check\n",
			"BF102", "line 28: containers[api].livenessProbe.timeoutSeconds is written with a template action: not edited"},
		{"the key written twice", "api.yaml",
			"          timeoutSeconds: 1   # seconds per check\n",
			"{{- if .Values.slowChecks }}\n          timeoutSeconds: 2\n{{- else }}\n          timeoutSeconds: 1\n{{- end }}\n",
			"BF102", "lines 29 and 31: containers[api].livenessProbe.timeoutSeconds is written 2 times in its block: not edited"},
		{"the probe built by a helper", "api.yaml",
			"          httpGet:\n            path: /ready\n            port: http\n          periodSeconds: 5\n          failureThreshold: 1\n",
			"{{ include \"shop.readiness\" . | indent 10 }}\n",
			"BF104", "line 31: a template action builds part of containers[api].readinessProbe, and failureThreshold is not written in it: not edited"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			copyShop(t)
			path := filepath.Join("shop", "templates", c.file)
			data, _ := os.ReadFile(path)
			src := strings.Replace(string(data), c.old, c.new, 1)
			if src == string(data) {
				t.Fatal("the template is not as the test expects")
			}
			helper := "{{- define \"shop.readiness\" -}}\nhttpGet:\n  path: /ready\n  port: http\nperiodSeconds: 5\nfailureThreshold: 1\n{{- end }}\n"
			testutil.WriteFiles(t, ".", map[string]string{path: src, "shop/templates/_helpers.tpl": helper})
			o := options("shop")
			o.Helm = &helm.Options{}
			p, err := Plan(o)
			if err != nil {
				t.Fatal(err)
			}
			var reason string
			for _, l := range p.Left {
				if l.Finding.Rule == c.rule {
					reason = l.Reason
				} else {
					t.Errorf("%s left: %s", l.Finding.Rule, l.Reason)
				}
			}
			if !strings.Contains(reason, c.reason) {
				t.Errorf("%s left with %q, want %q", c.rule, reason, c.reason)
			}
			for _, f := range p.Files {
				if f.Path == path && !strings.Contains(string(f.New), c.new) {
					t.Errorf("the refused lines changed:\n%s", f.New)
				}
			}
			if len(p.Fixed) == 0 {
				t.Error("nothing fixed")
			}
			// A second run changes nothing, and still leaves the finding
			// with its reason.
			if errs := p.Write(); len(errs) > 0 {
				t.Fatal(errs)
			}
			again, err := Plan(o)
			if err != nil {
				t.Fatal(err)
			}
			if len(again.Files) > 0 || len(again.Fixed) > 0 || len(again.Left) != 1 || again.Left[0].Finding.Rule != c.rule || !strings.Contains(again.Left[0].Reason, c.reason) {
				t.Errorf("second run: %d files, %d fixed, left %+v", len(again.Files), len(again.Fixed), again.Left)
			}
		})
	}
}

// A literal scalar in a branch the chart does not render matches, is
// edited, and the proof shows the finding still reported: the template is
// not written, and the finding is left with the proof's reason.
func TestLiteralScalarEditNotProvenIsLeft(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{
		"web/Chart.yaml":             "apiVersion: v2\nname: web\nversion: 0.1.0\n",
		"web/values.yaml":            "{}\n",
		"web/templates/_helpers.tpl": "{{- define \"web.probe\" -}}\nhttpGet:\n  path: /healthz\n  port: 8080\ntimeoutSeconds: 1\nfailureThreshold: 3\n{{- end }}\n",
		"web/templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: registry.example.com/web:2.0
        livenessProbe:
{{- if .Values.never }}
          httpGet:
            path: /healthz
            port: 8080
          timeoutSeconds: 1
          failureThreshold: 3
{{- else }}
{{ include "web.probe" . | indent 10 }}
{{- end }}
`,
	})
	t.Chdir(dir)
	o := options("web")
	o.Helm = &helm.Options{}
	p, err := Plan(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range p.Files {
		if strings.Contains(f.Path, "templates") {
			t.Errorf("%s is changed though the edit is not proven:\n%s", f.Path, f.New)
		}
	}
	var left string
	for _, l := range p.Left {
		if l.Finding.Rule == "BF102" {
			left = l.Reason
		}
	}
	if !strings.Contains(left, "the template edit was not proven: web/templates/deployment.yaml: spec.template.spec.containers[web].livenessProbe.timeoutSeconds is 1 after the edit, not 3") {
		t.Errorf("BF102 is not left with the proof's reason: fixed %d, left %q", len(p.Fixed), left)
	}
}
