package index

import (
	"strings"

	flaggerv1 "github.com/fluxcd/flagger/pkg/apis/flagger/v1beta1"

	"backfire.dev/backfire/internal/object"
)

// Copy pairs a workload people edit with the copy of its pod spec that a
// controller runs beside it, so that a finding on both is reported once.
type Copy struct {
	Original, Copy *object.Object
	// By names the controller's object that made the copy ("Canary
	// test/podinfo").
	By string
}

// CopyOf returns the pair o belongs to, as the original or as the copy, or
// nil. The one pair known is Flagger's: for a Canary whose targetRef is a
// Deployment or DaemonSet T, Flagger creates T-primary, controlled by the
// Canary, with T's pod spec, and copies T's spec into it again at each
// promotion (fluxcd/flagger v1.44.0 pkg/canary/deployment_controller.go:
// createPrimaryDeployment, the owner reference at lines 279-285 and the pod
// spec at 298-303; Promote, lines 65-138; daemonset_controller.go likewise).
// Both must be in the input: a file in Git holds the target only.
func (ix *Index) CopyOf(o *object.Object) *Copy {
	if o.Kind != "Deployment" && o.Kind != "DaemonSet" || o.Meta == nil {
		return nil
	}
	// o as the primary: its controller is a Canary targeting T, o is T-primary.
	for _, ref := range o.Meta.OwnerReferences {
		if ref.Controller == nil || !*ref.Controller || ref.Kind != "Canary" || !strings.HasPrefix(ref.APIVersion, "flagger.app/") {
			continue
		}
		cd := canary(ix.Get("Canary", o.Namespace, ref.Name))
		if cd == nil || cd.Spec.TargetRef.Kind != o.Kind || cd.Spec.TargetRef.Name+"-primary" != o.Name {
			return nil
		}
		if t := ix.Get(o.Kind, o.Namespace, cd.Spec.TargetRef.Name); t != nil {
			return &Copy{Original: t, Copy: o, By: "Canary " + o.Namespace + "/" + ref.Name}
		}
		return nil
	}
	// o as the target: a Canary targets it and its primary is in the input.
	for _, c := range ix.InNamespace("Canary", o.Namespace) {
		cd := canary(c)
		if cd == nil || cd.Spec.TargetRef.Kind != o.Kind || cd.Spec.TargetRef.Name != o.Name {
			continue
		}
		p := ix.Get(o.Kind, o.Namespace, o.Name+"-primary")
		if p == nil || p.Meta == nil {
			continue
		}
		for _, ref := range p.Meta.OwnerReferences {
			if ref.Controller != nil && *ref.Controller && ref.Kind == "Canary" && ref.Name == c.Name && strings.HasPrefix(ref.APIVersion, "flagger.app/") {
				return &Copy{Original: o, Copy: p, By: "Canary " + o.Namespace + "/" + c.Name}
			}
		}
	}
	return nil
}

func canary(o *object.Object) *flaggerv1.Canary {
	if o == nil {
		return nil
	}
	cd, _ := o.Typed.(*flaggerv1.Canary)
	return cd
}
