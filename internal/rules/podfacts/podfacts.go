// Package podfacts is what the scan rules know of the pods an object runs:
// what each container is (package classify), the files a ConfigMap mounts
// into it, and whether the pods run once. What several rules ask about the
// same container is computed once per object, in the pass's shared store
// (rules.Pass.Shared): the engine runs rules and knows nothing of this.
package podfacts

import (
	"strconv"

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

// queryOf keys what a probe of a container asks, in the shared store.
type queryOf struct {
	c     *corev1.Container
	probe *corev1.Probe
}

// ProbeQuery says what probe pr of container c of the object's pod
// template t asks of the server (classify.ProbeWith, with the scripts the
// input holds), computed once per object: BF101, BF102 and BF601 read the
// same liveness probe, BF101 and BF106 the same readiness probe.
func ProbeQuery(p *rules.Pass, t *object.PodTemplate, c *corev1.Container, pr *corev1.Probe) classify.ProbeQuery {
	return p.Shared(queryOf{c, pr}, func() any {
		return classify.Probes.ProbeWith(p.Object.Kind, c, pr, Classify(p, c), Files(p, t, c))
	}).(classify.ProbeQuery)
}

// startupOf keys a container's startup judgement in the shared store.
type startupOf struct{ c *corev1.Container }

// Startup judges container c's startupProbe against a crash recovery of
// the configured threshold (classify.StartupOf), once per object: BF101,
// BF105 and BF601 ask about the same container.
func Startup(p *rules.Pass, t *object.PodTemplate, c *corev1.Container) classify.Startup {
	return p.Shared(startupOf{c}, func() any {
		return classify.StartupOf(p.Object.Kind, c, Classify(p, c), p.Config().StartupBudgetSeconds(), Files(p, t, c))
	}).(classify.Startup)
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
	budget := p.Config().StartupBudgetSeconds()
	st := Startup(p, t, c)
	if st.Present && st.FailsDuringRecovery && st.Budget < budget {
		return Loop{Rule: "BF105", Probe: "startup", Seconds: st.Budget, Formula: st.BudgetFormula}, true
	}
	if c.LivenessProbe == nil || st.Holds || !ProbeQuery(p, t, c, c.LivenessProbe).FailsDuringRecovery(v) {
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
	return Loop{Rule: "BF101", Probe: "liveness", Seconds: run, Formula: strconv.Itoa(d) + " + " + strconv.Itoa(lt.Failure.N) + " x " + strconv.Itoa(lt.Period.N)}, true
}
