package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rolloutSeedArgs is the README's command: seed 000's rollback, with the inputs
// the manifest cannot give.
func rolloutSeedArgs(t *testing.T, extra ...string) []string {
	return append([]string{"simulate", "rollout", "-f", filepath.Join(examples(t), "order-front-api.yaml"),
		"--scenario", "rollback", "--rollouts-version", "v1.8.2", "--replicas", "20", "--rps", "96", "--pod-capacity", "15",
		"--pod-start", "20s..240s", "--broken-not-ready", "1", "--seconds", "300"}, extra...)
}

func TestSimulateRolloutText(t *testing.T) {
	out, stderr, code := execute(t, "", rolloutSeedArgs(t)...)
	if code != exitClean {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"Rollout order-front-api, scenario rollback, Argo Rollouts v1.8.2", "window of canary-side failures", "outcome", "completed",
		"answered with errors by current, the version rolled back from", "too few Ready pods for their share", "no Ready endpoint at all", "current got requests until"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestSimulateRolloutJSONWithFix(t *testing.T) {
	out, stderr, code := execute(t, "", rolloutSeedArgs(t, "--format", "json", "--fix")...)
	if code != exitClean {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Schema   string           `json:"schema"`
		Scenario string           `json:"scenario"`
		Version  string           `json:"version"`
		Timeline []map[string]any `json:"timeline"`
		Totals   map[string]any   `json:"totals"`
		Fix      []string         `json:"fix"`
		Fixed    *struct {
			Totals map[string]any `json:"totals"`
		} `json:"fixed"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Schema != "backfire/v1/simulation" || doc.Scenario != "rollback" || doc.Version != "v1.8.2" || len(doc.Timeline) != 300 {
		t.Fatalf("schema %q scenario %q version %q, %d rows", doc.Schema, doc.Scenario, doc.Version, len(doc.Timeline))
	}
	for _, k := range []string{"t", "reconcile", "stepIndex", "weight", "canaryDesired", "canaryAvailable", "canaryReady", "stableDesired", "stableReady", "offeredRps", "servedRps", "failedRps", "analysis"} {
		if _, ok := doc.Timeline[0][k]; !ok {
			t.Errorf("timeline rows lack %q", k)
		}
	}
	for _, k := range []string{"offeredRequests", "failedRequests", "failedShare", "zeroEndpointSeconds", "peakRpsPerCanaryPod", "outcome"} {
		if _, ok := doc.Totals[k]; !ok {
			t.Errorf("totals lack %q", k)
		}
	}
	if doc.Fixed == nil || len(doc.Fix) == 0 || !strings.HasPrefix(doc.Fix[0], "BF401") {
		t.Fatalf("--fix: fix %v, fixed %v", doc.Fix, doc.Fixed)
	}
	// BF401's fix ends the walk back at 5%: no second at zero endpoints.
	if doc.Totals["zeroEndpointSeconds"].(float64) == 0 || doc.Fixed.Totals["zeroEndpointSeconds"].(float64) != 0 {
		t.Errorf("zero-endpoint seconds %v as written, %v fixed", doc.Totals["zeroEndpointSeconds"], doc.Fixed.Totals["zeroEndpointSeconds"])
	}
}

func TestSimulateRolloutSVGAndHTML(t *testing.T) {
	for format, prefix := range map[string]string{"svg": "<?xml", "html": "<!DOCTYPE html>"} {
		out, stderr, code := execute(t, "", rolloutSeedArgs(t, "--format", format)...)
		if code != exitClean || !strings.HasPrefix(out, prefix) || !strings.Contains(out, "Canary pods") {
			t.Errorf("%s: exit %d, starts %.40q (stderr %s)", format, code, out, stderr)
		}
	}
}

func TestSimulateRolloutUsageErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: x}\nspec:\n  replicas: \"two\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	deployment := filepath.Join(examples(t), "healthy-web.yaml")
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"no file":        {[]string{"simulate", "rollout", "--pod-capacity", "10"}, "needs -f FILE"},
		"no capacity":    {rolloutSeedArgs(t, "--pod-capacity", "0"), "--pod-capacity"},
		"bad scenario":   {rolloutSeedArgs(t, "--scenario", "sideways"), "unknown --scenario"},
		"bad format":     {rolloutSeedArgs(t, "--format", "png"), "unknown --format"},
		"bad pod start":  {rolloutSeedArgs(t, "--pod-start", "40s..20s"), "--pod-start"},
		"bad version":    {rolloutSeedArgs(t, "--rollouts-version", "latest"), "--rollouts-version"},
		"old version":    {rolloutSeedArgs(t, "--rollouts-version", "v1.7.2"), "v1.8.0 and later"},
		"missing file":   {[]string{"simulate", "rollout", "-f", "nope.yaml", "--pod-capacity", "10"}, "nope.yaml"},
		"wrong name":     {rolloutSeedArgs(t, "--name", "other"), `no Rollout named "other"`},
		"no Rollout":     {[]string{"simulate", "rollout", "-f", deployment, "--pod-capacity", "10"}, "no Rollout"},
		"bad input file": {[]string{"simulate", "rollout", "-f", bad, "--pod-capacity", "10"}, "bad.yaml:5"},
	} {
		_, stderr, code := execute(t, "", tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and %q", name, code, stderr, tc.want)
		}
	}
}

// TestExampleChartIsCurrent keeps the chart the README shows
// (examples/order-front-api-rollback.svg) equal to what
// examples/order-front-api.simulate.sh prints with --format svg.
func TestExampleChartIsCurrent(t *testing.T) {
	out, stderr, code := execute(t, "", rolloutSeedArgs(t, "--fix", "--format", "svg")...)
	if code != exitClean {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want, err := os.ReadFile(filepath.Join(examples(t), "order-front-api-rollback.svg"))
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) {
		t.Fatal("examples/order-front-api-rollback.svg is stale: regenerate it with examples/order-front-api.simulate.sh --format svg")
	}
}

func TestSimulateRolloutFromStdin(t *testing.T) {
	manifest, err := os.ReadFile(filepath.Join(examples(t), "order-front-api.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out, stderr, code := execute(t, string(manifest), "simulate", "rollout", "-f", "-", "--pod-capacity", "15", "--rps", "96", "--seconds", "60")
	if code != exitClean || !strings.Contains(out, "replicas 20 from the Rollout's status.replicas") {
		t.Fatalf("exit %d, stderr %s, out:\n%s", code, stderr, out)
	}
}

// compareSeedArgs is examples/order-front-api.compare.sh's command.
func compareSeedArgs(t *testing.T, extra ...string) []string {
	return append([]string{"simulate", "rollout", "-f", filepath.Join(examples(t), "order-front-api.yaml"),
		"--replicas", "20", "--rps", "96", "--pod-capacity", "15", "--pod-start", "20s..240s",
		"--broken-not-ready", "1", "--broken-error-rate", "0.5", "--compare"}, extra...)
}

// TestExampleComparisonIsCurrent keeps the comparison the README and
// docs/rules/BF401.md quote (examples/order-front-api.compare.txt, and the
// chart beside it) equal to what examples/order-front-api.compare.sh prints.
func TestExampleComparisonIsCurrent(t *testing.T) {
	for file, format := range map[string]string{"order-front-api.compare.txt": "text", "order-front-api-compare.svg": "svg"} {
		out, stderr, code := execute(t, "", compareSeedArgs(t, "--format", format)...)
		if code != exitClean {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		want, err := os.ReadFile(filepath.Join(examples(t), file))
		if err != nil {
			t.Fatal(err)
		}
		if out != string(want) {
			t.Errorf("examples/%s is stale: regenerate it with examples/order-front-api.compare.sh --format %s", file, format)
		}
	}
}

func TestSimulateRolloutCompareJSON(t *testing.T) {
	out, stderr, code := execute(t, "", compareSeedArgs(t, "--format", "json", "--compare-error-rates", "0.02,1", "--compare-loads", "1", "--compare-pod-starts", "20s..240s")...)
	if code != exitClean {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Schema   string `json:"schema"`
		Remedies []struct {
			Name, Change string
		} `json:"remediesTried"`
		Base struct {
			Least string `json:"leastFailed"`
			Tried []struct {
				Remedy        string             `json:"remedy"`
				FailedByCause map[string]float64 `json:"failedByCause"`
			} `json:"remedies"`
		} `json:"atTheseInputs"`
		Sweep []struct {
			Least string `json:"leastFailed"`
		} `json:"sweep"`
		Wins map[string]int `json:"leastFailedIn"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Schema != "backfire/v1/rollout-comparison" || len(doc.Remedies) != 6 || len(doc.Sweep) != 2 || len(doc.Base.Tried) != 6 {
		t.Fatalf("schema %q, %d remedies, %d cases, %d tried", doc.Schema, len(doc.Remedies), len(doc.Sweep), len(doc.Base.Tried))
	}
	// BF401's own fix is the drop remedy.
	if doc.Remedies[1].Name != "drop-last-setweight" || !strings.HasPrefix(doc.Remedies[1].Change, "BF401's fix") {
		t.Errorf("remedy 2: %+v", doc.Remedies[1])
	}
	for _, tr := range doc.Base.Tried {
		for _, k := range []string{"brokenVersion", "tooFewReady", "noEndpoint"} {
			if _, ok := tr.FailedByCause[k]; !ok {
				t.Errorf("%s: failedByCause lacks %s", tr.Remedy, k)
			}
		}
	}
	// A version that fails everything: the quick jump loses least; 2%: not.
	if doc.Sweep[1].Least != "as-written" || doc.Sweep[0].Least == "as-written" {
		t.Errorf("least failed: %s at 2%%, %s at 100%%", doc.Sweep[0].Least, doc.Sweep[1].Least)
	}
}

func TestSimulateRolloutCompareUsage(t *testing.T) {
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"with --fix":        {compareSeedArgs(t, "--fix"), "--compare rolls back within the window"},
		"other scenario":    {compareSeedArgs(t, "--scenario", "deploy"), "--compare rolls back within the window"},
		"bad error rate":    {compareSeedArgs(t, "--compare-error-rates", "0.5,2"), `--compare-error-rates: "2" is not a number from 0 to 1`},
		"bad start":         {compareSeedArgs(t, "--compare-pod-starts", "1m..10s"), "--compare-pod-starts"},
		"too many cases":    {compareSeedArgs(t, "--compare-loads", strings.Repeat("1,", 60)+"1"), "keep it to 200 or fewer"},
		"name without -f":   {[]string{"simulate", "rollout", "shop", "--pod-capacity", "10"}, "needs -f FILE, or --cluster"},
		"cluster and file":  {rolloutSeedArgs(t, "--cluster"), "--cluster takes the Rollout's NAME, and no -f"},
		"cluster flag only": {rolloutSeedArgs(t, "--to-revision", "2"), "--to-revision needs --cluster"},
	} {
		_, stderr, code := execute(t, "", tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and %q", name, code, stderr, tc.want)
		}
	}
}

// TestSimulateRolloutAbortNamesTheReleases: the abort scenario on BF404's
// #4898 fixture says which releases have the bug and proposes its fix on
// v1.10.2, and on master (which has #4900) reports neither.
func TestSimulateRolloutAbortNamesTheReleases(t *testing.T) {
	args := func(version string) []string {
		return []string{"simulate", "rollout", "-f", filepath.Join("..", "..", "internal", "rules", "rollouts", "testdata", "BF404", "positive", "explicit-abort-delay.yaml"),
			"--scenario", "abort", "--pod-capacity", "50", "--at", "8m", "--seconds", "600", "--fix", "--rollouts-version", version}
	}
	out, stderr, code := execute(t, "", args("v1.10.2")...)
	if code != exitClean {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"applies to Argo Rollouts v1.9.0 through v1.10.2, fixed on master 9f8d111d8", "BF404: Remove abortScaleDownDelaySeconds"} {
		if !strings.Contains(out, want) {
			t.Errorf("v1.10.2: output lacks %q:\n%s", want, out)
		}
	}
	out, stderr, code = execute(t, "", args("master")...)
	if code != exitClean {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "Argo Rollouts master 9f8d111d8") || strings.Contains(out, "BF404") {
		t.Errorf("master: want the run named for master and no BF404:\n%s", out)
	}
}
