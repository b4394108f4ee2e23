package network

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/rules"
)

// BF304: a NetworkPolicy that restricts egress of pods no egress rule
// lets reach the cluster DNS. Every name lookup then times out, and the
// application reports that it cannot reach a service, not that it cannot
// resolve it.
var BF304 = rules.Register(&rules.Rule{
	ID:       "BF304",
	Slug:     "egress-policy-blocks-dns",
	Severity: finding.Warning,
	Summary:  "An egress NetworkPolicy selects pods that no egress rule lets reach the cluster DNS on UDP 53: every name lookup times out.",
	Kinds:    []string{"NetworkPolicy"},
	Reads:    []string{"NetworkPolicy", "Namespace", index.PodSets},
	Evidence: []any{BF304Evidence{}},
	Fix:      rules.FixFields{Sets: []string{"spec.egress"}, From: []string{"spec.egress"}},
	Check:    &rules.Scan{Run: runBF304},
})

// The cluster DNS as kubeadm deploys it (cmd/kubeadm/app/phases/addons/dns
// manifests.go): CoreDNS pods labeled k8s-app: kube-dns in kube-system,
// ports named dns (53/UDP) and dns-tcp (53/TCP). Other distributions'
// labels that select DNS pods too.
const (
	dnsNamespace = "kube-system"
	dnsPort      = 53
)

var dnsPodLabels = []map[string]string{
	{"k8s-app": "kube-dns"},
	{"k8s-app": "node-local-dns"},
	{"dns.operator.openshift.io/daemonset-dns": "default"},
}

var dnsNamespaces = []string{dnsNamespace, "openshift-dns"}

func runBF304(p *rules.Pass) {
	np, ok := p.Object.Typed.(*networkingv1.NetworkPolicy)
	if !ok || !restrictsEgress(np) {
		return
	}
	sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
	if err != nil {
		return
	}
	ns := p.Object.Namespace
	policies := p.Index.InNamespace("NetworkPolicy", ns)
	var selects []string
	var applying []*object.Object
	// Without a workload of the input, the policies of the namespace that
	// let the pods they select reach DNS: they open what this one closes,
	// for pods backfire cannot see.
	var opening []*object.Object
	sets := p.Index.Selected(ns, sel)
	switch {
	case len(sets) > 0:
		// The pods of the input it selects, each with every policy that
		// selects it.
		seen := map[*object.Object]bool{}
		blocked := false
		for _, ps := range sets {
			if ps.HostNetwork {
				continue // the node's network: policies do not apply
			}
			var on []*object.Object
			for _, q := range policies {
				if selectsLabels(q, ps.Labels) {
					on = append(on, q)
				}
			}
			if udp, _, _ := dnsAllowed(p, on, ns); udp {
				continue
			}
			blocked = true
			selects = append(selects, ps.Kind+" "+ps.Name)
			for _, q := range on {
				if !seen[q] {
					seen[q] = true
					applying = append(applying, q)
				}
			}
		}
		if !blocked {
			return
		}
	default:
		// No workload of the input: the policies that select at least
		// what this one selects.
		for _, q := range policies {
			if q.Ref == p.Object.Ref || covers(q, np) {
				applying = append(applying, q)
			}
		}
		if !slices.ContainsFunc(applying, func(q *object.Object) bool { return q.Ref == p.Object.Ref }) {
			applying = append(applying, p.Object)
		}
		for _, q := range policies {
			if !slices.Contains(applying, q) && selectsSome(q) {
				if udp, _, _ := dnsAllowed(p, []*object.Object{q}, ns); udp {
					opening = append(opening, q)
				}
			}
		}
	}
	udp, tcp, why := dnsAllowed(p, applying, ns)
	if udp && tcp {
		return
	}
	if applying[0].Ref != p.Object.Ref {
		// Reported once, on the first policy of the input that applies:
		// its fix is enough. By name, not by pointer: a streaming scan
		// hands the rule a copy of the object the index answers with.
		return
	}
	ev := BF304Evidence{Selects: selects, Policies: names(applying), UDP: udp, TCP: tcp, Why: why}
	who := "the pods labeled " + selectorText(&np.Spec.PodSelector)
	if len(selects) > 0 {
		who = "the pods of " + strings.Join(selects, ", ")
	} else if len(np.Spec.PodSelector.MatchLabels) == 0 && len(np.Spec.PodSelector.MatchExpressions) == 0 {
		who = "every pod of the namespace"
	}
	sev := finding.None
	var msg string
	switch {
	case len(opening) > 0:
		// The workloads are elsewhere (a sibling directory, another
		// build) and other policies open DNS to the pods they select:
		// only pods none of them selects lose it, if any.
		sev = finding.Info
		msg = fmt.Sprintf("egress is restricted for %s and no egress rule of %s allows UDP 53 to the cluster DNS, but no workload it selects is in the input read with it, and %s %s DNS to the pods %s: only pods that none of them selects lose DNS, if the namespace runs any",
			who, plural(len(applying), "the policy", "the policies"), strings.Join(names(opening), ", "), plural(len(opening), "allows", "allow"), plural(len(opening), "it selects", "they select"))
	case udp:
		sev = finding.Info
		msg = fmt.Sprintf("egress is restricted for %s and DNS is allowed over UDP only: an answer too large for UDP (truncated, TC set) is retried over TCP 53, which no egress rule allows, and that lookup fails", who)
	case tcp:
		msg = fmt.Sprintf("egress is restricted for %s and DNS is allowed over TCP only (a port without a protocol is TCP): lookups go out over UDP 53 first, which no egress rule allows, and time out", who)
	default:
		msg = fmt.Sprintf("egress is restricted for %s and no egress rule of %s allows UDP 53 to the cluster DNS: every name lookup times out, and the application reports that it cannot reach a service, not that it cannot resolve one", who, plural(len(applying), "the policy", "the policies"))
	}
	mech := []string{
		fmt.Sprintf("%s selects %s and lists Egress in its policy types: those pods may open only connections that an egress rule of some policy selecting them allows (networking/v1: \"If this field is empty then this NetworkPolicy limits all outgoing traffic\"); the policies that apply: %s.",
			p.Object.Name, who, strings.Join(ev.Policies, ", ")),
		"A name lookup is egress too: the pod's resolver sends it to the cluster DNS Service, which the CNI forwards to the DNS pods (CoreDNS, labeled k8s-app: kube-dns in kube-system on kubeadm clusters) on port 53, over UDP first.",
	}
	if why != "" {
		mech = append(mech, "Port 53 is allowed, but not to the DNS pods: "+why+".")
	}
	if len(opening) > 0 {
		var sels []string
		for _, q := range opening {
			sels = append(sels, q.Name+" ("+selectorText(&q.Typed.(*networkingv1.NetworkPolicy).Spec.PodSelector)+")")
		}
		mech = append(mech, "Policies are additive: a pod selected by several may open what any of them allows. "+strings.Join(sels, ", ")+" "+plural(len(opening), "allows", "allow")+" DNS to the pods "+plural(len(opening), "it selects", "they select")+", so a namespace whose every workload has such a policy resolves names.")
	}
	assumptions := []string{"The cluster DNS is assumed to run as kubeadm deploys it: pods labeled k8s-app: kube-dns in kube-system, listening on 53. NodeLocal DNSCache (169.254.20.10) or a DNS outside the cluster needs an ipBlock rule instead; a CNI that applies policies to the DNS Service's IP rather than the pods' may need one too."}
	if len(sets) == 0 {
		assumptions = append(assumptions, "No workload this policy selects is in the input read with it (its Helm chart or Kustomize build; for plain files, its directory and the directories above and below it, not sibling directories): the finding is for the pods its selector names, and assumes that no policy backfire did not read lets them reach DNS.")
	}
	mech = append(mech,
		"Every lookup waits out the resolver's timeout (glibc's defaults: 5 s, 2 attempts per query, and the pod's ndots:5 search list multiplies the queries) and fails; connections by name never start, and the logs say \"could not connect\" or \"timeout\", rarely \"DNS\".",
		"Default-deny egress is a hardening step the Kubernetes security checklist recommends, and the outage starts the moment it is applied to a namespace with running pods (kubernetes/website#54997; the Network Policies page now warns about DNS).",
	)
	p.Report(rules.Report{
		Path:        egressPath(np),
		Severity:    sev,
		Message:     msg,
		Mechanism:   mech,
		Evidence:    ev,
		Assumptions: assumptions,
		Fix:         fixBF304(p.Object, np),
	})
}

// restrictsEgress: the policy's types include Egress, written or implied
// by egress rules (networking/v1 policyTypes).
func restrictsEgress(np *networkingv1.NetworkPolicy) bool {
	if len(np.Spec.PolicyTypes) == 0 {
		return len(np.Spec.Egress) > 0
	}
	return slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress)
}

func egressPath(np *networkingv1.NetworkPolicy) *field.Path {
	if len(np.Spec.Egress) > 0 {
		return field.NewPath("spec", "egress")
	}
	return field.NewPath("spec", "policyTypes")
}

// selectsLabels: the policy restricts egress and its podSelector selects
// pods with these labels.
func selectsLabels(o *object.Object, l map[string]string) bool {
	q, ok := o.Typed.(*networkingv1.NetworkPolicy)
	if !ok || !restrictsEgress(q) {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(&q.Spec.PodSelector)
	return err == nil && sel.Matches(labels.Set(l))
}

// selectsSome: o is an egress policy whose selector names labels (it opens
// egress for some pods, not for the whole namespace).
func selectsSome(o *object.Object) bool {
	q, ok := o.Typed.(*networkingv1.NetworkPolicy)
	return ok && restrictsEgress(q) && (len(q.Spec.PodSelector.MatchLabels) > 0 || len(q.Spec.PodSelector.MatchExpressions) > 0)
}

// covers: q restricts egress and selects every pod np selects: an empty
// selector, or match labels that np's match labels include.
func covers(o *object.Object, np *networkingv1.NetworkPolicy) bool {
	q, ok := o.Typed.(*networkingv1.NetworkPolicy)
	if !ok || !restrictsEgress(q) || len(q.Spec.PodSelector.MatchExpressions) > 0 {
		return false
	}
	for k, v := range q.Spec.PodSelector.MatchLabels {
		if np.Spec.PodSelector.MatchLabels[k] != v {
			return false
		}
	}
	return true
}

// dnsAllowed says whether some egress rule of the policies allows UDP and
// TCP 53 to the DNS pods, and, when rules name port 53 without reaching
// them, why.
func dnsAllowed(p *rules.Pass, policies []*object.Object, ns string) (udp, tcp bool, why string) {
	anyWhy := "" // from a rule that allows every port: said only if no rule names 53
	defer func() {
		if why == "" {
			why = anyWhy
		}
	}()
	for _, o := range policies {
		q, ok := o.Typed.(*networkingv1.NetworkPolicy)
		if !ok {
			continue
		}
		for _, r := range q.Spec.Egress {
			u, t := portsAllow(r.Ports)
			if !u && !t {
				continue
			}
			reach, w := reachesDNS(p, r.To, ns)
			if !reach {
				switch {
				case w == "":
				case len(r.Ports) > 0 && why == "":
					why = fmt.Sprintf("the rule of %s for port 53 %s", o.Name, w)
				case len(r.Ports) == 0 && anyWhy == "":
					anyWhy = fmt.Sprintf("the rule of %s for every port %s", o.Name, w)
				}
				continue
			}
			udp, tcp = udp || u, tcp || t
		}
	}
	return udp, tcp, why
}

// portsAllow: which of UDP and TCP 53 the rule's ports allow (no ports:
// every port).
func portsAllow(ports []networkingv1.NetworkPolicyPort) (udp, tcp bool) {
	if len(ports) == 0 {
		return true, true
	}
	for _, p := range ports {
		proto := corev1.ProtocolTCP
		if p.Protocol != nil {
			proto = *p.Protocol
		}
		if !portIsDNS(p, proto) {
			continue
		}
		switch proto {
		case corev1.ProtocolUDP:
			udp = true
		case corev1.ProtocolTCP:
			tcp = true
		}
	}
	return udp, tcp
}

func portIsDNS(p networkingv1.NetworkPolicyPort, proto corev1.Protocol) bool {
	if p.Port == nil {
		return true // every port of the protocol
	}
	if p.Port.Type == intstr.String { // a named port, resolved on the destination pod
		name := p.Port.StrVal
		return (name == "dns" && proto == corev1.ProtocolUDP) || (name == "dns-tcp" && proto == corev1.ProtocolTCP)
	}
	lo, hi := p.Port.IntVal, p.Port.IntVal
	if p.EndPort != nil {
		hi = *p.EndPort
	}
	return lo <= dnsPort && dnsPort <= hi
}

// reachesDNS: whether the rule's destinations can include the DNS pods,
// and if not, why. A destination the rule cannot be judged on (an
// ipBlock, a namespace selected by labels backfire does not know) counts
// as reaching them: the finding is for rules that clearly do not.
func reachesDNS(p *rules.Pass, to []networkingv1.NetworkPolicyPeer, ns string) (bool, string) {
	if len(to) == 0 {
		return true, "" // every destination
	}
	var whys []string
	for _, peer := range to {
		if peer.IPBlock != nil {
			return true, ""
		}
		inNS := true
		switch {
		case peer.NamespaceSelector == nil:
			if !slices.Contains(dnsNamespaces, ns) {
				inNS = false
				whys = append(whys, fmt.Sprintf("selects pods of its own namespace %s only (a podSelector without a namespaceSelector), not the DNS pods in %s", orDefault(ns), dnsNamespace))
			}
		default:
			if !selectsDNSNamespace(p, peer.NamespaceSelector) {
				inNS = false
				w := fmt.Sprintf("selects namespaces by %s, which %s does not carry", selectorText(peer.NamespaceSelector), dnsNamespace)
				if _, byName := peer.NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"]; !byName {
					w += " (the API server labels a namespace with kubernetes.io/metadata.name only, and no Namespace object of the input adds that label)"
				}
				whys = append(whys, w)
			}
		}
		if !inNS {
			continue
		}
		if peer.PodSelector == nil || selectsDNSPods(peer.PodSelector) {
			return true, ""
		}
		whys = append(whys, fmt.Sprintf("selects pods by %s, which the DNS pods (k8s-app: kube-dns) do not carry", selectorText(peer.PodSelector)))
	}
	return false, strings.Join(whys, ", and ")
}

// selectsDNSNamespace: the selector selects the DNS namespace by the
// label the API server sets on every namespace (kubernetes.io/metadata.name,
// since 1.21), or by the labels its Namespace object in the input has.
func selectsDNSNamespace(p *rules.Pass, s *metav1.LabelSelector) bool {
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return false
	}
	for _, ns := range dnsNamespaces {
		l := labels.Set{"kubernetes.io/metadata.name": ns}
		if o := p.Index.ClusterScoped("Namespace", ns); o != nil {
			maps.Copy(l, o.Meta.Labels)
		}
		if sel.Matches(l) {
			return true
		}
	}
	return false
}

func selectsDNSPods(s *metav1.LabelSelector) bool {
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return false
	}
	for _, l := range dnsPodLabels {
		if sel.Matches(labels.Set(l)) {
			return true
		}
	}
	return false
}

func selectorText(s *metav1.LabelSelector) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(s.MatchLabels)) {
		parts = append(parts, k+"="+s.MatchLabels[k])
	}
	for _, e := range s.MatchExpressions {
		parts = append(parts, fmt.Sprintf("%s %s %v", e.Key, e.Operator, e.Values))
	}
	if len(parts) == 0 {
		return "{}"
	}
	return strings.Join(parts, ", ")
}

// fixBF304 adds an egress rule for DNS to this policy. The egress list is
// replaced as a whole by a strategic merge patch (it has no merge key), so
// the patch carries the existing rules too.
func fixBF304(o *object.Object, np *networkingv1.NetworkPolicy) *finding.Fix {
	var egress []any
	if b, err := json.Marshal(np.Spec.Egress); err == nil {
		_ = json.Unmarshal(b, &egress)
	}
	egress = append(egress, map[string]any{
		"to": []any{map[string]any{
			"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": dnsNamespace}},
			"podSelector":       map[string]any{"matchLabels": map[string]any{"k8s-app": "kube-dns"}},
		}},
		"ports": []any{
			map[string]any{"protocol": "UDP", "port": dnsPort},
			map[string]any{"protocol": "TCP", "port": dnsPort},
		},
	})
	return &finding.Fix{
		Description: fmt.Sprintf("Allow DNS: add an egress rule to %s for UDP and TCP 53 to the pods labeled k8s-app: kube-dns in kube-system (the namespace label kubernetes.io/metadata.name is set by the API server). The patch repeats the existing egress rules, since a strategic merge patch replaces the list. A separate allow-dns policy selecting the same pods works as well.", o.Name),
		Type:        finding.StrategicMergePatch,
		Patch:       fix.At("spec", map[string]any{"egress": egress}),
	}
}

func names(objs []*object.Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.Name)
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func orDefault(ns string) string {
	if ns == "" {
		return "default"
	}
	return ns
}
