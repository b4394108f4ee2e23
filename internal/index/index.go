// Package index answers the cross-object questions of a scan once: the
// templates a Rollout's analysis uses, the autoscaler that owns a workload's
// replicas, the Deployment behind a Rollout's workloadRef.
package index

import (
	rolloutsv1alpha1 "github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"

	"backfire.dev/backfire/internal/object"
)

// An object without a namespace lands in the namespace it is applied to;
// for lookups between objects of one input that is the same for all of them.
const defaultNamespace = "default"

type key struct{ kind, namespace, name string }

func keyOf(kind, namespace, name string) key {
	if namespace == "" {
		namespace = defaultNamespace
	}
	return key{kind, namespace, name}
}

// Index is built once per scan, after every object is loaded.
type Index struct {
	objects []*object.Object
	byKey   map[key]*object.Object
	scalers map[key][]Scaler
	// workloadRefs maps a Deployment to the Rollouts that run its template.
	workloadRefs map[key][]*object.Object
}

// Scaler is an autoscaler that owns a workload's replica count.
type Scaler struct {
	Object   *object.Object
	Min, Max int32
}

// Build indexes the objects of one scan.
func Build(objs []*object.Object) *Index {
	ix := &Index{
		objects:      objs,
		byKey:        make(map[key]*object.Object, len(objs)),
		scalers:      map[key][]Scaler{},
		workloadRefs: map[key][]*object.Object{},
	}
	for _, o := range objs {
		k := keyOf(o.Kind, o.Namespace, o.Name)
		if _, dup := ix.byKey[k]; !dup {
			ix.byKey[k] = o
		}
		switch v := o.Typed.(type) {
		case *autoscalingv2.HorizontalPodAutoscaler:
			min := int32(1)
			if v.Spec.MinReplicas != nil {
				min = *v.Spec.MinReplicas
			}
			t := keyOf(v.Spec.ScaleTargetRef.Kind, o.Namespace, v.Spec.ScaleTargetRef.Name)
			ix.scalers[t] = append(ix.scalers[t], Scaler{Object: o, Min: min, Max: v.Spec.MaxReplicas})
		case *object.ScaledObject:
			if v.Spec.ScaleTargetRef == nil {
				continue
			}
			kind := v.Spec.ScaleTargetRef.Kind
			if kind == "" {
				kind = "Deployment"
			}
			s := Scaler{Object: o, Min: object.KEDADefaultMinReplicas, Max: object.KEDADefaultMaxReplicas}
			if v.Spec.MinReplicaCount != nil {
				s.Min = *v.Spec.MinReplicaCount
			}
			if v.Spec.MaxReplicaCount != nil {
				s.Max = *v.Spec.MaxReplicaCount
			}
			t := keyOf(kind, o.Namespace, v.Spec.ScaleTargetRef.Name)
			ix.scalers[t] = append(ix.scalers[t], s)
		case *rolloutsv1alpha1.Rollout:
			if ref := v.Spec.WorkloadRef; ref != nil && ref.Kind == "Deployment" {
				t := keyOf("Deployment", o.Namespace, ref.Name)
				ix.workloadRefs[t] = append(ix.workloadRefs[t], o)
			}
		}
	}
	return ix
}

// Objects returns every object of the scan, in input order.
func (ix *Index) Objects() []*object.Object { return ix.objects }

// Get finds an object by kind, namespace and name.
func (ix *Index) Get(kind, namespace, name string) *object.Object {
	return ix.byKey[keyOf(kind, namespace, name)]
}

// ClusterScoped finds a cluster-scoped object by kind and name.
func (ix *Index) ClusterScoped(kind, name string) *object.Object {
	return ix.byKey[keyOf(kind, "", name)]
}

// ScalersOf returns the HPAs and KEDA ScaledObjects whose scale target is o.
// A Rollout with workloadRef may be scaled through either object, so its
// Deployment's autoscalers are returned too.
func (ix *Index) ScalersOf(o *object.Object) []Scaler {
	scalers := ix.scalers[keyOf(o.Kind, o.Namespace, o.Name)]
	if r, ok := o.Typed.(*rolloutsv1alpha1.Rollout); ok && r.Spec.WorkloadRef != nil && r.Spec.WorkloadRef.Kind == "Deployment" {
		if more := ix.scalers[keyOf("Deployment", o.Namespace, r.Spec.WorkloadRef.Name)]; len(more) > 0 {
			scalers = append(append([]Scaler(nil), scalers...), more...)
		}
	}
	return scalers
}

// Replicas is how many pods a workload runs: spec.replicas, or the range of
// the autoscalers that own the count.
type Replicas struct {
	Min, Max int32
	// Set is true when spec.replicas was written and no autoscaler owns it.
	Set bool
	// ScaledBy lists the autoscalers; empty when spec.replicas decides.
	ScaledBy []Scaler
	// Running is status.replicas when the object carries a status (a live
	// object or a dump of one), else 0.
	Running int32
}

// ReplicasOf resolves a scalable workload's replica count. With no
// autoscaler and no spec.replicas it is 1, the API server's default.
func (ix *Index) ReplicasOf(o *object.Object) Replicas {
	scalers := ix.ScalersOf(o)
	if len(scalers) == 0 {
		n, set := o.Replicas()
		return Replicas{Min: n, Max: n, Set: set, Running: o.Running()}
	}
	r := Replicas{Min: scalers[0].Min, Max: scalers[0].Max, ScaledBy: scalers, Running: o.Running()}
	for _, s := range scalers[1:] {
		r.Min, r.Max = min(r.Min, s.Min), max(r.Max, s.Max)
	}
	return r
}

// PodTemplate returns the pod template a workload runs: its own, or for a
// Rollout with workloadRef, the referenced Deployment's. The second result
// explains why there is none (an unresolved workloadRef).
func (ix *Index) PodTemplate(o *object.Object) (*object.PodTemplate, string) {
	if t := o.PodTemplate(); t != nil {
		return t, ""
	}
	r, ok := o.Typed.(*rolloutsv1alpha1.Rollout)
	if !ok || r.Spec.WorkloadRef == nil {
		return nil, ""
	}
	ref := r.Spec.WorkloadRef
	if ref.Kind != "Deployment" {
		return nil, "workloadRef kind " + ref.Kind + " is not modelled"
	}
	d := ix.Get("Deployment", o.Namespace, ref.Name)
	if d == nil {
		return nil, "workloadRef Deployment " + ref.Name + " is not in the input"
	}
	return d.PodTemplate(), ""
}

// RunBy returns the Rollouts that run this Deployment's template through
// workloadRef. Such a Deployment is usually scaled to zero: findings about
// its pods belong to the Rollout.
func (ix *Index) RunBy(o *object.Object) []*object.Object {
	if o.Kind != "Deployment" {
		return nil
	}
	return ix.workloadRefs[keyOf("Deployment", o.Namespace, o.Name)]
}
