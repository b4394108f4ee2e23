package cluster

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Kind is a resource that a cluster scan lists.
type Kind struct {
	schema.GroupVersionResource
	Kind       string
	Namespaced bool
	// ScannedWithOwner lists the owners ("group/Kind", or "*" for any
	// controller) whose controlled objects are skipped: the owner is listed
	// too and holds the template the rules need, so scanning the child would
	// report every finding twice.
	ScannedWithOwner []string
}

// Name is how users and RBAC rules name the resource: "rollouts.argoproj.io".
func (k Kind) Name() string {
	if k.Group == "" {
		return k.Resource
	}
	return k.Resource + "." + k.Group
}

// custom reports whether the kind comes from a CustomResourceDefinition
// rather than with Kubernetes: built-in groups have no dot ("apps") or end
// in ".k8s.io".
func (k Kind) custom() bool {
	return strings.Contains(k.Group, ".") && !strings.HasSuffix(k.Group, ".k8s.io")
}

// DefaultKinds are the kinds the rules read: workloads, what scales them,
// the Services and Ingresses in front of them, the Argo Rollouts analysis
// templates, and what selects their pods: disruption budgets, network
// policies, Istio DestinationRules; the Namespaces (their labels, which
// network policies select), Argo CD Applications (what a sync ignores), and
// Flagger's Canaries and MetricTemplates.
var DefaultKinds = []Kind{
	{GroupVersionResource: gvr("", "v1", "pods"), Kind: "Pod", Namespaced: true, ScannedWithOwner: []string{"*"}},
	{GroupVersionResource: gvr("apps", "v1", "deployments"), Kind: "Deployment", Namespaced: true},
	{GroupVersionResource: gvr("apps", "v1", "statefulsets"), Kind: "StatefulSet", Namespaced: true},
	{GroupVersionResource: gvr("apps", "v1", "daemonsets"), Kind: "DaemonSet", Namespaced: true},
	{GroupVersionResource: gvr("", "v1", "replicationcontrollers"), Kind: "ReplicationController", Namespaced: true},
	{GroupVersionResource: gvr("apps", "v1", "replicasets"), Kind: "ReplicaSet", Namespaced: true,
		ScannedWithOwner: []string{"apps/Deployment", "argoproj.io/Rollout"}},
	{GroupVersionResource: gvr("batch", "v1", "jobs"), Kind: "Job", Namespaced: true, ScannedWithOwner: []string{"batch/CronJob"}},
	{GroupVersionResource: gvr("batch", "v1", "cronjobs"), Kind: "CronJob", Namespaced: true},
	{GroupVersionResource: gvr("", "v1", "services"), Kind: "Service", Namespaced: true},
	{GroupVersionResource: gvr("autoscaling", "v2", "horizontalpodautoscalers"), Kind: "HorizontalPodAutoscaler", Namespaced: true},
	{GroupVersionResource: gvr("argoproj.io", "v1alpha1", "rollouts"), Kind: "Rollout", Namespaced: true},
	{GroupVersionResource: gvr("argoproj.io", "v1alpha1", "analysistemplates"), Kind: "AnalysisTemplate", Namespaced: true},
	{GroupVersionResource: gvr("argoproj.io", "v1alpha1", "clusteranalysistemplates"), Kind: "ClusterAnalysisTemplate"},
	{GroupVersionResource: gvr("keda.sh", "v1alpha1", "scaledobjects"), Kind: "ScaledObject", Namespaced: true},
	{GroupVersionResource: gvr("policy", "v1", "poddisruptionbudgets"), Kind: "PodDisruptionBudget", Namespaced: true},
	{GroupVersionResource: gvr("networking.k8s.io", "v1", "networkpolicies"), Kind: "NetworkPolicy", Namespaced: true},
	{GroupVersionResource: gvr("networking.k8s.io", "v1", "ingresses"), Kind: "Ingress", Namespaced: true},
	{GroupVersionResource: gvr("", "v1", "namespaces"), Kind: "Namespace"},
	// v1beta1 is served by every Istio from 1.5 on, beside v1alpha3 and
	// (from 1.22) v1.
	{GroupVersionResource: gvr("networking.istio.io", "v1beta1", "destinationrules"), Kind: "DestinationRule", Namespaced: true},
	{GroupVersionResource: gvr("argoproj.io", "v1alpha1", "applications"), Kind: "Application", Namespaced: true},
	// Flagger's Canary and MetricTemplate (BF411 to BF413); v1beta1 is the
	// version Flagger v1.44.0 serves.
	{GroupVersionResource: gvr("flagger.app", "v1beta1", "canaries"), Kind: "Canary", Namespaced: true},
	{GroupVersionResource: gvr("flagger.app", "v1beta1", "metrictemplates"), Kind: "MetricTemplate", Namespaced: true},
}

func gvr(group, version, resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: group, Version: version, Resource: resource}
}

// ownedElsewhere reports whether u is controlled by an owner that is
// scanned in its place.
func (k Kind) ownedElsewhere(u *unstructured.Unstructured) bool {
	for _, ref := range u.GetOwnerReferences() {
		if ref.Controller == nil || !*ref.Controller {
			continue
		}
		owner := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
		for _, s := range k.ScannedWithOwner {
			if s == "*" || s == owner.Group+"/"+owner.Kind {
				return true
			}
		}
	}
	return false
}
