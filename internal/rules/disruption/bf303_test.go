package disruption_test

import (
	"strings"
	"testing"

	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/rules/disruption"
	"backfire.dev/backfire/internal/ruletest"
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
