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
