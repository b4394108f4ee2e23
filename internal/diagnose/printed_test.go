package diagnose

import (
	"path/filepath"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/observe"
	"backfire.dev/backfire/internal/testutil"
)

// Seed 003 from the describe capture alone (examples/diagnose/describe.txt,
// reconstructed from the pod and its events as kubectl describe prints
// them): the Killing event's count over its span gives the period, the
// Liveness line the arithmetic, and the findings point at the capture's
// lines.
func TestSeed003FromDescribe(t *testing.T) {
	dir := filepath.Join(testutil.RepoRoot(t), "examples", "diagnose")
	res, err := Run(Input{Pods: Stream{Name: "describe.txt", Data: read(t, filepath.Join(dir, "describe.txt"))}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) > 0 || len(res.Pods) != 1 || res.Pods[0].Pod.Printed == nil {
		t.Fatalf("errors %v, pods %+v", res.Errors, res.Pods)
	}
	f := one(t, res, "BF501", finding.Error, "database")
	for _, want := range []string{"42 restarts", "mean 345 s over the Killing event's count of 42", "300 + 3 x 10 = 330 s = 5.5 min: the probe is the killer"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("BF501 message lacks %q: %s", want, f.Message)
		}
	}
	mech := strings.Join(f.Mechanism, "\n")
	for _, want := range []string{"from 4h1m to 4m57s ago", "within ±1 s", "kubectl describe pod does not print terminationGracePeriodSeconds"} {
		if !strings.Contains(mech, want) {
			t.Errorf("BF501 mechanism lacks %q:\n%s", want, mech)
		}
	}
	if f.File != "describe.txt" || f.Line != 55 { // the Restart Count line
		t.Errorf("BF501 at %s:%d", f.File, f.Line)
	}
	if e := one(t, res, "BF502", finding.Info, "database"); e.Line != 51 || !strings.Contains(e.Message, "141 = 128 + 13") {
		t.Errorf("BF502 at %d: %s", e.Line, e.Message)
	}
	// The probes' own events quote the refusal: the loop is confirmed
	// without the log.
	if l := one(t, res, "BF503", finding.Error, "database"); l.Evidence["probeRefused"] != 2 {
		t.Errorf("BF503 evidence %v", l.Evidence)
	}
	// The static rules read the spec the describe block printed, at its lines.
	if b := one(t, res, "BF101", finding.Error, "database"); b.File != "describe.txt" || b.Line != 56 {
		t.Errorf("BF101 at %s:%d", b.File, b.Line)
	}
}

// An Events table pasted beside a pod read from the API (or the other way
// round) is about that pod; an events file in printed form is read too.
func TestPrintedEventsBesideAPod(t *testing.T) {
	dir := filepath.Join(testutil.RepoRoot(t), "examples", "diagnose")
	table := "  Type    Reason   Age                  From     Message\n" +
		"  ----    ------   ----                 ----     -------\n" +
		"  Normal  Killing  4m57s (x42 over 4h1m)  kubelet  Container database failed liveness probe, will be restarted\n"
	res, err := Run(Input{Pods: Stream{Name: "pod.txt", Data: read(t, filepath.Join(dir, "pod.txt"))},
		Events: []Stream{{Name: "events.txt", Data: []byte(table)}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) > 0 || len(res.Pods) != 1 || len(res.Pods[0].Events) != 1 || !res.Pods[0].Events[0].Ago {
		t.Fatalf("errors %v pods %+v", res.Errors, res.Pods)
	}
	f := one(t, res, "BF501", finding.Error, "database")
	if !strings.Contains(f.Message, "over the Killing event's count of 42") {
		t.Errorf("BF501: %s", f.Message)
	}
}

// What a printed capture does not hold is said, not guessed: a Liveness
// line with a restart count gives the figure to compare and what to
// measure; prose is an error, not an empty diagnosis.
func TestPartialAndUnreadableCaptures(t *testing.T) {
	res, err := Run(Input{Pods: Stream{Name: "f.txt", Data: []byte("    Restart Count:  42\n    Liveness:       exec [/docker-healthcheck.sh] delay=300s timeout=1s period=10s #success=1 #failure=3\n")}})
	if err != nil {
		t.Fatal(err)
	}
	f := one(t, res, "BF501", finding.Info, observe.Unnamed)
	if !strings.Contains(f.Message, "300 + 3 x 10 = 330 s") || !strings.Contains(strings.Join(f.Mechanism, " "), "to measure:") {
		t.Errorf("BF501: %s %v", f.Message, f.Mechanism)
	}
	if lacks := strings.Join(res.Pods[0].Pod.Printed.Lacks, "; "); !strings.Contains(lacks, "does not name the pod") || !strings.Contains(lacks, "no Last State") {
		t.Errorf("lacks: %s", lacks)
	}
	res, err = Run(Input{Pods: Stream{Name: "prose.txt", Data: []byte("The pod keeps restarting, can anyone help?\nThanks!\n")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Message, "kubectl describe pod") {
		t.Errorf("errors: %v", res.Errors)
	}
}
