package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"backfire.dev/backfire/internal/cluster/clustertest"
	"backfire.dev/backfire/internal/load"
)

func diagnoseSeedArgs(t *testing.T, extra ...string) []string {
	dir := filepath.Join(examples(t), "diagnose")
	return append([]string{"diagnose", filepath.Join(dir, "pod.txt"),
		"--events", filepath.Join(dir, "events.txt"),
		"--logs", "database=" + filepath.Join(dir, "database.log"),
		"--logs", "registry-core=" + filepath.Join(dir, "registry-core.log")}, extra...)
}

type diagnoseReport struct {
	Findings []struct {
		Rule, Severity, Container, File, Message string
		Line                                     int
		Evidence                                 map[string]any
	}
	Errors []struct{ File, Message string }
}

func TestDiagnoseSeed003(t *testing.T) {
	out, stderr, code := execute(t, "", diagnoseSeedArgs(t)...)
	if code != exitFindings || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{
		"container database: 42 restarts, last exit 141 (Error)",
		"read: 7 events about this pod (1 about other objects, not used)",
		"BF501 restart-period-matches-probe", "one every 5.7 min", "= 5.5 min: the probe is the killer",
		"BF502 exit-code", "exit 141 = 128 + 13 (SIGPIPE) is arithmetic, not a mechanism",
		"BF503 recovery-loop-in-logs", "the loop is confirmed",
		"client registry-core was refused 30 times",
		"BF101 liveness-fails-during-recovery",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(out)
	}

	out, stderr, code = execute(t, "", diagnoseSeedArgs(t, "--format", "json")...)
	if code != exitFindings || stderr != "" {
		t.Fatalf("json: exit %d, stderr %q", code, stderr)
	}
	validateSchema(t, out)
	var rep diagnoseReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range rep.Findings {
		seen[f.Rule+" "+f.Severity+" "+f.Container] = true
		if f.Rule == "BF501" && (f.Evidence["predictedSeconds"] != float64(330) || f.Evidence["intervals"] != float64(15)) {
			t.Errorf("BF501 evidence %v", f.Evidence)
		}
	}
	for _, k := range []string{"BF501 error database", "BF502 info database", "BF503 error database", "BF503 warning registry-core", "BF101 error database"} {
		if !seen[k] {
			t.Errorf("no %s in %v", k, seen)
		}
	}
	// --fail-on none: findings do not fail the run.
	if _, _, code := execute(t, "", diagnoseSeedArgs(t, "--fail-on", "none")...); code != exitClean {
		t.Errorf("--fail-on none: exit %d", code)
	}
}

func TestDiagnoseStdinAndBadInput(t *testing.T) {
	pod, err := os.ReadFile(filepath.Join(examples(t), "diagnose", "pod.txt"))
	if err != nil {
		t.Fatal(err)
	}
	out, _, code := execute(t, string(pod), "diagnose", "-")
	if code != exitFindings || !strings.Contains(out, "Pod registry/registry-database-0  <stdin>") || !strings.Contains(out, "BF501") {
		t.Errorf("stdin: exit %d\n%s", code, out)
	}
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	truncated := write("events.json", `{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Event", "metad`)
	out, stderr, code := execute(t, string(pod), "diagnose", "-", "--events", truncated)
	if code != exitUsage || !strings.Contains(stderr, truncated+":") || !strings.Contains(out, "BF501") {
		t.Errorf("truncated events: exit %d, stderr %q: the pod must still be diagnosed", code, stderr)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"diagnose"}, "backfire: diagnose needs one POD file (or - for standard input), or --cluster and a pod name, or --logs alone\n"},
		{[]string{"diagnose", "x.yaml", "--context", "prod"}, "backfire: --context needs --cluster\n"},
		{[]string{"diagnose", "x.yaml", "-n", "prod"}, "backfire: --namespace needs --cluster\n"},
		{[]string{"diagnose", "x.yaml", "--format", "sarif"}, "backfire: unknown --format \"sarif\" (want text or json)\n"},
		{[]string{"diagnose", "-", "--logs", "database="}, "backfire: --logs \"database=\": want [CONTAINER=]FILE\n"},
	} {
		_, stderr, code := execute(t, "", tc.args...)
		if code != exitUsage || stderr != tc.want {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, stderr, tc.want)
		}
	}
	if _, stderr, code := execute(t, "", "diagnose", filepath.Join(dir, "missing.yaml")); code != exitUsage || !strings.Contains(stderr, "missing.yaml") {
		t.Errorf("missing file: exit %d, %q", code, stderr)
	}
	// A log alone, as the pod argument or with --logs, is read for what
	// it shows.
	pglog := write("pg.log", "LOG:  database system was interrupted while in recovery at 2026-11-12 07:29:42 UTC\nFATAL:  the database system is starting up\n")
	for _, args := range [][]string{{"diagnose", pglog}, {"diagnose", "--logs", "db=" + pglog}} {
		if out, stderr, code := execute(t, "", args...); code != 0 || stderr != "" || !strings.Contains(out, "BF503") || !strings.Contains(out, "killed while it recovered") {
			t.Errorf("%v: exit %d, stderr %q, out %s", args, code, stderr, out)
		}
	}
	notPod := write("d.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n")
	if _, stderr, code := execute(t, "", "diagnose", notPod); code != exitUsage || !strings.Contains(stderr, "no Pod in the input") {
		t.Errorf("no pod: exit %d, %q", code, stderr)
	}
}

// The diagnose rules are in the catalog, and scan does not run them.
func TestDiagnoseRulesInCatalogNotInScan(t *testing.T) {
	out, _, _ := execute(t, "", "rules")
	for _, id := range []string{"BF501", "BF502", "BF503"} {
		if !strings.Contains(out, id) {
			t.Errorf("rules lacks %s", id)
		}
	}
	pod, _ := os.ReadFile(filepath.Join(examples(t), "diagnose", "pod.txt"))
	out, _, _ = execute(t, string(pod), "scan", "-")
	if strings.Contains(out, "BF50") || !strings.Contains(out, "BF101") {
		t.Errorf("scan of a live pod dump:\n%s", out)
	}
}

// diagnose --cluster against the real API server: the pod and its events
// are created there; the logs come through a fake, as there is no kubelet.
func TestDiagnoseCluster(t *testing.T) {
	env := clustertest.Shared(t)
	t.Cleanup(clustertest.StopShared)
	dir := filepath.Join(examples(t), "diagnose")
	ns := env.FreshNamespace(t, "diag")
	created := create(t, env, ns, filepath.Join(dir, "pod.txt"), "")
	if created == "" {
		t.Fatal("pod not created")
	}
	create(t, env, ns, filepath.Join(dir, "events.txt"), created)
	log, err := os.ReadFile(filepath.Join(dir, "database.log"))
	if err != nil {
		t.Fatal(err)
	}
	var asked []string
	podLogs = func(_ context.Context, namespace, pod, container string, previous bool) ([]byte, error) {
		asked = append(asked, strings.Join([]string{namespace, pod, container, map[bool]string{true: "previous", false: "current"}[previous]}, "/"))
		if container == "database" {
			return log, nil
		}
		return nil, nil
	}
	t.Cleanup(func() { podLogs = nil })
	kc := kubeconfig(t, env.Config, env.Config)
	out, stderr, code := execute(t, "", "diagnose", "--cluster", "--kubeconfig", kc, "-n", ns, "registry-database-0")
	if code != exitFindings || stderr != "" {
		t.Fatalf("exit %d, stderr %q\n%s", code, stderr, out)
	}
	for _, want := range []string{
		"Pod " + ns + "/registry-database-0  cluster://admin/" + ns + "/Pod/registry-database-0",
		"read: 7 events about this pod", "one every 5.7 min", "the loop is confirmed", "exit 141 = 128 + 13",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q\n%s", want, out)
		}
	}
	want := []string{ns + "/registry-database-0/data-permissions-ensurer/current", ns + "/registry-database-0/database/previous", ns + "/registry-database-0/database/current"}
	if strings.Join(asked, " ") != strings.Join(want, " ") {
		t.Errorf("logs asked %v, want %v", asked, want)
	}
	// Without the fake, logs go through the API server, which has no
	// kubelet to ask: a note, and the diagnosis goes on.
	podLogs = nil
	out, stderr, code = execute(t, "", "diagnose", "--cluster", "--kubeconfig", kc, "-n", ns, "registry-database-0", "--format", "json")
	if code != exitFindings || !strings.Contains(stderr, "log not read") {
		t.Errorf("no kubelet: exit %d, stderr %q", code, stderr)
	}
	validateSchema(t, out)
	if _, stderr, code := execute(t, "", "diagnose", "--cluster", "--kubeconfig", kc, "-n", ns, "missing-0"); code != exitUsage || !strings.Contains(stderr, "not found") {
		t.Errorf("missing pod: exit %d, %q", code, stderr)
	}
}

// create creates the objects of a capture in namespace ns, as the capture
// shows them (status included); events are pointed at the pod's new UID.
// It returns the UID of the pod it created.
func create(t *testing.T, env *clustertest.Env, ns, path, podUID string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f := load.Parse(path, data)
	uid := ""
	for _, d := range f.Documents {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(d.JSON); err != nil {
			t.Fatal(err)
		}
		u.SetNamespace(ns)
		u.SetResourceVersion("")
		u.SetUID("")
		if u.GetKind() == "Event" {
			_ = unstructured.SetNestedField(u.Object, ns, "involvedObject", "namespace")
			name, _, _ := unstructured.NestedString(u.Object, "involvedObject", "name")
			if name == "registry-database-0" {
				_ = unstructured.SetNestedField(u.Object, podUID, "involvedObject", "uid")
			}
		}
		env.Create(t, u)
		if u.GetKind() == "Pod" {
			p, err := env.Typed.CoreV1().Pods(ns).Get(context.Background(), u.GetName(), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			uid = string(p.UID)
		}
	}
	return uid
}
