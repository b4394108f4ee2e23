package diagnose

import (
	"path/filepath"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/observe"
)

// Regression tests for the shapes of paste that round 2 of the real-capture
// evaluation misread or over-claimed on (docs/diagnose.md). The public
// captures are in testdata/captures (SOURCES.md); the other inputs are
// written here in the shape kubectl prints, where no public paste of that
// shape was found.

func diag(t *testing.T, name, text string) *Diagnosis {
	t.Helper()
	res, err := Run(Input{Pods: Stream{Name: name, Data: []byte(text)}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func pinned(t *testing.T, file string) *Diagnosis {
	t.Helper()
	return diag(t, file, string(read(t, filepath.Join("testdata", "captures", file))))
}

// bf5 lists the diagnose findings as "RULE severity container: message".
func bf5(res *Diagnosis) []string {
	var out []string
	for _, f := range res.Findings {
		if strings.HasPrefix(f.Rule, "BF5") {
			out = append(out, f.Rule+" "+f.Severity.String()+" "+f.Container+": "+f.Message)
		}
	}
	return out
}

// An exec probe whose command ends in a newline (a YAML "- |" script):
// kubectl prints the closing "] delay=... #failure=5" on a line of its
// own. Its settings are the probe's, not the defaults.
func TestExecProbeOverSeveralLines(t *testing.T) {
	// bitnami/charts#11263: a script of two lines.
	res := pinned(t, "bitnami-11263-exec-probe-multiline.txt")
	if len(res.Pods) != 1 || len(res.Pods[0].Pod.Pod.Spec.Containers) != 1 {
		t.Fatalf("pods %+v", res.Pods)
	}
	rp := res.Pods[0].Pod.Pod.Spec.Containers[0].ReadinessProbe
	if rp == nil || rp.InitialDelaySeconds != 5 || rp.PeriodSeconds != 10 || rp.TimeoutSeconds != 5 || rp.FailureThreshold != 6 {
		t.Fatalf("readiness probe %+v", rp)
	}
	if cmd := strings.Join(rp.Exec.Command, " "); !strings.Contains(cmd, "pg_isready") || !strings.Contains(cmd, ".initialized ]") {
		t.Errorf("command %q", cmd)
	}

	// The shape: a liveness probe of 60 + 5 x 30 = 210 s, read once.
	res = diag(t, "liveness.txt", `    Restart Count:  7
    Liveness:       exec [/bin/sh -c -e exec pg_isready -U "postgres" -h 127.0.0.1 -p 5432
] delay=60s timeout=5s period=30s #success=1 #failure=5
    Readiness:      exec [/bin/sh -c -e exec pg_isready -U "postgres" -h 127.0.0.1 -p 5432
] delay=5s timeout=5s period=10s #success=1 #failure=6
`)
	got := bf5(res)
	if len(got) != 1 || !strings.Contains(got[0], "60 + 5 x 30 = 210 s") || strings.Contains(got[0], "readiness") {
		t.Errorf("want one BF501 on the 210 s liveness budget, got %q", got)
	}
}

// kubectl describe pod | grep Liveness on a pod of two containers: one line
// per container, both kept; the Unhealthy row naming one probe's port is
// that container's, and the paste is one pod.
func TestGrepLivenessOfTwoContainers(t *testing.T) {
	res := diag(t, "grep.txt", `$ kubectl describe pod web-7d9c | grep Liveness
    Liveness:       http-get http://:8080/healthz delay=10s timeout=1s period=10s #success=1 #failure=3
    Liveness:       exec [cat /tmp/healthy] delay=5s timeout=1s period=5s #success=1 #failure=3
$ kubectl get events
LAST SEEN   TYPE      REASON      OBJECT         MESSAGE
2m          Warning   Unhealthy   pod/web-7d9c   Liveness probe failed: Get "http://10.1.0.7:8080/healthz": dial tcp 10.1.0.7:8080: connect: connection refused
`)
	if len(res.Pods) != 1 || res.Pods[0].Pod.Ref.Name != "web-7d9c" {
		t.Fatalf("want one pod web-7d9c, got %d", len(res.Pods))
	}
	cs := res.Pods[0].Pod.Pod.Spec.Containers
	if len(cs) != 2 || cs[0].LivenessProbe == nil || cs[0].LivenessProbe.HTTPGet == nil || cs[1].LivenessProbe == nil || cs[1].LivenessProbe.Exec == nil {
		t.Fatalf("containers %+v", cs)
	}
	if cs[0].Name == cs[1].Name {
		t.Errorf("two containers named %q", cs[0].Name)
	}
	f := one(t, res, "BF501", finding.Info, cs[0].Name)
	if !strings.Contains(strings.Join(f.Mechanism, "\n"), "liveness probe failed 1 time") {
		t.Errorf("the Unhealthy row is not the http-get container's: %v", f.Mechanism)
	}
	for _, g := range bf5(res) {
		if strings.Contains(g, cs[1].Name+":") && strings.Contains(g, "failed 1 time") {
			t.Errorf("the exec container took the http-get probe's failure: %s", g)
		}
	}
}

// A get events Killing row keeps its verdict beside the pod's get pods row.
func TestGetEventsKillingBesideGetPods(t *testing.T) {
	res := diag(t, "rows.txt", `$ kubectl get pods
NAME       READY   STATUS    RESTARTS      AGE
web-7d9c   1/1     Running   4 (57s ago)   10m
$ kubectl get events
LAST SEEN   TYPE      REASON      OBJECT         MESSAGE
58s         Normal    Killing     pod/web-7d9c   Container web failed liveness probe, will be restarted
`)
	f := one(t, res, "BF501", finding.Warning, "web")
	if !strings.Contains(f.Message, "killed container web 1 time for failing its liveness probe") {
		t.Errorf("BF501: %s", f.Message)
	}
}

// A Liveness line alone gives the budget and what a period equal to it
// would mean.
func TestLivenessLineAlone(t *testing.T) {
	res := diag(t, "line.txt", "    Liveness:   http-get http://:8080/healthz delay=60s timeout=5s period=30s #success=1 #failure=5\n")
	f := one(t, res, "BF501", finding.Info, observe.Unnamed)
	mech := strings.Join(f.Mechanism, "\n")
	if !strings.Contains(f.Message, "60 + 5 x 30 = 210 s") || !strings.Contains(mech, "is the liveness probe's arithmetic") {
		t.Errorf("BF501: %s\n%s", f.Message, mech)
	}
}

// A paste cut at "Exit Code:" is read as far as it goes: no error, the
// code not shown, and a restart count that was not printed is unknown,
// never 0.
func TestCutAtExitCode(t *testing.T) {
	res := diag(t, "cut.txt", `    State:          Waiting
      Reason:       CrashLoopBackOff
    Last State:     Terminated
      Reason:       Error
      Exit Code:`)
	if len(res.Errors) > 0 {
		t.Errorf("a cut paste is an error: %v", res.Errors)
	}
	f := one(t, res, "BF502", finding.Info, observe.Unnamed)
	mech := strings.Join(f.Mechanism, "\n")
	if !strings.Contains(f.Message, "which the capture does not show") || strings.Contains(mech, "0 restarts") || !strings.Contains(mech, "restart count unknown") {
		t.Errorf("BF502: %s\n%s", f.Message, mech)
	}
}

// Exit 0 with reason OOMKilled (kubernetes/kubernetes#131530): a process
// in the container was OOM-killed; the main process exited 0 itself.
func TestOOMKilledWithExit0(t *testing.T) {
	res := pinned(t, "k8s-131530-oomkilled-exit-0.txt")
	f := one(t, res, "BF502", finding.Warning, observe.Unnamed)
	if strings.Contains(f.Message, "ended the container") || !strings.Contains(f.Message, "reason OOMKilled with exit 0") {
		t.Errorf("BF502: %s", f.Message)
	}
}

// 137 without OOMKilled makes the OOM killer unlikely, not impossible.
func TestSIGKILLWithoutOOMKilledIsNotProof(t *testing.T) {
	res := diag(t, "137.txt", "    Last State:     Terminated\n      Reason:       Error\n      Exit Code:    137\n    Restart Count:  3\n")
	f := one(t, res, "BF502", finding.Info, observe.Unnamed)
	mech := strings.Join(f.Mechanism, "\n")
	if strings.Contains(f.Message, "not the OOM killer") || !strings.Contains(f.Message, "unlikely") || !strings.Contains(mech, "can be missed") {
		t.Errorf("BF502: %s\n%s", f.Message, mech)
	}
}

// An exit code in a paste put together by hand, under a State that names
// the waiting reason, or with no State at all, is the last run's.
func TestHandAssembledExitCode(t *testing.T) {
	for _, in := range []string{
		"State: CrashLoopBackOff\nExit Code: 100\nRestart Count: 9\n",
		"my pod keeps restarting\nExit Code: 100\nRestart Count: 9\n",
	} {
		res := diag(t, "hand.txt", in)
		f := one(t, res, "BF502", finding.Info, observe.Unnamed)
		if !strings.Contains(f.Message, "exit 100") || !strings.Contains(strings.Join(f.Mechanism, " "), "after 9 restarts") {
			t.Errorf("%q: BF502 %s %v", in, f.Message, f.Mechanism)
		}
	}
}

// A describe capture whose section labels are in another language: the
// container's lines split by unknown labels are one container, its
// findings come once, its Killing events are seen, and its restart count
// is read where it was printed.
func TestLocalizedLabels(t *testing.T) {
	res := diag(t, "loc.txt", `Nom:              web-0
Espace de noms:   shop
Conteneurs:
  web:
    Image:          nginx:1.27
    État:           Running
    Dernier état:   Terminated
      Reason:       Error
      Exit Code:    137
      Started:      Thu, 12 Nov 2026 09:58:00 +0000
      Finished:     Thu, 12 Nov 2026 09:59:58 +0000
    Prêt:           True
    Restart Count:  5
    Liveness:       http-get http://:80/healthz delay=10s timeout=1s period=10s #success=1 #failure=3
Événements:
  Type     Reason     Age   From     Message
  ----     ------     ----  ----     -------
  Normal   Killing    9m    kubelet  Container web failed liveness probe, will be restarted
  Normal   Killing    7m    kubelet  Container web failed liveness probe, will be restarted
  Normal   Killing    5m    kubelet  Container web failed liveness probe, will be restarted
`)
	got := bf5(res)
	n501, n502 := 0, 0
	for _, g := range got {
		n501 += strings.Count(g[:5], "BF501")
		n502 += strings.Count(g[:5], "BF502")
	}
	if n501 != 1 || n502 != 1 {
		t.Errorf("want BF501 and BF502 once each, got %q", got)
	}
	all := strings.Join(got, "\n")
	for _, f := range res.Findings {
		all += "\n" + strings.Join(f.Mechanism, "\n")
	}
	if strings.Contains(all, "no Killing event") || strings.Contains(all, "0 restarts") {
		t.Errorf("misread:\n%s", all)
	}
}

// A probe whose shell cannot find its command (the shell's words, not
// runc's) cannot run: every probe fails, its timing is ruled out.
func TestShellCommandNotFound(t *testing.T) {
	for in, cmd := range map[string]string{
		"Liveness probe failed: sh: 1: pgrep: not found":               "pgrep",
		"Liveness probe failed: bash: line 1: curl: command not found": "curl",
		"Liveness probe failed: /bin/sh: curl: not found":              "curl",
	} {
		res := diag(t, "events.txt", "  Type     Reason     Age              From     Message\n"+
			"  ----     ------     ----             ----     -------\n"+
			"  Warning  Unhealthy  2m (x9 over 3m)  kubelet  "+in+"\n"+
			"  Normal   Killing    2m (x3 over 3m)  kubelet  Container worker failed liveness probe, will be restarted\n")
		f := one(t, res, "BF501", finding.Error, "worker")
		if !strings.Contains(f.Message, `the liveness probe cannot run: its command "`+cmd+`"`) {
			t.Errorf("%s: BF501 %s", in, f.Message)
		}
	}
}

// A server's log alone (sapcc/openstack-helm#64) is read, not refused as
// YAML, and says what it shows; so are --logs given without a pod.
func TestLogAlone(t *testing.T) {
	res := pinned(t, "sapcc-64-postgres-recovery-log.txt")
	if len(res.Errors) > 0 {
		t.Fatalf("errors %v", res.Errors)
	}
	f := one(t, res, "BF503", finding.Info, observe.Unnamed)
	if !strings.Contains(f.Message, "PostgreSQL recovered from a crash at 1 start") || f.Line != 10 {
		t.Errorf("BF503 at %d: %s", f.Line, f.Message)
	}
	log := read(t, filepath.Join("testdata", "captures", "sapcc-64-postgres-recovery-log.txt"))
	res, err := Run(Input{Logs: []observe.Log{{Container: "postgres", File: "pg.log", Data: log}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) > 0 || len(res.Pods) != 1 {
		t.Fatalf("errors %v, %d pods", res.Errors, len(res.Pods))
	}
	one(t, res, "BF503", finding.Info, "postgres")
}

// The last run is a run: it is compared with the probe's run (D + F x P),
// not with a restart cycle that includes the back-off, and the JSON's
// predictedSeconds is that same quantity.
func TestLastRunAgainstARun(t *testing.T) {
	res := diag(t, "run.txt", `    Last State:     Terminated
      Reason:       Error
      Exit Code:    1
      Started:      Mon, 01 Jan 2024 10:00:00 +0000
      Finished:     Mon, 01 Jan 2024 10:02:00 +0000
    Restart Count:  5
    Liveness:       http-get http://:8080/ delay=0s timeout=1s period=2s #success=1 #failure=3
`)
	f := one(t, res, "BF501", finding.Info, observe.Unnamed)
	mech := strings.Join(f.Mechanism, "\n")
	if !strings.Contains(mech, "the last run of 120 s (2.0 min) is outside 4-38 s, a run that a liveness kill explains") {
		t.Errorf("BF501 mechanism:\n%s", mech)
	}
	if f.Evidence["predictedSeconds"] != 6 || f.Evidence["observedMeasure"] != "last run" {
		t.Errorf("evidence %v: predictedSeconds must be the run, 0 + 3 x 2", f.Evidence)
	}
}

// A piece of kubectl get pod -o yaml (a container status with its
// lastState) is read: the exit code, the reason, the restart count.
func TestYAMLStatusFragment(t *testing.T) {
	res := diag(t, "status.yaml", `  containerStatuses:
  - containerID: containerd://4f1c
    image: example/worker:1.4
    lastState:
      terminated:
        containerID: containerd://9a2b
        exitCode: 255
        finishedAt: "2024-03-02T10:15:42Z"
        reason: OOMKilled
        startedAt: "2024-03-02T10:11:03Z"
    name: worker
    ready: false
    restartCount: 6
    state:
      waiting:
        reason: CrashLoopBackOff
`)
	if len(res.Errors) > 0 {
		t.Fatalf("errors %v", res.Errors)
	}
	f := one(t, res, "BF502", finding.Warning, "worker")
	if !strings.Contains(f.Message, "reason OOMKilled with exit 255") || f.Line != 7 || !strings.Contains(strings.Join(f.Mechanism, " "), "after 6 restarts") {
		t.Errorf("BF502 at %d: %s %v", f.Line, f.Message, f.Mechanism)
	}
}

// Two partial readings of round 2's fresh table: a readiness probe whose
// command is missing (subfuzion/voting-app#11) is said to be one, and a
// probe refused with 401 (trueforge-org/truecharts#8076) is read as the
// server's refusal of the probe's request, not as an unhealthy server.
func TestReadinessCannotRunAnd401(t *testing.T) {
	f := one(t, pinned(t, "voting-app-11-readiness-curl-missing.txt"), "BF501", finding.Info, observe.Unnamed)
	if !strings.Contains(strings.Join(f.Mechanism, "\n"), `the readiness probe cannot run: its command "curl"`) {
		t.Errorf("voting-app: %v", f.Mechanism)
	}
	f = one(t, pinned(t, "truecharts-8076-startup-401.txt"), "BF501", finding.Info, observe.Unnamed)
	if !strings.Contains(strings.Join(f.Mechanism, "\n"), "an HTTP 401 or 403: the server answered and refused the probe's request") {
		t.Errorf("truecharts: %v", f.Mechanism)
	}
}
