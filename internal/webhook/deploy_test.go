package webhook

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"backfire.dev/backfire/internal/cluster"
	"backfire.dev/backfire/internal/helm"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/scan"
	"backfire.dev/backfire/internal/testutil"
)

// The webhook is deployed as the product preaches: backfire scan finds
// nothing in deploy/ or in the chart, and what the scan cannot see from a
// rule (two replicas, the failurePolicy of the mode, the exemptions, a
// stated timeout, a PDB and an HPA, no CPU limit, GOMEMLIMIT under the
// memory limit, probe timeouts written out) is checked here, in warn mode
// (deploy/, the chart's defaults) and deny mode (deploy/ with deploy/deny/
// applied over it, the chart with mode=deny).
func TestDeploymentIsCleanAndAsDocumented(t *testing.T) {
	root := testutil.RepoRoot(t)
	for _, c := range []struct {
		name  string
		paths []string
		set   []string
		mode  Mode
	}{
		{"deploy", []string{"deploy"}, nil, Warn},
		{"deploy+deny", []string{"deploy", "deploy/deny"}, nil, Deny},
		{"chart", []string{"charts/backfire"}, nil, Warn},
		{"chart mode=deny", []string{"charts/backfire"}, []string{"mode=deny"}, Deny},
	} {
		t.Run(c.name, func(t *testing.T) {
			charts, err := helm.New(helm.Options{Set: c.set})
			if err != nil {
				t.Fatal(err)
			}
			var objs []*object.Object
			for _, dir := range c.paths {
				files, err := filepath.Glob(filepath.Join(root, dir, "*.yaml"))
				if err != nil {
					t.Fatal(err)
				}
				paths := files
				if strings.HasPrefix(dir, "charts") {
					paths = []string{filepath.Join(root, dir)}
				}
				res, err := scan.Run(scan.Options{Paths: paths, Charts: charts, KeepObjects: true})
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range res.Errors {
					t.Errorf("input error: %v", e)
				}
				for _, f := range res.Findings {
					t.Errorf("finding: %s %s %s:%d %s", f.Rule, f.Object, f.File, f.Line, f.Message)
				}
				// deploy/deny/ is applied over deploy/: its objects replace
				// those of the same kind and name.
				for _, o := range res.Objects {
					objs = slices.DeleteFunc(objs, func(p *object.Object) bool { return p.Kind == o.Kind && p.Name == o.Name && p.Namespace == o.Namespace })
					objs = append(objs, o)
				}
			}
			checkDeployment(t, objs, c.mode)
		})
	}
}

func checkDeployment(t *testing.T, objs []*object.Object, mode Mode) {
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
				if !slices.Contains(c.Args, "--mode="+string(mode)) {
					t.Errorf("container %s: args %v, want --mode=%s", c.Name, c.Args, mode)
				}
				// GOMEMLIMIT under the memory limit, with room for what is
				// not Go heap.
				limit := c.Resources.Limits.Memory().Value()
				var goLimit int64
				for _, e := range c.Env {
					if e.Name == "GOMEMLIMIT" {
						q, err := resource.ParseQuantity(strings.TrimSuffix(e.Value, "B"))
						if err != nil {
							t.Errorf("GOMEMLIMIT %q: %v", e.Value, err)
						}
						goLimit = q.Value()
					}
				}
				if goLimit == 0 || goLimit > limit*7/8 {
					t.Errorf("container %s: GOMEMLIMIT %d bytes, want it set and at most 7/8 of the memory limit %d", c.Name, goLimit, limit)
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
				checkWebhookConfig(t, o, mode)
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

func checkWebhookConfig(t *testing.T, o *object.Object, mode Mode) {
	t.Helper()
	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	if err := json.Unmarshal(o.Doc.JSON, &vwc); err != nil {
		t.Fatal(err)
	}
	// Warn mode admits everything: down, it loses only warnings. Deny mode
	// refuses what it did not judge, and Fail has the API server refuse
	// what it did not answer.
	want := map[Mode]admissionregistrationv1.FailurePolicyType{Warn: admissionregistrationv1.Ignore, Deny: admissionregistrationv1.Fail}[mode]
	for _, w := range vwc.Webhooks {
		if w.FailurePolicy == nil || *w.FailurePolicy != want {
			t.Errorf("webhook %s: failurePolicy %v, want %s in %s mode", w.Name, w.FailurePolicy, want, mode)
		}
		if w.TimeoutSeconds == nil || *w.TimeoutSeconds > 10 {
			t.Errorf("webhook %s: timeoutSeconds %v, want it written and under the default 10", w.Name, w.TimeoutSeconds)
		}
		if w.ClientConfig.Service == nil || w.ClientConfig.Service.Path == nil || *w.ClientConfig.Service.Path != Path {
			t.Errorf("webhook %s: clientConfig %+v does not call %s", w.Name, w.ClientConfig, Path)
		}
		// What keeps the cluster repairable when the webhook is down
		// under Fail: the control plane's namespaces and the webhook's own
		// are never sent to it, nor a namespace labelled disabled, nor the
		// control plane's own writes.
		excluded := map[string]bool{}
		disabled := false
		if sel := w.NamespaceSelector; sel != nil {
			for _, e := range sel.MatchExpressions {
				switch {
				case e.Key == "kubernetes.io/metadata.name" && e.Operator == metav1.LabelSelectorOpNotIn:
					for _, v := range e.Values {
						excluded[v] = true
					}
				case e.Key == "backfire.dev/webhook" && e.Operator == metav1.LabelSelectorOpNotIn && slices.Equal(e.Values, []string{"disabled"}):
					disabled = true
				}
			}
		}
		for _, ns := range []string{"kube-system", "kube-node-lease", "cert-manager", w.ClientConfig.Service.Namespace} {
			if !excluded[ns] {
				t.Errorf("webhook %s: namespace %s is not excluded (namespaceSelector %+v)", w.Name, ns, w.NamespaceSelector)
			}
		}
		if !disabled {
			t.Errorf("webhook %s: no opt-out label backfire.dev/webhook=disabled", w.Name)
		}
		var conds []string
		for _, c := range w.MatchConditions {
			conds = append(conds, c.Name)
		}
		if !slices.Equal(conds, []string{"not-the-control-plane", "not-being-deleted"}) {
			t.Errorf("webhook %s: matchConditions %v", w.Name, conds)
		}
		// The workloads with a canary controller of their own: Argo
		// Rollouts' Rollouts and Flagger's Canaries (BF411 to BF413).
		for _, want := range []string{"argoproj.io/v1alpha1/rollouts", "flagger.app/v1beta1/canaries"} {
			if !slices.ContainsFunc(w.Rules, func(r admissionregistrationv1.RuleWithOperations) bool {
				return slices.ContainsFunc(r.APIGroups, func(g string) bool {
					return slices.ContainsFunc(r.APIVersions, func(v string) bool {
						return slices.Contains(r.Resources, strings.Split(want, "/")[2]) && g+"/"+v == strings.Join(strings.Split(want, "/")[:2], "/")
					})
				}) && slices.Contains(r.Operations, admissionregistrationv1.Create)
			}) {
				t.Errorf("webhook %s: its rules do not send %s to it", w.Name, want)
			}
		}
	}
}
