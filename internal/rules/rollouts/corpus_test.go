package rollouts_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"backfire.dev/backfire/internal/catalog"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/model/rollout"
	"backfire.dev/backfire/internal/ruletest"
	"backfire.dev/backfire/internal/scan"
	"backfire.dev/backfire/internal/testutil"
)

type want = ruletest.CorpusWant

func scanFamily(t *testing.T, root string, paths ...string) (*scan.Result, func(string) string) {
	t.Helper()
	res, err := scan.Run(scan.Options{Paths: paths, Catalog: catalog.Family("rollouts"), KeepObjects: true})
	if err != nil {
		t.Fatal(err)
	}
	rel := func(p string) string {
		r, err := filepath.Rel(root, p)
		if err != nil {
			return p
		}
		return filepath.ToSlash(r)
	}
	return res, rel
}

// checkExactly asserts that the findings are exactly wants, in any order.
func checkExactly(t *testing.T, res *scan.Result, rel func(string) string, wants []want) {
	t.Helper()
	ruletest.CheckExactly(t, res.Findings, rel, wants)
}

func errorFiles(res *scan.Result, rel func(string) string) []string {
	var files []string
	for _, e := range res.Errors {
		files = append(files, rel(e.File))
	}
	slices.Sort(files)
	return slices.Compact(files)
}

// The upstream examples set no rollbackWindow anywhere, so BF401 and BF403
// have nothing to report; BF402 reads every analysis.
func TestCorpusArgoRolloutsExamples(t *testing.T) {
	root := testutil.Corpus(t, "argo-rollouts-examples")
	res, rel := scanFamily(t, root, root)
	checkExactly(t, res, rel, nil)
	// Not reported, and why:
	// - rollout-secret.yaml: its web metric's URL comes from Secret
	//   example-secret, which is in the same file: a fixed gist on
	//   gist.githubusercontent.com, outside the cluster, which measures
	//   neither version.
	// - rollout-analysis-step.yaml, rollout-background-analysis.yaml: their
	//   templates (random-fail, always-pass) are jobs that name no URL,
	//   Service or argument: they measure neither version.
	// - appmesh/canary-rollout.yaml: its AnalysisTemplate is used by no Rollout.
	// - experiment steps (rollout-experiment-step.yaml, traffic-routing-
	//   experiment-step/): experiment analyses are not Rollout analysis.
	// - everything else: no analysis and no rollbackWindow.
	// Input errors may come only from what this scan cannot read: a chart and
	// a kustomization (no renderer is configured here), and the linkerd file
	// with an unquoted {{...}}.
	known := []string{"helm-blue-green", "notifications", "traffic-management/rollout-linkerd.yaml"}
	for _, f := range errorFiles(res, rel) {
		if !slices.Contains(known, f) {
			t.Errorf("unexpected input error in %s: %v", f, res.Errors)
		}
	}
}

// rollouts-demo is Kustomize overlays; their plain files are scanned one by
// one here (the overlays' namespace is not applied).
func TestCorpusRolloutsDemoFiles(t *testing.T) {
	root := testutil.Corpus(t, "rollouts-demo")
	files, _ := filepath.Glob(filepath.Join(root, "examples", "*", "*.yaml"))
	if len(files) < 20 {
		t.Fatalf("only %d files in rollouts-demo", len(files))
	}
	res, rel := scanFamily(t, root, files...)
	checkExactly(t, res, rel, []want{{
		Rule: "BF402", Severity: "error", File: "examples/istio-subset/rollout.yaml", Object: "istio-rollout",
		Says: []string{"a rollback aborts itself", "metric success-rate of AnalysisTemplate istio-success-rate", "90% of traffic", "60 s after it starts"},
		Why: "subset routing keeps one host for both versions and args.service is that host (istio-rollout), " +
			"no rollbackWindow; startingStep 1 is setWeight 10, initialDelay 60s and failureLimit 0",
	}, {
		Rule: "BF402", Severity: "error", File: "examples/istio/rollout.yaml", Object: "istio-rollout",
		Says: []string{"a rollback aborts itself", "90% of traffic"},
		Why: `args.service is "canary": the query reads destination_service=~"canary.<namespace>...", ` +
			"a name with a word in it, which is not the Rollout's canaryService (istio-rollout-canary) nor a Service of the input",
	}})
	for _, f := range res.Findings {
		if f.Rule == "BF402" && strings.HasSuffix(f.File, "examples/istio/rollout.yaml") &&
			!strings.Contains(strings.Join(f.Assumptions, " "), `args.service is "canary": the word "canary" in a name selects nothing by revision`) {
			t.Errorf("the word canary is not said to be an assumption: %v", f.Assumptions)
		}
	}
	// Not reported, and why:
	// - analysis/rollout-with-analysis.yaml: analysis.templateName is the
	//   pre-v1.0 field, not in the v1alpha1 type: the analysis names no
	//   template, so no AnalysisRun is created.
	// - experiment/, rollout-experiment/, preview-testing/: experiment
	//   analyses, not Rollout analysis.
	// - no file sets rollbackWindow: no BF401 or BF403.
	if len(res.Errors) > 0 {
		t.Errorf("input errors: %v", res.Errors)
	}
}

// examples/order-front-api.yaml is seed 000: KEDA 8..360, minPodsPerReplicaSet
// 2, steps [1, pause, 5, pause, 100], rollbackWindow 3, a blind error-rate
// analysis with interval 20s and failureLimit 2.
func TestExamplesSeed000(t *testing.T) {
	root := testutil.RepoRoot(t)
	res, rel := scanFamily(t, root, filepath.Join(root, "examples"))
	checkExactly(t, res, rel, []want{{
		Rule: "BF401", Severity: "error", File: "examples/order-front-api.yaml", Object: "order-front-api",
		Says: []string{
			// status.replicas 20: the count KEDA ran during the incident.
			"sends 100% of traffic to 2 pods sized for 20 (10x short) at the 20 replicas running now (status.replicas)",
			"100% of traffic to 2 pods sized for 8 to 200 replicas (up to 100x short)",
			"4 sized for 301 to 360",
			"KEDA ScaledObject order/order-front-api scales the Rollout from 8 to 360",
		},
		Why: "the walk back takes setWeight 100 while the canary has its 2 step-0 pods",
	}, {
		Rule: "BF402", Severity: "warning", File: "examples/order-front-api.yaml", Object: "order-front-api",
		Says: []string{"further back than rollbackWindow.revisions 3", "99% of traffic", "40 s after it starts"},
		Why:  "rollbackWindow skips the analysis only within the window: warning",
	}})

	var bf401 finding.Finding
	for _, f := range res.Findings {
		if f.Rule == "BF401" {
			bf401 = f
		}
	}
	// The incident ran 20 replicas: that count is in the first band, whose
	// canary is the 2 pods of the seed.
	bands := fmt.Sprint(bf401.Evidence["bands"])
	if bands != "[{8 200 2 true} {201 300 3 true} {301 360 4 true}]" {
		t.Errorf("bands %s", bands)
	}
	var ro *v1alpha1.Rollout
	for _, o := range res.Objects {
		if r, ok := o.Typed.(*v1alpha1.Rollout); ok && o.Name == "order-front-api" {
			ro = r
		}
	}
	j := rollout.RollbackJump(ro, 20, rollout.DefaultVersion)
	if j.Weight != 100 || j.CanaryPods != 2 || j.Needed != 20 {
		t.Errorf("at the incident's 20 replicas: %+v, want 100%% to 2 pods sized for 20", j)
	}
}

// The upstream end-to-end tests' Rollouts with dynamicStableScale (pinned
// from master 9f8d111d8, see testdata/corpus/SOURCES.md): the one #4900
// added for #4898, 4 replicas, steps [25, pause, 75, pause] and
// abortScaleDownDelaySeconds 10, deadlocks on every release (BF404); the two
// without an explicit delay, minPodsPerReplicaSet or an autoscaler are not
// exposed to any of the abort bugs.
func TestCorpusDynamicStableScaleE2E(t *testing.T) {
	root := testutil.Corpus(t, "argo-rollouts-e2e")
	res, rel := scanFamily(t, root, root)
	checkExactly(t, res, rel, []want{{
		Rule: "BF404", Severity: "error", File: "canary-dynamic-stable-scale-abort-delay.yaml", Object: "dynamic-stable-scale-abort",
		Says: []string{"an abort at setWeight 75 never finishes", "abortScaleDownDelaySeconds 10 keeps the canary's 3 pods", "the weight stops at 25", "#4898"},
		Why:  "aborted at 75 the canary keeps ceil(75% x 4) = 3 pods; setWeight 25 asks for 1, fewer, so the walk stops there",
	}})
	// Not reported, and why:
	// - canary-dynamic-stable-scale.yaml: no minPodsPerReplicaSet, no
	//   explicit delay, 4 fixed replicas (BF405 needs an autoscaler).
	// - istio-subset-split-in-stable-downscale-after-canary-abort.yaml: the
	//   same, with Istio subsets.
	if len(res.Errors) > 0 {
		t.Errorf("input errors: %v", res.Errors)
	}
}
