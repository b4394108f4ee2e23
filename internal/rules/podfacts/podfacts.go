// Package podfacts is what the scan rules know of the pods an object runs:
// what each container is (package classify), the files a ConfigMap mounts
// into it, and whether the pods run once. What several rules ask about the
// same container is computed once per object, in the pass's shared store
// (rules.Pass.Shared): the engine runs rules and knows nothing of this.
package podfacts

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"backfire.dev/backfire/internal/classify"
	"backfire.dev/backfire/internal/model/probe"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/rules"
)

// verdictOf keys a container's classification in the shared store.
type verdictOf struct{ c *corev1.Container }

// Classify says what a container of the object's pod template is (see
// package classify), computed once per object however many rules ask.
func Classify(p *rules.Pass, c *corev1.Container) classify.Verdict {
	return p.Shared(verdictOf{c}, func() any {
		pf := podOf(p)
		return classify.Members(classify.ContainerIn(pf.once, c, pf.pod), c, pf.replicas)
	}).(classify.Verdict)
}

// pod is what classifying any container of the object reads of the
// object, once per object.
type pod struct {
	once     string // RunsOnce
	pod      classify.Pod
	replicas int32
}

// podKey keys the object's pod in the shared store.
type podKey struct{}

func podOf(p *rules.Pass) *pod {
	return p.Shared(podKey{}, func() any {
		pf := &pod{}
		var spec *corev1.PodSpec
		if t, _ := p.Index.PodTemplate(p.Object); t != nil {
			spec = t.Spec
			pf.pod = classify.Pod{Spec: t.Spec, Claims: p.Object.ClaimTemplates()}
		}
		pf.once = classify.RunsOnce(p.Object.Kind, p.Object.Meta, spec)
		replicas, set := p.Object.Replicas()
		if !set {
			replicas = 1 // the API's default; a Pod is one server too
		}
		pf.replicas = replicas
		return pf
	}).(*pod)
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
func RunsOnce(p *rules.Pass) string { return podOf(p).once }

// Loop is a probe that kills the crash recovery a container starts with:
// the condition of BF101 (a liveness probe that fails while the server
// recovers) or of BF105 (a startup probe that does, with a budget below
// the threshold). The rules that make a crash recovery (a SIGKILL at the
// end of the stop window) chain to it.
type Loop struct {
	Rule    string // "BF101", "BF105"
	Probe   string // "liveness", "startup"
	Seconds int    // the longest recovery that completes
	Formula string // "300 + 3 x 10"
}

// RecoveryLoop says which probe of container c, classified as v, kills a
// crash recovery longer than how many seconds; ok is false when none does.
func RecoveryLoop(p *rules.Pass, t *object.PodTemplate, c *corev1.Container, v classify.Verdict) (Loop, bool) {
	if !v.DatabaseLike {
		return Loop{}, false
	}
	kind := p.Object.Kind
	budget := p.Config().StartupBudgetSeconds()
	files := Files(p, t, c)
	st := classify.StartupOf(kind, c, v, budget, files)
	if st.Present && st.FailsDuringRecovery && st.Budget < budget {
		return Loop{Rule: "BF105", Probe: "startup", Seconds: st.Budget, Formula: st.BudgetFormula}, true
	}
	if c.LivenessProbe == nil || st.Holds || !classify.Probes.ProbeWith(kind, c, c.LivenessProbe, v, files).FailsDuringRecovery(v) {
		return Loop{}, false
	}
	lt := probe.TimingOf(c.LivenessProbe, t.Spec.TerminationGracePeriodSeconds)
	d := lt.InitialDelay.N
	if st.Present && c.StartupProbe != nil {
		d = max(d, probe.TimingOf(c.StartupProbe, nil).InitialDelay.N)
	}
	run := d + lt.Failure.N*lt.Period.N
	if run >= budget {
		return Loop{}, false // it allows a recovery as long as the threshold
	}
	return Loop{Rule: "BF101", Probe: "liveness", Seconds: run, Formula: fmt.Sprintf("%d + %d x %d", d, lt.Failure.N, lt.Period.N)}, true
}
