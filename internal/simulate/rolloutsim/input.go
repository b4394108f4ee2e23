package rolloutsim

import (
	"backfire.dev/backfire/internal/lazyregexp"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/object"
)

// Manifest is what a run takes from the manifest: the Rollout, the replica
// count as the rules read it (an autoscaler's, a live status's or
// spec.replicas), the readiness probe and the background analysis.
type Manifest struct {
	Rollout  *v1alpha1.Rollout
	Replicas int32
	Probe    Probe
	Analysis *Analysis
	// Notes say where each value came from and what was assumed.
	Notes []string
}

// FromObjects finds the Rollout (the one named, or the only one) and reads
// what a run needs from it and the objects around it.
func FromObjects(objs []*object.Object, name string) (*Manifest, error) {
	o, err := pickOne[*v1alpha1.Rollout](objs, name, "Rollout", "Rollouts")
	if err != nil {
		return nil, err
	}
	ro := o.Typed.(*v1alpha1.Rollout)
	ix := index.Build(objs)
	m := &Manifest{Rollout: ro, Probe: Probe{Period: 10 * time.Second, SuccessThreshold: 1, FailureThreshold: 3}}
	var note string
	if m.Replicas, note = replicasOf(ix.ReplicasOf(o), "the Rollout's", "the count at the time"); note != "" {
		m.Notes = append(m.Notes, note)
	}
	if pt, _ := ix.PodTemplate(o); pt != nil {
		var note string
		m.Probe, note = ProbeOf(pt.Spec)
		m.Notes = append(m.Notes, note)
	}
	if c := ro.Spec.Strategy.Canary; c != nil && c.Analysis != nil {
		m.Analysis, m.Notes = analysisOf(ix, o, &c.Analysis.RolloutAnalysis, m.Notes)
	}
	return m, nil
}

// ProbeOf reads the readiness probe of the pod's first container, with the
// API server's defaults, and says which it used.
func ProbeOf(spec *corev1.PodSpec) (Probe, string) {
	pr := Probe{Period: 10 * time.Second, SuccessThreshold: 1, FailureThreshold: 3}
	if len(spec.Containers) == 0 {
		return pr, "the pod has no container: the simulation uses the probe defaults"
	}
	c := spec.Containers[0]
	p := c.ReadinessProbe
	if p == nil {
		return pr, fmt.Sprintf("container %s has no readiness probe: the simulation uses the defaults (period 10s, failureThreshold 3)", c.Name)
	}
	pr.InitialDelay = time.Duration(p.InitialDelaySeconds) * time.Second
	if p.PeriodSeconds > 0 {
		pr.Period = time.Duration(p.PeriodSeconds) * time.Second
	}
	if p.SuccessThreshold > 0 {
		pr.SuccessThreshold = p.SuccessThreshold
	}
	if p.FailureThreshold > 0 {
		pr.FailureThreshold = p.FailureThreshold
	}
	return pr, fmt.Sprintf("readiness probe of container %s: period %s, successThreshold %d, failureThreshold %d; it fails when a pod gets more than --pod-capacity",
		c.Name, pr.Period, pr.SuccessThreshold, pr.FailureThreshold)
}

// analysisOf reads the first metric of the background analysis' templates.
func analysisOf(ix *index.Index, ro *object.Object, a *v1alpha1.RolloutAnalysis, notes []string) (*Analysis, []string) {
	for _, ref := range a.Templates {
		var spec *v1alpha1.AnalysisTemplateSpec
		if ref.ClusterScope != nil && *ref.ClusterScope {
			if t := ix.ClusterScoped("ClusterAnalysisTemplate", ref.TemplateName); t != nil {
				spec = &t.Typed.(*v1alpha1.ClusterAnalysisTemplate).Spec
			}
		} else if t := ix.Get("AnalysisTemplate", ro.Namespace, ref.TemplateName); t != nil {
			spec = &t.Typed.(*v1alpha1.AnalysisTemplate).Spec
		}
		if spec == nil {
			notes = append(notes, fmt.Sprintf("analysis template %s is not in the input: the background analysis is not simulated", ref.TemplateName))
			continue
		}
		for _, m := range spec.Metrics {
			an := &Analysis{Name: ref.TemplateName + "/" + m.Name, Interval: 60 * time.Second, Window: time.Minute, MaxErrorRate: 0.05}
			if m.Interval != "" {
				if d, err := m.Interval.Duration(); err == nil {
					an.Interval = d
				}
			}
			if m.FailureLimit != nil && m.FailureLimit.Type == 0 {
				an.FailureLimit = m.FailureLimit.IntVal
			}
			if bound, ok := parseBound(m.SuccessCondition); ok {
				an.MaxErrorRate = bound
			} else {
				notes = append(notes, fmt.Sprintf("successCondition %q is not of the form result[0] < X: the simulation fails a measurement at an error rate of 5%% or more", m.SuccessCondition))
			}
			an.RevisionAware = revisionAware(&m, a.Args)
			return an, notes
		}
	}
	return nil, notes
}

var boundRE = lazyregexp.New(`^\s*(?:result(?:\[0\])?)\s*<=?\s*([0-9.]+)\s*$`)

func parseBound(cond string) (float64, bool) {
	m := boundRE().FindStringSubmatch(cond)
	if m == nil {
		return 0, false
	}
	v, err := strconv.ParseFloat(m[1], 64)
	return v, err == nil
}

// revisionToken is the rules' test for a query that names a revision
// (internal/rules/rollouts): a pod-template-hash label, version, revision
// or canary, at the start of a word.
var revisionToken = lazyregexp.New(`(?i)(?:^|[^a-z0-9])(rollouts[-_]pod[-_]template[-_]hash|pod[-_]template[-_]hash|version|revision|canary)`)

// revisionAware reports whether the metric's query can tell the canary's
// requests from the stable's: it names a revision, or the Rollout feeds it
// the canary's pod-template hash.
func revisionAware(m *v1alpha1.Metric, args []v1alpha1.AnalysisRunArgument) bool {
	if m.Provider.Prometheus == nil {
		return false
	}
	q := m.Provider.Prometheus.Query
	if revisionToken().MatchString(q) {
		return true
	}
	for _, a := range args {
		if a.ValueFrom != nil && a.ValueFrom.PodTemplateHashValue != nil && *a.ValueFrom.PodTemplateHashValue == v1alpha1.Latest &&
			strings.Contains(q, "args."+a.Name) {
			return true
		}
	}
	return false
}
