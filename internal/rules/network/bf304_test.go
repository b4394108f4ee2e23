package network_test

import (
	"testing"

	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/rules/network"
	"backfire.dev/backfire/internal/ruletest"
)

const denyEgress = "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: p, namespace: app}\nspec:\n  podSelector: {}\n  policyTypes: [Egress]\n"

// The cases the fixtures do not reach: a port without a protocol is TCP,
// UDP alone is worth knowing, a Namespace object of the input supplies the
// labels a namespaceSelector names, and hostNetwork pods are not selected.
func TestDNSRules(t *testing.T) {
	for _, c := range []struct {
		name, src, want string // want: the severity, "" for no finding
	}{
		{"port 53 without a protocol is TCP", denyEgress + "  egress: [{ports: [{port: 53}]}]\n", "warning"},
		{"UDP only", denyEgress + "  egress: [{ports: [{port: 53, protocol: UDP}]}]\n", "info"},
		{"named ports dns and dns-tcp", denyEgress + "  egress: [{ports: [{port: dns, protocol: UDP}, {port: dns-tcp}]}]\n", ""},
		{"a port range over 53", denyEgress + "  egress: [{ports: [{port: 1, endPort: 1024, protocol: UDP}, {port: 1, endPort: 1024}]}]\n", ""},
		{"namespace labeled in the input", "apiVersion: v1\nkind: Namespace\nmetadata: {name: kube-system, labels: {name: kube-system}}\n---\n" + denyEgress +
			"  egress: [{to: [{namespaceSelector: {matchLabels: {name: kube-system}}}], ports: [{port: 53, protocol: UDP}, {port: 53}]}]\n", ""},
		{"hostNetwork pods only", "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent, namespace: app}\nspec: {template: {metadata: {labels: {a: b}}, spec: {hostNetwork: true, containers: [{name: c, image: agent}]}}}\n---\n" + denyEgress, ""},
		{"ingress only", "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: p}\nspec: {podSelector: {}, ingress: [{}]}\n", ""},
	} {
		res := ruletest.Scan(t, []*rules.Rule{network.BF304}, []byte(c.src), "-")
		if len(res.Errors) > 0 {
			t.Fatalf("%s: %v", c.name, res.Errors)
		}
		got := ""
		for _, f := range ruletest.Of(res, "BF304") {
			got = f.Severity.String()
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
