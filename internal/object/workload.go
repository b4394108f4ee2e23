package object

import (
	rolloutsv1alpha1 "github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// PodTemplate is the pod a workload runs, wherever the kind keeps it.
type PodTemplate struct {
	// Owner is the object whose document holds the template. It differs
	// from the workload for a Rollout with workloadRef (the Deployment).
	Owner *Object
	Meta  *metav1.ObjectMeta
	Spec  *corev1.PodSpec
	// Path is the field path of the PodTemplateSpec in Owner's document
	// ("spec.template"; the root for a Pod, whose spec is at "spec").
	Path *field.Path
	// SpecPath is the field path of the PodSpec.
	SpecPath *field.Path
}

// ContainerPath returns the path of the i-th container of the template.
func (t *PodTemplate) ContainerPath(i int) *field.Path {
	return t.SpecPath.Child("containers").Index(i)
}

// WorkloadKinds are the kinds that run pods.
var WorkloadKinds = []string{"Pod", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "ReplicationController", "Job", "CronJob", "Rollout"}

// PodTemplate returns the object's own pod template, or nil when it has none.
// A Rollout that uses workloadRef has none of its own: the index resolves it.
func (o *Object) PodTemplate() *PodTemplate {
	switch v := o.Typed.(type) {
	case *corev1.Pod:
		return &PodTemplate{Owner: o, Meta: &v.ObjectMeta, Spec: &v.Spec, Path: nil, SpecPath: podSpecPath}
	case *appsv1.Deployment:
		return fromSpec(o, &v.Spec.Template)
	case *appsv1.StatefulSet:
		return fromSpec(o, &v.Spec.Template)
	case *appsv1.DaemonSet:
		return fromSpec(o, &v.Spec.Template)
	case *appsv1.ReplicaSet:
		return fromSpec(o, &v.Spec.Template)
	case *corev1.ReplicationController:
		if v.Spec.Template == nil {
			return nil
		}
		return fromSpec(o, v.Spec.Template)
	case *batchv1.Job:
		return fromSpec(o, &v.Spec.Template)
	case *batchv1.CronJob:
		t := &v.Spec.JobTemplate.Spec.Template
		return &PodTemplate{Owner: o, Meta: &t.ObjectMeta, Spec: &t.Spec, Path: jobTemplatePath, SpecPath: jobTemplateSpecPath}
	case *rolloutsv1alpha1.Rollout:
		if v.Spec.WorkloadRef != nil {
			return nil
		}
		return fromSpec(o, &v.Spec.Template)
	}
	return nil
}

// The paths of pod templates, made once: rules ask for an object's
// template many times, and a field.Path is never changed once made.
var (
	podSpecPath         = field.NewPath("spec")
	templatePath        = field.NewPath("spec", "template")
	templateSpecPath    = templatePath.Child("spec")
	jobTemplatePath     = field.NewPath("spec", "jobTemplate", "spec", "template")
	jobTemplateSpecPath = jobTemplatePath.Child("spec")
)

// fromSpec is the template at spec.template.
func fromSpec(o *Object, t *corev1.PodTemplateSpec) *PodTemplate {
	return &PodTemplate{Owner: o, Meta: &t.ObjectMeta, Spec: &t.Spec, Path: templatePath, SpecPath: templateSpecPath}
}

// Replicas returns spec.replicas of a scalable workload and whether it was
// written. An unset count is owned by an autoscaler or defaults to 1.
func (o *Object) Replicas() (n int32, set bool) {
	var r *int32
	switch v := o.Typed.(type) {
	case *appsv1.Deployment:
		r = v.Spec.Replicas
	case *appsv1.StatefulSet:
		r = v.Spec.Replicas
	case *appsv1.ReplicaSet:
		r = v.Spec.Replicas
	case *corev1.ReplicationController:
		r = v.Spec.Replicas
	case *rolloutsv1alpha1.Rollout:
		r = v.Spec.Replicas
	case *corev1.Pod:
		return 1, true
	default:
		return 0, false
	}
	if r == nil {
		return 1, false
	}
	return *r, true
}

// Running returns status.replicas: how many pods the workload ran when the
// object was captured (a live cluster, or a `kubectl get -o yaml` dump). It
// is 0 for manifests from Git, which carry no status.
func (o *Object) Running() int32 {
	switch v := o.Typed.(type) {
	case *appsv1.Deployment:
		return v.Status.Replicas
	case *appsv1.StatefulSet:
		return v.Status.Replicas
	case *appsv1.ReplicaSet:
		return v.Status.Replicas
	case *corev1.ReplicationController:
		return v.Status.Replicas
	case *rolloutsv1alpha1.Rollout:
		return v.Status.Replicas
	}
	return 0
}

// Stateful reports whether the workload keeps state on a volume: a
// StatefulSet, volumeClaimTemplates, or a mounted PersistentVolumeClaim.
func (o *Object) Stateful(t *PodTemplate) (bool, string) {
	if _, ok := o.Typed.(*appsv1.StatefulSet); ok {
		return true, "StatefulSet"
	}
	if t == nil {
		return false, ""
	}
	for _, v := range t.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			return true, "mounts PersistentVolumeClaim " + v.PersistentVolumeClaim.ClaimName
		}
		if v.Ephemeral != nil && v.Ephemeral.VolumeClaimTemplate != nil {
			return true, "ephemeral volume claim " + v.Name
		}
	}
	return false, ""
}

// ClaimTemplates returns the names of a StatefulSet's volumeClaimTemplates:
// volumes its pods mount without declaring them. Other kinds have none.
func (o *Object) ClaimTemplates() []string {
	ss, ok := o.Typed.(*appsv1.StatefulSet)
	if !ok {
		return nil
	}
	var names []string
	for _, t := range ss.Spec.VolumeClaimTemplates {
		names = append(names, t.Name)
	}
	return names
}

// Container is a container that runs for the pod's whole life, and where
// the template keeps it.
type Container struct {
	*corev1.Container
	// Index is its position in spec.containers, or in spec.initContainers
	// for a Sidecar.
	Index int
	// Sidecar: a native sidecar, an init container with restartPolicy
	// Always. It runs beside the containers with its own probes and
	// resources.
	Sidecar bool
	t       *PodTemplate
}

// Path is the field path of the container's entry:
// spec.template.spec.containers[0], ...initContainers[1]. It is built only
// when asked for (a finding needs it; most containers have none).
func (c Container) Path() *field.Path {
	if c.Sidecar {
		return c.t.SpecPath.Child("initContainers").Index(c.Index)
	}
	return c.t.ContainerPath(c.Index)
}

// Containers returns the pod's long-running containers: the regular ones,
// then the native sidecars. Init containers that run to completion before
// the others start are left out: they are not servers and carry no probes.
// Rules walk containers through this one function.
func (t *PodTemplate) Containers() []Container {
	out := make([]Container, 0, len(t.Spec.Containers))
	for i := range t.Spec.Containers {
		out = append(out, Container{Container: &t.Spec.Containers[i], Index: i, t: t})
	}
	for i := range t.Spec.InitContainers {
		c := &t.Spec.InitContainers[i]
		if IsSidecar(c) {
			out = append(out, Container{Container: c, Index: i, Sidecar: true, t: t})
		}
	}
	return out
}

// IsSidecar reports whether an init container is a native sidecar
// (restartPolicy: Always): it keeps running beside the pod's containers.
func IsSidecar(c *corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}
