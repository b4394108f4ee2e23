package cluster

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"backfire.dev/backfire/internal/cluster/clustertest"
)

const rolloutYAML = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: registry.example/web:v2}]}
  strategy:
    canary:
      canaryService: web-canary
      stableService: web-stable
      trafficRouting: {nginx: {stableIngress: web}}
      steps: [{setWeight: 50}]
`

// TestReadRolloutReadsItsOwnReplicaSets: the Rollout with its status, the
// ReplicaSets it controls (scaled to zero too) and not another's that its
// selector matches, and the Services that exist.
func TestReadRolloutReadsItsOwnReplicaSets(t *testing.T) {
	env := clustertest.Shared(t)
	ns := env.FreshNamespace(t, "read-rollout")
	env.RolloutHistory(t, ns, []byte(rolloutYAML), []clustertest.Revision{
		{Number: 1, Hash: "old"},
		{Number: 2, Hash: "new", Replicas: 2, Ready: 2},
	}, map[string]any{"currentPodHash": "new", "stableRS": "new", "replicas": 2})
	ctx := context.Background()
	labels := map[string]string{"app": "web", "rollouts-pod-template-hash": "stray"}
	stray := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-stray", Labels: labels},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(int32(0)), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "x"}}}}}}
	if _, err := env.Typed.AppsV1().ReplicaSets(ns).Create(ctx, stray, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web-stable"}, Spec: corev1.ServiceSpec{
		Selector: map[string]string{"app": "web", "rollouts-pod-template-hash": "new"}, Ports: []corev1.ServicePort{{Port: 80}}}}
	if _, err := env.Typed.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	st, err := ReadRollout(ctx, RolloutOptions{Config: env.Config, Namespace: ns, Name: "web"})
	if err != nil {
		t.Fatal(err)
	}
	if st.Rollout.Status.CurrentPodHash != "new" || st.Rollout.Status.StableRS != "new" {
		t.Errorf("status %+v", st.Rollout.Status)
	}
	var names []string
	for _, rs := range st.ReplicaSets {
		names = append(names, rs.Name)
	}
	if len(names) != 2 || names[0] != "web-old" && names[1] != "web-old" {
		t.Errorf("ReplicaSets %v, want web-old and web-new, not web-stray", names)
	}
	if len(st.Services) != 1 || st.Services["web-stable"] == nil {
		t.Errorf("Services %v, want web-stable only (web-canary does not exist)", st.Services)
	}
	if _, err := ReadRollout(ctx, RolloutOptions{Config: env.Config, Namespace: ns, Name: "nope"}); err == nil {
		t.Error("a missing Rollout is not an error")
	}
}
