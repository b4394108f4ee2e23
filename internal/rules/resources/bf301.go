package resources

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/rules"
)

// BF301: a database or stateful pod that may run only on control-plane nodes.
var BF301 = rules.Register(&rules.Rule{
	ID:       "BF301",
	Slug:     "database-pinned-to-control-plane",
	Severity: finding.Warning,
	Summary:  "A database or stateful pod that requires control-plane nodes shares them with the API server and etcd and cannot fail over.",
	Kinds:    object.WorkloadKinds,
	Reads:    []string{index.WorkloadRefs},
	Check:    &rules.Scan{Run: runBF301},
	Fix:      rules.FixFields{Sets: []string{"pod.nodeSelector", "pod.affinity"}, From: []string{"pod.nodeSelector", "pod.affinity", "pod.tolerations"}},
	Evidence: []any{BF301Evidence{}},
})

// ControlPlaneLabels mark control-plane nodes (kubeadm; "master" before
// Kubernetes 1.24, still set by some installers).
var ControlPlaneLabels = []string{"node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master"}

func runBF301(p *rules.Pass) {
	w := workloadOf(p)
	if w == nil || (!w.databaseLike() && w.stateful == "") {
		return
	}
	spec := w.t.Spec
	var selKeys []string
	for _, l := range ControlPlaneLabels {
		if _, ok := spec.NodeSelector[l]; ok {
			selKeys = append(selKeys, l)
		}
	}
	aff := requiredControlPlane(spec)
	if len(selKeys) == 0 && !aff.pinned {
		return
	}
	p.Report(bf301Finding(w, selKeys, aff))
}

// affinityPin is what the required node affinity says about control-plane
// nodes.
type affinityPin struct {
	pinned bool
	// requires lists the control-plane expressions: "node-role.kubernetes.io/control-plane Exists".
	requires []string
	// stripped are the terms without their control-plane expressions; nil
	// when one becomes empty, which lifts the requirement altogether.
	stripped []corev1.NodeSelectorTerm
}

// requiredControlPlane reports whether every term of the required node
// affinity requires a control-plane label. Terms are ORed: one term without
// that requirement lets the pod run elsewhere.
func requiredControlPlane(spec *corev1.PodSpec) affinityPin {
	if spec.Affinity == nil || spec.Affinity.NodeAffinity == nil {
		return affinityPin{}
	}
	ns := spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	if ns == nil || len(ns.NodeSelectorTerms) == 0 {
		return affinityPin{}
	}
	a := affinityPin{pinned: true}
	unconstrained := false
	for _, term := range ns.NodeSelectorTerms {
		var rest []corev1.NodeSelectorRequirement
		found := false
		for _, e := range term.MatchExpressions {
			if requiresControlPlane(e) {
				found = true
				if r := e.Key + " " + string(e.Operator); !slices.Contains(a.requires, r) {
					a.requires = append(a.requires, r)
				}
				continue
			}
			rest = append(rest, e)
		}
		if !found {
			return affinityPin{}
		}
		if len(rest) == 0 && len(term.MatchFields) == 0 {
			unconstrained = true // an empty term would match no node: drop the requirement
		}
		a.stripped = append(a.stripped, corev1.NodeSelectorTerm{MatchExpressions: rest, MatchFields: term.MatchFields})
	}
	if unconstrained {
		a.stripped = nil
	}
	return a
}

func requiresControlPlane(e corev1.NodeSelectorRequirement) bool {
	if !slices.Contains(ControlPlaneLabels, e.Key) {
		return false
	}
	return e.Operator == corev1.NodeSelectorOpExists || e.Operator == corev1.NodeSelectorOpIn
}

func bf301Finding(w *workload, selKeys []string, aff affinityPin) rules.Report {
	t := w.t
	spec := t.Spec
	var how []string
	var path *field.Path
	patch := map[string]any{}
	if len(selKeys) > 0 {
		path = t.SpecPath.Child("nodeSelector").Key(selKeys[0])
		del := map[string]any{}
		for _, k := range selKeys {
			how = append(how, "nodeSelector "+k)
			del[k] = nil
		}
		patch["nodeSelector"] = del
	}
	if aff.pinned {
		req := t.SpecPath.Child("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
		if path == nil {
			path = req
		}
		terms := ""
		if n := len(spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms); n > 1 {
			terms = fmt.Sprintf(" in each of its %d terms", n)
		}
		how = append(how, "required node affinity "+strings.Join(aff.requires, " or ")+terms)
		var required any // null deletes the requirement
		if aff.stripped != nil {
			required = map[string]any{"nodeSelectorTerms": aff.stripped}
		}
		patch["affinity"] = map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": required}}
	}

	who := "this stateful pod (" + w.stateful + ")"
	if w.databaseLike() {
		who = fmt.Sprintf("the %s pod (container %s)", w.verdict.Server.Name, w.db.Name)
	}
	tolerates := false
	for _, tol := range spec.Tolerations {
		if slices.Contains(ControlPlaneLabels, tol.Key) || (tol.Key == "" && tol.Operator == corev1.TolerationOpExists) {
			tolerates = true
		}
	}
	mech := []string{
		fmt.Sprintf("%s can run only on control-plane nodes: %s.", upperFirst(who), strings.Join(how, " and ")),
		"There it shares CPU, disk and network with the API server and etcd: a busy control plane slows it, and its own I/O competes with etcd's fsyncs.",
		"With one control-plane node there is no failover: when that node is down or drained, the pod has nowhere to go and stays Pending.",
		"Adding worker nodes adds load (more clients of it) but no capacity for it: it never moves to them.",
	}
	desc := "Let the scheduler place it on worker nodes: remove the control-plane requirement"
	if aff.pinned && aff.stripped != nil {
		desc += " (the other terms of the required node affinity are kept)"
	}
	desc += "."
	if tolerates {
		desc += " The control-plane toleration may stay: it allows, it does not require."
	}
	ev := BF301Evidence{Classification: w.classification(), TolerateControlPlane: tolerates, NodeSelector: selKeys}
	if aff.pinned {
		ev.RequiredNodeAffinity = aff.requires
	}
	return rules.Report{
		At:        t.Owner,
		Path:      path,
		Container: containerName(w),
		Message: fmt.Sprintf("%s requires control-plane nodes (%s): it shares CPU, disk and network with the API server and etcd, and with one control-plane node it has no failover",
			who, strings.Join(how, "; ")),
		Mechanism: mech,
		Evidence:  ev,
		Fix: &finding.Fix{
			Description: desc,
			Type:        finding.StrategicMergePatch,
			Patch:       fix.At(t.SpecPath.String(), patch),
		},
	}
}

// containerName names the database container of the finding, "" for a
// pod-level finding about a stateful workload.
func containerName(w *workload) string {
	if w.databaseLike() {
		return w.db.Name
	}
	return ""
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
