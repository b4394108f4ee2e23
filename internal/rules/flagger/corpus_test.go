package flagger_test

import (
	"path/filepath"
	"testing"

	"backfire.dev/backfire/internal/catalog"
	"backfire.dev/backfire/internal/kustomize"
	"backfire.dev/backfire/internal/ruletest"
	"backfire.dev/backfire/internal/scan"
	"backfire.dev/backfire/internal/testutil"
)

// want is one expected finding, with the file relative to the corpus
// directory.
type want = ruletest.CorpusWant

// scanCorpus scans files of one corpus directory with the Flagger rules,
// overlays built as backfire scan builds them, and checks that the
// findings are exactly wants.
func scanCorpus(t *testing.T, dir string, files []string, wants []want) {
	t.Helper()
	root := testutil.Corpus(t, dir)
	var paths []string
	for _, f := range files {
		paths = append(paths, filepath.Join(root, f))
	}
	res, err := scan.Run(scan.Options{Paths: paths, Catalog: catalog.Family("flagger"), Kustomize: kustomize.New()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) > 0 {
		t.Errorf("input errors: %v", res.Errors)
	}
	rel := func(p string) string {
		r, err := filepath.Rel(root, p)
		if err != nil {
			return p
		}
		return filepath.ToSlash(r)
	}
	ruletest.CheckExactly(t, res.Findings, rel, wants)
}

// brianlangbecker/flagger-dual-metrics: three Canaries named podinfo-canary
// (each scanned with its own templates) and one cosmic-canary, whose
// templates come in two versions.
func TestCorpusFlaggerDualMetrics(t *testing.T) {
	scanCorpus(t, "flagger-dual-metrics", []string{"canary-honeycomb.yaml", "prometheus-config.yaml"}, []want{{
		Rule: "BF411", Severity: "error", File: "canary-honeycomb.yaml", Object: "podinfo-canary",
		Says: []string{"metric prometheus-success-rate (MetricTemplate prometheus-success-rate)", "95% of traffic", "fails 5 checks", "360 s"},
		Why:  "envoy_cluster_upstream_rq_total summed over the whole mesh: no matcher names podinfo; interval 1m, threshold 5, stepWeight 5",
	}})
	// Constants (vector(100), vector(10)) judge neither side.
	scanCorpus(t, "flagger-dual-metrics", []string{"simple-canary.yaml", "simple-metrics.yaml"}, nil)
	scanCorpus(t, "flagger-dual-metrics", []string{"working-canary.yaml", "working-metrics.yaml"}, nil)
	scanCorpus(t, "flagger-dual-metrics", []string{"cosmic-canary-honeycomb.yaml", "honeycomb-adapter/examples/metric-templates.yaml"}, []want{{
		Rule: "BF411", Severity: "error", File: "cosmic-canary-honeycomb.yaml", Object: "cosmic-canary",
		Says: []string{"metric success-rate (MetricTemplate honeycomb-success-rate)", "90% of traffic", "120 s"},
		Why:  `service="{{ target }}" is the service name both sides report`,
	}})
	// {{ args.name }} is Argo Rollouts' syntax: Flagger's template has no
	// args function, so the query does not render and every check fails on
	// that, which is another fault.
	scanCorpus(t, "flagger-dual-metrics", []string{"cosmic-canary-honeycomb.yaml", "honeycomb-metric-templates.yaml"}, nil)
}

// fluxcd/flagger v1.43.0: the examples, the controller's kustomize base
// (image tag 1.43.0) and the podinfo HPA the tutorials install.
func TestCorpusFlaggerV143Examples(t *testing.T) {
	files := []string{"artifacts/examples", "kustomize/base/flagger", "kustomize/podinfo"}
	var wants []want
	for _, ex := range []struct{ file, share string }{
		{"istio-canary.yaml", "50%"},
		{"istio-abtest.yaml", "every request that matches"},
		{"kuma-canary.yaml", "50%"},
		{"linkerd-canary.yaml", "50%"},
		{"linkerd-canary-steps.yaml", "55%"},
	} {
		wants = append(wants, want{
			Rule: "BF413", Severity: "warning", File: "artifacts/examples/" + ex.file, Object: "podinfo",
			Says: []string{"Flagger v1.43.0 rolls back a failed promotion", ex.share, "fixed in v1.44.0"},
			Why:  "the kustomize base runs ghcr.io/fluxcd/flagger:1.43.0",
		})
	}
	// BF412 on the three with traffic shifting and an autoscalerRef: ticks
	// that wait hold 50% (55%) for the whole 300 s window. Info: the
	// podinfo HPA is in the kustomize/podinfo build, which answers only
	// itself (docs/inputs.md), so its range is assumed; read beside the
	// Canary (testdata/BF412/positive/flagger-istio-canary-15s.yaml) it is
	// 2-4 and the finding a warning. kuma-canary.yaml has no autoscalerRef,
	// istio-abtest.yaml shifts no weight.
	for _, ex := range []struct{ file, sized string }{
		{"istio-canary.yaml", "sized for 50%"},
		{"linkerd-canary.yaml", "sized for 50%"},
		{"linkerd-canary-steps.yaml", "sized for 45%"},
	} {
		wants = append(wants, want{
			Rule: "BF412", Severity: "info", File: "artifacts/examples/" + ex.file, Object: "podinfo",
			Says: []string{"podinfo-primary", ex.sized, "300 s window"},
			Why:  "interval 15s, threshold 10: the checks hold the highest weight 165 s, waiting ticks the rest of the window; HPA podinfo not in the Canary's scope",
		})
	}
	// Not reported: BF411, every example uses the builtin checks.
	scanCorpus(t, "flagger-v1.43.0", files, wants)
}

// stefanprodan/gitops-istio: two Canaries with an HPA each, templates that
// select destination_workload=~"{{ target }}", Flagger installed by a
// HelmRelease without a version.
func TestCorpusGitopsIstio(t *testing.T) {
	// The overlays apps/backend and apps/frontend name templates of
	// istio-system, kept in istio/gateway: a templateRef to another
	// namespace is looked up in the whole input, and its queries select
	// the canary. BF412 on backend: HPA backend (1-4, the default 300 s
	// window) is the primary's copy even though it scales frontend
	// (upstream as written; Flagger sets the copy's target to
	// backend-primary), and ticks that wait hold 50% past the checks' 165 s.
	// frontend is an A/B test: no weight.
	shrunk := want{Rule: "BF412", Severity: "warning", File: "apps/backend/canary.yaml", Object: "backend",
		Says: []string{"backend-primary", "sized for 50%", "minReplicas 1 x 100/50"},
		Why:  "HPA backend minReplicas 1, maxReplicas 4, no behavior; interval 15s, threshold 10, maxWeight 50"}
	scanCorpus(t, "gitops-istio", []string{"apps/backend", "apps/frontend", "istio/gateway"}, []want{shrunk})
	// Without the templates, each Canary says what it could not check.
	unchecked := func(app string) want {
		return want{Rule: "BF411", Severity: "info", File: "apps/" + app + "/canary.yaml", Object: app,
			Says: []string{"template not in input: MetricTemplate istio-system/error-rate"},
			Why:  "istio/gateway/flagger-metrics.yaml is not scanned"}
	}
	scanCorpus(t, "gitops-istio", []string{"apps/backend", "apps/frontend"}, []want{unchecked("backend"), unchecked("frontend"), shrunk})
}
