package object

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"backfire.dev/backfire/internal/load"
)

// validateProbes rejects the probes the API server rejects, with the
// messages kubectl prints (k8s.io/kubernetes pkg/apis/core/validation,
// validation.go: validateContainers requires successThreshold 1 of liveness
// and startup probes, "must be 1"; validateHandler forbids a second handler,
// "may not specify more than 1 handler type"). Such an object never runs,
// so scanning it as if valid would report on a pod that does not exist.
func validateProbes(t *PodTemplate) field.ErrorList {
	var errs field.ErrorList
	for _, c := range t.Containers() {
		for _, p := range []struct {
			name         string
			probe        *corev1.Probe
			successIsOne bool
		}{{"livenessProbe", c.LivenessProbe, true}, {"readinessProbe", c.ReadinessProbe, false}, {"startupProbe", c.StartupProbe, true}} {
			if p.probe == nil {
				continue
			}
			path := func() *field.Path { return c.Path().Child(p.name) }
			// An unset successThreshold is defaulted to 1 before validation.
			if p.successIsOne && p.probe.SuccessThreshold != 0 && p.probe.SuccessThreshold != 1 {
				errs = append(errs, field.Invalid(path().Child("successThreshold"), p.probe.SuccessThreshold, "must be 1"))
			}
			n := 0
			for _, h := range []struct {
				name string
				set  bool
			}{{"exec", p.probe.Exec != nil}, {"httpGet", p.probe.HTTPGet != nil}, {"tcpSocket", p.probe.TCPSocket != nil}, {"grpc", p.probe.GRPC != nil}} {
				if !h.set {
					continue
				}
				if n > 0 {
					errs = append(errs, field.Forbidden(path().Child(h.name), "may not specify more than 1 handler type"))
				}
				n++
			}
		}
	}
	return errs
}

// invalid turns the first validation error into an input error at the
// line of its field, as kubectl reports it: `StatefulSet "db" is invalid:
// spec.template.spec.containers[0].livenessProbe.successThreshold: Invalid
// value: 2: must be 1`. Further errors are counted in the message.
func invalid(o *Object, errs field.ErrorList) *load.Error {
	e := errs[0]
	pos, _ := o.Doc.Locate(e.Field)
	msg := fmt.Sprintf("%s %q is invalid: %s", o.Kind, o.Name, e.Error())
	if len(errs) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(errs)-1)
	}
	return &load.Error{File: o.Doc.File, Line: pos.Line, Column: pos.Column,
		Message: msg + "; the API server rejects this object, so it is not scanned"}
}
