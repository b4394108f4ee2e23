package disruption_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/helm"
	"backfire.dev/backfire/internal/kustomize"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/rules/disruption"
	"backfire.dev/backfire/internal/ruletest"
	"backfire.dev/backfire/internal/scan"
	"backfire.dev/backfire/internal/testutil"
)

const deployment3 = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx}]}
`

// The cases the fixtures do not reach: percentages round up as the
// disruption controller rounds them, a v1 budget with neither field allows
// nothing, a v1beta1 empty selector selects nothing, a Job cannot be asked
// for a scale, and bare Pods count for nothing under maxUnavailable.
func TestBudgetArithmetic(t *testing.T) {
	for _, c := range []struct {
		name, src, want string // want: the case in the evidence, "" for none
	}{
		{"80% of 3 rounds up to 3", deployment3 + "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\nspec: {minAvailable: 80%, selector: {matchLabels: {app: web}}}\n", "zero-disruptions"},
		{"50% of 3 leaves 1", deployment3 + "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\nspec: {minAvailable: 50%, selector: {matchLabels: {app: web}}}\n", ""},
		{"maxUnavailable 0%", deployment3 + "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\nspec: {maxUnavailable: 0%, selector: {matchLabels: {app: web}}}\n", "zero-disruptions"},
		{"neither field in v1", deployment3 + "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\nspec: {selector: {matchLabels: {app: web}}}\n", "zero-disruptions"},
		{"neither field in v1beta1: minAvailable 1", deployment3 + "---\napiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: b}\nspec: {selector: {matchLabels: {app: web}}}\n", ""},
		{"v1beta1 empty selector selects nothing", deployment3 + "---\napiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: b}\nspec: {maxUnavailable: 0, selector: {}}\n", ""},
		{"v1 empty selector selects all", deployment3 + "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\nspec: {maxUnavailable: 0, selector: {}}\n", "zero-disruptions"},
		{"selects nothing", deployment3 + "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\nspec: {maxUnavailable: 0, selector: {matchLabels: {app: other}}}\n", ""},
		{"a Job has no scale", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {parallelism: 2, template: {metadata: {labels: {app: j}}, spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}\n---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\nspec: {maxUnavailable: 1, selector: {matchLabels: {app: j}}}\n", "no-scale-subresource"},
		{"a Job with an integer minAvailable is counted", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {parallelism: 2, template: {metadata: {labels: {app: j}}, spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}\n---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\nspec: {minAvailable: 1, selector: {matchLabels: {app: j}}}\n", ""},
		{"bare pods under maxUnavailable", "apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {app: p}}\nspec: {containers: [{name: c, image: nginx}]}\n---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\nspec: {maxUnavailable: 1, selector: {matchLabels: {app: p}}}\n", "no-scale-subresource"},
		{"an autoscaler's minimum counts", strings.Replace(deployment3, "  replicas: 3\n", "", 1) + "---\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: h}\nspec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}, minReplicas: 2, maxReplicas: 9}\n---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\nspec: {minAvailable: 2, selector: {matchLabels: {app: web}}}\n", "zero-disruptions"},
	} {
		res := ruletest.Scan(t, []*rules.Rule{disruption.BF303}, []byte(c.src), "-")
		if len(res.Errors) > 0 {
			t.Fatalf("%s: %v", c.name, res.Errors)
		}
		got := ""
		for _, f := range ruletest.Of(res, "BF303") {
			got = f.Evidence["case"].(string)
		}
		if got != c.want {
			t.Errorf("%s: case %q, want %q", c.name, got, c.want)
		}
	}
}

// A budget whose workloads are all scaled to 0 has no pod to refuse the
// eviction of: a drain finds none. Scaled to 0 by the chart's values (the
// pinned Alertmanager chart, which renders its budget whatever the count)
// or by a Kustomize overlay's replicas entry (over the pinned render of
// Harbor's core budget and Deployment), the budget is not reported; at 1
// replica, minAvailable 1 still allows no eviction and is.
func TestBudgetOverZeroReplicas(t *testing.T) {
	for _, n := range []string{"0", "1"} {
		want := map[string]string{"0": "", "1": "zero-disruptions"}[n]
		charts, err := helm.New(helm.Options{Set: []string{"replicaCount=" + n, "podDisruptionBudget.minAvailable=1"}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := scan.Run(scan.Options{Paths: []string{testutil.Corpus(t, "prometheus-alertmanager")}, Catalog: []*rules.Rule{disruption.BF303}, Charts: charts})
		if err != nil {
			t.Fatal(err)
		}
		if got := caseOf(ruletest.Of(res, "BF303")); got != want {
			t.Errorf("Alertmanager chart at replicaCount %s: case %q, want %q", n, got, want)
		}

		dir := t.TempDir()
		base, err := os.ReadFile(filepath.Join("testdata", "BF303", "negative", "harbor-core-two-replicas.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		kust := "resources:\n- harbor-core.yaml\nreplicas:\n- name: release-name-harbor-core\n  count: " + n + "\n"
		if err := os.WriteFile(filepath.Join(dir, "harbor-core.yaml"), base, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(kust), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err = scan.Run(scan.Options{Paths: []string{dir}, Catalog: []*rules.Rule{disruption.BF303}, Kustomize: kustomize.New()})
		if err != nil {
			t.Fatal(err)
		}
		if got := caseOf(ruletest.Of(res, "BF303")); got != want {
			t.Errorf("Harbor core, an overlay's replicas count %s: case %q, want %q", n, got, want)
		}
	}
}

func caseOf(fs []finding.Finding) string {
	for _, f := range fs {
		return f.Evidence["case"].(string)
	}
	return ""
}
