package diagnose

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/observe"
	"backfire.dev/backfire/internal/testutil"
)

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// seed003 diagnoses the example captures of seed 003.
func seed003(t *testing.T) *Diagnosis {
	t.Helper()
	dir := filepath.Join(testutil.RepoRoot(t), "examples", "diagnose")
	res, err := Run(Input{
		Pods:   Stream{Name: "pod.txt", Data: read(t, filepath.Join(dir, "pod.txt"))},
		Events: []Stream{{Name: "events.txt", Data: read(t, filepath.Join(dir, "events.txt"))}},
		Logs: []observe.Log{
			{Container: "database", File: "database.log", Data: read(t, filepath.Join(dir, "database.log"))},
			{Container: "registry-core", File: "registry-core.log", Data: read(t, filepath.Join(dir, "registry-core.log"))},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) > 0 {
		t.Fatalf("errors: %v", res.Errors)
	}
	return res
}

func one(t *testing.T, res *Diagnosis, rule string, sev finding.Severity, container string) finding.Finding {
	t.Helper()
	for _, f := range res.Of(rule) {
		if f.Severity == sev && f.Container == container {
			return f
		}
	}
	t.Fatalf("no %s %s on %s in %v", sev, rule, container, res.Findings)
	return finding.Finding{}
}

// The seed's reasoning, step by step: the period is the probe's (5.5 min
// predicted, 5.7 observed), the exit code rules out OOM, the logs show the
// recovery cut short, and the client's 57P03 are the database's restarts.
func TestSeed003Reasoning(t *testing.T) {
	res := seed003(t)
	f := one(t, res, "BF501", finding.Error, "database")
	for _, want := range []string{"42 restarts", "one every 5.7 min", "300 + 3 x 10 = 330 s = 5.5 min"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("BF501 message lacks %q: %s", want, f.Message)
		}
	}
	if f.Evidence["intervals"] != 15 || f.Evidence["predictedSeconds"] != 330 || f.Evidence["minSeconds"].(int) < 300 || f.Evidence["maxSeconds"].(int) > 360 {
		t.Errorf("BF501 evidence %v", f.Evidence)
	}
	if mean := f.Evidence["meanSeconds"].(int); mean/6 != 57 { // 5.7 min
		t.Errorf("mean %d s, want 5.7 min", mean)
	}
	e := one(t, res, "BF502", finding.Info, "database")
	if !strings.Contains(e.Message, "141 = 128 + 13") || !strings.Contains(strings.Join(e.Mechanism, " "), "rules out: the OOM killer") {
		t.Errorf("BF502: %s %v", e.Message, e.Mechanism)
	}
	l := one(t, res, "BF503", finding.Error, "database")
	if l.File != "database.log" || !strings.Contains(strings.Join(l.Mechanism, "\n"), "database system was interrupted while in recovery") || l.Evidence["interrupted"] != 15 {
		t.Errorf("BF503: %s:%d %v %v", l.File, l.Line, l.Mechanism, l.Evidence)
	}
	c := one(t, res, "BF503", finding.Warning, "registry-core")
	if c.File != "registry-core.log" || c.Line != 1 || !strings.Contains(strings.Join(c.Mechanism, " "), "57P03") {
		t.Errorf("client: %+v", c)
	}
	// The static rules read the pod's spec too.
	one(t, res, "BF101", finding.Error, "database")
	if len(res.Pods) != 1 || res.Pods[0].Ignored != 1 {
		t.Errorf("the registry core's event must be left out: %+v", res.Pods)
	}
}

func TestBadInput(t *testing.T) {
	dir := filepath.Join(testutil.RepoRoot(t), "examples", "diagnose")
	pod := read(t, filepath.Join(dir, "pod.txt"))
	for _, tc := range []struct {
		name   string
		in     Input
		errors bool
		note   string
	}{
		{name: "truncated pod JSON", in: Input{Pods: Stream{Name: "p.json", Data: []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},"spec":{"containers":[`)}}, errors: true},
		{name: "not a pod", in: Input{Pods: Stream{Name: "d.yaml", Data: []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n")}}, errors: true},
		{name: "empty", in: Input{Pods: Stream{Name: "e.yaml", Data: nil}}, errors: true},
		{name: "events of another pod", in: Input{Pods: Stream{Name: "pod.txt", Data: pod},
			Events: []Stream{{Name: "e.json", Data: []byte(`{"apiVersion":"v1","kind":"Event","metadata":{"name":"a"},"involvedObject":{"kind":"Pod","name":"other","namespace":"registry"},"reason":"Killing","message":"Container x failed liveness probe, will be restarted","count":3,"firstTimestamp":"2026-11-12T04:00:00Z","lastTimestamp":"2026-11-12T04:10:00Z"}`)}}},
			note: "none of the 1 events is about the pod"},
		{name: "truncated events", in: Input{Pods: Stream{Name: "pod.txt", Data: pod}, Events: []Stream{{Name: "e.json", Data: []byte(`{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Ev`)}}}, errors: true},
		{name: "pod without probes", in: Input{Pods: Stream{Name: "p.yaml", Data: []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: [{name: a, image: busybox}]}\nstatus: {containerStatuses: [{name: a, restartCount: 5, image: busybox, imageID: x, ready: true}]}\n")}},
			note: "has no liveness or startup probe"},
		{name: "zero restarts", in: Input{Pods: Stream{Name: "p.yaml", Data: []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: [{name: a, image: busybox, livenessProbe: {tcpSocket: {port: 80}}}]}\nstatus: {containerStatuses: [{name: a, restartCount: 0, image: busybox, imageID: x, ready: true}]}\n")}}},
		{name: "invalid UTF-8 log", in: Input{Pods: Stream{Name: "pod.txt", Data: pod}, Logs: []observe.Log{{Container: "database", File: "db.log", Data: []byte("\xff\xfe\x00\x01 not text\n")}}},
			note: "invalid UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Run(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if tc.errors != (len(res.Errors) > 0) {
				t.Fatalf("errors %v, want errors: %v", res.Errors, tc.errors)
			}
			for _, e := range res.Errors {
				if e.File == "" || strings.Contains(e.Message, "internal error") {
					t.Errorf("bad error %+v", e)
				}
			}
			if tc.note != "" && !strings.Contains(strings.Join(res.Notes, "\n"), tc.note) {
				t.Errorf("notes %q lack %q", res.Notes, tc.note)
			}
			for _, f := range res.Findings {
				if strings.HasPrefix(f.Rule, "BF50") && f.Severity == finding.Error && tc.name != "invalid UTF-8 log" && tc.name != "events of another pod" && tc.name != "truncated events" {
					t.Errorf("a guess: %s %s", f.Rule, f.Message)
				}
			}
		})
	}
}
