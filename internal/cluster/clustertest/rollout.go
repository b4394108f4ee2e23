package clustertest

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// Revision is one ReplicaSet of a Rollout's history, in creation order.
type Revision struct {
	Number             int64
	Hash               string
	Replicas, Ready    int32
	Experiment         bool
	ScaleDownDeadline  *time.Time
	SameSecondAsBefore bool // created in the same second as the revision before it
}

// RolloutHistory creates a Rollout (YAML, without status) and its
// ReplicaSets, owned by it, one by one in a later second than the one
// before, or in the same second when a Revision asks for it: the API server
// stamps creationTimestamp to the second, and the rollback window compares
// those stamps. It then writes the ReplicaSets' and the Rollout's status as
// a controller would have (status, JSON fields of the Rollout's status).
func (e *Env) RolloutHistory(t testing.TB, namespace string, rolloutYAML []byte, revs []Revision, status map[string]any) []*appsv1.ReplicaSet {
	t.Helper()
	ctx := context.Background()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(rolloutYAML, &u.Object); err != nil {
		t.Fatal(err)
	}
	u.SetNamespace(namespace)
	e.Namespace(t, namespace)
	rollouts := e.Dynamic.Resource(schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"}).Namespace(namespace)
	ro, err := rollouts.Create(ctx, u, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create Rollout: %v", err)
	}
	owner := metav1.OwnerReference{APIVersion: "argoproj.io/v1alpha1", Kind: "Rollout", Name: ro.GetName(), UID: ro.GetUID(),
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	selector, _, _ := unstructured.NestedStringMap(ro.Object, "spec", "selector", "matchLabels")
	rss := e.Typed.AppsV1().ReplicaSets(namespace)
	var out []*appsv1.ReplicaSet
	for i := 0; i < len(revs); i++ {
		pair := i+1 < len(revs) && revs[i+1].SameSecondAsBefore
		for attempt := 0; ; attempt++ {
			// Start at a fresh second, so that this one is later than the
			// one before and a pair fits in the same second.
			time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 20*time.Millisecond)))
			first := e.createRS(t, rss, ro.GetName(), selector, owner, revs[i])
			if !pair {
				out = append(out, first)
				break
			}
			second := e.createRS(t, rss, ro.GetName(), selector, owner, revs[i+1])
			if first.CreationTimestamp.Equal(&second.CreationTimestamp) {
				out = append(out, first, second)
				i++
				break
			}
			// A busy machine took more than the second: try again.
			for _, rs := range []*appsv1.ReplicaSet{first, second} {
				if err := rss.Delete(ctx, rs.Name, metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			if attempt == 4 {
				t.Fatalf("could not create %s and %s in the same second", revs[i].Hash, revs[i+1].Hash)
			}
		}
	}
	if status != nil {
		ro, err = rollouts.Get(ctx, ro.GetName(), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ro.Object["status"] = status
		if _, err := rollouts.UpdateStatus(ctx, ro, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("update Rollout status: %v", err)
		}
	}
	return out
}

func (e *Env) createRS(t testing.TB, rss interface {
	Create(context.Context, *appsv1.ReplicaSet, metav1.CreateOptions) (*appsv1.ReplicaSet, error)
	UpdateStatus(context.Context, *appsv1.ReplicaSet, metav1.UpdateOptions) (*appsv1.ReplicaSet, error)
}, rollout string, selector map[string]string, owner metav1.OwnerReference, rev Revision) *appsv1.ReplicaSet {
	t.Helper()
	ctx := context.Background()
	labels := map[string]string{"rollouts-pod-template-hash": rev.Hash}
	for k, v := range selector {
		labels[k] = v
	}
	annotations := map[string]string{"rollout.argoproj.io/revision": strconv.FormatInt(rev.Number, 10)}
	if rev.Experiment {
		annotations["experiment.argoproj.io/name"] = rollout + "-experiment"
	}
	if rev.ScaleDownDeadline != nil {
		annotations["scale-down-deadline"] = rev.ScaleDownDeadline.UTC().Format(time.RFC3339)
	}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%s", rollout, rev.Hash), Labels: labels, Annotations: annotations, OwnerReferences: []metav1.OwnerReference{owner}},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To(rev.Replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:" + rev.Hash}}},
			},
		},
	}
	created, err := rss.Create(ctx, rs, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create ReplicaSet %s: %v", rs.Name, err)
	}
	created.Status = appsv1.ReplicaSetStatus{Replicas: rev.Replicas, ReadyReplicas: rev.Ready, AvailableReplicas: rev.Ready, FullyLabeledReplicas: rev.Replicas, ObservedGeneration: created.Generation}
	if created, err = rss.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update ReplicaSet %s status: %v", rs.Name, err)
	}
	return created
}
