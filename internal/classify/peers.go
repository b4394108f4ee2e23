package classify

import (
	"path"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// PeerCheck is a check that passes only on a server that is part of a
// formed cluster: one that needs a quorum of its peers, an elected
// leader, or its peers back online before it boots. A readiness probe
// made of one holds a StatefulSet's pod 0 not Ready while it is alone.
type PeerCheck struct {
	Server string // "RabbitMQ"
	// Command is a command and the subcommand words it needs
	// ("etcdctl endpoint health"), matched like QueryCommands.
	Command string
	// Port and PathPrefix match an HTTP check: httpGet, curl or wget of
	// http://...:Port/PathPrefix...; Port 0 matches any port.
	Port       int32
	PathPrefix string
	// Unless is a word whose presence in the check makes it local
	// (local=true, serializable=true).
	Unless string
	// Output matches a check that compares the command's output with a
	// word only a formed cluster prints (cluster_state:ok).
	Output string
	// Needs says what the check needs, completing "it passes only ...".
	Needs string
	// Source is where that was read.
	Source string
	// AfterRestart: a first install forms the cluster (pod 0 boots alone
	// as a new cluster); the check holds pod 0 only when it restarts
	// after having had peers.
	AfterRestart bool
	// Assumed: the behaviour was not read in the server's source.
	Assumed bool
}

// Why the RabbitMQ checks need the cluster: they need a booted node, and
// a node that was not the last of its cluster to stop waits for its peers
// before it boots.
const rabbitBoot = "on a booted node, and a node that was not the last of its cluster to stop waits for its peers before it boots (10 tries 30 s apart by default, then it gives up and exits)"

// PeerChecks is the table of checks that need the cluster.
var PeerChecks = []PeerCheck{
	{Server: "RabbitMQ", Command: "rabbitmq-diagnostics check_running", Needs: rabbitBoot, AfterRestart: true, Source: "RabbitMQ docs, Clustering, \"Restarting Cluster Nodes\"; bitnami/rabbitmq README, \"How to Avoid Deadlocked Deployments After a Cluster-Wide Restart\""},
	{Server: "RabbitMQ", Command: "rabbitmq-diagnostics check_local_alarms", Needs: rabbitBoot, AfterRestart: true, Source: "RabbitMQ docs, Monitoring, health checks; Clustering, \"Restarting Cluster Nodes\" (measured: on a booting node it exits 64, \"this command requires the 'rabbit' app to be running\", server lab, Debian's rabbitmq-server 3.10.8, 2026-12-05)"},
	{Server: "RabbitMQ", Command: "rabbitmqctl node_health_check", Needs: rabbitBoot, AfterRestart: true, Source: "RabbitMQ docs, Clustering, \"Restarting Cluster Nodes\" (measured: on a booting node it exits 64, \"this command requires the 'rabbit' app to be running\", server lab, Debian's rabbitmq-server 3.10.8, 2026-12-05)"},
	{Server: "RabbitMQ", Command: "rabbitmq-health-check", Needs: rabbitBoot, AfterRestart: true, Source: "helm/charts stable/rabbitmq (Bitnami's script asks the management API's /api/healthchecks/node)"},
	{Server: "RabbitMQ", Command: "rabbitmq-api-check", Needs: rabbitBoot, AfterRestart: true, Source: "helm/charts stable/rabbitmq (Bitnami's script asks the management API)"},
	{Server: "RabbitMQ", Port: 15672, PathPrefix: "/api/", AfterRestart: true, Needs: "from the management API, which the management plugin serves only " + rabbitBoot, Source: "RabbitMQ docs, Management Plugin, HTTP API; Clustering, \"Restarting Cluster Nodes\""},
	{Server: "etcd", Command: "etcdctl endpoint health", Unless: "--consistency=s", Needs: "when a linearizable read succeeds, which needs an elected leader, and a leader needs a quorum", Source: "etcd etcdctl/ctlv3/command/ep_command.go (epHealthCommandFunc: cli.Get(\"health\"), a linearizable read)"},
	{Server: "etcd", Port: 2379, PathPrefix: "/health", Unless: "serializable=true", Needs: "when the member knows a leader (checkLeader answers \"RAFT NO LEADER\"), and a leader needs a quorum", Source: "etcd server/etcdserver/api/etcdhttp/health.go (checkLeader)"},
	{Server: "etcd", Port: 2379, PathPrefix: "/readyz", Needs: "when a linearizable read succeeds (the linearizable_read check), which needs a quorum", Source: "etcd server/etcdserver/api/etcdhttp/health.go (installReadyzEndpoints)"},
	{Server: "Consul", Port: 0, PathPrefix: "/v1/status/leader", Needs: "when the servers have elected a Raft leader (the endpoint answers \"\" without one), which needs a quorum of them", Source: "Consul docs, Status HTTP API, \"Get Raft Leader\""},
	{Server: "Elasticsearch", Port: 0, PathPrefix: "/_cluster/health", Unless: "local=true", Needs: "from an elected master: without local=true the request goes to the master, and electing one needs a quorum of the master-eligible nodes", Source: "Elasticsearch docs, cluster health API (local parameter); voting configurations", Assumed: true},
	{Server: "Redis", Command: "redis-cli cluster info", Output: "cluster_state:ok", Needs: "once every hash slot is served (cluster_state:ok), which one node of a cluster alone is not", Source: "Redis docs, CLUSTER INFO (cluster_state)", Assumed: true},
}

// PeerNeed is what a probe found in PeerChecks.
type PeerNeed struct {
	Check    PeerCheck
	Evidence string // "exec runs rabbitmq-diagnostics check_running"
}

// NeedsPeers reports whether probe p passes only on a member of a formed
// cluster, reading the scripts it runs from files where the input holds
// them.
func NeedsPeers(c *corev1.Container, p *corev1.Probe, files Files) (PeerNeed, bool) {
	switch {
	case p == nil:
		return PeerNeed{}, false
	case p.HTTPGet != nil:
		port := resolvePort(c, p.HTTPGet.Port)
		return matchURL("httpGet :"+itoa(port)+p.HTTPGet.Path, port, p.HTTPGet.Path)
	case p.Exec != nil && len(p.Exec.Command) > 0:
		return execNeedsPeers(p.Exec.Command, files, 0)
	}
	return PeerNeed{}, false
}

func execNeedsPeers(argv []string, files Files, depth int) (PeerNeed, bool) {
	script, cmds := commandsOf(argv)
	if script != "" {
		cmds = scriptCalls(script, files).cmds
	}
	text := strings.Join(argv, " ")
	for _, cmd := range cmds {
		name := path.Base(cmd[0])
		if f, ok := lookup(files, cmd[0]); ok && depth < maxScriptDepth {
			if n, ok := execNeedsPeers([]string{"sh", "-c", withScriptDir(f.Text, path.Dir(cmd[0]))}, files, depth+1); ok {
				n.Evidence = "exec runs " + cmd[0] + " (" + f.From + "), which " + strings.TrimPrefix(n.Evidence, "exec ")
				return n, true
			}
			continue
		}
		if name == "curl" || name == "wget" {
			for _, a := range cmd[1:] {
				if strings.HasPrefix(a, "-") {
					continue
				}
				if port, urlPath, ok := parseURL(a); ok {
					if n, ok := matchURL("exec runs "+name+" "+a, port, urlPath); ok {
						return n, true
					}
				}
			}
			continue
		}
		for _, pc := range PeerChecks {
			if pc.Command == "" {
				continue
			}
			want := strings.Fields(pc.Command)
			if path.Base(want[0]) != name || !subsequence(want[1:], cmd[1:]) {
				continue
			}
			if pc.Unless != "" && slices.ContainsFunc(cmd, func(a string) bool { return strings.Contains(a, pc.Unless) }) {
				continue
			}
			if pc.Output != "" && !strings.Contains(text, pc.Output) {
				continue
			}
			return PeerNeed{Check: pc, Evidence: "exec runs " + strings.Join(cmd, " ")}, true
		}
	}
	return PeerNeed{}, false
}

func matchURL(desc string, port int32, urlPath string) (PeerNeed, bool) {
	for _, pc := range PeerChecks {
		if pc.PathPrefix == "" || (pc.Port != 0 && pc.Port != port) || !strings.HasPrefix(urlPath, pc.PathPrefix) {
			continue
		}
		if pc.Unless != "" && strings.Contains(urlPath, pc.Unless) {
			continue
		}
		return PeerNeed{Check: pc, Evidence: desc}, true
	}
	return PeerNeed{}, false
}
