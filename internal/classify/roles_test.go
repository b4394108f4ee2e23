package classify

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func envs(kv ...string) []corev1.EnvVar {
	var out []corev1.EnvVar
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, corev1.EnvVar{Name: kv[i], Value: kv[i+1]})
	}
	return out
}

// A container of a server's image that runs the family's router, pooler,
// console or a component without data is not the server.
func TestRoles(t *testing.T) {
	for _, tc := range []struct {
		name   string
		c      corev1.Container
		server string // "" for not database-like
		why    string // in NotBecause
	}{
		{name: "Bitnami mongos by its sharding mode",
			c:   corev1.Container{Name: "mongos", Image: "bitnami/mongodb-sharded:8.0", Ports: ports(27017), Env: envs("MONGODB_SHARDING_MODE", "mongos")},
			why: "runs mongos (env MONGODB_SHARDING_MODE=mongos), MongoDB's query router"},
		{name: "a Bitnami shard is a server",
			c:      corev1.Container{Name: "mongodb", Image: "bitnami/mongodb-sharded:8.0", Ports: ports(27017), Env: envs("MONGODB_SHARDING_MODE", "shardsvr")},
			server: "MongoDB"},
		{name: "mongos by its binary",
			c:   corev1.Container{Name: "router", Image: "mongo:7.0", Command: []string{"mongos", "--configdb", "cfg/cfg-0:27019"}, Ports: ports(27017)},
			why: "runs mongos (it runs mongos)"},
		{name: "PgBouncer on PostgreSQL's port",
			c:   corev1.Container{Name: "pool", Image: "registry.example.com/db/pool:1", Command: []string{"/usr/bin/pgbouncer", "/etc/pgbouncer/pgbouncer.ini"}, Ports: ports(5432)},
			why: "runs PgBouncer (it runs pgbouncer), PostgreSQL's connection pooler"},
		{name: "ProxySQL in a MySQL image family",
			c:   corev1.Container{Name: "proxysql", Image: "mysql:8.4", Command: []string{"sh", "-c", "exec proxysql -f -c /etc/proxysql.cnf"}, Ports: ports(6033, 3306)},
			why: "runs ProxySQL (it runs proxysql)"},
		{name: "an OpenSearch coordinating-only node",
			c:   corev1.Container{Name: "opensearch", Image: "bitnami/opensearch:3.2.0", Ports: ports(9200, 9300), Env: envs("OPENSEARCH_NODE_ROLES", "")},
			why: `env OPENSEARCH_NODE_ROLES=""`},
		{name: "an ingest node holds no shards",
			c:   corev1.Container{Name: "es", Image: "elasticsearch:8.15.0", Ports: ports(9200), Env: envs("node.roles", "[ingest, ml]")},
			why: "coordinating or ingest node"},
		{name: "a data node is a server",
			c:      corev1.Container{Name: "opensearch", Image: "bitnami/opensearch:3.2.0", Ports: ports(9200), Env: envs("OPENSEARCH_NODE_ROLES", "data")},
			server: "Elasticsearch"},
		{name: "MinIO's console",
			c:   corev1.Container{Name: "console", Image: "bitnami/minio-object-browser:2.0.2", Args: []string{"server", "--port", "9090"}, Ports: ports(9090)},
			why: "image token object-browser"},
		{name: "Redis as a cache",
			c:   corev1.Container{Name: "redis", Image: "redis:8.2-alpine", Args: []string{"--save", "", "--appendonly", "no"}, Ports: ports(6379)},
			why: "runs Redis as a cache"},
		{name: "Redis as a cache, in a script",
			c:   corev1.Container{Name: "redis", Image: "valkey/valkey:8", Command: []string{"sh", "-c", `exec valkey-server --save "" --maxmemory 1gb`}},
			why: "runs Redis as a cache"},
		{name: "Redis without save points but with an AOF keeps data",
			c:      corev1.Container{Name: "redis", Image: "redis:7", Args: []string{"--save", "", "--appendonly", "yes"}},
			server: "Redis"},
		{name: "Loki's querier",
			c:   corev1.Container{Name: "querier", Image: "grafana/loki:2.9.13", Args: []string{"-config.file=/etc/loki/config.yaml", "-target=querier"}, Ports: ports(3100)},
			why: "runs Loki's querier component (-target=querier)"},
		{name: "Loki's ingester",
			c:      corev1.Container{Name: "ingester", Image: "grafana/loki:2.9.13", Args: []string{"-target=ingester"}, Ports: ports(3100)},
			server: "Loki"},
		{name: "Loki run whole (the default target all)",
			c:      corev1.Container{Name: "loki", Image: "grafana/loki:3.0.0", Args: []string{"-config.file=/etc/loki/local-config.yaml"}},
			server: "Loki"},
		{name: "a target list with the ingester",
			c:      corev1.Container{Name: "write", Image: "bitnami/grafana-mimir:2.16.0", Args: []string{"-target", "distributor,ingester"}},
			server: "Mimir"},
		{name: "the Prometheus config reloader is not Prometheus",
			c:   corev1.Container{Name: "reload", Image: "quay.io/prometheus-operator/prometheus-config-reloader:v0.93.1", Ports: ports(8080)},
			why: `token "reloader"`},
		{name: "ClickHouse Keeper is its own server",
			c:      corev1.Container{Name: "keeper", Image: "bitnami/clickhouse-keeper:25.7", Ports: ports(9181, 9234)},
			server: "ClickHouse Keeper"},
		{name: "InfluxDB 3 on its port",
			c:      corev1.Container{Name: "influxdb", Image: "bitnami/influxdb:3.4.1", Ports: ports(8181)},
			server: "InfluxDB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Container("StatefulSet", &tc.c)
			got := ""
			if v.Server != nil {
				got = v.Server.Name
			}
			if got != tc.server || v.DatabaseLike != (tc.server != "") {
				t.Fatalf("server %q (database-like %v), want %q; not because %q", got, v.DatabaseLike, tc.server, v.NotBecause)
			}
			if !strings.Contains(v.NotBecause, tc.why) {
				t.Errorf("NotBecause %q lacks %q", v.NotBecause, tc.why)
			}
		})
	}
}

// A log-replaying server whose log is in the container's own filesystem
// starts empty after a restart: it has nothing to recover.
func TestWALOnVolume(t *testing.T) {
	c := corev1.Container{Name: "ingester", Image: "grafana/loki:2.9.13", Args: []string{"-target=ingester"},
		VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/loki"}}}
	cm := corev1.Volume{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}}
	if v := ContainerIn("", &c, Pod{Spec: &corev1.PodSpec{Volumes: []corev1.Volume{cm}}}); !v.Server.NoCrashRecovery {
		t.Errorf("no writable volume: %+v", v.Server)
	}
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "data", MountPath: "/var/loki"})
	data := corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
	if v := ContainerIn("", &c, Pod{Spec: &corev1.PodSpec{Volumes: []corev1.Volume{cm, data}}}); v.Server.NoCrashRecovery {
		t.Error("an emptyDir survives a container restart: the WAL is replayed")
	}
	if v := ContainerOf("", &c); v.Server.NoCrashRecovery {
		t.Error("without the pod's volumes nothing is known: the server keeps its recovery")
	}
	// Claim templates persist too, by name.
	p := Pod{Spec: &corev1.PodSpec{}, Claims: []string{"data"}}
	if m := p.PersistentMounts(&c); len(m) != 1 || m[0].String() != "/var/loki (volumeClaimTemplate data)" {
		t.Errorf("persistent mounts %v", m)
	}
}

func TestIdle(t *testing.T) {
	for _, tc := range []struct {
		c    corev1.Container
		idle bool
	}{
		{corev1.Container{Command: []string{"sleep", "infinity"}}, true},
		{corev1.Container{Command: []string{"tail", "-f", "/dev/null"}}, true},
		{corev1.Container{Command: []string{"/bin/sh", "-c", "while true; do sleep 3600; done"}}, true},
		{corev1.Container{Command: []string{"/bin/sh", "-c", "trap : TERM INT; sleep infinity & wait"}}, true},
		{corev1.Container{Command: []string{"tini", "--", "sleep", "infinity"}}, true},
		{corev1.Container{Image: "temporalio/admin-tools:1.31.2"}, true},
		{corev1.Container{Image: "temporalio/admin-tools:1.31.2", Args: []string{"temporal", "operator", "cluster", "health"}}, false},
		{corev1.Container{Command: []string{"/bin/sh", "-c", "sleep 5; exec /app/server"}}, false},
		{corev1.Container{Image: "nginx:1.27"}, false},
	} {
		if got := Idle(&tc.c) != ""; got != tc.idle {
			t.Errorf("%v %v %v: idle %v, want %v", tc.c.Image, tc.c.Command, tc.c.Args, got, tc.idle)
		}
	}
}

// A probe script is read through the shell functions it calls.
func TestShellFunctions(t *testing.T) {
	pg := corev1.Container{Name: "pg", Image: "bitnami/postgresql-repmgr:17.6.0", Ports: ports(5432)}
	v := Container("StatefulSet", &pg)
	for _, tc := range []struct {
		script  string
		queries bool
		assumed bool
		says    string
	}{
		{"set -e\n. /opt/bitnami/scripts/libos.sh\ndebug_execute pg_isready -h 127.0.0.1 -p 5432", true, false, "called through debug_execute of /opt/bitnami/scripts/libos.sh"},
		{`retry_while "pg_isready -h localhost" 3 1`, true, false, "called through retry_while"},
		{"check() {\n  psql -c 'SELECT 1' \"$@\"\n}\ncheck -h localhost", true, false, "called through check, defined in the script"},
		{"check() {\n  psql -c 'SELECT 1'\n}\npgrep -x postgres", false, false, "pgrep"},
		{"function probe_db { pg_isready \"$@\"; }\nprobe_db -q", true, false, "called through probe_db"},
		{". /opt/bitnami/scripts/librepmgr.sh\nis_boolean_yes \"$X\" && repmgr_check_status", true, true, "repmgr_check_status"},
		{"is_boolean_yes \"$X\" || exit 0\npgrep postgres", false, false, "pgrep"},
	} {
		q := Probe("StatefulSet", &pg, &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"bash", "-c", tc.script}}}}, v)
		if q.Queries != tc.queries || q.Assumed != tc.assumed || !strings.Contains(q.Evidence, tc.says) {
			t.Errorf("%q: queries %v assumed %v (%s), want %v %v with %q", tc.script, q.Queries, q.Assumed, q.Evidence, tc.queries, tc.assumed, tc.says)
		}
	}
	// A function defined in another file of the input that the script
	// sources is read there.
	files := Files(func(p string) (File, bool) {
		if p == "/scripts/lib.sh" {
			return File{Text: "db_ping() {\n  mysqladmin status \"$@\"\n}\n", From: "ConfigMap lib, key lib.sh"}, true
		}
		return File{}, false
	})
	my := corev1.Container{Name: "mysql", Image: "mysql:8.4", Ports: ports(3306)}
	q := ProbeWith("StatefulSet", &my, &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", ". /scripts/lib.sh; db_ping -uroot"}}}}, Container("StatefulSet", &my), files)
	if !q.Queries || !strings.Contains(q.Evidence, "mysqladmin") {
		t.Errorf("function of a sourced file: %+v", q)
	}
}

// A port is weak evidence beside the command: YugabyteDB's tserver (the
// command of the yugabyte chart, stable/yugabyte/templates/service.yaml)
// listens on 6379 but execs yb-tserver; Redis's own command still counts.
func TestPortOutweighedByCommand(t *testing.T) {
	script := "if [[ -f /home/yugabyte/tools/k8s_parent.py ]]; then\n  k8s_parent=\"/home/yugabyte/tools/k8s_parent.py\"\nfi && \\\nexec ${k8s_parent} /home/yugabyte/bin/yb-tserver \\\n  --flagfile /tmp/yugabyte/tserver/conf/server.conf"
	yb := &corev1.Container{Name: "yb-tserver", Image: "yugabytedb/yugabyte:2026.1.0.1-b1",
		Command: []string{"/sbin/tini", "--"}, Args: []string{"/bin/bash", "-c", script},
		Ports: []corev1.ContainerPort{{ContainerPort: 9100}, {ContainerPort: 6379}, {ContainerPort: 5433}}}
	v := ContainerOf("", yb)
	if v.Server != nil || !strings.Contains(v.NotBecause, "runs /home/yugabyte/bin/yb-tserver") {
		t.Errorf("yb-tserver: server %v, %q; want none, outweighed by its command", v.Server, v.NotBecause)
	}
	for _, c := range []*corev1.Container{
		{Name: "r", Image: "example/cache:1", Command: []string{"redis-server", "/etc/redis.conf"}, Ports: []corev1.ContainerPort{{ContainerPort: 6379}}},
		{Name: "r", Image: "example/cache:1", Command: []string{"sh", "-c", "exec /opt/bitnami/scripts/redis/run.sh"}, Ports: []corev1.ContainerPort{{ContainerPort: 6379}}},
		{Name: "r", Image: "example/cache:1", Ports: []corev1.ContainerPort{{ContainerPort: 6379}}},
	} {
		if v := ContainerOf("", c); v.Server == nil || v.Server.Name != "Redis" {
			t.Errorf("%v: server %v (%s), want Redis by its port", c.Command, v.Server, v.NotBecause)
		}
	}
}
