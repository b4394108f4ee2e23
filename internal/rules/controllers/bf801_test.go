package controllers

import (
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"

	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
)

func decode(t *testing.T, src string) *object.Object {
	t.Helper()
	f := load.Parse("o.yaml", []byte(src))
	if len(f.Errors) > 0 || len(f.Documents) != 1 {
		t.Fatalf("parse: %v", f.Errors)
	}
	o, err := object.Decode(f.Documents[0])
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// An object read from a cluster always has spec.replicas (the API server
// defaults it); what the sync tool applies is told by its own record.
func TestAppliedReplicasOfLiveObjects(t *testing.T) {
	const head = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  resourceVersion: \"42\"\n"
	for _, c := range []struct {
		name, meta string
		want       int32
		ok         bool
	}{
		{"no record: not known", "", 0, false},
		{"last-applied with replicas", "  annotations:\n    kubectl.kubernetes.io/last-applied-configuration: '{\"spec\":{\"replicas\":2}}'\n", 2, true},
		{"last-applied with a capitalized Spec the API server drops", "  annotations:\n    kubectl.kubernetes.io/last-applied-configuration: '{\"Spec\":{\"replicas\":2}}'\n", 0, false},
		{"last-applied without replicas", "  annotations:\n    kubectl.kubernetes.io/last-applied-configuration: '{\"spec\":{\"template\":{}}}'\n", 0, false},
		{"applier owns replicas", "  managedFields:\n  - manager: argocd-controller\n    operation: Apply\n    fieldsV1: {\"f:spec\": {\"f:replicas\": {}}}\n", 7, true},
		{"only the autoscaler owns it", "  managedFields:\n  - manager: argocd-controller\n    operation: Apply\n    fieldsV1: {\"f:spec\": {\"f:template\": {}}}\n  - manager: kube-controller-manager\n    operation: Update\n    subresource: scale\n    fieldsV1: {\"f:spec\": {\"f:replicas\": {}}}\n", 0, false},
	} {
		o := decode(t, head+c.meta+"spec:\n  replicas: 7\n  template: {spec: {containers: [{name: c}]}}\n")
		got, ok := appliedReplicas(o)
		if ok != c.ok || got.n != c.want {
			t.Errorf("%s: applied %d (%v), want %d (%v)", c.name, got.n, ok, c.want, c.ok)
		}
	}
}

// The recovery follows the HPA's scale-up limit: max(4 pods, 100 %) per
// 15 s by default; a Pods policy alone adds its value per period.
func TestRecoveryPath(t *testing.T) {
	path, ok := recovery(3, 20, defaultScaleUp)
	if !ok || climb(3, path) != "3 -> 7 -> 14 -> 20" {
		t.Errorf("default: %v %v", climb(3, path), ok)
	}
	one := defaultScaleUp
	one.Policies = []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 60}}
	path, ok = recovery(2, 10, one)
	// 4 pods per 60 s: 6 at the first sync, then nothing until the
	// period has passed, 10 at the fifth.
	if !ok || len(path) != 5 || climb(2, path) != "2 -> 6 -> 10" {
		t.Errorf("4 pods per 60 s: %v (%d syncs)", climb(2, path), len(path))
	}
}
