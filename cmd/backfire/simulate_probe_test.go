package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func seedSimulateArgs(t *testing.T, extra ...string) []string {
	return append([]string{"simulate", "probe", "-f", filepath.Join(examples(t), "registry-database.yaml"),
		"--latency-trace", filepath.Join(examples(t), "simulate", "registry-database-latency.txt"), "--recovery", "10m"}, extra...)
}

func TestSimulateProbeSeed003(t *testing.T) {
	out, stderr, code := execute(t, "", seedSimulateArgs(t)...)
	if code != exitClean || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"StatefulSet registry/registry-database, container database (PostgreSQL)", "restarts per day", "251.0", "never: 0 of 251 recoveries completed", "with the BF101 fix", "no kill: the probe never fires",
		"not ready per day    23.0 h (95.8%)", "10 s (0.0%)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q\n%s", want, out)
		}
	}
	js, _, code := execute(t, "", seedSimulateArgs(t, "--format", "json")...)
	var doc struct {
		Schema string
		Runs   []struct {
			Restarts int
			LoopEnds bool
			Ready    struct{ NotReadySeconds float64 }
		}
	}
	if code != exitClean || json.Unmarshal([]byte(js), &doc) != nil || doc.Schema != "backfire/simulate-probe/v1" || len(doc.Runs) != 2 || doc.Runs[0].LoopEnds || doc.Runs[1].Restarts != 0 ||
		doc.Runs[0].Ready.NotReadySeconds < 22*3600 || doc.Runs[1].Ready.NotReadySeconds != 10 {
		t.Errorf("json: exit %d %+v", code, doc)
	}
	if again, _, _ := execute(t, "", seedSimulateArgs(t, "--format", "json")...); again != js {
		t.Error("not deterministic")
	}
	if svg, _, code := execute(t, "", seedSimulateArgs(t, "--format", "svg")...); code != exitClean || !strings.HasPrefix(svg, "<?xml") || !strings.Contains(svg, "<svg") || !strings.Contains(svg, "Ready (the readiness probe)") {
		t.Errorf("svg: exit %d", code)
	}
	if page, _, code := execute(t, "", seedSimulateArgs(t, "--format", "html")...); code != exitClean || !strings.HasPrefix(page, "<!DOCTYPE html>") || !strings.Contains(page, "<svg") {
		t.Errorf("html: exit %d", code)
	}
	// Quantiles and stdin.
	out, _, code = execute(t, "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n  - {name: web, image: nginx, livenessProbe: {httpGet: {path: /, port: 80}}}\n",
		"simulate", "probe", "-f", "-", "--latency", "p50=40ms,p99=1.2s", "--hours", "1")
	if code != exitClean || !strings.Contains(out, "Pod web, container web  <stdin>") {
		t.Errorf("stdin: exit %d\n%s", code, out)
	}
}

func TestSimulateProbeUsage(t *testing.T) {
	f := filepath.Join(examples(t), "registry-database.yaml")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"simulate", "probe", "--latency", "p50=1s"}, "backfire: simulate probe needs -f FILE\n"},
		{[]string{"simulate", "probe", "-f", f}, "backfire: simulate probe needs one of --latency and --latency-trace\n"},
		{[]string{"simulate", "probe", "-f", f, "--latency", "p50=1s", "--latency-trace", "x"}, "backfire: simulate probe needs one of --latency and --latency-trace\n"},
		{[]string{"simulate", "probe", "-f", f, "--latency", "p50=1s", "--format", "png"}, "backfire: unknown --format \"png\" (want text, json, svg, html)\n"},
		{[]string{"simulate", "probe", "-f", f, "--latency", "fast"}, "backfire: --latency: latency \"fast\": want pNN=DURATION, e.g. p50=40ms,p99=1.2s\n"},
		{[]string{"simulate", "probe", "-f", f, "--latency", "p50=1s", "--hours", "0"}, "backfire: --hours must be more than 0 and at most a year\n"},
		{[]string{"simulate", "probe", "-f", f, "--latency", "p50=1s", "--max-backoff", "10m"}, "backfire: --max-backoff must be whole seconds from 1s to 300s, as the kubelet accepts\n"},
		{[]string{"simulate", "probe", "-f", f, "--latency", "p50=1s", "--max-backoff", "1500ms"}, "backfire: --max-backoff must be whole seconds from 1s to 300s, as the kubelet accepts\n"},
		{[]string{"simulate", "probe", "-f", f, "--latency", "p50=1s", "--container", "nope"}, "backfire: " + f + ": no workload has a container named \"nope\"\n"},
	} {
		_, stderr, code := execute(t, "", tc.args...)
		if code != exitUsage || stderr != tc.want {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, stderr, tc.want)
		}
	}
}
