package object

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ScaledObject is the part of KEDA's keda.sh/v1alpha1 ScaledObject that
// backfire reads. KEDA's own module is heavy; these fields are stable.
type ScaledObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ScaledObjectSpec `json:"spec"`
}

// ScaledObjectSpec holds the scale target and the replica range.
type ScaledObjectSpec struct {
	ScaleTargetRef  *ScaleTarget `json:"scaleTargetRef"`
	MinReplicaCount *int32       `json:"minReplicaCount,omitempty"`
	MaxReplicaCount *int32       `json:"maxReplicaCount,omitempty"`
}

// ScaleTarget names the scaled workload; KEDA defaults the kind to
// Deployment and the apiVersion to apps/v1.
type ScaleTarget struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Name       string `json:"name"`
}

// KEDA's defaults when the counts are omitted.
const (
	KEDADefaultMinReplicas = 0
	KEDADefaultMaxReplicas = 100
)
