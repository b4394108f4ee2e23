package webhook

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"backfire.dev/backfire/internal/cluster"
	"backfire.dev/backfire/internal/helm"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/scan"
	"backfire.dev/backfire/internal/testutil"
)

// The webhook is deployed as the product preaches: backfire scan finds
// nothing in deploy/ or in the chart, and what the scan cannot see from a
// rule (two replicas, failurePolicy Ignore, a stated timeout, a PDB and an
// HPA, no CPU limit, probe timeouts written out) is checked here.
func TestDeploymentIsCleanAndAsDocumented(t *testing.T) {
	root := testutil.RepoRoot(t)
	charts, err := helm.New(helm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"deploy", filepath.Join("charts", "backfire")} {
		t.Run(dir, func(t *testing.T) {
			res, err := scan.Run(scan.Options{Paths: []string{filepath.Join(root, dir)}, Charts: charts, KeepObjects: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range res.Errors {
				t.Errorf("input error: %v", e)
			}
			for _, f := range res.Findings {
				t.Errorf("finding: %s %s %s:%d %s", f.Rule, f.Object, f.File, f.Line, f.Message)
			}
			checkDeployment(t, res.Objects)
		})
	}
}

func checkDeployment(t *testing.T, objs []*object.Object) {
	t.Helper()
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.Kind]++
		switch v := o.Typed.(type) {
		case *appsv1.Deployment:
			// The HPA owns the count (its minimum is checked below): a count
			// written here would be reset at every apply (BF801).
			if v.Spec.Replicas != nil {
				t.Errorf("Deployment %s: replicas %d written beside its HPA", o.Name, *v.Spec.Replicas)
			}
			for _, c := range v.Spec.Template.Spec.Containers {
				if _, ok := c.Resources.Limits[corev1.ResourceCPU]; ok {
					t.Errorf("container %s has a CPU limit", c.Name)
				}
				if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
					t.Errorf("container %s lacks cpu or memory requests", c.Name)
				}
				for name, p := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
					if p == nil || p.TimeoutSeconds == 0 || p.HTTPGet == nil {
						t.Errorf("container %s: %s probe missing or without an explicit timeout", c.Name, name)
					}
				}
				if c.LivenessProbe != nil && c.LivenessProbe.HTTPGet != nil && c.LivenessProbe.HTTPGet.Path != "/livez" {
					t.Errorf("liveness checks %s, want /livez (nothing but the process)", c.LivenessProbe.HTTPGet.Path)
				}
			}
		case *autoscalingv2.HorizontalPodAutoscaler:
			if v.Spec.MinReplicas == nil || *v.Spec.MinReplicas < 2 {
				t.Errorf("HPA minReplicas %v, want 2 or more", v.Spec.MinReplicas)
			}
		case nil:
			switch o.Kind {
			case "ValidatingWebhookConfiguration":
				checkWebhookConfig(t, o)
			case "ClusterRole":
				checkContextRBAC(t, o)
			}
		}
	}
	for _, k := range []string{"Deployment", "Service", "ValidatingWebhookConfiguration", "PodDisruptionBudget", "HorizontalPodAutoscaler",
		"ServiceAccount", "ClusterRole", "ClusterRoleBinding"} {
		if kinds[k] != 1 {
			t.Errorf("%d %s, want 1", kinds[k], k)
		}
	}
}

// checkContextRBAC: the webhook's ClusterRole lets it list and watch every
// kind its informer caches hold (ContextKinds), and nothing more.
func checkContextRBAC(t *testing.T, o *object.Object) {
	t.Helper()
	var role rbacv1.ClusterRole
	if err := json.Unmarshal(o.Doc.JSON, &role); err != nil {
		t.Fatal(err)
	}
	granted := map[string]bool{}
	for _, r := range role.Rules {
		for _, v := range r.Verbs {
			if v != "get" && v != "list" && v != "watch" {
				t.Errorf("ClusterRole %s grants %s: the webhook only reads", o.Name, v)
			}
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				granted[g+"/"+res] = slices.Contains(r.Verbs, "list") && slices.Contains(r.Verbs, "watch")
			}
		}
	}
	for _, k := range cluster.DefaultKinds {
		if slices.Contains(ContextKinds, k.Kind) && !granted[k.Group+"/"+k.Resource] {
			t.Errorf("ClusterRole %s does not let the webhook list and watch %s, which its cache holds", o.Name, k.Name())
		}
	}
	if len(granted) != len(ContextKinds) {
		t.Errorf("ClusterRole %s grants %d resources, the cache holds %d kinds", o.Name, len(granted), len(ContextKinds))
	}
}

func checkWebhookConfig(t *testing.T, o *object.Object) {
	t.Helper()
	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	if err := json.Unmarshal(o.Doc.JSON, &vwc); err != nil {
		t.Fatal(err)
	}
	for _, w := range vwc.Webhooks {
		if w.FailurePolicy == nil || *w.FailurePolicy != admissionregistrationv1.Ignore {
			t.Errorf("webhook %s: failurePolicy %v, want Ignore", w.Name, w.FailurePolicy)
		}
		if w.TimeoutSeconds == nil || *w.TimeoutSeconds > 10 {
			t.Errorf("webhook %s: timeoutSeconds %v, want it written and under the default 10", w.Name, w.TimeoutSeconds)
		}
		if w.ClientConfig.Service == nil || w.ClientConfig.Service.Path == nil || *w.ClientConfig.Service.Path != Path {
			t.Errorf("webhook %s: clientConfig %+v does not call %s", w.Name, w.ClientConfig, Path)
		}
	}
}
