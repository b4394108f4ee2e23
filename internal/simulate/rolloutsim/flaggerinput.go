package rolloutsim

import (
	"fmt"
	"slices"
	"strings"
	"time"

	flaggerv1 "github.com/fluxcd/flagger/pkg/apis/flagger/v1beta1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/util/intstr"

	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/object"
)

// CanaryManifest is what a Flagger run takes from the manifest: the
// Canary, its target Deployment's probe and sizes, its autoscaler.
type CanaryManifest struct {
	Canary *flaggerv1.Canary
	// Replicas: the primary's pods for all the traffic, as the rules read
	// them (the target's status.replicas, spec.replicas or its autoscaler's
	// minimum).
	Replicas       int32
	CanaryReplicas int32
	Autoscaler     *Autoscaler
	Probe          Probe
	// Deadline is the target's progressDeadlineSeconds (default 600).
	Deadline time.Duration
	// MaxSurge and MaxUnavailable are the target's rolling update.
	MaxSurge, MaxUnavailable *intstr.IntOrString
	Notes                    []string
}

// HasCanary reports whether the objects hold a Canary (named name, when
// given) and no Rollout of that name: the run is then Flagger's.
func HasCanary(objs []*object.Object, name string) bool {
	canary := false
	for _, o := range objs {
		if name != "" && o.Name != name {
			continue
		}
		if _, ok := o.Typed.(*flaggerv1.Canary); ok {
			canary = true
		}
		if o.Kind == "Rollout" {
			return false
		}
	}
	return canary
}

// CanaryFromObjects finds the Canary (the one named, or the only one) and
// reads what a run needs from it and its target.
func CanaryFromObjects(objs []*object.Object, name string) (*CanaryManifest, error) {
	o, err := pickOne[*flaggerv1.Canary](objs, name, "Canary", "Canaries")
	if err != nil {
		return nil, err
	}
	cd := o.Typed.(*flaggerv1.Canary)
	m := &CanaryManifest{Canary: cd, Replicas: 1, CanaryReplicas: 1, Deadline: 600 * time.Second,
		Probe: Probe{Period: 10 * time.Second, SuccessThreshold: 1, FailureThreshold: 3}}
	ix := index.Build(objs)
	target := ix.Get("Deployment", o.Namespace, cd.Spec.TargetRef.Name)
	if target == nil {
		m.Notes = append(m.Notes, fmt.Sprintf("the target Deployment %s is not in the input: 1 replica and the probe defaults", cd.Spec.TargetRef.Name))
	} else {
		dep, _ := target.Typed.(*appsv1.Deployment)
		if dep != nil && dep.Spec.ProgressDeadlineSeconds != nil && *dep.Spec.ProgressDeadlineSeconds > 0 {
			m.Deadline = time.Duration(*dep.Spec.ProgressDeadlineSeconds) * time.Second
		}
		if dep != nil && dep.Spec.Strategy.RollingUpdate != nil {
			m.MaxSurge, m.MaxUnavailable = dep.Spec.Strategy.RollingUpdate.MaxSurge, dep.Spec.Strategy.RollingUpdate.MaxUnavailable
		}
		if pt := target.PodTemplate(); pt != nil {
			var note string
			m.Probe, note = ProbeOf(pt.Spec)
			m.Notes = append(m.Notes, note)
		}
		var note string
		m.Replicas, note = replicasOf(ix.ReplicasOf(target), "the target's", "the pods the primary needs for all the traffic")
		m.Replicas = max(m.Replicas, 1)
		if note != "" {
			m.Notes = append(m.Notes, note)
		}
		m.CanaryReplicas = m.Replicas
		if dep != nil && dep.Spec.Replicas != nil && *dep.Spec.Replicas > 0 {
			m.CanaryReplicas = *dep.Spec.Replicas
		}
	}
	if ref := cd.Spec.AutoscalerRef; ref != nil {
		m.Autoscaler, m.CanaryReplicas = autoscalerOf(ix, o.Namespace, ref, m)
	}
	return m, nil
}

// autoscalerOf reads the primary's autoscaler (Flagger copies the target's,
// pkg/canary/hpa_reconciler.go, with primaryScalerReplicas over its range)
// and the canary's size from zero: the HPA's minReplicas when more than 1,
// else 1 (ScaleFromZero, pkg/canary/deployment_controller.go:187-194).
func autoscalerOf(ix *index.Index, ns string, ref *flaggerv1.AutoscalerReference, m *CanaryManifest) (*Autoscaler, int32) {
	a := &Autoscaler{Min: 1, Max: max(m.Replicas, 1), Window: 300 * time.Second}
	canary := int32(1)
	found := false
	if ref.Kind == "" || ref.Kind == "HorizontalPodAutoscaler" {
		if o := ix.Get("HorizontalPodAutoscaler", ns, ref.Name); o != nil {
			if h, ok := o.Typed.(*autoscalingv2.HorizontalPodAutoscaler); ok {
				found = true
				if h.Spec.MinReplicas != nil {
					a.Min = *h.Spec.MinReplicas
					if a.Min > 1 {
						canary = a.Min
					}
				}
				a.Max = h.Spec.MaxReplicas
				if st, tr := h.Spec.ScaleTargetRef, m.Canary.Spec.TargetRef; st.Name != tr.Name || (st.Kind != "" && tr.Kind != "" && st.Kind != tr.Kind) {
					a.OtherTarget = st.Kind + " " + st.Name
					m.Notes = append(m.Notes, fmt.Sprintf("autoscaler %s scales %s, not the target %s: Flagger copies it for the primary all the same (hpa_reconciler.go:56-68), but nothing scales the canary: it keeps the replicas ScaleFromZero gives it (deployment_controller.go:166-210)", ref.Name, a.OtherTarget, m.Canary.Spec.TargetRef.Name))
				}
				if b := h.Spec.Behavior; b != nil && b.ScaleDown != nil && b.ScaleDown.StabilizationWindowSeconds != nil {
					a.Window = time.Duration(*b.ScaleDown.StabilizationWindowSeconds) * time.Second
				}
			}
		}
	}
	if r := ref.PrimaryScalerReplicas; r != nil {
		if r.MinReplicas != nil {
			a.Min = *r.MinReplicas
		}
		if r.MaxReplicas != nil {
			a.Max = *r.MaxReplicas
		}
	}
	if !found {
		m.Notes = append(m.Notes, fmt.Sprintf("autoscaler %s %s is not in the input: range 1-%d and the default 300 s scale-down window assumed", ref.Kind, ref.Name, a.Max))
	}
	m.Replicas = min(max(m.Replicas, a.Min), max(a.Max, a.Min))
	return a, canary
}

// ChecksOf reads the Canary's metrics; blind names those BF411 found
// unable to tell the canary from the primary. What a template's value
// measures is not in the Canary: a latency or a request rate (by its name)
// is not modelled, a success rate (by its name, or a thresholdRange with
// only a min) is read as the success percentage, anything else as the
// error percentage. That reading is an assumption the run's notes state.
func ChecksOf(cd *flaggerv1.Canary, blind []string) []Check {
	var out []Check
	a := cd.GetAnalysis()
	if a == nil {
		return nil
	}
	for _, m := range a.Metrics {
		//lint:ignore SA1019 Flagger v1.44.0 still honours a metric's threshold
		c := Check{Name: m.Name, Blind: slices.Contains(blind, m.Name), Threshold: m.Threshold, Window: time.Minute}
		iv := m.Interval
		if iv == "" {
			iv = cd.GetMetricInterval()
		}
		if d, err := time.ParseDuration(iv); err == nil && d > 0 {
			c.Window = d
		}
		if tr := m.ThresholdRange; tr != nil {
			c.Min, c.Max = tr.Min, tr.Max
		}
		name := strings.ToLower(m.Name)
		switch {
		case m.Name == "request-duration" || strings.Contains(name, "latency") || strings.Contains(name, "duration"):
			c.NotModelled, c.Kind = true, "a latency"
		case strings.Contains(name, "request-rate") || strings.Contains(name, "throughput") || strings.Contains(name, "rps"):
			c.NotModelled, c.Kind = true, "a request rate"
		case m.Name == "request-success-rate" || strings.Contains(name, "success") || (c.Min != nil && c.Max == nil):
			c.Success = true
		}
		out = append(out, c)
	}
	return out
}
