package typedpatch_test

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"

	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/typedpatch"
)

func deployment() *appsv1.Deployment {
	d := &appsv1.Deployment{}
	d.Name = "web"
	d.Spec.Template.Spec.Containers = []corev1.Container{
		{Name: "sidecar"},
		{Name: "app", LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"cat"}}}, PeriodSeconds: 5}},
	}
	return d
}

func patch(t *testing.T, s string) map[string]any {
	t.Helper()
	p, err := fix.DecodePatch([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestApplyMergesContainersByNameAndLeavesTheOriginal(t *testing.T) {
	d := deployment()
	out, ok := typedpatch.Apply(d, patch(t, `{"metadata":{"labels":{"a":"b"}},"spec":{"template":{"spec":{"containers":[{"name":"app",
		"livenessProbe":{"exec":null,"tcpSocket":{"port":8080},"timeoutSeconds":3},
		"resources":{"requests":{"cpu":"500m"}}}]}}}}`))
	if !ok {
		t.Fatal("refused")
	}
	got := out.(*appsv1.Deployment)
	app := got.Spec.Template.Spec.Containers[1]
	p := app.LivenessProbe
	if p.Exec != nil || p.TCPSocket == nil || p.TCPSocket.Port != intstr.FromInt32(8080) || p.TimeoutSeconds != 3 || p.PeriodSeconds != 5 {
		t.Errorf("probe %+v", p)
	}
	if q := app.Resources.Requests[corev1.ResourceCPU]; q.Cmp(resource.MustParse("500m")) != 0 {
		t.Errorf("cpu %v", q.String())
	}
	if got.Labels["a"] != "b" || got.Spec.Template.Spec.Containers[0].Name != "sidecar" {
		t.Errorf("labels %v, containers %v", got.Labels, got.Spec.Template.Spec.Containers)
	}
	if orig := d.Spec.Template.Spec.Containers[1].LivenessProbe; orig.Exec == nil || orig.TCPSocket != nil || d.Labels != nil {
		t.Errorf("the original changed: %+v", orig)
	}
}

func TestApplyRefusesWhatItLeavesToTheDocument(t *testing.T) {
	for name, p := range map[string]string{
		"directive":         `{"spec":{"template":{"spec":{"containers":[{"name":"app","$patch":"delete"}]}}}}`,
		"unknown field":     `{"spec":{"template":{"spec":{"containers":[{"name":"app","livenessprobe":{"timeoutSeconds":3}}]}}}}`,
		"new container":     `{"spec":{"template":{"spec":{"containers":[{"name":"db","image":"x"}]}}}}`,
		"out of order":      `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"a"},{"name":"sidecar","image":"b"}]}}}}`,
		"not an integer":    `{"spec":{"replicas":1.5}}`,
		"out of range":      `{"spec":{"replicas":3000000000}}`,
		"wrong type":        `{"spec":{"replicas":"3"}}`,
		"scalars merged":    `{"metadata":{"finalizers":["a"]}}`,
		"map into a scalar": `{"spec":{"replicas":{"a":1}}}`,
		"null in a list":    `{"spec":{"template":{"spec":{"containers":[{"name":"app","args":[null]}]}}}}`,
	} {
		if _, ok := typedpatch.Apply(deployment(), patch(t, p)); ok {
			t.Errorf("%s: applied %s", name, p)
		}
	}
}

func TestApplyRefusesAnUntypedObject(t *testing.T) {
	if _, ok := typedpatch.Apply(nil, map[string]any{}); ok {
		t.Error("applied to nil")
	}
	if _, ok := typedpatch.Apply((*appsv1.Deployment)(nil), map[string]any{}); ok {
		t.Error("applied to a nil Deployment")
	}
}
