package resources

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestRequiredControlPlane(t *testing.T) {
	cp := corev1.NodeSelectorRequirement{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.NodeSelectorOpExists}
	zone := corev1.NodeSelectorRequirement{Key: "topology.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}
	host := corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"cp-1"}}
	spec := func(terms ...corev1.NodeSelectorTerm) *corev1.PodSpec {
		return &corev1.PodSpec{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}}}
	}
	for _, tc := range []struct {
		name         string
		spec         *corev1.PodSpec
		pinned       bool
		strippedTerm int // terms kept by the fix; -1 when the requirement is deleted
	}{
		{"no affinity", &corev1.PodSpec{}, false, -1},
		{"no terms", spec(), false, -1},
		{"only term is the control plane", spec(corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{cp}}), true, -1},
		{"control plane and a zone", spec(corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{cp, zone}}), true, 1},
		{"control plane and a node name field", spec(corev1.NodeSelectorTerm{
			MatchExpressions: []corev1.NodeSelectorRequirement{cp}, MatchFields: []corev1.NodeSelectorRequirement{host}}), true, 1},
		{"one term of two elsewhere", spec(
			corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{cp}},
			corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{zone}}), false, -1},
		{"NotIn is not a requirement to be there", spec(corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
			{Key: cp.Key, Operator: corev1.NodeSelectorOpNotIn, Values: []string{""}}}}), false, -1},
	} {
		a := requiredControlPlane(tc.spec)
		kept := -1
		if a.stripped != nil {
			kept = len(a.stripped)
		}
		if a.pinned != tc.pinned || (tc.pinned && kept != tc.strippedTerm) {
			t.Errorf("%s: pinned %v, kept %d terms; want %v, %d", tc.name, a.pinned, kept, tc.pinned, tc.strippedTerm)
		}
	}
}
