package main

// The hostile-input suite: what a scan is given on purpose to break it,
// tried as a user would (the command line, every format), each case
// bounded in time. It holds the defects an adversarial run found fixed
// (objects joined across directories, symbolic links, JSON objects one
// after another, remote Kustomize resources, named pipes, the cost of
// Lists and charts, control characters, negative probe numbers, links
// out of a chart, passwords in probe commands, a billion replicas, NaN in
// number flags, errors of several lines, a chart's values past the bound,
// Lists with a key given twice, field names that differ only in case) and
// what that run found
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
		// markup arrives escaped, never as a tag: in the page's JSON data,
		// which its script shows as text.
		if format == "html" && (strings.Contains(out, "owned\a<script>") || !strings.Contains(out, `owned\u0007\u003cscript\u003e`)) {
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

// A replica count past what the simulation plays one pod at a time (a
// billion never finished, 2 GB after a minute) is refused at once, from
// --replicas and from the manifest alike, with the bound.
func TestHostileSimulateRolloutReplicas(t *testing.T) {
	seed, err := os.ReadFile(filepath.Join(examples(t), "order-front-api.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// The Rollout alone (no autoscaler, no status): spec.replicas counts.
	ro, _, _ := strings.Cut(string(seed), "\nstatus:\n")
	huge := strings.Replace(ro, "spec:\n  revisionHistoryLimit: 4\n", "spec:\n  replicas: 1000000000\n  revisionHistoryLimit: 4\n", 1)
	if huge == ro || len(ro) == len(seed) {
		t.Fatal("the example changed: the test no longer writes spec.replicas")
	}
	f := filepath.Join(t.TempDir(), "huge.yaml")
	files(t, filepath.Dir(f), map[string]string{"huge.yaml": huge})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"simulate", "rollout", "-f", filepath.Join(examples(t), "order-front-api.yaml"), "--pod-capacity", "15", "--replicas", "1000000000"},
			"backfire: --replicas 1000000000: want a replica count from 1 to 150000\n"},
		{[]string{"simulate", "rollout", "-f", f, "--pod-capacity", "15"},
			"Rollout order-front-api: 1000000000 replicas is more than the 150000 pods the simulation plays one by one"},
		{[]string{"simulate", "rollout", "-f", f, "--pod-capacity", "15", "--compare"}, "1000000000 replicas is more than"},
	} {
		_, stderr, code := scanWithin(t, "", tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args[3:], code, stderr, tc.want)
		}
	}
	// A count from the manifest past the bound is played when --replicas
	// brings it within.
	if _, stderr, code := scanWithin(t, "", "simulate", "rollout", "-f", f, "--pod-capacity", "15", "--replicas", "20", "--seconds", "30"); code != exitClean {
		t.Errorf("--replicas 20: exit %d, stderr %s", code, stderr)
	}
}

// Number flags out of their range are usage errors naming the flag, NaN
// and the infinities included (a range check lets NaN through), and a
// count of 0 or less is never replaced by a default in silence.
func TestHostileNumberFlags(t *testing.T) {
	rollout := []string{"simulate", "rollout", "-f", filepath.Join(examples(t), "order-front-api.yaml"), "--pod-capacity", "15", "--seconds", "30"}
	probe := []string{"simulate", "probe", "-f", filepath.Join(examples(t), "registry-database.yaml"), "--latency", "p50=40ms,p99=1.2s"}
	dir := t.TempDir()
	files(t, dir, map[string]string{"pod.yaml": fmt.Sprintf(hostilePod, "p")})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{append(rollout, "--rps", "NaN"), "--rps NaN: want"},
		{append(rollout, "--rps", "+Inf"), "--rps +Inf: want"},
		{append(rollout, "--rps", "-1"), "--rps -1: want"},
		{append(rollout, "--pod-capacity", "NaN"), "--pod-capacity NaN: want"},
		{append(rollout, "--pod-capacity", "Inf"), "--pod-capacity +Inf: want"},
		{append(rollout, "--pod-capacity", "-3"), "--pod-capacity -3: want"},
		{append(rollout, "--broken-error-rate", "NaN"), "--broken-error-rate NaN: want a share from 0 to 1"},
		{append(rollout, "--broken-error-rate", "1.5"), "--broken-error-rate 1.5: want a share from 0 to 1"},
		{append(rollout, "--replicas", "0"), "--replicas 0: want a replica count from 1 to 150000"},
		{append(rollout, "--replicas", "-5"), "--replicas -5: want a replica count from 1 to 150000"},
		{append(rollout, "--seconds", "0"), "--seconds 0: want 1 to 86400"},
		{append(rollout, "--at", "-1m"), "--at -1m0s: want"},
		{append(rollout, "--broken-not-ready", "-1"), "--broken-not-ready -1: want"},
		{append(rollout, "--compare", "--compare-error-rates", "NaN"), `--compare-error-rates: "NaN" is not a number from 0 to 1`},
		{append(rollout, "--compare", "--compare-loads", "1,nan"), `--compare-loads: "nan" is not a number from 0 to 100`},
		{append(probe, "--hours", "NaN"), "--hours must be more than 0"},
		{append(probe, "--hours", "-Inf"), "--hours must be more than 0"},
		{append(probe[:len(probe)-1], "pNaN=1s"), "--latency: latency \"pNaN=1s\": the percentile must be between 0 and 100"},
		{append(probe, "--recovery", "-1s"), "--recovery must not be negative"},
		{[]string{"scan", "--max-file-size", "0", dir}, "--max-file-size 0: want a size in bytes"},
		{[]string{"fix", "--max-file-size", "-1", dir}, "--max-file-size -1: want a size in bytes"},
	} {
		_, stderr, code := scanWithin(t, "", tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args[len(tc.args)-2:], code, stderr, tc.want)
		}
	}
}

// An error of several lines (a chart's fail message) is written as lines,
// each escaped, not as one line of "\x0a".
func TestHostileMultiLineErrors(t *testing.T) {
	dir := t.TempDir()
	files(t, dir, map[string]string{
		"c/Chart.yaml":       "apiVersion: v2\nname: c\nversion: 0.1.0\n",
		"c/templates/a.yaml": "{{ fail \"first line\\nsecond line\\x1b[2J\" }}\n",
	})
	_, stderr, code := scanWithin(t, "", "scan", filepath.Join(dir, "c"))
	if code != exitUsage || strings.Contains(stderr, `\x0a`) || rawControl(stderr) >= 0 ||
		!strings.Contains(stderr, "template failed: first line\n  second line\\x1b[2J\n") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// What feeds a chart's templates is bounded before they run: values past
// --max-file-size are an error at the chart, naming it, and a --values
// file is not read past the bound. The template would have written the
// value a thousand times over before the rendered size was checked.
func TestHostileChartValuesBound(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("x", 120_000)
	files(t, dir, map[string]string{
		"chart/Chart.yaml":        "apiVersion: v2\nname: amplifier\nversion: 0.1.0\n",
		"chart/values.yaml":       "big: " + big + "\n",
		"chart/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n{{- range $i := until 1000 }}\n  k{{ $i }}: {{ $.Values.big }}\n{{- end }}\n{{ fail \"the templates ran\" }}\n",
		"big.yaml":                "big: " + big + "\n",
	})
	_, stderr, code := scanWithin(t, "", "scan", "--max-file-size", "100000", filepath.Join(dir, "chart"))
	if code != exitUsage || !strings.Contains(stderr, filepath.Join(dir, "chart", "Chart.yaml")+`: chart "amplifier": its values hold more than the 97 KiB a scan reads from one input; not rendered`) ||
		strings.Contains(stderr, "the templates ran") {
		t.Errorf("chart values: exit %d, stderr %s", code, stderr)
	}
	_, stderr, code = scanWithin(t, "", "scan", "--max-file-size", "100000", "--values", filepath.Join(dir, "big.yaml"), filepath.Join(dir, "chart"))
	if code != exitUsage || !strings.Contains(stderr, "--values "+filepath.Join(dir, "big.yaml")+": larger than the 97 KiB a scan reads from one input") {
		t.Errorf("--values: exit %d, stderr %s", code, stderr)
	}
}

// A List with a second "items" key (or a second "kind" after its items)
// is refused at that key's line, as a document with a key given twice is:
// read by its first items it gave no finding and exit 0, while kubectl
// applies the last.
func TestHostileListWithAKeyGivenTwice(t *testing.T) {
	db := "- apiVersion: apps/v1\n  kind: StatefulSet\n  metadata: {name: db}\n  spec:\n    template:\n      spec:\n        containers:\n        - name: postgres\n          image: postgres:16\n          livenessProbe:\n            exec: {command: [psql, -c, select 1]}\n"
	for name, in := range map[string]string{
		"yaml items": "apiVersion: v1\nkind: List\nitems:\n" + fmt.Sprintf("- "+strings.ReplaceAll(strings.TrimSuffix(hostilePod, "\n"), "\n", "\n  ")+"\n", "harmless") + "items:\n" + db,
		"yaml kind":  "apiVersion: v1\nkind: List\nitems: []\nkind: StatefulSet\nmetadata: {name: db}\nspec: {}\n",
		"json items": `{"apiVersion": "v1", "kind": "List", "items": [],` + "\n" + `"items": [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}]}`,
		"json kind":  `{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}],` + "\n" + `"kind": "Pod", "metadata": {"name": "q"}}`,
	} {
		_, stderr, code := scanWithin(t, in, "scan", "-")
		if code != exitUsage || !strings.Contains(stderr, "<stdin>:") || !strings.Contains(stderr, "already defined") {
			t.Errorf("%s: exit %d, stderr %s", name, code, stderr)
		}
	}
}

// Field names are read case-sensitively, as the API server reads them:
// `Exec: null` and `TcpSocket:` beside `exec:` leave the exec probe
// Kubernetes runs (BF101 and BF102 find it), and each dropped field is an
// error at its line. Read case-insensitively, the probe was a tcpSocket
// probe and nothing was found.
func TestHostileFieldNamesDifferingInCase(t *testing.T) {
	in := "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec:\n  template:\n    spec:\n      containers:\n      - name: postgres\n        image: postgres:16\n        livenessProbe:\n          exec: {command: [psql, -c, select 1]}\n          Exec: null\n          TcpSocket: {port: 5432}\n"
	out, stderr, code := scanWithin(t, in, "scan", "-")
	if code != exitUsage || !strings.Contains(out, "BF101") || !strings.Contains(out, "BF102") ||
		!strings.Contains(stderr, `<stdin>:12:11: StatefulSet db: unknown field "spec.template.spec.containers[0].livenessProbe.Exec", dropped by Kubernetes`) ||
		!strings.Contains(stderr, `<stdin>:13:11: StatefulSet db: unknown field "spec.template.spec.containers[0].livenessProbe.TcpSocket"`) {
		t.Errorf("exit %d, stderr %s, out %s", code, stderr, out)
	}
}
