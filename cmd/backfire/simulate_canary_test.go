package main

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite the simulate golden files")

// canaryArgs plays the public gitops-istio backend Canary (a Kustomize
// directory with its Deployment and HPA). Its HPA scales Deployment
// frontend, so the canary keeps its one pod, which 20 rps per pod overloads
// at 25%: every scenario but the failed promotion plays that.
func canaryArgs(t *testing.T, extra ...string) []string {
	return append([]string{"simulate", "rollout", "-f", testutil.Corpus(t, "gitops-istio", "apps", "backend"),
		"--replicas", "8", "--rps", "100", "--pod-capacity", "20", "--seconds", "600"}, extra...)
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/backfire -run TestSimulateCanary -update)", err)
	}
	if got != string(want) {
		t.Fatalf("%s differs (go test ./cmd/backfire -run TestSimulateCanary -update, and check the diff):\n%s", path, got)
	}
}

func TestSimulateCanaryGolden(t *testing.T) {
	for _, sc := range []string{"deploy", "rollback", "revert"} {
		out, stderr, code := execute(t, "", canaryArgs(t, "--scenario", sc)...)
		if code != exitClean {
			t.Fatalf("%s: exit %d: %s", sc, code, stderr)
		}
		golden(t, "simulate-canary-"+sc+".txt", out)
	}
}

// The failed promotion differs by release: v1.43.0 rolls back to the
// primary, v1.44.0 halts with all traffic on the canary. At 60 rps per pod
// the one canary pod carries its 50% and the analysis reaches the promotion.
func TestSimulateCanaryFailedPromotionJSON(t *testing.T) {
	for v, want := range map[string]string{"v1.43.0": "rolled back", "1.44.0": "halted: all traffic to the canary"} {
		out, stderr, code := execute(t, "", canaryArgs(t, "--pod-capacity", "60", "--scenario", "failed-promotion", "--flagger-version", v, "--format", "json")...)
		if code != exitClean {
			t.Fatalf("%s: exit %d: %s", v, code, stderr)
		}
		var doc struct {
			Kind, Controller string
			Totals           struct{ Outcome string }
			Events           []struct{ What string }
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Kind != "Canary" || doc.Controller != "Flagger" || doc.Totals.Outcome != want || len(doc.Events) == 0 {
			t.Fatalf("%s: kind %q controller %q outcome %q, %d events", v, doc.Kind, doc.Controller, doc.Totals.Outcome, len(doc.Events))
		}
	}
}

func TestSimulateCanaryHTML(t *testing.T) {
	out, stderr, code := execute(t, "", canaryArgs(t, "--scenario", "rollback", "--format", "html")...)
	if code != exitClean || !strings.HasPrefix(out, "<!DOCTYPE html>") || !strings.Contains(out, "Flagger v1.44.0") || !strings.Contains(out, "Analysis ticks") {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
}

// What the twin does not play exactly is refused as other inputs are:
// exit 2 and the reason.
func TestSimulateCanaryRefusals(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-f", testutil.Corpus(t, "gitops-istio", "apps", "frontend"), "--scenario", "deploy"}, "not modelled: A/B testing"},
		{append(canaryArgs(t), "--fix"), "--fix applies to an Argo Rollout"},
		{append(canaryArgs(t), "--scenario", "abort"), "--scenario abort is not one of a Flagger Canary's"},
		{append(canaryArgs(t), "--flagger-version", "latest"), "--flagger-version"},
		{append(canaryArgs(t), "--scenario", "deploy", "--at", "2m"), "--at with a Canary"},
	} {
		args := tc.args
		if args[0] == "-f" {
			args = append([]string{"simulate", "rollout", "--pod-capacity", "20"}, args...)
		}
		_, stderr, code := execute(t, "", args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, stderr, tc.want)
		}
	}
}
