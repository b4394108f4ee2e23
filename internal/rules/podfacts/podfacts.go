// Package podfacts is what the scan rules know of the pods an object runs:
// what each container is (package classify), the files a ConfigMap mounts
// into it, and whether the pods run once. What several rules ask about the
// same container is computed once per object, in the pass's shared store
// (rules.Pass.Shared): the engine runs rules and knows nothing of this.
package podfacts

import (
	corev1 "k8s.io/api/core/v1"

	"backfire.dev/backfire/internal/classify"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/rules"
)

// verdictOf keys a container's classification in the shared store.
type verdictOf struct{ c *corev1.Container }

// Classify says what a container of the object's pod template is (see
// package classify), computed once per object however many rules ask.
func Classify(p *rules.Pass, c *corev1.Container) classify.Verdict {
	return p.Shared(verdictOf{c}, func() any {
		var pod classify.Pod
		if t, _ := p.Index.PodTemplate(p.Object); t != nil {
			pod = classify.Pod{Spec: t.Spec, Claims: p.Object.ClaimTemplates()}
		}
		v := classify.ContainerIn(RunsOnce(p), c, pod)
		replicas, set := p.Object.Replicas()
		if !set {
			replicas = 1 // the API's default; a Pod is one server too
		}
		return classify.Members(v, c, replicas)
	}).(classify.Verdict)
}

// Files reads the files of container c of template t that the input holds:
// keys of ConfigMaps in the input, mounted into c. A probe's script is read
// from there instead of being guessed at.
func Files(p *rules.Pass, t *object.PodTemplate, c *corev1.Container) classify.Files {
	return func(path string) (classify.File, bool) {
		f, ok := t.ConfigMapFileAt(c, path)
		if !ok {
			return classify.File{}, false
		}
		o := p.Index.Get("ConfigMap", t.Owner.Namespace, f.ConfigMap)
		if o == nil {
			return classify.File{}, false
		}
		cm, ok := o.Typed.(*corev1.ConfigMap)
		if !ok {
			return classify.File{}, false
		}
		text, ok := cm.Data[f.Key]
		if !ok {
			return classify.File{}, false
		}
		return classify.File{Text: text, From: "ConfigMap " + f.ConfigMap + ", key " + f.Key}, true
	}
}

// RunsOnce says why the object's pods run once and exit ("" when they
// serve): see classify.RunsOnce.
func RunsOnce(p *rules.Pass) string {
	var spec *corev1.PodSpec
	if t, _ := p.Index.PodTemplate(p.Object); t != nil {
		spec = t.Spec
	}
	return classify.RunsOnce(p.Object.Kind, p.Object.Meta, spec)
}
