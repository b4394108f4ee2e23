package analysis

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/object"
)

// Metric is one metric of a template a Rollout's analysis uses.
type Metric struct {
	Template *object.Object
	// KindName is "AnalysisTemplate error-rate".
	KindName string
	Metric   *v1alpha1.Metric
	// Args are the template's own args and defaults.
	Args   []v1alpha1.Argument
	DryRun bool
}

// Resolution is what an analysis block's template references resolve to.
type Resolution struct {
	Metrics []Metric
	// Missing names each template that is not in the input, with why when
	// one of that name is there but cannot be used.
	Missing []string
	// Notes say what was assumed to resolve a reference.
	Notes []string
	// Args are the run's declared args: every template's, merged as the
	// controller flattens them (flattenArgs in utils/analysis/helpers.go:
	// a value, once given, is not replaced by a later declaration without
	// one).
	Args []v1alpha1.Argument
}

// Resolve finds the templates of an analysis block, following templates
// that include other templates (the controller flattens them into one run:
// FlattenTemplates in utils/analysis/helpers.go), and marks dry-run
// metrics.
func Resolve(ix *index.Index, ro *object.Object, a *v1alpha1.RolloutAnalysis) Resolution {
	var res Resolution
	seen := map[*object.Object]bool{}
	// The flattened run applies every dryRun rule to every metric.
	dryRun := slices.Clone(a.DryRun)
	var visit func(refs []v1alpha1.AnalysisTemplateRef, namespace string)
	visit = func(refs []v1alpha1.AnalysisTemplateRef, namespace string) {
		for _, ref := range refs {
			t, why, note := lookupTemplate(ix, ref, namespace)
			if note != "" {
				res.Notes = append(res.Notes, note)
			}
			if t == nil {
				res.Missing = append(res.Missing, why)
				continue
			}
			if seen[t] {
				continue
			}
			seen[t] = true
			spec := templateSpec(t)
			if spec == nil {
				continue
			}
			dryRun = append(dryRun, spec.DryRun...)
			res.Args = flattenArgs(res.Args, spec.Args)
			for i := range spec.Metrics {
				res.Metrics = append(res.Metrics, Metric{
					Template: t, KindName: t.Kind + " " + t.Name, Metric: &spec.Metrics[i], Args: spec.Args,
				})
			}
			visit(spec.Templates, t.Namespace)
		}
	}
	visit(a.Templates, ro.Namespace)
	for i := range res.Metrics {
		res.Metrics[i].DryRun = matchesDryRun(dryRun, res.Metrics[i].Metric.Name)
	}
	return res
}

func templateSpec(t *object.Object) *v1alpha1.AnalysisTemplateSpec {
	switch v := t.Typed.(type) {
	case *v1alpha1.AnalysisTemplate:
		return &v.Spec
	case *v1alpha1.ClusterAnalysisTemplate:
		return &v.Spec
	}
	return nil
}

// lookupTemplate resolves a template reference. An AnalysisTemplate is
// namespaced: it must be in the Rollout's namespace. When one of the two
// leaves the namespace to `kubectl apply -n`, they are assumed to share it.
func lookupTemplate(ix *index.Index, ref v1alpha1.AnalysisTemplateRef, namespace string) (t *object.Object, missing, note string) {
	if ref.ClusterScope != nil && *ref.ClusterScope {
		if t := ix.ClusterScoped("ClusterAnalysisTemplate", ref.TemplateName); t != nil {
			return t, "", ""
		}
		return nil, "ClusterAnalysisTemplate " + ref.TemplateName, ""
	}
	if t := ix.Get("AnalysisTemplate", namespace, ref.TemplateName); t != nil {
		return t, "", ""
	}
	var elsewhere []string
	for _, o := range ix.Named("AnalysisTemplate", ref.TemplateName) {
		if namespace == "" || o.Namespace == "" {
			return o, "", fmt.Sprintf("AnalysisTemplate %s and the Rollout are applied to the same namespace (one of them names none)", ref.TemplateName)
		}
		elsewhere = append(elsewhere, o.Namespace)
	}
	if len(elsewhere) > 0 {
		return nil, fmt.Sprintf("AnalysisTemplate %s (only in namespace %s, which a Rollout in namespace %s cannot use)", ref.TemplateName, strings.Join(elsewhere, ", "), namespace), ""
	}
	return nil, "AnalysisTemplate " + ref.TemplateName, ""
}

// matchesDryRun applies the controller's rule: each dryRun metricName is a
// regular expression matched anywhere in the metric's name
// (GetDryRunMetrics in utils/analysis/helpers.go).
func matchesDryRun(rules []v1alpha1.DryRun, name string) bool {
	for _, r := range rules {
		if ok, _ := regexp.MatchString(r.MetricName, name); ok {
			return true
		}
	}
	return false
}

func flattenArgs(combined, more []v1alpha1.Argument) []v1alpha1.Argument {
	for _, a := range more {
		i := slices.IndexFunc(combined, func(c v1alpha1.Argument) bool { return c.Name == a.Name })
		switch {
		case i < 0:
			combined = append(combined, a)
		case combined[i].Value == nil:
			combined[i] = a
		}
	}
	return combined
}
