package disruption

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"backfire.dev/backfire/internal/classify"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/rules"
)

// BF303: a PodDisruptionBudget under which no eviction can succeed: the
// budget allows no disruption at the workload's lowest count, two budgets
// select the same pods, the pods' controller cannot say how many to
// expect, or the one pod of a single replica is not Ready.
var BF303 = rules.Register(&rules.Rule{
	ID:       "BF303",
	Slug:     "pdb-blocks-every-eviction",
	Severity: finding.Warning,
	Summary:  "A PodDisruptionBudget refuses every eviction of the pods it selects: node drains and cluster upgrades wait on it forever, or give up and evict anyway.",
	Kinds:    []string{"PodDisruptionBudget"},
	Reads:    []string{"PodDisruptionBudget", index.PodSets},
	Evidence: []any{BF303Evidence{}},
	Fix: rules.FixFields{
		Sets: []string{"spec.minAvailable", "spec.maxUnavailable", "spec.unhealthyPodEvictionPolicy"},
		From: []string{"spec.minAvailable", "spec.maxUnavailable", "spec.unhealthyPodEvictionPolicy"},
	},
	Check: &rules.Scan{Run: runBF303},
})

// The cases, as evidence names them.
const (
	caseZero      = "zero-disruptions"
	caseOverlap   = "overlapping-budgets"
	caseNoScale   = "no-scale-subresource"
	caseUnhealthy = "unready-single-pod"
)

func runBF303(p *rules.Pass) {
	pdb, ok := p.Object.Typed.(*policyv1.PodDisruptionBudget)
	if !ok {
		return
	}
	sel, ok := budgetSelector(p.Object, pdb)
	if !ok {
		return
	}
	sets := withPods(p.Index.Selected(p.Object.Namespace, sel))
	if len(sets) == 0 {
		// NoPods: a budget that selects nothing, or only workloads
		// scaled to 0, has no pod to refuse the eviction of.
		return
	}
	b := budget{o: p.Object, pdb: pdb, sets: sets}
	b.ev = BF303Evidence{Selects: describeSets(sets), UnhealthyPodEvictionPolicy: string(policyv1.IfHealthyBudget)}
	if v := pdb.Spec.MinAvailable; v != nil {
		b.ev.MinAvailable = v.String()
	}
	if v := pdb.Spec.MaxUnavailable; v != nil {
		b.ev.MaxUnavailable = v.String()
	}
	if v := pdb.Spec.UnhealthyPodEvictionPolicy; v != nil {
		b.ev.UnhealthyPodEvictionPolicy = string(*v)
	}

	// One finding per budget, the way it blocks first: an overlap refuses
	// every eviction whatever the budgets say; a budget the controller
	// cannot count allows none; then the arithmetic.
	for _, other := range p.Index.InNamespace("PodDisruptionBudget", p.Object.Namespace) {
		if other == p.Object || other.Name == p.Object.Name {
			continue
		}
		if shared := b.shares(other); shared != "" {
			p.Report(b.overlap(other, shared))
			return
		}
	}
	for _, c := range []func() (rules.Report, bool){b.noScale, b.zero, b.unready} {
		if r, ok := c(); ok {
			p.Report(r)
			return
		}
	}
}

// withPods drops the pod sets that never run a pod: spec.replicas 0 (in
// the object or set by an overlay) with no autoscaler to raise it, or a
// Job of parallelism 0. A drain finds none of their pods to evict, so
// they block nothing, and the controller's count of them is 0.
func withPods(sets []index.PodSet) []index.PodSet {
	var out []index.PodSet
	for _, ps := range sets {
		if !ps.PerNode && ps.Kind != "Pod" && ps.Replicas.Max == 0 {
			continue
		}
		out = append(out, ps)
	}
	return out
}

// budgetSelector is the selector the eviction API matches pods with; ok is
// false when it selects no pod: a null selector, or an empty one in
// policy/v1beta1 ("An empty selector ({}) also selects no pods", unlike
// policy/v1, where it selects every pod of the namespace).
func budgetSelector(o *object.Object, pdb *policyv1.PodDisruptionBudget) (labels.Selector, bool) {
	s := pdb.Spec.Selector
	if s == nil {
		return nil, false
	}
	if o.APIVersion == "policy/v1beta1" && len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0 {
		return nil, false
	}
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return nil, false // invalid: the eviction API matches no pod with it
	}
	return sel, true
}

type budget struct {
	o    *object.Object
	pdb  *policyv1.PodDisruptionBudget
	sets []index.PodSet
	ev   BF303Evidence
}

// evidence is the budget's evidence for one case.
func (b *budget) evidence(c string) BF303Evidence {
	ev := b.ev
	ev.Case = c
	return ev
}

func report(ev BF303Evidence, path *field.Path, sev finding.Severity, msg string, mech []string, fx *finding.Fix) rules.Report {
	return rules.Report{Path: path, Severity: sev, Message: msg, Mechanism: mech, Evidence: ev, Fix: fx}
}

// budgetPath is the field that sets the budget: minAvailable or
// maxUnavailable, or the spec when neither is written.
func (b *budget) budgetPath() *field.Path {
	switch {
	case b.pdb.Spec.MinAvailable != nil:
		return field.NewPath("spec", "minAvailable")
	case b.pdb.Spec.MaxUnavailable != nil:
		return field.NewPath("spec", "maxUnavailable")
	}
	return field.NewPath("spec")
}

// shares names a pod set that another budget of the namespace selects
// too ("" when none does).
func (b *budget) shares(other *object.Object) string {
	op, ok := other.Typed.(*policyv1.PodDisruptionBudget)
	if !ok {
		return ""
	}
	sel, ok := budgetSelector(other, op)
	if !ok {
		return ""
	}
	for _, s := range b.sets {
		if sel.Matches(labels.Set(s.Labels)) {
			return s.Kind + " " + s.Name
		}
	}
	return ""
}

func (b *budget) overlap(other *object.Object, shared string) rules.Report {
	ev := b.evidence(caseOverlap)
	ev.OtherBudget = other.Name
	msg := fmt.Sprintf("the pods of %s are selected by this PodDisruptionBudget and by %s: the eviction API refuses every eviction of a pod with two budgets (HTTP 500), and kubectl drain stops at the first one",
		shared, other.Name)
	mech := []string{
		fmt.Sprintf("The eviction API lists the budgets of the pod's namespace whose selector matches its labels; %s's pods match both %s and %s.", shared, b.o.Name, other.Name),
		"With more than one it answers 500, \"This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.\", whatever the budgets allow: the pod cannot be evicted at all, healthy or not.",
		"kubectl drain retries only a 429 (a budget that allows no disruption now); any other error ends it with \"error when evicting pods\", so the drain stops at that pod, and every node that runs one cannot be drained without --disable-eviction.",
		"The cluster autoscaler and managed node upgrades evict through the same API and get the same answer.",
	}
	return report(ev, field.NewPath("spec", "selector"), finding.None, msg, mech, &finding.Fix{
		Type:        finding.ManualChange,
		Description: fmt.Sprintf("Give each pod one budget: narrow this selector or %s's so that they select disjoint pods (a catch-all budget with an empty selector overlaps every other one), or delete one of them.", other.Name),
	})
}

// noScale: maxUnavailable and percentages make the disruption controller
// ask each pod's controller for its scale; a Job, a DaemonSet or a CRD
// without the scale subresource cannot answer, and a bare Pod has no
// controller to ask.
func (b *budget) noScale() (rules.Report, bool) {
	s := b.pdb.Spec
	if s.MaxUnavailable == nil && (s.MinAvailable == nil || s.MinAvailable.Type == intstr.Int) {
		return rules.Report{}, false
	}
	var jobs, daemons, bare []index.PodSet
	scalable := 0
	for _, ps := range b.sets {
		switch {
		case ps.Scalable:
			scalable++
		case ps.Kind == "Pod":
			bare = append(bare, ps)
		case ps.PerNode:
			daemons = append(daemons, ps)
		default:
			jobs = append(jobs, ps)
		}
	}
	budgetField := "maxUnavailable " + b.ev.MaxUnavailable
	if s.MaxUnavailable == nil {
		budgetField = "minAvailable " + b.ev.MinAvailable
	}
	manual := &finding.Fix{Type: finding.ManualChange,
		Description: "Use an integer minAvailable instead: the disruption controller then counts the selected pods itself and never asks their controller for a scale; or drop the budget for pods that run to completion or one per node."}
	switch {
	case len(jobs) > 0 || len(daemons) > 0:
		ps := append(jobs, daemons...)[0]
		res := map[string]string{"Job": "jobs.batch", "CronJob": "jobs.batch", "DaemonSet": "daemonsets.apps"}[ps.Kind]
		sev := finding.None
		if len(jobs) == 0 {
			sev = finding.Info // drains skip DaemonSet pods
		}
		msg := fmt.Sprintf("%s makes the disruption controller ask the pods' controller for its scale, and %s %s has no scale subresource: the budget's status stays at 0 disruptions allowed, and every eviction of the pods it selects is refused",
			budgetField, ps.Kind, ps.Name)
		mech := []string{
			fmt.Sprintf("With maxUnavailable or a percentage minAvailable, getExpectedScale asks each selected pod's controller how many pods it wants; %s's pods belong to %s, whose API (%s) has no scale subresource.", ps.Name, ownerOf(ps), res),
			fmt.Sprintf("The controller's sync fails (\"%s does not implement the scale subresource\") and failSafe sets disruptionsAllowed to 0, with the condition DisruptionAllowed False, SyncFailed.", res),
			"Every eviction of a selected pod, of every workload the budget selects, is answered 429 \"Cannot evict pod as it would violate the pod's disruption budget\"; kubectl drain retries it every 5 s forever (its --timeout is 0, infinite, unless given).",
		}
		if len(jobs) == 0 {
			mech = append(mech, "kubectl drain --ignore-daemonsets and the cluster autoscaler leave DaemonSet pods alone, so this blocks only other evictions of them (a descheduler, a manual kubectl evict): worth knowing.")
		}
		ev := b.evidence(caseNoScale)
		ev.Controller = ps.Kind + " " + ps.Name
		return report(ev, b.budgetPath(), sev, msg, mech, manual), true
	case len(bare) > 0 && scalable == 0:
		msg := fmt.Sprintf("%s over bare Pods (%s): the disruption controller counts only pods it finds a controller for, expects 0, and allows 0 disruptions: every eviction of them is refused",
			budgetField, bare[0].Name)
		mech := []string{
			"With maxUnavailable or a percentage minAvailable, the expected count is the sum of the selected pods' controllers' scales; a pod without a controller is set aside as unmanaged (Warning UnmanagedPods), counting for nothing.",
			"With only such pods the expected count is 0, and updatePdbStatus allows 0 disruptions whenever the expected count is 0.",
			"Every eviction of them is answered 429; kubectl drain retries it every 5 s forever.",
		}
		ev := b.evidence(caseNoScale)
		ev.Controller = "none (bare Pod " + bare[0].Name + ")"
		return report(ev, b.budgetPath(), finding.None, msg, mech, manual), true
	}
	return rules.Report{}, false
}

// counted is the pods the disruption controller expects at the lowest
// count, and whether every selected workload can be counted that way.
func (b *budget) counted() (int32, bool) {
	var n int32
	for _, ps := range b.sets {
		if ps.PerNode {
			return 0, false
		}
		n += ps.Replicas.Min
	}
	return n, true
}

// desired is the healthy pods the budget requires of expected ones, as
// getExpectedPodCount computes it (percentages rounded up); neither field
// set leaves 0 of 0 expected.
func (b *budget) desired(expected int32) (want, counts int32) {
	s := b.pdb.Spec
	switch {
	case s.MaxUnavailable != nil:
		mu, err := intstr.GetScaledValueFromIntOrPercent(s.MaxUnavailable, int(expected), true)
		if err != nil {
			return expected, expected
		}
		return max(expected-int32(mu), 0), expected
	case s.MinAvailable != nil:
		ma, err := intstr.GetScaledValueFromIntOrPercent(s.MinAvailable, int(expected), true)
		if err != nil {
			return expected, expected
		}
		return int32(ma), expected
	case b.o.APIVersion == "policy/v1beta1":
		return 1, expected // the v1beta1 default, minAvailable 1
	}
	return 0, 0 // nothing expected: 0 allowed
}

func (b *budget) zero() (rules.Report, bool) {
	expected, ok := b.counted()
	if !ok {
		return rules.Report{}, false
	}
	want, counts := b.desired(expected)
	allowed := counts - want
	if counts <= 0 || allowed < 0 {
		allowed = 0
	}
	if allowed > 0 {
		return rules.Report{}, false
	}
	ev := b.evidence(caseZero)
	ev.ExpectedPods, ev.DesiredHealthy, ev.DisruptionsAllowed = expected, want, 0
	at := lowest(b.sets)
	var msg string
	s := b.pdb.Spec
	switch {
	case s.MinAvailable == nil && s.MaxUnavailable == nil:
		msg = fmt.Sprintf("neither minAvailable nor maxUnavailable is set: the disruption controller expects 0 pods and allows 0 disruptions, so every eviction of %s is refused", strings.Join(ev.Selects, ", "))
	case s.MinAvailable != nil:
		msg = fmt.Sprintf("minAvailable %s of %s%s: %d must stay healthy, 0 evictions are allowed even when every pod is healthy, and every node drain waits on this budget forever",
			s.MinAvailable.String(), pods(expected), at, want)
	default:
		msg = fmt.Sprintf("maxUnavailable %s of %s%s: 0 evictions are allowed even when every pod is healthy, and every node drain waits on this budget forever",
			s.MaxUnavailable.String(), pods(expected), at)
	}
	mech := []string{
		fmt.Sprintf("The disruption controller expects %s (%s) and requires %d of them healthy: disruptionsAllowed = %d - %d = %d, at best.", pods(expected), strings.Join(ev.Selects, ", "), want, counts, want, max(counts-want, 0)),
		"The eviction API answers every eviction with 429 \"Cannot evict pod as it would violate the pod's disruption budget\" while disruptionsAllowed is 0; kubectl drain retries a 429 every 5 s, forever unless --timeout is given.",
		"The cluster autoscaler and managed node upgrades evict through the same API and wait on the same answer: the autoscaler leaves the node in place, and an upgrade waits until its own timeout, then fails or evicts anyway, depending on the platform: the budget stops the upgrade and, in the end, protects nothing.",
	}
	if s.MinAvailable != nil && s.MinAvailable.Type == intstr.Int && len(b.sets) > 0 {
		mech = append(mech, "Linters that compare minAvailable with replicas report this too; backfire adds the count at the autoscaler's minimum, percentages rounded up as the controller rounds them, and what the drain does.")
	}
	return report(ev, b.budgetPath(), finding.None, msg, mech, b.fixZero(expected)), true
}

// fixZero allows one disruption: maxUnavailable 1. On a single pod the
// budget then protects nothing, and the unready case would still block,
// so it also lets an unready pod go.
func (b *budget) fixZero(expected int32) *finding.Fix {
	patch := map[string]any{"minAvailable": nil, "maxUnavailable": 1}
	desc := "Allow one eviction at a time: maxUnavailable 1 instead, which lets a drain move one pod, waits for it to be Ready elsewhere, then moves the next."
	if expected <= 1 {
		patch["unhealthyPodEvictionPolicy"] = string(policyv1.AlwaysAllow)
		desc = "One pod cannot both stay up and be moved: a budget on it can only block. maxUnavailable 1 (with unhealthyPodEvictionPolicy AlwaysAllow, so that a pod that is not Ready can go too) lets drains through; run 2 or more replicas for a budget that keeps the service up during a drain, or delete it."
	}
	if b.pdb.Spec.MinAvailable == nil {
		delete(patch, "minAvailable")
	}
	return &finding.Fix{Description: desc, Type: finding.StrategicMergePatch, Patch: fix.At("spec", patch)}
}

// unready: one pod, a budget that lets it go while it is Ready, and the
// default IfHealthyBudget: the eviction API lets an unready pod go only
// while the budget's desired count is above 0 and met, which one pod
// that is not Ready never meets.
func (b *budget) unready() (rules.Report, bool) {
	if p := b.pdb.Spec.UnhealthyPodEvictionPolicy; p != nil && *p == policyv1.AlwaysAllow {
		return rules.Report{}, false
	}
	expected, ok := b.counted()
	if !ok || expected != 1 {
		return rules.Report{}, false
	}
	want, _ := b.desired(expected)
	ev := b.evidence(caseUnhealthy)
	ev.ExpectedPods, ev.DesiredHealthy, ev.DisruptionsAllowed = 1, want, 1-want
	ps := b.sets[0]
	sev, what := finding.Info, ""
	if v, noun, stateful := statefulOrDatabase(ps); stateful {
		sev, what = finding.Warning, "; "+v+": a crash-looping "+noun+" is the pod a drain most needs to move, and this is when it cannot"
	}
	msg := fmt.Sprintf("%s runs 1 pod: while it is not Ready (crash-looping, or its readiness probe failing) the budget allows no eviction of it under the default unhealthyPodEvictionPolicy IfHealthyBudget, and a drain of its node waits forever%s",
		ps.Kind+" "+ps.Name, what)
	mech := []string{
		fmt.Sprintf("Ready, the pod can be evicted: %d expected, %d required, 1 disruption allowed.", expected, want),
		fmt.Sprintf("Not Ready, currentHealthy is 0. Under IfHealthyBudget (the default) the eviction API lets an unready pod go without spending the budget only if currentHealthy >= desiredHealthy and desiredHealthy > 0: 0 >= %d and %d > 0 do not both hold; otherwise it needs disruptionsAllowed > 0, which is 0 - %d = 0. Every eviction is answered 429.", want, want, want),
		"kubectl drain retries the 429 every 5 s, forever unless --timeout is given; the node cannot be drained while the pod stays broken, which is when moving it might help.",
		"unhealthyPodEvictionPolicy AlwaysAllow lets a pod that is not Ready be evicted whatever the budget says (the field is beta and on from Kubernetes 1.27, GA in 1.31; older API servers drop it).",
	}
	return report(ev, field.NewPath("spec"), sev, msg, mech, &finding.Fix{
		Description: "Set unhealthyPodEvictionPolicy AlwaysAllow: a pod that is not Ready can then be evicted, so a drain is not held by a pod that serves nothing. (Where evicting a member that is still catching up is itself risky, a quorum member, keep IfHealthyBudget and run more replicas.)",
		Type:        finding.StrategicMergePatch,
		Patch:       fix.At("spec", map[string]any{"unhealthyPodEvictionPolicy": string(policyv1.AlwaysAllow)}),
	}), true
}

// ownerOf names the controller of a pod set's pods: a CronJob's are its
// Jobs'.
func ownerOf(ps index.PodSet) string {
	if ps.Kind == "CronJob" {
		return "the Jobs of a CronJob"
	}
	return "a " + ps.Kind
}

func pods(n int32) string {
	if n == 1 {
		return "1 pod"
	}
	return fmt.Sprintf("%d pods", n)
}

// statefulOrDatabase says whether a pod set is a StatefulSet or runs a
// database-like server, what it is, and the noun for its pod (a
// StatefulSet of a cache is not a database).
func statefulOrDatabase(ps index.PodSet) (what, noun string, ok bool) {
	for _, c := range ps.Containers {
		v := classify.ContainerOf("", &corev1.Container{Name: c.Name, Image: c.Image})
		if v.DatabaseLike {
			return fmt.Sprintf("it is %s (%s)", v.Server.Name, v.EvidenceString()), "database", true
		}
	}
	if ps.Kind == "StatefulSet" {
		return "it is a StatefulSet", "stateful member", true
	}
	return "", "", false
}

// lowest says where the count comes from when an autoscaler sets it.
func lowest(sets []index.PodSet) string {
	for _, ps := range sets {
		if len(ps.Replicas.ScaledBy) > 0 {
			return " at the autoscaler's minimum"
		}
	}
	return ""
}

func describeSets(sets []index.PodSet) []string {
	var out []string
	for _, ps := range sets {
		r := ps.Replicas
		var n string
		switch {
		case ps.PerNode:
			n = "one pod per node"
		case ps.Kind == "Pod":
			n = "a bare pod"
		case len(r.ScaledBy) > 0:
			n = fmt.Sprintf("%d to %d replicas, autoscaled", r.Min, r.Max)
		case ps.Kind == "Job" || ps.Kind == "CronJob":
			n = fmt.Sprintf("parallelism %d", r.Min)
		case r.Min == 1:
			n = "1 replica"
		default:
			n = fmt.Sprintf("%d replicas", r.Min)
		}
		out = append(out, fmt.Sprintf("%s %s (%s)", ps.Kind, ps.Name, n))
	}
	return out
}
