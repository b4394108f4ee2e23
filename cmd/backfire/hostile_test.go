package main

// The hostile-input suite: what a scan is given on purpose to break it,
// tried as a user would (the command line, every format), each case
// bounded in time. It holds the defects an adversarial run found fixed
// (objects joined across directories, symbolic links, JSON objects one
// after another, remote Kustomize resources, named pipes, the cost of
// Lists and charts, control characters, negative probe numbers, links
// out of a chart, passwords in probe commands) and what that run found
// to hold already (malformed YAML, alias bombs, deep nesting, unreadable
// files, lookup, .Files.Get out of the chart, template recursion,
// Kustomize exec functions, escaping in JSON, SARIF, HTML). The webhook's
// hostile clients are in internal/webhook (TestSlowClientsDoNotHoldSlots,
// TestUnjudgedRequestsAreAnsweredByThePolicy, BenchmarkHostileClients).

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unicode"
)

// hostileDeadline bounds each case: a hang is a failure, not a stuck CI.
const hostileDeadline = 60 * time.Second

// scanWithin runs the command line within the deadline.
func scanWithin(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	type result struct {
		out, err string
		code     int
	}
	done := make(chan result, 1)
	go func() {
		o, e, c := execute(t, stdin, args...)
		done <- result{o, e, c}
	}()
	select {
	case r := <-done:
		return r.out, r.err, r.code
	case <-time.After(hostileDeadline):
		t.Fatalf("backfire %s did not finish within %v", strings.Join(args, " "), hostileDeadline)
	}
	return "", "", 0
}

func files(t *testing.T, dir string, fs map[string]string) {
	t.Helper()
	for name, data := range fs {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// rawControl finds a control character other than a line end.
func rawControl(s string) int {
	return strings.IndexFunc(s, func(r rune) bool { return r != '\n' && r != '\r' && r != '\t' && unicode.IsControl(r) })
}

const hostilePod = "apiVersion: v1\nkind: Pod\nmetadata: {name: %s}\nspec:\n  containers:\n  - name: web\n    image: nginx\n"

// Malformed input costs only itself: an error with its file and line, the
// other documents and files still scanned, exit 2.
func TestHostileMalformedYAML(t *testing.T) {
	dir := t.TempDir()
	files(t, dir, map[string]string{
		"bad.yaml":  "apiVersion: v1\nkind: Pod\nmetadata:\n  name: [unclosed\n---\n" + fmt.Sprintf(hostilePod, "after"),
		"good.yaml": fmt.Sprintf(hostilePod, "good"),
	})
	out, stderr, code := scanWithin(t, "", "scan", "--format", "json", dir)
	if code != exitUsage || !strings.Contains(out, filepath.Join(dir, "bad.yaml")) || !strings.Contains(out, `"line": 4`) {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	var doc struct {
		Summary struct{ Objects int } `json:"summary"`
	}
	if json.Unmarshal([]byte(out), &doc) != nil || doc.Summary.Objects != 2 {
		t.Errorf("objects scanned: %s", out)
	}
}

// An alias bomb and a document nested ten thousand deep are errors, in
// bounded time and memory.
func TestHostileAliasBombAndDeepNesting(t *testing.T) {
	dir := t.TempDir()
	bomb := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata:\n  a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
	for i := 1; i < 12; i++ {
		bomb += fmt.Sprintf("  a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	files(t, dir, map[string]string{
		"bomb.yaml": bomb,
		"deep.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: d}\ndata: " + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + "\n",
	})
	_, stderr, code := scanWithin(t, "", "scan", dir)
	if code != exitUsage || !strings.Contains(stderr, "bomb.yaml") || !strings.Contains(stderr, "deep.yaml") {
		t.Errorf("exit %d, stderr %s", code, stderr)
	}
}

// A file that cannot be read is an error naming it; the rest is scanned.
func TestHostileUnreadableFiles(t *testing.T) {
	dir := t.TempDir()
	files(t, dir, map[string]string{"ok.yaml": fmt.Sprintf(hostilePod, "ok"), "locked.yaml": fmt.Sprintf(hostilePod, "locked")})
	missing := filepath.Join(dir, "ok.yaml", "inside-a-file.yaml")
	args := []string{"scan", missing, dir}
	if os.Geteuid() != 0 { // root reads whatever the mode says
		if err := os.Chmod(filepath.Join(dir, "locked.yaml"), 0); err != nil {
			t.Fatal(err)
		}
	}
	_, stderr, code := scanWithin(t, "", args...)
	if code != exitUsage || !strings.Contains(stderr, missing) {
		t.Errorf("exit %d, stderr %s", code, stderr)
	}
	if os.Geteuid() != 0 && !strings.Contains(stderr, "locked.yaml: permission denied") {
		t.Errorf("stderr %s", stderr)
	}
}

// A chart's lookup finds nothing, .Files.Get cannot leave the chart, and
// a template that includes itself is an error: Helm's engine, as helm
// template runs it.
func TestHostileHelmTemplates(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret.txt")
	files(t, dir, map[string]string{
		"secret.txt":                  "hunter2",
		"chart/Chart.yaml":            "apiVersion: v2\nname: c\nversion: 0.1.0\n",
		"chart/templates/lookup.yaml": "{{- $s := lookup \"v1\" \"Secret\" \"kube-system\" \"x\" }}\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: l}\ndata:\n  found: {{ len $s | quote }}\n  file: {{ .Files.Get \"../secret.txt\" | quote }}\n  abs: {{ .Files.Get \"" + secret + "\" | quote }}\n",
	})
	out, stderr, code := scanWithin(t, "", "scan", "--format", "json", filepath.Join(dir, "chart"))
	if code != exitClean || strings.Contains(out+stderr, "hunter2") {
		t.Errorf("lookup and Files.Get: exit %d, stderr %s, out %s", code, stderr, out)
	}
	files(t, dir, map[string]string{"chart/templates/loop.yaml": "{{- define \"r\" }}{{ include \"r\" . }}{{ end }}{{ include \"r\" . }}\n"})
	_, stderr, code = scanWithin(t, "", "scan", filepath.Join(dir, "chart"))
	if code != exitUsage || !strings.Contains(stderr, "loop.yaml") {
		t.Errorf("recursion: exit %d, stderr %s", code, stderr)
	}
}

// A Kustomize function or plugin that would run a program is refused, and
// the program does not run.
func TestHostileKustomizeExecFunctionIsRefused(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	files(t, dir, map[string]string{
		"k/kustomization.yaml": "resources:\n- pod.yaml\ntransformers:\n- fn.yaml\n",
		"k/pod.yaml":           fmt.Sprintf(hostilePod, "p"),
		"k/fn.yaml":            "apiVersion: example.com/v1\nkind: Run\nmetadata:\n  name: run\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: ./run.sh\n",
		"k/run.sh":             "#!/bin/sh\ntouch " + marker + "\ncat\n",
	})
	if err := os.Chmod(filepath.Join(dir, "k", "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := scanWithin(t, "", "scan", filepath.Join(dir, "k"))
	if code != exitUsage || !strings.Contains(stderr, "kustomization.yaml") {
		t.Errorf("exit %d, stderr %s", code, stderr)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the function ran")
	}
}

// Objects in sibling directories do not answer each other: scanning them
// together gives what scanning each gives.
func TestHostileSiblingTreesAreApart(t *testing.T) {
	dir := t.TempDir()
	deploy := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: media}\nspec:\n  template:\n    spec:\n      containers:\n      - name: t\n        image: x\n        readinessProbe: {exec: {command: [/bin/ready]}, periodSeconds: 5, failureThreshold: 1}\n"
	files(t, dir, map[string]string{
		"a/hpa.yaml":    "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: media}\nspec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: media}, minReplicas: 2, maxReplicas: 20}\n",
		"b/deploy.yaml": deploy,
	})
	t.Chdir(dir)
	alone, _, _ := scanWithin(t, "", "scan", "--format", "short", "b")
	both, _, _ := scanWithin(t, "", "scan", "--format", "short", "a", "b")
	if alone == "" || alone != both {
		t.Errorf("b alone:\n%s\na and b:\n%s", alone, both)
	}
}

// A directory named through a symbolic link is walked, without a
// trailing slash too; a link out of the named path is an error.
func TestHostileSymlinks(t *testing.T) {
	dir := t.TempDir()
	files(t, dir, map[string]string{"real/pod.yaml": fmt.Sprintf(hostilePod, "p"), "outside.yaml": fmt.Sprintf(hostilePod, "o")})
	if err := os.Symlink("real", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "outside.yaml"), filepath.Join(dir, "real", "out.yaml")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	out, stderr, code := scanWithin(t, "", "scan", "link")
	if code != exitUsage || !strings.Contains(stderr, "link/out.yaml: symbolic link to "+filepath.Join(dir, "outside.yaml")+", which is outside link; not read") ||
		!strings.Contains(out, "in 1 object ") {
		t.Errorf("exit %d, stderr %s, out %s", code, stderr, out)
	}
}

// JSON objects one after another are all read.
func TestHostileConcatenatedJSON(t *testing.T) {
	in := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"}}{"apiVersion":"v1","kind":"Pod","metadata":{"name":"b"}}` + "\n" + `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"c"}}`
	out, _, _ := scanWithin(t, in, "scan", "--format", "json", "-")
	if !strings.Contains(out, `"objects": 3`) {
		t.Errorf("%s", out)
	}
	_, stderr, code := scanWithin(t, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"}} trailing`, "scan", "-")
	if code != exitUsage || !strings.Contains(stderr, "<stdin>:1") {
		t.Errorf("trailing: exit %d, %s", code, stderr)
	}
}

// A kustomization's remote resource is not fetched: an error names it.
func TestHostileRemoteKustomizeResources(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	dir := t.TempDir()
	files(t, dir, map[string]string{"kustomization.yaml": "resources:\n- " + srv.URL + "/x.yaml\n- github.com/org/repo//base?ref=v1\n"})
	_, stderr, code := scanWithin(t, "", "scan", dir)
	if code != exitUsage || !strings.Contains(stderr, srv.URL+"/x.yaml\" is remote") || !strings.Contains(stderr, "github.com/org/repo//base?ref=v1\" is remote") || hits.Load() != 0 {
		t.Errorf("exit %d, %d requests, stderr %s", code, hits.Load(), stderr)
	}
}

// Named pipes where files are expected are errors, not a scan that waits
// forever.
func TestHostileNamedPipes(t *testing.T) {
	dir := t.TempDir()
	files(t, dir, map[string]string{"k/kustomization.yaml": "resources:\n- pipe.yaml\n", "plain/ok.yaml": fmt.Sprintf(hostilePod, "p")})
	for _, p := range []string{"k/pipe.yaml", "plain/pipe.yaml", "k2/kustomization.yaml"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(filepath.Join(dir, p), 0o644); err != nil {
			t.Skip("no named pipes:", err)
		}
	}
	_, stderr, code := scanWithin(t, "", "scan", dir)
	if code != exitUsage || strings.Count(stderr, "not a regular file (a named pipe)") != 3 {
		t.Errorf("exit %d, stderr %s", code, stderr)
	}
}

// A large List and a chart of many documents are read in bounded time; a
// chart's output beyond --max-file-size is an error at the chart.
func TestHostileCost(t *testing.T) {
	dir := t.TempDir()
	var list strings.Builder
	list.WriteString(`{"apiVersion":"v1","kind":"List","items":[`)
	for i := range 20000 {
		if i > 0 {
			list.WriteString(",\n")
		}
		fmt.Fprintf(&list, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c%d"},"data":{"k":"v"}}`, i)
	}
	list.WriteString("]}\n")
	files(t, dir, map[string]string{
		"list.json":                 list.String(),
		"chart/Chart.yaml":          "apiVersion: v2\nname: many\nversion: 0.1.0\n",
		"chart/templates/many.yaml": "{{- range until 20000 }}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c{{ . }}}\n{{- end }}\n",
	})
	out, stderr, code := scanWithin(t, "", "scan", "--format", "json", dir)
	if code != exitClean || !strings.Contains(out, `"objects": 40000`) {
		t.Errorf("exit %d, stderr %s, summary %s", code, stderr, out[strings.Index(out, `"summary"`):])
	}
	_, stderr, code = scanWithin(t, "", "scan", "--max-file-size", "100000", filepath.Join(dir, "chart"))
	if code != exitUsage || !strings.Contains(stderr, "more than the 97 KiB a scan reads from one input") {
		t.Errorf("bound: exit %d, stderr %s", code, stderr)
	}
}

// Control characters of the input reach no format read on a terminal or
// in a log raw; JSON and SARIF escape them as their syntax does, and the
// HTML report escapes markup (a browser shows no control character).
func TestHostileControlCharacters(t *testing.T) {
	dir := t.TempDir()
	files(t, dir, map[string]string{"evil.yaml": "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: \"db\\e]0;owned\\a<script>\"}\nspec:\n  template:\n    spec:\n      containers:\n      - name: postgres\n        image: postgres:16\n        livenessProbe: {httpGet: {path: \"/h\\e[2J\", port: 5432}}\n"})
	for _, format := range []string{"text", "short", "github", "json", "sarif", "html"} {
		out, stderr, _ := scanWithin(t, "", "scan", "--format", format, dir)
		if i := rawControl(out + stderr); i >= 0 && format != "html" {
			t.Errorf("%s: a control character reaches the output: %q", format, (out + stderr)[max(0, i-30):min(len(out+stderr), i+30)])
		}
		if !strings.Contains(out, "evil.yaml") {
			t.Errorf("%s: the object is not reported: %s", format, out)
		}
		// The page has scripts of its own: what matters is that the name's
		// markup arrives escaped, never as a tag.
		if format == "html" && (strings.Contains(out, "owned\a<script>") || !strings.Contains(out, "&lt;script&gt;")) {
			t.Errorf("html: the name is not escaped")
		}
	}
}

// Negative probe numbers are refused as the API server refuses them.
func TestHostileNegativeProbeNumbers(t *testing.T) {
	in := "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec:\n  template:\n    spec:\n      containers:\n      - name: postgres\n        image: postgres:16\n        livenessProbe:\n          tcpSocket: {port: 5432}\n          periodSeconds: -4\n"
	out, stderr, code := scanWithin(t, in, "scan", "-")
	if code != exitUsage || !strings.Contains(stderr, "<stdin>:12:11: StatefulSet \"db\" is invalid: spec.template.spec.containers[0].livenessProbe.periodSeconds: Invalid value: -4: must be greater than or equal to 0") ||
		strings.Contains(out, "-4 s") {
		t.Errorf("exit %d, stderr %s, out %s", code, stderr, out)
	}
}

// A chart linked to a file outside the path named is not rendered: the
// file's contents appear nowhere.
func TestHostileChartLinkOut(t *testing.T) {
	dir := t.TempDir()
	files(t, dir, map[string]string{
		"secret.env":       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: leaked}\ndata: {token: hunter2}\n",
		"chart/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n",
	})
	if err := os.MkdirAll(filepath.Join(dir, "chart", "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"env.yaml": filepath.Join(dir, "secret.env"), "proc.yaml": "/proc/self/environ"} {
		if err := os.Symlink(target, filepath.Join(dir, "chart", "templates", name)); err != nil {
			t.Fatal(err)
		}
	}
	out, stderr, code := scanWithin(t, "", "scan", "--format", "json", filepath.Join(dir, "chart"))
	if code != exitUsage || !strings.Contains(out, "is a symbolic link to") || strings.Contains(out+stderr, "hunter2") || strings.Contains(out+stderr, "PATH=") {
		t.Errorf("exit %d, stderr %s, out %s", code, stderr, out)
	}
}

// A password written in a probe command is masked in every format.
func TestHostilePasswordsAreMasked(t *testing.T) {
	dir := t.TempDir()
	files(t, dir, map[string]string{"db.yaml": `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: catalog-mysql}
spec:
  template:
    spec:
      containers:
      - name: mysql
        image: mysql:8.4
        ports: [{name: mysql, containerPort: 3306}]
        livenessProbe:
          exec:
            command:
            - mysqladmin
            - ping
            - -uroot
            - -phunter2
          initialDelaySeconds: 60
          timeoutSeconds: 3
        readinessProbe:
          exec:
            command: [sh, -c, 'MYSQL_PWD=hunter2 mysql -e "SELECT 1"']
`})
	for _, format := range []string{"text", "short", "github", "json", "sarif", "html"} {
		out, stderr, code := scanWithin(t, "", "scan", "--format", format, dir)
		if code != exitFindings {
			t.Errorf("%s: exit %d, stderr %s", format, code, stderr)
		}
		if strings.Contains(out+stderr, "hunter2") {
			t.Errorf("%s: the password is printed:\n%s", format, out)
		}
		if !strings.Contains(out, "-p****") {
			t.Errorf("%s: the command is not shown masked:\n%s", format, out)
		}
	}
}
