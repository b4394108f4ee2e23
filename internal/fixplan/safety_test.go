package fixplan

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"

	"backfire.dev/backfire/internal/helm"
	"backfire.dev/backfire/internal/testutil"
)

// What fix must never do: write one file's values into another, break an
// object through a YAML alias, write YAML into JSON, change a file's line
// endings, or count a refused write as fixed.

// web is a Deployment whose liveness probe has no timeout (BF102); the
// failureThreshold line is where two environments differ.
const web = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: app
        image: registry.example.com/web:1.0
        livenessProbe:
          httpGet: {path: /healthz, port: 8080}
          periodSeconds: 10
`

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func planWrite(t *testing.T, o Options) *FixPlan {
	t.Helper()
	p, err := Plan(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Errors) > 0 {
		t.Fatalf("input errors: %v", p.Errors)
	}
	if errs := p.Write(); len(errs) > 0 {
		t.Fatal(errs)
	}
	return p
}

func assertNothingLeftToDo(t *testing.T, o Options) {
	t.Helper()
	again, err := Plan(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Files) > 0 || len(again.Fixed) > 0 || len(again.Left) > 0 {
		t.Errorf("second run: %d files, %d fixed, %d left %v", len(again.Files), len(again.Fixed), len(again.Left), again.Left)
	}
}

// Two environment directories, each with Deployment web and no
// namespace: each file is fixed with its own findings, and prod keeps
// its failureThreshold 5 (issue 19.1, issue 18).
func TestSameObjectInTwoFilesFixedEach(t *testing.T) {
	prod := strings.Replace(web, "periodSeconds: 10\n", "periodSeconds: 10\n          failureThreshold: 5\n", 1)
	dir := writeTree(t, map[string]string{"staging/web.yaml": web, "prod/web.yaml": prod})
	o := options(filepath.Join(dir, "staging"), filepath.Join(dir, "prod"))
	p := planWrite(t, o)
	if len(p.Left) > 0 || len(p.Fixed) != 2 || len(p.Files) != 2 {
		t.Fatalf("fixed %d, left %v, files %d; want both objects fixed", len(p.Fixed), p.Left, len(p.Files))
	}
	got, _ := os.ReadFile(filepath.Join(dir, "prod", "web.yaml"))
	if !strings.Contains(string(got), "failureThreshold: 5") || strings.Contains(string(got), "failureThreshold: 3") {
		t.Errorf("prod's failureThreshold changed:\n%s", got)
	}
	assertNothingLeftToDo(t, o)
}

// The same, in one directory tree given as one path: the two files are
// still two objects.
func TestSameObjectInTwoFilesOfOneTree(t *testing.T) {
	dir := writeTree(t, map[string]string{"a/web.yaml": web, "b/web.yaml": web})
	o := options(dir)
	p := planWrite(t, o)
	if len(p.Left) > 0 || len(p.Fixed) != 2 || len(p.Files) != 2 {
		t.Fatalf("fixed %d, left %v, files %d; want both", len(p.Fixed), p.Left, len(p.Files))
	}
	for _, f := range p.Files {
		if strings.Join(f.Rules, ",") != "BF102" {
			t.Errorf("%s: rules %v", f.Path, f.Rules)
		}
	}
	assertNothingLeftToDo(t, o)
}

// aliased has a liveness probe anchored and used again: by the readiness
// probe as an alias, and by a sidecar as a merge key. BF101 replaces the
// database's liveness handler (pg_isready queries PostgreSQL); the
// readiness probe keeps its query, and the sidecar's probe is its own.
const aliased = `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  serviceName: db
  replicas: 1
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers:
      - name: postgres
        image: postgres:16
        env:
        - name: PGDATA
          value: /var/lib/postgresql/data/pgdata
        resources:
          requests: {cpu: 500m, memory: 1Gi}
          limits: {memory: 1Gi}
        livenessProbe: &probe
          exec:
            command: [pg_isready, -U, postgres]
          periodSeconds: 10
          timeoutSeconds: 5
          failureThreshold: 6
        readinessProbe: *probe
      - name: exporter
        image: quay.io/prometheuscommunity/postgres-exporter:v0.15.0
        resources:
          requests: {cpu: 50m, memory: 64Mi}
          limits: {memory: 64Mi}
        livenessProbe:
          <<: *probe
          periodSeconds: 20
`

// Every use of an anchor holds what it held before the edit, except the
// one the fix is for (issue 19.2).
func TestAliasesExpandedForTheOneThatChanges(t *testing.T) {
	dir := writeTree(t, map[string]string{"db.yaml": aliased})
	path := filepath.Join(dir, "db.yaml")
	o := options(path)
	o.Rules = []string{"BF101"}
	p := planWrite(t, o)
	if len(p.Fixed) == 0 {
		t.Fatalf("nothing fixed; left %v", p.Left)
	}
	got, _ := os.ReadFile(path)
	var before, after map[string]any
	yamlJSON(t, []byte(aliased), &before)
	yamlJSON(t, got, &after)
	probe := func(doc map[string]any, container int, probe string) map[string]any {
		c := doc["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[container].(map[string]any)
		m, _ := c[probe].(map[string]any)
		return m
	}
	if l := probe(after, 0, "livenessProbe"); l["exec"] != nil || l["tcpSocket"] == nil {
		t.Errorf("the database's liveness probe is not replaced: %v", l)
	}
	for _, u := range []struct {
		container int
		probe     string
	}{{0, "readinessProbe"}, {1, "livenessProbe"}} {
		if b, a := probe(before, u.container, u.probe), probe(after, u.container, u.probe); !jsonEqual(b, a) {
			t.Errorf("container %d %s changed through the anchor:\nbefore %v\nafter  %v", u.container, u.probe, b, a)
		}
	}
	assertNothingLeftToDoFor(t, o)
}

// When every user of an anchor gets the same change, the anchor itself is
// edited and the aliases stay.
func TestAliasEditedWhenEveryUserWantsIt(t *testing.T) {
	const twoAPIs = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  replicas: 2
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers:
      - name: api
        image: registry.example.com/api:1.0
        readinessProbe: &ready
          httpGet: {path: /ready, port: 8080}
          timeoutSeconds: 2
          failureThreshold: 1
      - name: admin
        image: registry.example.com/api:1.0
        readinessProbe: *ready
`
	dir := writeTree(t, map[string]string{"api.yaml": twoAPIs})
	path := filepath.Join(dir, "api.yaml")
	o := options(path)
	p := planWrite(t, o)
	if len(p.Fixed) == 0 {
		t.Fatalf("nothing fixed; left %v", p.Left)
	}
	got, _ := os.ReadFile(path)
	if !strings.Contains(string(got), "readinessProbe: *ready") || strings.Count(string(got), "failureThreshold: 3") != 1 {
		t.Errorf("the anchor is not edited once for both users:\n%s", got)
	}
	assertNothingLeftToDo(t, o)
}

// A JSON manifest stays JSON, with its indentation (issue 19.3).
func TestJSONManifestStaysJSON(t *testing.T) {
	var obj any
	yamlJSON(t, []byte(web), &obj)
	for _, indent := range []string{"  ", "    ", "\t"} {
		data, _ := json.MarshalIndent(obj, "", indent)
		data = append(data, '\n')
		dir := writeTree(t, map[string]string{"web.json": string(data)})
		path := filepath.Join(dir, "web.json")
		o := options(path)
		p := planWrite(t, o)
		if len(p.Fixed) == 0 {
			t.Fatalf("indent %q: nothing fixed; left %v", indent, p.Left)
		}
		got, _ := os.ReadFile(path)
		var fixed any
		if err := json.Unmarshal(got, &fixed); err != nil {
			t.Fatalf("indent %q: not JSON after the fix: %v\n%s", indent, err, got)
		}
		var want bytes.Buffer
		_ = json.Indent(&want, bytes.TrimSpace(got), "", indent)
		if want.String()+"\n" != string(got) {
			t.Errorf("indent %q: the file's indentation is not kept:\n%s", indent, got)
		}
		assertNothingLeftToDo(t, o)
	}
}

// A file with CRLF line endings keeps them on every line (issue 19.4).
func TestCRLFKept(t *testing.T) {
	crlf := strings.ReplaceAll(web, "\n", "\r\n")
	dir := writeTree(t, map[string]string{"web.yaml": crlf})
	path := filepath.Join(dir, "web.yaml")
	o := options(path)
	p := planWrite(t, o)
	if len(p.Fixed) == 0 {
		t.Fatalf("nothing fixed; left %v", p.Left)
	}
	got, _ := os.ReadFile(path)
	if bytes.Count(got, []byte("\n")) != bytes.Count(got, []byte("\r\n")) {
		t.Errorf("a line without CRLF:\n%q", got)
	}
	assertNothingLeftToDo(t, o)
}

// A write that is refused is not a fix: the finding is left with the
// error, and the file is not among those written (issue 19.4).
func TestRefusedWriteIsNotFixed(t *testing.T) {
	path, p := writeSmall(t)
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	if errs := p.Write(); len(errs) != 1 {
		t.Fatalf("errors %v", errs)
	}
	if len(p.Fixed) != 0 || len(p.Left) != 1 || !strings.Contains(p.Left[0].Reason, "read-only") {
		t.Errorf("fixed %v, left %v; want the finding left as not written", p.Fixed, p.Left)
	}
	if len(p.Files) != 0 || len(p.Unwritten) != 1 {
		t.Errorf("files %d, unwritten %d", len(p.Files), len(p.Unwritten))
	}
}

// A chart whose values.yaml is a relative symbolic link out of the chart:
// the proof renders what Helm renders (the link's contents), and the
// fixes that would write the link are left with the reason, never
// written through it (issue 19.4).
func TestChartValuesRelativeSymlinkOut(t *testing.T) {
	dir := t.TempDir()
	chart := filepath.Join(dir, "harbor")
	if err := os.CopyFS(chart, os.DirFS(testutil.Corpus(t, "harbor-helm"))); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(chart, "values.yaml"), filepath.Join(dir, "shared-values.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..", "shared-values.yaml"), filepath.Join(chart, "values.yaml")); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "shared-values.yaml"))
	o := options(chart)
	o.Helm = &helm.Options{}
	p, err := Plan(o)
	if err != nil {
		t.Fatalf("the proof fails: %v", err)
	}
	// The scan refuses a link out of the path named (docs/inputs.md), so
	// the chart is named with the reason; a finding left must not blame
	// the proof's copy either.
	link := false
	for _, l := range p.Left {
		link = link || strings.Contains(l.Reason, "symbolic link")
		if strings.Contains(l.Reason, "no such file") {
			t.Errorf("misleading reason: %s", l.Reason)
		}
	}
	for _, e := range p.Errors {
		link = link || strings.Contains(e.Error(), "symbolic link")
		if strings.Contains(e.Error(), "no such file") {
			t.Errorf("misleading reason: %v", e)
		}
	}
	if !link {
		t.Errorf("neither a finding left nor an error names the link; left %v, errors %v", p.Left, p.Errors)
	}
	for _, f := range p.Files {
		if filepath.Base(f.Path) == "values.yaml" {
			t.Errorf("the plan writes the link %s", f.Path)
		}
	}
	if errs := p.Write(); len(errs) > 0 {
		t.Fatal(errs)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "shared-values.yaml")); !bytes.Equal(before, after) {
		t.Error("the link's target was written")
	}
}

func yamlJSON(t *testing.T, data []byte, v any) {
	t.Helper()
	j, err := sigsyaml.YAMLToJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(j, v); err != nil {
		t.Fatal(err)
	}
}

func jsonEqual(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// assertNothingLeftToDoFor is assertNothingLeftToDo for a run limited by
// --rule: the findings of the other rules stay.
func assertNothingLeftToDoFor(t *testing.T, o Options) {
	t.Helper()
	again, err := Plan(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Files) > 0 || len(again.Fixed) > 0 {
		t.Errorf("second run: %d files, %d fixed", len(again.Files), len(again.Fixed))
	}
}
