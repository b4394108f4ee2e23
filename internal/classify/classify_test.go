package classify

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func ports(ps ...int32) []corev1.ContainerPort {
	var out []corev1.ContainerPort
	for _, p := range ps {
		out = append(out, corev1.ContainerPort{ContainerPort: p})
	}
	return out
}

func env(names ...string) []corev1.EnvVar {
	var out []corev1.EnvVar
	for _, n := range names {
		out = append(out, corev1.EnvVar{Name: n, Value: "x"})
	}
	return out
}

func TestContainer(t *testing.T) {
	tests := []struct {
		name       string
		kind       string
		c          corev1.Container
		server     string // "" for not database-like
		evidence   string
		notBecause string
	}{
		{name: "harbor database", kind: "StatefulSet",
			c:      corev1.Container{Name: "database", Image: "docker.io/goharbor/harbor-db:v2.13.0", Env: env("PGDATA")},
			server: "PostgreSQL", evidence: "image goharbor/harbor-db, env PGDATA"},
		{name: "official postgres with its port", kind: "StatefulSet",
			c:      corev1.Container{Name: "pg", Image: "postgres:16.4", Ports: ports(5432), Env: env("POSTGRES_PASSWORD")},
			server: "PostgreSQL", evidence: "image postgres, port 5432, env POSTGRES_PASSWORD"},
		{name: "bitnami postgresql matches postgres plus ql", kind: "StatefulSet",
			c:      corev1.Container{Name: "postgresql", Image: "registry-1.docker.io/bitnami/postgresql:16"},
			server: "PostgreSQL", evidence: "image bitnami/postgresql"},
		{name: "CloudNativePG operand image", kind: "Pod",
			c:      corev1.Container{Name: "postgres", Image: "ghcr.io/cloudnative-pg/postgresql:16.4", Ports: ports(5432, 8000, 9187)},
			server: "PostgreSQL", evidence: "image cloudnative-pg/postgresql, port 5432"},
		{name: "unknown image on the PostgreSQL port", kind: "Deployment",
			c:      corev1.Container{Name: "db", Image: "registry.example.com/team/store:3", Ports: ports(5432)},
			server: "PostgreSQL", evidence: "port 5432"},
		{name: "server env alone", kind: "Deployment",
			c:      corev1.Container{Name: "db", Image: "registry.example.com/team/store:3", Env: env("PGDATA")},
			server: "PostgreSQL", evidence: "env PGDATA"},
		{name: "mysql", kind: "StatefulSet",
			c:      corev1.Container{Name: "mysql", Image: "mysql:8.4", Env: env("MYSQL_ROOT_PASSWORD")},
			server: "MySQL", evidence: "image mysql, env MYSQL_ROOT_PASSWORD"},
		{name: "mariadb", kind: "StatefulSet",
			c:      corev1.Container{Name: "mariadb", Image: "mariadb:11", Ports: ports(3306)},
			server: "MySQL", evidence: "image mariadb, port 3306"},
		{name: "percona server for mongodb is MongoDB, not MySQL", kind: "StatefulSet",
			c:      corev1.Container{Name: "mongod", Image: "percona/percona-server-mongodb:7.0"},
			server: "MongoDB", evidence: "image percona/percona-server-mongodb"},
		{name: "percona server is MySQL", kind: "StatefulSet",
			c:      corev1.Container{Name: "mysql", Image: "percona/percona-server:8.0"},
			server: "MySQL", evidence: "image percona/percona-server"},
		{name: "redis with a version suffix", kind: "StatefulSet",
			c:      corev1.Container{Name: "redis", Image: "redis7:latest"},
			server: "Redis", evidence: "image redis7"},
		{name: "nats-streaming, a two-token entry", kind: "StatefulSet",
			c:      corev1.Container{Name: "stan", Image: "nats-streaming:0.25.6"},
			server: "NATS Streaming", evidence: "image nats-streaming"},
		{name: "clickhouse with its native port", kind: "StatefulSet",
			c:      corev1.Container{Name: "ch", Image: "clickhouse/clickhouse-server:24.8", Ports: ports(9000, 8123)},
			server: "ClickHouse", evidence: "image clickhouse/clickhouse-server, port 9000, port 8123"},

		// Negatives the rule pages name (docs/rules/BF101.md, BF201.md), and the
		// ones a prefix match would get wrong.
		{name: "nginx named db-proxy on 5432", kind: "Deployment",
			c:          corev1.Container{Name: "db-proxy", Image: "nginx:1.27", Ports: ports(5432)},
			notBecause: `image nginx has the token "nginx": it runs beside a server, it is not one`},
		{name: "postgres-exporter sidecar", kind: "StatefulSet",
			c:          corev1.Container{Name: "metrics", Image: "quay.io/prometheuscommunity/postgres-exporter:v0.15.0", Ports: ports(9187), Env: env("DATA_SOURCE_NAME")},
			notBecause: `image prometheuscommunity/postgres-exporter has the token "exporter": it runs beside a server, it is not one`},
		{name: "CronJob running psql on a postgres image", kind: "CronJob",
			c:          corev1.Container{Name: "vacuum", Image: "postgres:16", Command: []string{"psql", "-c", "VACUUM"}},
			notBecause: "a CronJob runs to completion: its containers are not servers"},
		{name: "migration Job with a psql image", kind: "Job",
			c:          corev1.Container{Name: "migrate-schema", Image: "postgres:16-alpine", Command: []string{"psql", "-f", "/migrations/001.sql"}},
			notBecause: "a Job runs to completion: its containers are not servers"},
		{name: "pgbouncer on the PostgreSQL port", kind: "Deployment",
			c:          corev1.Container{Name: "pgbouncer", Image: "bitnami/pgbouncer:1.23", Ports: ports(5432)},
			notBecause: `image bitnami/pgbouncer has the token "pgbouncer": it runs beside a server, it is not one`},
		{name: "application that connects with POSTGRES_PASSWORD", kind: "Deployment",
			c: corev1.Container{Name: "web", Image: "registry.example.com/shop/web:1.0", Ports: ports(8080), Env: env("POSTGRES_PASSWORD", "POSTGRES_USER")}},
		{name: "php-fpm on 9000 is not MinIO or ClickHouse", kind: "Deployment",
			c: corev1.Container{Name: "php", Image: "php:8.3-fpm", Ports: ports(9000)}},
		{name: "redisinsight is a UI", kind: "Deployment",
			c:          corev1.Container{Name: "ui", Image: "redis/redisinsight:2.60"},
			notBecause: `image redis/redisinsight has the token "redisinsight": it runs beside a server, it is not one`},
		{name: "postgrest is an API server", kind: "Deployment",
			c:          corev1.Container{Name: "api", Image: "postgrest/postgrest:v12"},
			notBecause: `image postgrest/postgrest has the token "postgrest": it runs beside a server, it is not one`},
		{name: "an application server bundling the MySQL driver", kind: "ReplicationController",
			c:          corev1.Container{Name: "wildfly-rc-pod", Image: "arungupta/wildfly-mysql-javaee7:k8s", Ports: ports(8080)},
			notBecause: `image arungupta/wildfly-mysql-javaee7 has the token "wildfly": it runs beside a server, it is not one`},
		{name: "a version suffix on an application-server token", kind: "Deployment",
			c:          corev1.Container{Name: "app", Image: "example/shop-mysql-tomcat9:1"},
			notBecause: `image example/shop-mysql-tomcat9 has the token "tomcat": it runs beside a server, it is not one`},
		{name: "redis-server --sentinel holds no dataset", kind: "StatefulSet",
			c:          corev1.Container{Name: "sentinel", Image: "redis:7.4", Command: []string{"redis-server", "/etc/sentinel/sentinel.conf", "--sentinel"}, Ports: ports(26379)},
			notBecause: "container sentinel runs Redis Sentinel (it runs with --sentinel), Redis's monitor, which monitors Redis servers and holds no dataset"},
		{name: "redis-sentinel in a shell script", kind: "StatefulSet",
			c:          corev1.Container{Name: "sentinel", Image: "valkey/valkey:8", Command: []string{"sh", "-c"}, Args: []string{"exec redis-sentinel /data/sentinel.conf"}},
			notBecause: "container sentinel runs Redis Sentinel (it runs redis-sentinel), Redis's monitor, which monitors Redis servers and holds no dataset"},
		{name: "kubernetes/examples sentinel: the redis image on 26379 only", kind: "ReplicationController",
			c:          corev1.Container{Name: "sentinel", Image: "registry.k8s.io/redis:v1", Ports: ports(26379), Env: env("SENTINEL")},
			notBecause: "container sentinel runs Redis Sentinel (it listens on 26379, Redis Sentinel's port, and not on 6379), Redis's monitor, which monitors Redis servers and holds no dataset"},
		{name: "a sentinel image", kind: "StatefulSet",
			c:          corev1.Container{Name: "sentinel", Image: "bitnami/redis-sentinel:7.4"},
			notBecause: `image bitnami/redis-sentinel has the token "sentinel": it runs beside a server, it is not one`},
		{name: "an application whose name starts with mongo", kind: "Deployment",
			c: corev1.Container{Name: "api", Image: "registry.example.com/mongoose-api:1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Container(tt.kind, &tt.c)
			if tt.server == "" {
				if v.DatabaseLike {
					t.Fatalf("classified as %s (%s), want not database-like", v.Server.Name, v.EvidenceString())
				}
				if v.NotBecause != tt.notBecause {
					t.Errorf("NotBecause = %q, want %q", v.NotBecause, tt.notBecause)
				}
				return
			}
			if !v.DatabaseLike || v.Server == nil {
				t.Fatalf("not database-like (%q), want %s", v.NotBecause, tt.server)
			}
			if v.Server.Name != tt.server {
				t.Errorf("server = %s, want %s", v.Server.Name, tt.server)
			}
			if got := v.EvidenceString(); got != tt.evidence {
				t.Errorf("evidence = %q, want %q", got, tt.evidence)
			}
		})
	}
}

// Every multi-token entry of the table must be able to match: the split
// into tokens once made "nats-streaming" unreachable.
func TestEveryImageEntryMatchesItself(t *testing.T) {
	for _, s := range Servers {
		for _, it := range append(append([]string{}, s.ImageTokens...), s.ImageNames...) {
			c := corev1.Container{Image: "registry.example.com/vendor/" + it + ":1"}
			v := Container("StatefulSet", &c)
			if !v.DatabaseLike || v.Server.Name != s.Name {
				t.Errorf("image %q: got %+v, want %s", it, v, s.Name)
			}
		}
	}
	for _, n := range NotServerTokens {
		if strings.ContainsAny(n, "-_.") {
			t.Errorf("NotServerTokens entry %q can never equal a single token", n)
		}
	}
}

func TestServerPort(t *testing.T) {
	pg := Container("StatefulSet", &corev1.Container{Image: "postgres:16"})
	named := corev1.Container{Image: "postgres:16", Ports: []corev1.ContainerPort{{Name: "metrics", ContainerPort: 9187}, {Name: "postgresql", ContainerPort: 5432}}}
	if p, why := ServerPort(&named, Container("StatefulSet", &named)); p != 5432 || why != "its containerPort postgresql" {
		t.Errorf("named port: %d %q", p, why)
	}
	bare := corev1.Container{Image: "postgres:16"}
	if p, why := ServerPort(&bare, pg); p != 5432 || why != "PostgreSQL's well-known port; the container declares none" {
		t.Errorf("no port: %d %q", p, why)
	}
	if p, _ := ServerPort(&bare, Verdict{}); p != 0 {
		t.Errorf("not a server: port %d, want 0", p)
	}
}

func execProbe(cmd ...string) *corev1.Probe {
	return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: cmd}}}
}

func httpProbe(port intstr.IntOrString, p string) *corev1.Probe {
	return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: p, Port: port}}}
}

func tcpProbe(port int) *corev1.Probe {
	return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt(port)}}}
}

func TestProbeQueries(t *testing.T) {
	harbor := corev1.Container{Image: "goharbor/harbor-db:v2.13.0", Env: env("PGDATA")}
	postgres := corev1.Container{Image: "postgres:16", Ports: ports(5432)}
	cnpg := corev1.Container{Image: "ghcr.io/cloudnative-pg/postgresql:16", Ports: []corev1.ContainerPort{{Name: "postgresql", ContainerPort: 5432}, {Name: "status", ContainerPort: 8000}}}
	spilo := corev1.Container{Image: "ghcr.io/zalando/spilo-16:3.3-p1", Ports: ports(5432, 8008)}
	mysql := corev1.Container{Image: "mysql:8.4"}
	redis := corev1.Container{Image: "bitnami/redis:7.4"}
	elastic := corev1.Container{Image: "docker.elastic.co/elasticsearch/elasticsearch:8.15.0", Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 9200}}}
	cockroach := corev1.Container{Image: "cockroachdb/cockroach:v24.2.0"}
	web := corev1.Container{Image: "registry.example.com/web:1"}

	tests := []struct {
		name     string
		kind     string
		c        *corev1.Container
		p        *corev1.Probe
		queries  bool
		evidence string
	}{
		{"pg_isready", "StatefulSet", &postgres, execProbe("pg_isready", "-U", "postgres"), true,
			"exec runs pg_isready, which exits 1 while PostgreSQL rejects connections: during startup, shutdown and crash recovery"},
		{"bitnami pg_isready inside sh -c with exec", "StatefulSet", &postgres,
			execProbe("/bin/sh", "-c", `exec pg_isready -U "postgres" -d "dbname=postgres" -h 127.0.0.1 -p 5432`), true,
			"exec runs pg_isready, which exits 1 while PostgreSQL rejects connections: during startup, shutdown and crash recovery"},
		{"psql after a pipe", "StatefulSet", &postgres, execProbe("sh", "-c", "echo 'SELECT 1' | psql -U postgres -h 127.0.0.1"), true,
			"exec runs psql, which logs in and runs a query"},
		{"sh -c -e with the script after the flags", "StatefulSet", &postgres,
			execProbe("/bin/sh", "-c", "-e", "exec pg_isready -h 127.0.0.1\n[ -f /tmp/.initialized ]"), true,
			"exec runs pg_isready, which exits 1 while PostgreSQL rejects connections: during startup, shutdown and crash recovery"},
		{"harbor's docker-healthcheck.sh", "StatefulSet", &harbor, execProbe("/docker-healthcheck.sh"), true,
			"exec runs /docker-healthcheck.sh, Harbor's health check, which runs echo 'SELECT 1' | psql"},
		{"an unknown script on a database image", "StatefulSet", &postgres, execProbe("/usr/local/bin/check-db.sh"), true,
			"exec runs the script /usr/local/bin/check-db.sh on a PostgreSQL container: assumed to log in and query, as health checks of database images do"},
		{"the same script on an application", "Deployment", &web, execProbe("/usr/local/bin/check-db.sh"), false,
			"exec runs check-db.sh, not known to need a query"},
		{"mysqladmin ping connects but does not log in", "StatefulSet", &mysql, execProbe("mysqladmin", "ping", "-uroot", "-p$MYSQL_ROOT_PASSWORD"), false,
			"exec runs mysqladmin ping, which connects without logging in: it exits 0 on any reply of the server (even Access denied) and 1 only when nothing answers"},
		{"mysqladmin status logs in", "StatefulSet", &mysql, execProbe("mysqladmin", "status", "-uroot", "-p$MYSQL_ROOT_PASSWORD"), true,
			"exec runs mysqladmin, which logs in to the server"},
		{"mariadb-admin behind bash -c", "StatefulSet", &mysql, execProbe("bash", "-ec", "mariadb-admin status -uroot -p\"${MARIADB_ROOT_PASSWORD}\""), true,
			"exec runs mariadb-admin, which logs in to the server"},
		{"a bare redis-cli ping behind timeout passes on LOADING", "StatefulSet", &redis, execProbe("sh", "-c", "timeout -s 15 3 redis-cli -h localhost ping"), false,
			"exec runs redis-cli without -e, which prints the -LOADING error and exits 0 while Redis loads its dataset (it exits 1 on an error reply only with -e)"},
		{"redis-cli compared with PONG in a command substitution", "StatefulSet", &redis, execProbe("sh", "-c", `test "$(redis-cli -h 127.0.0.1 ping)" = PONG`), true,
			"exec runs redis-cli and requires its answer to be PONG, but Redis answers -LOADING while it loads its dataset"},
		{"psql inside backticks", "StatefulSet", &postgres, execProbe("sh", "-c", "[ `psql -tAc 'SELECT 1'` = 1 ]"), true,
			"exec runs psql, which logs in and runs a query"},
		{"a quoted $( is not a substitution", "StatefulSet", &postgres, execProbe("sh", "-c", "echo '$(psql)' > /dev/null"), false,
			"exec runs only echo: no login or query"},
		{"bitnami redis liveness script counts LOADING as alive", "StatefulSet", &redis, execProbe("sh", "-c", "/health/ping_liveness_local.sh 5"), false,
			"exec runs /health/ping_liveness_local.sh, the Bitnami Redis liveness script, which counts LOADING as alive"},
		{"cockroach node status", "StatefulSet", &cockroach, execProbe("cockroach", "node", "status", "--insecure"), true,
			"exec runs cockroach node status, which asks the cluster for the node's status over SQL"},
		{"cockroach start is not a query", "StatefulSet", &cockroach, execProbe("cockroach", "version"), false,
			"exec runs cockroach, not known to need a query"},
		{"curl of cluster health answers whatever the status", "StatefulSet", &elastic, execProbe("sh", "-c", "curl -fsS http://localhost:9200/_cluster/health?local=true"), false,
			"exec runs curl http://localhost:9200/_cluster/health?local=true is the Elasticsearch cluster health API's /_cluster/health on port 9200, which answers 200 whatever the cluster's status (red while shards recover included); it answers 408 only when a wait_for_* condition times out"},
		{"curl of cluster health waiting for a status", "StatefulSet", &elastic, execProbe("sh", "-c", `curl -fsS "http://localhost:9200/_cluster/health?local=true&wait_for_status=yellow&timeout=1s"`), true,
			"exec runs curl http://localhost:9200/_cluster/health?local=true&wait_for_status=yellow&timeout=1s asks the Elasticsearch cluster health API's /_cluster/health on port 9200 with wait_for_status=yellow, which waits for the condition and answers 408 when it times out, as it does while shards recover"},
		{"httpGet of cluster health on the named port", "StatefulSet", &elastic, httpProbe(intstr.FromString("http"), "/_cluster/health"), false,
			"httpGet :http/_cluster/health is the Elasticsearch cluster health API's /_cluster/health on port 9200, which answers 200 whatever the cluster's status (red while shards recover included); it answers 408 only when a wait_for_* condition times out"},
		{"httpGet of an index search on elasticsearch's query port", "StatefulSet", &elastic, httpProbe(intstr.FromString("http"), "/logs/_search?size=0"), true,
			"httpGet :http/logs/_search?size=0 asks Elasticsearch's own query API (port 9200)"},
		{"psql from an application to a remote database", "Deployment", &web, execProbe("psql", "-h", "db", "-c", "SELECT 1"), true,
			"exec runs psql (a PostgreSQL client), which logs in and runs a query"},

		// Negatives.
		{"tcpSocket", "StatefulSet", &postgres, tcpProbe(5432), false,
			"tcpSocket only opens a connection, which the kernel accepts without the server answering"},
		{"CloudNativePG /healthz on 8000", "Pod", &cnpg, httpProbe(intstr.FromInt(8000), "/healthz"), false,
			"httpGet :8000/healthz is the CloudNativePG instance manager's /healthz on port 8000, which answers while the instance manager runs, without querying PostgreSQL"},
		{"CloudNativePG /readyz by port name", "Pod", &cnpg, httpProbe(intstr.FromString("status"), "/readyz"), true,
			"httpGet :status/readyz is the CloudNativePG instance manager's /readyz on port 8000, which answers 200 only while PostgreSQL accepts connections"},
		{"Patroni /liveness on 8008", "StatefulSet", &spilo, httpProbe(intstr.FromInt(8008), "/liveness"), false,
			"httpGet :8008/liveness is the Patroni REST API's /liveness on port 8008, which answers while Patroni's heartbeat loop runs, without querying PostgreSQL"},
		{"pg_isready with rejecting counted as up", "StatefulSet", &postgres,
			execProbe("sh", "-c", "pg_isready -h 127.0.0.1; [ $? -ne 2 ]"), false,
			"exec runs pg_isready but accepts its exit 1: it passes while PostgreSQL rejects connections in crash recovery"},
		{"a file test", "StatefulSet", &postgres, execProbe("test", "-f", "/var/lib/postgresql/data/PG_VERSION"), false,
			"exec runs only test: no login or query"},
		{"pgrep and true", "StatefulSet", &postgres, execProbe("sh", "-c", "pgrep postgres || true"), false,
			"exec runs only pgrep, true: no login or query"},
		{"cat of a marker file", "StatefulSet", &postgres, execProbe("cat", "/tmp/healthy"), false,
			"exec runs only cat: no login or query"},
		{"a test that names psql is not psql", "StatefulSet", &postgres, execProbe("sh", "-c", "test -x /usr/bin/psql"), false,
			"exec runs only test: no login or query"},
		{"curl on another port", "StatefulSet", &elastic, execProbe("curl", "-f", "http://localhost:8080/healthz"), false,
			"exec runs curl, not known to need a query"},
		{"httpGet on an application", "Deployment", &web, httpProbe(intstr.FromInt(8080), "/healthz"), false,
			"httpGet :8080/healthz is not a known query API: assumed to answer without querying the server"},
		{"grpc", "Deployment", &web, &corev1.Probe{ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 9090}}}, false,
			"grpc asks the server's health service, not known to need a query"},
		{"no probe", "Deployment", &web, nil, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Container(tt.kind, tt.c)
			q, ev := ProbeQueries(tt.kind, tt.c, tt.p, v)
			if q != tt.queries {
				t.Errorf("queries = %v, want %v (%s)", q, tt.queries, ev)
			}
			if ev != tt.evidence {
				t.Errorf("evidence:\n got %q\nwant %q", ev, tt.evidence)
			}
		})
	}
}

func TestUnknownScriptIsAnAssumption(t *testing.T) {
	c := corev1.Container{Image: "postgres:16"}
	if q := Probe("StatefulSet", &c, execProbe("/healthcheck.sh"), Container("StatefulSet", &c)); !q.Queries || !q.Assumed {
		t.Errorf("unknown script: %+v, want an assumed query", q)
	}
	if q := Probe("StatefulSet", &c, execProbe("psql", "-c", "SELECT 1"), Container("StatefulSet", &c)); !q.Queries || q.Assumed {
		t.Errorf("psql: %+v, want a seen query", q)
	}
}

func TestStartupHoldsThroughRecovery(t *testing.T) {
	withStartup := func(image string, p *corev1.Probe, period, failure int32) *corev1.Container {
		if p != nil {
			p.PeriodSeconds, p.FailureThreshold = period, failure
		}
		return &corev1.Container{Image: image, Ports: ports(5432, 3306), StartupProbe: p}
	}
	tests := []struct {
		name  string
		c     *corev1.Container
		holds bool
		why   string
	}{
		{"querying startup with 10 minutes", withStartup("postgres:16", execProbe("pg_isready"), 10, 60), true,
			"the startupProbe fails during recovery (exec runs pg_isready, which exits 1 while PostgreSQL rejects connections: during startup, shutdown and crash recovery) and holds the liveness probe back for up to 600 s (0 + 60 x 10)"},
		{"querying startup, too short", withStartup("postgres:16", execProbe("pg_isready"), 10, 30), false,
			"the startupProbe fails during recovery (exec runs pg_isready, which exits 1 while PostgreSQL rejects connections: during startup, shutdown and crash recovery), but kills the container itself after 300 s (0 + 30 x 10), less than 600 s"},
		{"tcpSocket startup on PostgreSQL", withStartup("postgres:16", tcpProbe(5432), 10, 90), false,
			"the startupProbe passes during recovery (tcpSocket passes as soon as PostgreSQL listens, which it does during crash recovery) and hands over to the liveness probe"},
		{"pg_isready accepting exit 1", withStartup("postgres:16", execProbe("sh", "-c", "pg_isready -q; [ $? -ne 2 ]"), 10, 90), false,
			"the startupProbe passes during recovery (exec runs pg_isready but accepts its exit 1: it passes while PostgreSQL rejects connections in crash recovery) and hands over to the liveness probe"},
		{"CloudNativePG /startupz", withStartup("ghcr.io/cloudnative-pg/postgresql:16", httpProbe(intstr.FromInt(8000), "/startupz"), 10, 360), false,
			"the startupProbe passes during recovery (httpGet :8000/startupz is the CloudNativePG instance manager's /startupz on port 8000, which counts a PostgreSQL that rejects connections (in crash recovery) as started) and hands over to the liveness probe"},
		{"tcpSocket startup on MySQL, which listens only after recovery", withStartup("mysql:8.4", tcpProbe(3306), 10, 60), true,
			"the startupProbe fails during recovery (tcpSocket fails while MySQL recovers: it does not open its port until InnoDB crash recovery has finished) and holds the liveness probe back for up to 600 s (0 + 60 x 10)"},
		{"no startupProbe", withStartup("postgres:16", nil, 0, 0), false, "there is no startupProbe"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			holds, why := StartupHoldsThroughRecovery("StatefulSet", tt.c, Container("StatefulSet", tt.c), 600)
			if holds != tt.holds {
				t.Errorf("holds = %v, want %v (%s)", holds, tt.holds, why)
			}
			if why != tt.why {
				t.Errorf("why:\n got %q\nwant %q", why, tt.why)
			}
		})
	}
}

// What each kind of probe does while the server recovers: the server
// table (recovery.go) applied.
func TestFailsDuringRecovery(t *testing.T) {
	redis := corev1.Container{Image: "redis:7.4", Ports: ports(6379)}
	valkey := corev1.Container{Image: "valkey/valkey:8.0"}
	keydb := corev1.Container{Image: "eqalpha/keydb:x86_64_v6.3.4"}
	bitnamiRedis := corev1.Container{Image: "docker.io/bitnami/redis:7.4.1-debian-12-r0"}
	mysql := corev1.Container{Image: "mysql:8.4", Ports: ports(3306)}
	mongo := corev1.Container{Image: "mongo:7.0", Ports: []corev1.ContainerPort{{Name: "mongodb", ContainerPort: 27017}, {Name: "metrics", ContainerPort: 9216}}}
	cassandra := corev1.Container{Image: "cassandra:4.1", Ports: ports(9042, 7000)}
	postgres := corev1.Container{Image: "postgres:16", Ports: ports(5432)}
	liveness := File{From: "ConfigMap redis-health, key ping_liveness_local.sh", Text: "#!/bin/bash\nresponse=$(\n  timeout -s 15 $1 \\\n  redis-cli -h localhost -p $REDIS_PORT ping\n)\nresponseFirstWord=$(echo $response | head -n1 | awk '{print $1;}')\nif [ \"$response\" != \"PONG\" ] && [ \"$responseFirstWord\" != \"LOADING\" ]; then\n  exit 1\nfi\n"}
	readiness := File{From: "ConfigMap redis-health, key ping_readiness_local.sh", Text: "#!/bin/bash\nresponse=$(\n  timeout -s 15 $1 \\\n  redis-cli -h localhost -p $REDIS_PORT ping\n)\nif [ \"$response\" != \"PONG\" ]; then\n  exit 1\nfi\n"}
	// bitnami/charts mongodb templates/common-scripts-cm.yaml (testdata/corpus/bitnami-mongodb), rendered.
	mongoPing := File{From: "ConfigMap mongodb-common-scripts, key ping-mongodb.sh", Text: "#!/bin/bash\nexec mongosh  $TLS_OPTIONS --port $MONGODB_PORT_NUMBER --eval \"db.adminCommand('ping')\"\n"}
	files := func(p string) (File, bool) {
		switch p {
		case "/health/ping_liveness_local.sh", "/opt/probes/alive":
			return liveness, true
		case "/health/ping_readiness_local.sh":
			return readiness, true
		case "/bitnami/scripts/ping-mongodb.sh":
			return mongoPing, true
		}
		return File{}, false
	}
	tests := []struct {
		name    string
		c       *corev1.Container
		p       *corev1.Probe
		fails   bool
		assumed bool
		ev      string
	}{
		// Redis listens while it loads and answers -LOADING; redis-cli
		// exits 0 on it without -e.
		{"bare redis-cli ping", &redis, execProbe("redis-cli", "ping"), false, false, "exits 0 while Redis loads its dataset"},
		{"redis-cli -e ping", &redis, execProbe("redis-cli", "-e", "ping"), true, false, "exits 1 on an error reply"},
		{"redis-cli ping compared with PONG", &redis, execProbe("sh", "-c", `[ "$(redis-cli ping)" = PONG ]`), true, false, "requires its answer to be PONG"},
		{"redis-cli ping piped to grep PONG", &redis, execProbe("sh", "-c", "redis-cli ping | grep -q PONG"), true, false, "requires its answer to be PONG"},
		{"valkey-cli ping", &valkey, execProbe("valkey-cli", "ping"), false, false, "exec runs valkey-cli without -e"},
		{"keydb-cli -e ping", &keydb, execProbe("keydb-cli", "-e", "ping"), true, false, "exec runs keydb-cli -e"},
		{"tcpSocket on Redis", &redis, tcpProbe(6379), false, false, "the kernel accepts"},
		{"bitnami liveness script by name", &bitnamiRedis, execProbe("sh", "-c", "/scripts/ping_liveness_local.sh 5"), false, false, "counts LOADING as alive"},
		{"bitnami liveness local and master by name", &bitnamiRedis, execProbe("sh", "-c", "/health/ping_liveness_local_and_master.sh 5"), false, false, "both counting LOADING as alive"},
		{"bitnami readiness script by name", &bitnamiRedis, execProbe("sh", "-c", "/scripts/ping_readiness_local.sh 1"), true, false, "requires PONG"},
		// Scripts whose text the input holds are read, not assumed.
		{"liveness script read from its ConfigMap", &redis, execProbe("sh", "-c", "/health/ping_liveness_local.sh 5"), false, false,
			"exec runs /health/ping_liveness_local.sh (ConfigMap redis-health, key ping_liveness_local.sh), which runs redis-cli and accepts LOADING"},
		{"readiness script read from its ConfigMap", &redis, execProbe("/health/ping_readiness_local.sh", "1"), true, false,
			"exec runs /health/ping_readiness_local.sh (ConfigMap redis-health, key ping_readiness_local.sh), which runs redis-cli and requires its answer to be PONG"},
		{"a script without .sh is still read", &redis, execProbe("/opt/probes/alive", "5"), false, false, "accepts LOADING"},
		// MySQL, MongoDB and Cassandra keep their port closed while they
		// recover: every probe that connects fails, tcpSocket included.
		{"tcpSocket on MySQL", &mysql, tcpProbe(3306), true, false, "tcpSocket :3306 opens a connection to MySQL, which does not open its port"},
		{"mysqladmin ping on MySQL", &mysql, execProbe("mysqladmin", "ping"), true, false, "connects without logging in"},
		{"a file test on MySQL", &mysql, execProbe("test", "-f", "/var/lib/mysql/ibdata1"), false, false, "no login or query"},
		{"tcpSocket on MongoDB by name", &mongo, &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("mongodb")}}}, true, false, "MongoDB"},
		{"httpGet on MongoDB's exporter port", &mongo, httpProbe(intstr.FromInt(9216), "/metrics"), false, false, "not a known query API"},
		// A ping needs a connection, which mongod accepts only after
		// storage and oplog recovery.
		{"mongosh ping", &mongo, execProbe("mongosh", "--eval", `db.adminCommand("ping")`), true, false, "exec runs mongosh, which connects and runs a command"},
		{"mongo ping", &mongo, execProbe("mongo", "--eval", `db.adminCommand("ping")`), true, false, "exec runs mongo, which connects and runs a command"},
		{"mongosh runCommand ping in a shell", &mongo, execProbe("sh", "-c", `mongosh --quiet --eval "db.runCommand({ping:1}).ok" | grep -q 1`), true, false, "exec runs mongosh"},
		{"bitnami ping-mongodb.sh read from its ConfigMap", &mongo, execProbe("/bitnami/scripts/ping-mongodb.sh"), true, false,
			"exec runs /bitnami/scripts/ping-mongodb.sh (ConfigMap mongodb-common-scripts, key ping-mongodb.sh), which runs mongosh, which connects and runs a command"},
		{"tcpSocket on Cassandra's CQL port", &cassandra, tcpProbe(9042), true, false, "Cassandra"},
		{"tcpSocket on Cassandra's storage port is assumed", &cassandra, tcpProbe(7000), true, true, "tcpSocket :7000"},
		{"nodetool status may answer over JMX", &cassandra, execProbe("nodetool", "status"), true, true, "asks the node over JMX"},
		{"nodetool info requiring native transport", &cassandra, execProbe("sh", "-c", `nodetool info | grep -q "Native Transport active: true"`), true, false, "Native Transport active: true"},
		{"cqlsh", &cassandra, execProbe("cqlsh", "-e", "describe keyspaces"), true, false, "logs in over CQL"},
		// PostgreSQL listens and refuses with 57P03.
		{"tcpSocket on PostgreSQL", &postgres, tcpProbe(5432), false, false, "the kernel accepts"},
		{"pg_isready on PostgreSQL", &postgres, execProbe("pg_isready"), true, false, "exits 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Container("StatefulSet", tt.c)
			if !v.DatabaseLike {
				t.Fatalf("%s is not database-like", tt.c.Image)
			}
			q := ProbeWith("StatefulSet", tt.c, tt.p, v, files)
			if got := q.FailsDuringRecovery(v); got != tt.fails {
				t.Errorf("fails = %v, want %v (%s)", got, tt.fails, q.Evidence)
			}
			if q.Assumed != tt.assumed {
				t.Errorf("assumed = %v, want %v (%s)", q.Assumed, tt.assumed, q.Evidence)
			}
			if tt.assumed && q.Assumption == "" && !strings.Contains(q.Evidence, "assumed") {
				t.Errorf("an assumed verdict says nothing about what it assumed: %+v", q)
			}
			if !strings.Contains(q.Evidence, tt.ev) {
				t.Errorf("evidence %q lacks %q", q.Evidence, tt.ev)
			}
		})
	}
}

// A script that calls itself does not loop.
func TestScriptRecursionIsBounded(t *testing.T) {
	c := corev1.Container{Image: "redis:7.4"}
	files := func(p string) (File, bool) { return File{Text: "/health/loop.sh", From: "ConfigMap loop"}, true }
	v := Container("StatefulSet", &c)
	q := ProbeWith("StatefulSet", &c, execProbe("/health/loop.sh"), v, files)
	if q.Queries && !q.Assumed {
		t.Errorf("a script that only calls itself is a seen query: %+v", q)
	}
}

// What PostgreSQL answers while it recovers depends on its version.
func TestRecoveryAnswer(t *testing.T) {
	pg := &Servers[0]
	for image, want := range map[string]string{
		"postgres:16.4":                          `"the database system is not yet accepting connections" (PostgreSQL 16; pg_isready exits 1)`,
		"bitnami/postgresql:15.6.0-debian-12-r0": `"the database system is not yet accepting connections" (PostgreSQL 15;`,
		"postgres:14-alpine":                     `"the database system is starting up" (PostgreSQL 14;`,
		"postgis/postgis:13-3.4":                 `"the database system is starting up" (PostgreSQL 13;`,
		"goharbor/harbor-db:v2.13.0":             `"the database system is not yet accepting connections" (PostgreSQL 15 and later; "the database system is starting up" up to 14`,
		"postgres@sha256:abc":                    `(PostgreSQL 15 and later;`,
	} {
		if got := pg.RecoveryAnswer(image); !strings.Contains(got, want) {
			t.Errorf("%s: %q lacks %q", image, got, want)
		}
		if strings.Contains(pg.RecoveryAnswer(image), "in recovery mode") {
			t.Errorf("%s: a restarted container never sees \"in recovery mode\"", image)
		}
	}
}

var update = flag.Bool("update", false, "rewrite docs/servers.md")

// docs/servers.md is the server table rendered: the page cannot drift from
// what the rules read.
func TestServersDoc(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "servers.md")
	got := ServersMarkdown()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != got {
		t.Errorf("docs/servers.md is stale: go test ./internal/classify -update")
	}
}

// Every server whose recovery the rules rely on was checked in its source,
// and every client command of the server table has its row.
func TestServerTableIsChecked(t *testing.T) {
	for _, s := range Servers {
		if (s.ListensDuringRecovery || s.PortClosedDuringRecovery) && (RecoveryOf(s.Name) == nil || RecoveryOf(s.Name).Source == "") {
			t.Errorf("%s: listening behaviour without a source", s.Name)
		}
		for _, qc := range s.QueryCommands {
			row := CommandNamed(qc)
			if row == nil {
				t.Errorf("%s: command %q has no row in Commands", s.Name, qc)
				continue
			}
			if row.Server != s.Name {
				t.Errorf("command %q belongs to %s in Commands, %s in Servers", qc, row.Server, s.Name)
			}
			if row.Verdict != Assumed && row.Source == "" {
				t.Errorf("command %q: verdict %q without a source", qc, row.Verdict)
			}
		}
	}
	for _, r := range Recoveries {
		found := false
		for _, s := range Servers {
			found = found || s.Name == r.Server
		}
		if !found || len(r.Messages) == 0 {
			t.Errorf("recovery row %s: no server of that name, or no message", r.Server)
		}
	}
}

// Pods that run once are clients, like Jobs: their containers are never
// servers.
func TestRunsOnce(t *testing.T) {
	never := &corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever}
	onFailure := &corev1.PodSpec{RestartPolicy: corev1.RestartPolicyOnFailure}
	always := &corev1.PodSpec{RestartPolicy: corev1.RestartPolicyAlways}
	hook := func(v string) *metav1.ObjectMeta {
		return &metav1.ObjectMeta{Annotations: map[string]string{"helm.sh/hook": v}}
	}
	for _, tt := range []struct {
		name string
		kind string
		meta *metav1.ObjectMeta
		spec *corev1.PodSpec
		want string
	}{
		{"job", "Job", nil, onFailure, "a Job runs to completion"},
		{"helm test", "Pod", hook("test"), always, "a Helm test Pod (helm.sh/hook: test) runs once"},
		{"helm 2 test-success among other hooks", "Pod", hook("pre-install, test-success"), nil, "a Helm test Pod (helm.sh/hook: test-success) runs once"},
		{"restartPolicy Never", "Pod", nil, never, "a Pod with restartPolicy Never runs once"},
		{"restartPolicy OnFailure", "Pod", &metav1.ObjectMeta{}, onFailure, "a Pod with restartPolicy OnFailure runs once"},
		{"a serving Pod", "Pod", nil, always, ""},
		{"a Pod with the default restartPolicy", "Pod", nil, &corev1.PodSpec{}, ""},
		{"a pre-install hook is not a test", "Pod", hook("pre-install"), always, ""},
		{"a StatefulSet", "StatefulSet", nil, always, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := RunsOnce(tt.kind, tt.meta, tt.spec); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	c := corev1.Container{Image: "postgres:16", Env: env("PGDATA")}
	if v := ContainerOf(RunsOnce("Pod", hook("test"), nil), &c); v.DatabaseLike || !strings.Contains(v.NotBecause, "Helm test") {
		t.Errorf("a postgres image in a Helm test Pod: %+v", v)
	}
}

// CouchDB has no recovery phase: even a probe of its query API does not fail
// because of one, while the container stays database-like.
func TestNoCrashRecovery(t *testing.T) {
	c := corev1.Container{Image: "couchdb:2.3.1", Ports: ports(5984)}
	v := Container("StatefulSet", &c)
	if !v.DatabaseLike || v.Server.Name != "CouchDB" {
		t.Fatalf("couchdb: %+v, want database-like CouchDB", v)
	}
	q := Probe("StatefulSet", &c, httpProbe(intstr.FromInt(5984), "/"), v)
	if !q.Queries {
		t.Fatalf("GET / on 5984 does not query: %s", q.Evidence)
	}
	if q.FailsDuringRecovery(v) {
		t.Error("a CouchDB probe fails during a recovery CouchDB does not have")
	}
}

// A script that runs its siblings through $(dirname "$0") (Bitnami Valkey's
// ping_liveness_local_and_primary.sh) is followed into them.
func TestScriptDirSiblings(t *testing.T) {
	c := corev1.Container{Image: "bitnami/valkey:8.1"}
	v := Container("StatefulSet", &c)
	scripts := map[string]string{
		"/health/both.sh":    "script_dir=\"$(dirname \"$0\")\"\nexit_status=0\n\"$script_dir/local.sh\" $1 || exit_status=$?\n\"${script_dir}/primary.sh\" $1 || exit_status=$?\nexit $exit_status",
		"/health/local.sh":   `response=$(valkey-cli ping); if [ "$response" != "PONG" ] && [ "$response" != "LOADING Valkey is loading the dataset in memory" ]; then exit 1; fi`,
		"/health/primary.sh": `response=$(valkey-cli -h primary ping); if [ "$response" != "PONG" ] && [ "$response" != "LOADING Valkey is loading the dataset in memory" ]; then exit 1; fi`,
	}
	files := func(p string) (File, bool) {
		text, ok := scripts[p]
		return File{Text: text, From: "ConfigMap health, key " + p}, ok
	}
	q := ProbeWith("StatefulSet", &c, execProbe("sh", "-c", "/health/both.sh 5"), v, files)
	if q.Queries || q.Assumed {
		t.Fatalf("siblings that accept LOADING read as a query: %+v", q)
	}
	if !strings.Contains(q.Evidence, "accepts LOADING") {
		t.Errorf("evidence does not come from the siblings: %s", q.Evidence)
	}
	// The sibling that requires PONG is found the same way.
	scripts["/health/primary.sh"] = `[ "$(valkey-cli -h primary ping)" = PONG ]`
	if q := ProbeWith("StatefulSet", &c, execProbe("sh", "-c", "/health/both.sh 5"), v, files); !q.Queries || q.Assumed {
		t.Errorf("a sibling that requires PONG is not a seen query: %+v", q)
	}
}

func TestWithScriptDir(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`d="$(dirname "$0")"; "$d/x.sh"`, `d="/health"; "/health/x.sh"`},
		{"d=`dirname $0`\n$d/x.sh ${d}/y.sh $dd", "d=/health\n/health/x.sh /health/y.sh $dd"},
		{`"$(dirname "$0")/x.sh"`, `"/health/x.sh"`},
		{`d=/other; $d/x.sh`, `d=/other; $d/x.sh`},
	} {
		if got := withScriptDir(tt.in, "/health"); got != tt.want {
			t.Errorf("withScriptDir(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// ZooKeeper answers during recovery only when it runs alone: ruok passes on
// a standalone server and fails on a quorum member, whose port is bound but
// answers nothing (measured in the server lab); a tcpSocket probe passes on
// both.
func TestZooKeeperMembers(t *testing.T) {
	zk := corev1.Container{Image: "bitnami/zookeeper:3.9", Ports: ports(2181)}
	ruok := execProbe("sh", "-c", "echo ruok | nc 127.0.0.1 2181")
	healthcheck := execProbe("/bin/bash", "-ec", "ZOO_HC_TIMEOUT=3 /opt/bitnami/scripts/zookeeper/healthcheck.sh")
	three := zk
	three.Env = []corev1.EnvVar{{Name: "ZOO_SERVERS", Value: "zk-0:2888:3888::1 zk-1:2888:3888::2 zk-2:2888:3888::3"}}
	one := zk
	one.Env = []corev1.EnvVar{{Name: "ZOO_SERVERS", Value: "zk-0:2888:3888::1"}}
	tests := []struct {
		name     string
		c        *corev1.Container
		replicas int32
		p        *corev1.Probe
		fails    bool
	}{
		{"ruok on one replica", &zk, 1, ruok, false},
		{"ruok on three replicas", &zk, 3, ruok, true},
		{"bitnami healthcheck.sh on one replica with one server listed", &one, 1, healthcheck, false},
		{"bitnami healthcheck.sh with three servers listed", &three, 1, healthcheck, true},
		{"tcpSocket on a quorum member", &zk, 3, tcpProbe(2181), false},
		{"tcpSocket on a standalone server", &zk, 1, tcpProbe(2181), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Members(Container("StatefulSet", tt.c), tt.c, tt.replicas)
			q := Probe("StatefulSet", tt.c, tt.p, v)
			if got := q.FailsDuringRecovery(v); got != tt.fails {
				t.Errorf("fails during recovery = %v, want %v (%s; %s)", got, tt.fails, q.Evidence, v.Server.Recovery)
			}
		})
	}
	if v := Members(Container("StatefulSet", &zk), &zk, 3); v.Server == &Servers[0] || Container("StatefulSet", &zk).Server.PortClosedDuringRecovery {
		t.Error("Members changed the shared table")
	}
}

// A probe script's exit status is read, not assumed: Dragonfly's image
// health check (dragonflydb/dragonfly tools/docker/healthcheck.sh, pinned
// in testdata/corpus/dragonfly-image) runs echo PING | ${_healthcheck}
// with _healthcheck="nc -q1 ...", then exit $?: nc's status, which says
// only that the port opened. Read from the input, or known by name on the
// Dragonfly image, it passes while the server loads; compared with PONG,
// the answer matters and nc alone does not decide.
func TestNetcatProbeScript(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("..", "..", "testdata", "corpus", "dragonfly-image", "healthcheck.sh"))
	if err != nil {
		t.Fatal(err)
	}
	c := &corev1.Container{Name: "dragonfly", Image: "docker.dragonflydb.io/dragonflydb/dragonfly:v1.40.1",
		Ports: []corev1.ContainerPort{{ContainerPort: 6379}}}
	p := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"/bin/sh", "/usr/local/bin/healthcheck.sh"}}}}
	v := ContainerOf("", c)
	read := func(path string) (File, bool) {
		return File{Text: string(text), From: "the pinned script"}, path == "/usr/local/bin/healthcheck.sh"
	}
	for name, q := range map[string]ProbeQuery{
		"read from the input": ProbeWith("Deployment", c, p, v, read),
		"known by name":       ProbeWith("Deployment", c, p, v, nil),
	} {
		if q.Queries || q.Assumed || !q.Connects || q.FailsDuringRecovery(v) {
			t.Errorf("%s: %+v; want a connection check that passes while %s loads", name, q, v.Server.Name)
		}
	}
	for _, c2 := range []struct {
		script string
		passes bool
	}{
		{"echo PING | nc localhost 6379; exit $?", true},
		{"echo PING | nc -q1 localhost 6379", true},
		{`[ "$(echo PING | nc -q1 localhost 6379)" = "+PONG" ]`, false},
		{"redis-cli ping | grep PONG", false},
	} {
		p := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", c2.script}}}}
		q := ProbeWith("Deployment", c, p, v, nil)
		if got := q.PassesDuringRecovery(v); got != c2.passes {
			t.Errorf("%s: passes during loading %v, want %v (%+v)", c2.script, got, c2.passes, q)
		}
	}
}

// Only the major versions the table names listen after loading: InfluxDB
// 1.x (by its image tag), not 2.x, not an untagged image.
func TestListensAfterLoading(t *testing.T) {
	for image, closed := range map[string]bool{"influxdb:1.8.10-alpine": true, "influxdb:1.11": true, "influxdb:2.7.11": false, "influxdb": false, "influxdb:latest": false} {
		v := ContainerOf("", &corev1.Container{Name: "i", Image: image})
		if v.Server == nil || v.Server.PortClosedDuringRecovery != closed {
			t.Errorf("%s: %+v, want port closed during recovery %v", image, v.Server, closed)
		}
	}
}

// A client whose failure the script discards (|| exit 0, || true) does not
// decide the probe; without the ||, or with || exit 1, it does.
func TestFailureIgnoredByScript(t *testing.T) {
	c := &corev1.Container{Name: "pg", Image: "postgres:16", Env: []corev1.EnvVar{{Name: "PGDATA", Value: "/data"}}}
	v := ContainerOf("", c)
	for script, fails := range map[string]bool{
		`psql -U postgres -c "SELECT 1" || exit 0`:   false,
		`psql -U postgres -c "SELECT 1" || true`:     false,
		`psql -U postgres -c "SELECT 1"`:             true,
		`psql -U postgres -c "SELECT 1" || exit 1`:   true,
		"psql -U postgres -c 'SELECT 1'; exit $?":    true,
		"test -f /tmp/x || true\npsql -c 'SELECT 1'": true,
	} {
		p := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", script}}}}
		if got := Probe("StatefulSet", c, p, v).FailsDuringRecovery(v); got != fails {
			t.Errorf("%q: fails during recovery %v, want %v", script, got, fails)
		}
	}
}

// What a script's exit status depends on: a client alone on a line that is
// neither the last command nor tested does not decide the probe, unless the
// script stops at a failure (set -e, sh -e); nc anywhere in a set -e script
// decides it by its connection alone.
func TestScriptStatusDependsOn(t *testing.T) {
	c := &corev1.Container{Name: "pg", Image: "postgres:16", Env: []corev1.EnvVar{{Name: "PGDATA", Value: "/data"}}}
	v := ContainerOf("", c)
	for _, c2 := range []struct {
		argv  []string
		fails bool
	}{
		{[]string{"sh", "-c", "psql -c 'SELECT 1'\necho ok"}, false},
		{[]string{"sh", "-c", "set -e\npsql -c 'SELECT 1'\necho ok"}, true},
		{[]string{"sh", "-c", "set -euo pipefail\npsql -c 'SELECT 1'\necho ok"}, true},
		{[]string{"sh", "-c", "set -o errexit\npsql -c 'SELECT 1'\necho ok"}, true},
		{[]string{"/bin/bash", "-ec", "psql -c 'SELECT 1'\necho ok"}, true},
		{[]string{"sh", "-e", "-c", "psql -c 'SELECT 1'\necho ok"}, true},
		{[]string{"sh", "-c", "psql -c 'SELECT 1'\nif [ $? -ne 0 ]; then exit 1; fi\necho ok"}, true},
		{[]string{"sh", "-c", "echo start\npsql -c 'SELECT 1'"}, true},
		{[]string{"sh", "-c", "if psql -c 'SELECT 1'; then exit 0; fi\nexit 1"}, true},
		{[]string{"sh", "-c", "check() {\npsql -c 'SELECT 1'\n}\ncheck"}, true},
	} {
		p := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: c2.argv}}}
		if got := Probe("StatefulSet", c, p, v).FailsDuringRecovery(v); got != c2.fails {
			t.Errorf("%q: fails during recovery %v, want %v", c2.argv, got, c2.fails)
		}
	}
	// Redis answers on its port while it loads: nc in the middle of a set -e
	// script decides by the connection; without set -e the last command does.
	r := &corev1.Container{Name: "redis", Image: "redis:7"}
	rv := ContainerOf("", r)
	for _, c2 := range []struct {
		script string
		passes bool
	}{
		{"set -e\necho PING | nc -q1 localhost 6379\necho ok", true},
		{"set -e\necho PING | nc -q1 localhost 6379\nredis-cli ping | grep PONG", false},
	} {
		p := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", c2.script}}}}
		q := ProbeWith("Deployment", r, p, rv, nil)
		if got := q.PassesDuringRecovery(rv); got != c2.passes {
			t.Errorf("%q: passes during loading %v, want %v (%+v)", c2.script, got, c2.passes, q)
		}
	}
}

// A real probe script, pinned verbatim (testdata/corpus/wonderfan-docker-files:
// wonderfan/docker-files galera-mariadb's readiness-probe.sh): it echoes, runs
// mysql, then tests $? on the next line. The mysql query decides the probe,
// so it fails while MariaDB recovers (the port opens after InnoDB recovery).
// The same script ending in `exit 0` instead of the test exits 0 whatever
// mysql says, unless it stops at a failure (set -e).
func TestRealScriptStatusTestedOnNextLine(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "corpus", "wonderfan-docker-files", "galera-mariadb", "root", "usr", "local", "bin", "readiness-probe.sh"))
	if err != nil {
		t.Fatal(err)
	}
	script := string(b)
	i := strings.Index(script, "if [ $? -ne 0 ]")
	if i < 0 {
		t.Fatal("the pinned script changed")
	}
	untested := script[:i] + "exit 0\n"
	c := &corev1.Container{Name: "mariadb", Image: "mariadb:10.11", Env: []corev1.EnvVar{{Name: "MARIADB_ROOT_PASSWORD", Value: "x"}}}
	v := ContainerOf("", c)
	for _, c2 := range []struct {
		name, text string
		fails      bool
	}{
		{"as written", script, true},
		{"ending in exit 0", untested, false},
		{"ending in exit 0, under set -e", strings.Replace(untested, "#!/bin/bash\n", "#!/bin/bash\nset -e\n", 1), true},
	} {
		files := func(p string) (File, bool) {
			if p == "/usr/local/bin/readiness-probe.sh" {
				return File{Text: c2.text, From: "ConfigMap probes, key readiness-probe.sh"}, true
			}
			return File{}, false
		}
		p := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"/usr/local/bin/readiness-probe.sh"}}}}
		if got := ProbeWith("StatefulSet", c, p, v, files).FailsDuringRecovery(v); got != c2.fails {
			t.Errorf("%s: fails during recovery %v, want %v (%+v)", c2.name, got, c2.fails, ProbeWith("StatefulSet", c, p, v, files))
		}
	}
}

// A discarded failure is discarded whole: on MySQL, whose port is closed
// while it recovers, `mysql ... || true` does not fail the probe either (the
// failed connection is the failure the script ignores).
func TestFailureIgnoredOnClosedPort(t *testing.T) {
	c := &corev1.Container{Name: "db", Image: "mysql:8.4", Env: []corev1.EnvVar{{Name: "MYSQL_ROOT_PASSWORD", Value: "x"}}}
	v := ContainerOf("", c)
	for script, fails := range map[string]bool{
		`mysql -uroot -e "SELECT 1" || true`:          false,
		"mysql -uroot -e 'SELECT 1'\necho done":       false,
		`mysql -uroot -e "SELECT 1"`:                  true,
		"set -e\nmysql -uroot -e 'SELECT 1'\necho ok": true,
	} {
		p := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", script}}}}
		if got := Probe("StatefulSet", c, p, v).FailsDuringRecovery(v); got != fails {
			t.Errorf("%q: fails during recovery %v, want %v", script, got, fails)
		}
	}
}
