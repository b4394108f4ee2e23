// Package resources holds the resource and scheduling rules (BF2xx, BF3xx):
// requests, limits and node placement that make a database lose every
// contest for CPU and memory on its node, or tie it to a node it cannot
// leave.
package resources

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"backfire.dev/backfire/internal/classify"
	"backfire.dev/backfire/internal/model/probe"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/rules/podfacts"
)

// workload is what the rules of this family need to know about a pod: its
// first database-like container, and whether it keeps state.
type workload struct {
	t *object.PodTemplate
	// db is the first database-like long-running container (regular, or a
	// native sidecar); nil when there is none. Init containers that run to
	// completion are not servers: one that runs the database image to fix
	// permissions is not one.
	db      *object.Container
	verdict classify.Verdict
	// stateful says why the workload keeps state ("StatefulSet"), "" when
	// it does not. Jobs are never stateful here: they run to completion.
	stateful string
	// pod is what classify reads of the pod: which mounts persist.
	pod classify.Pod
}

// workloadOf reads the object's workload once for the rules of the
// family that ask (BF201, BF301); nil when it runs no pods.
func workloadOf(p *rules.Pass) *workload {
	return p.Shared(workloadKey{}, func() any { return readWorkload(p) }).(*workload)
}

// workloadKey keys the object's workload in the shared store.
type workloadKey struct{}

func readWorkload(p *rules.Pass) *workload {
	t := p.PodTemplate()
	if t == nil {
		return nil
	}
	w := &workload{t: t, pod: classify.Pod{Spec: t.Spec, Claims: p.Object.ClaimTemplates()}}
	for _, c := range t.Containers() {
		if v := podfacts.Classify(p, c.Container); v.DatabaseLike {
			w.db, w.verdict = &c, v
			break
		}
	}
	if podfacts.RunsOnce(p) == "" {
		if ok, why := p.Object.Stateful(t); ok {
			w.stateful = why
		}
	}
	return w
}

func (w *workload) databaseLike() bool { return w.db != nil }

// keepsData says what the pod keeps on a volume that outlives it (its
// volume claims, mounted PersistentVolumeClaims, ephemeral claims), or ""
// when it keeps nothing: a StatefulSet without a volume claim uses the
// StatefulSet only for stable names and ordered starts.
func (w *workload) keepsData() string {
	var what []string
	for _, c := range w.t.Containers() {
		for _, m := range w.pod.PersistentMounts(c.Container) {
			if !strings.HasPrefix(m.Kind, "hostPath") {
				what = append(what, m.Kind)
			}
		}
	}
	if len(what) == 0 {
		if ok, why := w.t.Owner.Stateful(w.t); ok && why != "StatefulSet" {
			return why // a claim the pod declares but no container mounts
		}
		return ""
	}
	return strings.Join(dedupe(what), ", ")
}

// dataContainers are the containers that hold the pod's data: the
// database-like one, else those that mount a volume that outlives the pod.
// Nil when no container does: then every container is meant.
func (w *workload) dataContainers() []object.Container {
	if w.databaseLike() {
		return []object.Container{*w.db}
	}
	var out []object.Container
	for _, c := range w.t.Containers() {
		for _, m := range w.pod.PersistentMounts(c.Container) {
			if !strings.HasPrefix(m.Kind, "hostPath") {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

func dedupe(list []string) []string {
	var out []string
	for _, s := range list {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// classification is the evidence line of a finding:
// "database-like PostgreSQL (image goharbor/harbor-db, env PGDATA)".
func (w *workload) classification() string {
	var parts []string
	if w.databaseLike() {
		parts = append(parts, fmt.Sprintf("database-like %s (%s)", w.verdict.Server.Name, w.verdict.EvidenceString()))
	}
	if w.stateful != "" {
		parts = append(parts, "stateful ("+w.stateful+")")
	}
	return strings.Join(parts, "; ")
}

// timedProbe is a probe whose answer must arrive within its timeout. A
// tcpSocket probe is left out: the kernel accepts the connection, so a
// starved or throttled process does not miss it.
type timedProbe struct {
	kind string // "liveness"
	p    *corev1.Probe
	t    probe.Timing
}

// budget is the time the probe gives an answer: "1 s (timeoutSeconds
// unset: the Kubernetes default)".
func (tp timedProbe) budget() string {
	if tp.t.Timeout.Set {
		return strconv.Itoa(tp.t.Timeout.N) + " s"
	}
	return strconv.Itoa(tp.t.Timeout.N) + " s (timeoutSeconds unset: the Kubernetes default)"
}

func (tp timedProbe) timeout() string {
	if tp.t.Timeout.Set {
		return fmt.Sprintf("the %d s %s timeout", tp.t.Timeout.N, tp.kind)
	}
	return fmt.Sprintf("the %d s %s timeout (timeoutSeconds unset: the Kubernetes default)", tp.t.Timeout.N, tp.kind)
}

// timedProbes returns the container's liveness, readiness and startup
// probes that can time out, in that order.
func timedProbes(c *corev1.Container, podGrace *int64) []timedProbe {
	var out []timedProbe
	for _, x := range []struct {
		kind string
		p    *corev1.Probe
	}{{"liveness", c.LivenessProbe}, {"readiness", c.ReadinessProbe}, {"startup", c.StartupProbe}} {
		h := probe.Handler(x.p)
		if h == "" || h == "tcpSocket" {
			continue
		}
		out = append(out, timedProbe{kind: x.kind, p: x.p, t: probe.TimingOf(x.p, podGrace)})
	}
	return out
}

// timeouts joins the probes' timeouts for a mechanism line:
// "the 1 s readiness timeout and the 5 s liveness timeout".
func timeouts(tps []timedProbe) string {
	var s []string
	for _, tp := range tps {
		s = append(s, tp.timeout())
	}
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// utoa renders a cgroup figure.
func utoa(n uint64) string { return strconv.FormatUint(n, 10) }

// milli reads a cpu quantity written by this package ("500m").
func milli(s string) int64 {
	q := resource.MustParse(s)
	return q.MilliValue()
}

// share renders a/b as a percentage: "1%", "2.6%".
func share(a, b uint64) string {
	pct := 100 * float64(a) / float64(b)
	if pct == float64(int64(pct)) {
		return strconv.FormatInt(int64(pct), 10) + "%"
	}
	return strconv.FormatFloat(pct, 'f', 1, 64) + "%"
}
