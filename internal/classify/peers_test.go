package classify

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Which readiness checks need a formed cluster, and which answer from the
// node alone.
func TestNeedsPeers(t *testing.T) {
	exec := func(cmd ...string) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: cmd}}}
	}
	get := func(port int, path string) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt(port), Path: path}}}
	}
	c := &corev1.Container{Name: "c"}
	for _, tc := range []struct {
		name   string
		p      *corev1.Probe
		server string // "" when the check is local
	}{
		{"check_running", exec("rabbitmq-diagnostics", "-q", "check_running"), "RabbitMQ"},
		{"ping is local", exec("rabbitmq-diagnostics", "-q", "ping"), ""},
		{"management API by curl", exec("/bin/bash", "-ec", "curl -f --user u:p 127.0.0.1:15672/api/health/checks/local-alarms"), "RabbitMQ"},
		{"etcdctl endpoint health", exec("sh", "-c", "ETCDCTL_API=3 etcdctl endpoint health"), "etcd"},
		{"etcdctl serializable", exec("etcdctl", "endpoint", "health", "--consistency=s"), ""},
		{"etcd /health", get(2379, "/health"), "etcd"},
		{"etcd /health serializable", get(2379, "/health?serializable=true"), ""},
		{"etcd /livez", get(2379, "/livez"), ""},
		{"consul leader", exec("/bin/sh", "-ec", "curl http://127.0.0.1:8500/v1/status/leader 2>/dev/null | grep -E '\".+\"'"), "Consul"},
		{"elasticsearch local", get(9200, "/_cluster/health?local=true"), ""},
		{"elasticsearch master", get(9200, "/_cluster/health"), "Elasticsearch"},
		{"redis cluster state", exec("sh", "-c", "redis-cli cluster info | grep cluster_state:ok"), "Redis"},
		{"redis ping", exec("redis-cli", "ping"), ""},
	} {
		n, ok := NeedsPeers(c, tc.p, nil)
		if got := map[bool]string{true: n.Check.Server}[ok]; got != tc.server {
			t.Errorf("%s: %q (%s), want %q", tc.name, got, n.Evidence, tc.server)
		}
	}
}
