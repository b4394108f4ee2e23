// Package classify decides what a container is: a database-like server
// (by image, port or environment), and whether a probe needs that server to
// answer a query. Every verdict carries its evidence, because a finding
// built on a classification must say what it saw.
//
// The tables below are the whole policy; extend them, not the code.
package classify

import (
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Server is one kind of stateful server.
type Server struct {
	Name string // "PostgreSQL"
	// ImageTokens match a token of the image's repository name
	// ("bitnami/postgresql" has the token "postgresql"); a token matches
	// when it starts with one of these.
	ImageTokens []string
	// ImageNames match the whole repository basename ("harbor-db").
	ImageNames []string
	Ports      []int32
	Env        []string
	// QueryCommands are binaries whose success needs the server to accept a
	// connection or answer a query.
	QueryCommands []string
	// QueryHTTPPorts are ports of the server's own HTTP query API.
	QueryHTTPPorts []int32
	// Recovery is how the server answers while it recovers after a crash.
	Recovery string
}

// Servers is the classification table.
var Servers = []Server{
	{Name: "PostgreSQL", ImageTokens: []string{"postgres", "postgis", "timescaledb", "spilo", "patroni"}, ImageNames: []string{"harbor-db"},
		Ports: []int32{5432}, Env: []string{"PGDATA", "POSTGRES_PASSWORD", "POSTGRESQL_PASSWORD", "POSTGRES_INITDB_ARGS"},
		QueryCommands: []string{"psql", "pg_isready"},
		Recovery:      `refuses connections with SQLSTATE 57P03 "the database system is in recovery mode" (pg_isready exits 1)`},
	{Name: "MySQL", ImageTokens: []string{"mysql", "mariadb", "percona"},
		Ports: []int32{3306}, Env: []string{"MYSQL_ROOT_PASSWORD", "MARIADB_ROOT_PASSWORD", "MYSQL_ALLOW_EMPTY_PASSWORD"},
		QueryCommands: []string{"mysql", "mysqladmin", "mariadb-admin", "mariadb"},
		Recovery:      "refuses connections until InnoDB crash recovery has finished"},
	{Name: "MongoDB", ImageTokens: []string{"mongo"},
		Ports: []int32{27017}, Env: []string{"MONGO_INITDB_ROOT_USERNAME"},
		QueryCommands: []string{"mongo", "mongosh"},
		Recovery:      "does not accept connections until journal recovery has finished"},
	{Name: "Redis", ImageTokens: []string{"redis", "valkey", "keydb"},
		Ports:         []int32{6379},
		QueryCommands: []string{"redis-cli", "valkey-cli", "keydb-cli"},
		Recovery:      "answers LOADING while it loads the dataset from disk"},
	{Name: "etcd", ImageTokens: []string{"etcd"},
		Ports: []int32{2379}, Env: []string{"ETCD_DATA_DIR"},
		QueryCommands: []string{"etcdctl"},
		Recovery:      "does not serve requests until it has replayed its WAL"},
	{Name: "Elasticsearch", ImageTokens: []string{"elasticsearch", "opensearch"},
		Ports: []int32{9200}, QueryHTTPPorts: []int32{9200},
		Recovery: "reports red or unavailable while shards recover"},
	{Name: "Cassandra", ImageTokens: []string{"cassandra", "scylla"},
		Ports: []int32{9042}, QueryCommands: []string{"cqlsh", "nodetool"},
		Recovery: "does not accept CQL until commit log replay has finished"},
	{Name: "ZooKeeper", ImageTokens: []string{"zookeeper"}, Ports: []int32{2181},
		Recovery: "does not serve until it has loaded its snapshot and log"},
	{Name: "Kafka", ImageTokens: []string{"kafka"}, Ports: []int32{9092},
		Recovery: "does not serve until log recovery has finished"},
	{Name: "ClickHouse", ImageTokens: []string{"clickhouse"}, QueryCommands: []string{"clickhouse-client"},
		QueryHTTPPorts: []int32{8123},
		Recovery:       "does not accept queries until tables are loaded"},
	{Name: "CockroachDB", ImageTokens: []string{"cockroach"}, Ports: []int32{26257},
		QueryCommands: []string{"cockroach"},
		Recovery:      "does not accept SQL until the node has rejoined"},
	{Name: "InfluxDB", ImageTokens: []string{"influxdb"}, Ports: []int32{8086}, QueryHTTPPorts: []int32{8086},
		Recovery: "does not answer queries until the WAL is loaded"},
	{Name: "Neo4j", ImageTokens: []string{"neo4j"}, Ports: []int32{7687},
		Recovery: "does not accept Bolt connections during recovery"},
	{Name: "CouchDB", ImageTokens: []string{"couchdb"}, Ports: []int32{5984}, QueryHTTPPorts: []int32{5984},
		Recovery: "does not answer until databases are opened"},
	{Name: "RabbitMQ", ImageTokens: []string{"rabbitmq"}, Ports: []int32{5672},
		QueryCommands: []string{"rabbitmq-diagnostics", "rabbitmqctl"},
		Recovery:      "does not accept connections until queues are recovered"},
	{Name: "NATS Streaming", ImageTokens: []string{"nats-streaming"},
		Recovery: "does not serve until the store is recovered"},
	{Name: "MinIO", ImageTokens: []string{"minio"}, Ports: []int32{9000},
		Recovery: "does not serve until drives are healed"},
}

// NotServerTokens mark images that sit beside a server without being one
// (exporters, operators, proxies, clients, admin UIs, backup jobs). They
// win over every other piece of evidence.
var NotServerTokens = []string{
	"exporter", "operator", "proxy", "pgbouncer", "odyssey", "pgpool", "client", "cli", "backup", "ui",
	"admin", "pgadmin", "pgadmin4", "commander", "express", "metrics", "sidecar", "agent", "controller",
	"migrate", "migration", "migrations", "migrator", "tools", "dashboard", "insight", "connect",
	"nginx", "haproxy", "envoy", "traefik", "sentinel-exporter",
}

// Verdict is what a container was classified as.
type Verdict struct {
	DatabaseLike bool
	Server       *Server
	Evidence     []string // "image goharbor/harbor-db", "port 5432"
	// NotBecause explains a negative verdict where evidence pointed the
	// other way ("image postgres-exporter is an exporter").
	NotBecause string
}

// EvidenceString joins the evidence for a finding: "image goharbor/harbor-db, env PGDATA".
func (v Verdict) EvidenceString() string { return strings.Join(v.Evidence, ", ") }

// RunsToCompletion reports whether a kind's pods exit when done: their
// containers are jobs, not servers, whatever image they use.
func RunsToCompletion(kind string) bool { return kind == "Job" || kind == "CronJob" }

// Container classifies c, a container of a workload of the given kind.
func Container(kind string, c *corev1.Container) Verdict {
	repo := imageRepository(c.Image)
	tokens := strings.FieldsFunc(path.Base(repo), func(r rune) bool { return r == '-' || r == '_' || r == '.' })
	for _, t := range tokens {
		for _, n := range NotServerTokens {
			if t == n {
				return Verdict{NotBecause: "image " + repo + " is a " + n + ", not the server"}
			}
		}
	}
	if RunsToCompletion(kind) {
		return Verdict{NotBecause: "a " + kind + " runs to completion; it is not a server"}
	}
	var v Verdict
	for i := range Servers {
		s := &Servers[i]
		var ev []string
		if matchImage(s, path.Base(repo), tokens) {
			ev = append(ev, "image "+repo)
		}
		for _, p := range c.Ports {
			for _, sp := range s.Ports {
				if p.ContainerPort == sp {
					ev = append(ev, "port "+itoa(sp))
				}
			}
		}
		for _, e := range c.Env {
			for _, se := range s.Env {
				if e.Name == se {
					ev = append(ev, "env "+se)
				}
			}
		}
		if len(ev) > len(v.Evidence) {
			v = Verdict{DatabaseLike: true, Server: s, Evidence: ev}
		}
	}
	return v
}

func matchImage(s *Server, base string, tokens []string) bool {
	for _, n := range s.ImageNames {
		if base == n {
			return true
		}
	}
	for _, t := range tokens {
		for _, it := range s.ImageTokens {
			if strings.HasPrefix(t, it) {
				return true
			}
		}
	}
	return false
}

// imageRepository strips the registry host, tag and digest:
// "docker.io/goharbor/harbor-db:v2.13.0" -> "goharbor/harbor-db".
func imageRepository(image string) string {
	if i := strings.IndexByte(image, '@'); i >= 0 {
		image = image[:i]
	}
	if i := strings.LastIndexByte(image, ':'); i >= 0 && !strings.Contains(image[i:], "/") {
		image = image[:i]
	}
	if i := strings.IndexByte(image, '/'); i >= 0 {
		host := image[:i]
		if strings.ContainsAny(host, ".:") || host == "localhost" {
			image = image[i+1:]
		}
	}
	return strings.TrimPrefix(image, "library/")
}

func itoa(n int32) string {
	if n == 0 {
		return "0"
	}
	var b [12]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}
