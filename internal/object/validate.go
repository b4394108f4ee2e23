package object

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"backfire.dev/backfire/internal/load"
)

// validateProbes rejects the probes the API server rejects, with the
// messages kubectl prints, in the order it prints them (k8s.io/kubernetes
// v1.37.2 pkg/apis/core/validation/validation.go: validateProbe forbids a
// second handler, "may not specify more than 1 handler type", requires
// initialDelaySeconds, timeoutSeconds, periodSeconds, successThreshold
// and failureThreshold to be non-negative, "must be greater than or equal
// to 0" (ValidateNonnegativeField, k8s.io/apimachinery
// pkg/api/validation/generic.go), and a probe's
// terminationGracePeriodSeconds positive, "must be greater than 0";
// validateLivenessProbe and validateStartupProbe then require
// successThreshold 1, "must be 1", and validateReadinessProbe forbids
// terminationGracePeriodSeconds, "must not be set for readinessProbes").
// Zeros are defaults, not errors: SetDefaults_Probe (pkg/apis/core/v1/
// defaults.go) sets them before validation. Such an object never runs,
// so scanning it as if valid would report on a pod that does not exist,
// with arithmetic on numbers that mean nothing ("a recovery longer than
// -4 s").
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
			for _, f := range []struct {
				name string
				v    int32
			}{{"initialDelaySeconds", p.probe.InitialDelaySeconds}, {"timeoutSeconds", p.probe.TimeoutSeconds}, {"periodSeconds", p.probe.PeriodSeconds},
				{"successThreshold", p.probe.SuccessThreshold}, {"failureThreshold", p.probe.FailureThreshold}} {
				if f.v < 0 {
					errs = append(errs, apivalidation.ValidateNonnegativeField(int64(f.v), path().Child(f.name))...)
				}
			}
			if g := p.probe.TerminationGracePeriodSeconds; g != nil && *g <= 0 {
				errs = append(errs, field.Invalid(path().Child("terminationGracePeriodSeconds"), *g, "must be greater than 0"))
			}
			switch {
			// An unset successThreshold is defaulted to 1 before validation.
			case p.successIsOne && p.probe.SuccessThreshold != 0 && p.probe.SuccessThreshold != 1:
				errs = append(errs, field.Invalid(path().Child("successThreshold"), p.probe.SuccessThreshold, "must be 1"))
			case !p.successIsOne && p.probe.TerminationGracePeriodSeconds != nil:
				errs = append(errs, field.Invalid(path().Child("terminationGracePeriodSeconds"), p.probe.TerminationGracePeriodSeconds, "must not be set for readinessProbes"))
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
