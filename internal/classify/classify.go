// Package classify decides what a container is: a database-like server
// (by image, port or environment), and whether a probe needs that server to
// answer a query. Every verdict carries its evidence, because a finding
// built on a classification must say what it saw.
//
// The tables below are the whole policy; extend them, not the code.
package classify

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Server is one kind of stateful server.
type Server struct {
	Name string // "PostgreSQL"
	// ImageTokens match a token of the image's repository basename
	// ("bitnami/postgresql" has the token "postgresql"). A token matches
	// an entry when it equals it, or adds only a server-ish suffix
	// ("postgres" + "ql", "mongo" + "db", "redis" + "7"): "redisinsight",
	// "postgrest" and "mongoose" are other programs. An entry with a dash
	// ("nats-streaming") matches that run of tokens.
	ImageTokens []string
	// ImageNames match the whole repository basename ("harbor-db").
	ImageNames []string
	// Ports are telling on their own: a container that listens on 5432 is
	// a PostgreSQL server unless its image or its command says otherwise
	// (a command that execs another program outweighs the port).
	Ports []int32
	// ImagePorts count only when the image matched too: 9000 is MinIO's
	// and ClickHouse's, but also php-fpm's.
	ImagePorts []int32
	// Env are variables only the server itself reads (PGDATA).
	Env []string
	// ClientEnv are variables that clients set as well (an application
	// that connects with POSTGRES_PASSWORD): they add evidence to a
	// verdict but never make one.
	ClientEnv []string
	// QueryCommands are commands whose success needs the server to accept
	// a connection or answer a query. An entry of several words
	// ("cockroach sql") needs those subcommands, flags aside.
	QueryCommands []string
	// QueryHTTPPorts are ports of the server's own HTTP query API.
	QueryHTTPPorts []int32
	// Recovery is how the server answers while it recovers after a crash.
	Recovery string
	// Interrupted is what the server logs when a kill cuts its recovery
	// short, when that is known.
	Interrupted string
	// Refuses completes "the probe needs <server> ..." in a finding, in
	// the server's own terms; "" for the generic "to answer a query, which
	// it refuses during crash recovery".
	Refuses string
	// ListensDuringRecovery: the server accepts TCP connections while it
	// recovers (and answers them with an error), so a tcpSocket probe
	// passes. PortClosedDuringRecovery: it opens its port only once
	// recovery is over, so a tcpSocket probe fails too. Neither: not known.
	ListensDuringRecovery, PortClosedDuringRecovery bool
	// NoCrashRecovery: the server has no recovery phase after a crash (its
	// files are consistent on disk), so no probe fails because of one. It
	// stays database-like for the resource rules.
	NoCrashRecovery bool
	// EnsembleEnv lists variables that name the servers of its ensemble
	// (ZOO_SERVERS). When set, what it does during recovery depends on
	// the ensemble (see Members): a server that runs alone listens and
	// answers ruok, a quorum member has its port bound but answers nothing.
	EnsembleEnv []string
	// BoundButSilent: while it recovers, its port is bound and listening
	// (the kernel completes a connection, so a tcpSocket probe passes)
	// but nothing accepts or answers a connection: every exec probe that
	// waits for an answer fails.
	BoundButSilent bool
	// ComponentArg selects which of the server's components a container
	// runs (Loki's -target=querier). Only DataComponents hold data and
	// replay a log; DefaultComponent runs when the argument is absent.
	ComponentArg     string
	DefaultComponent string
	DataComponents   []string
	// ListensAfterLoading lists the major versions (from the image tag)
	// that open their port only once their data is loaded: in those, every
	// probe that connects fails while it loads, tcpSocket and HTTP
	// liveness endpoints such as /ping included. LoadingRecovery then
	// replaces Recovery.
	ListensAfterLoading []int
	LoadingRecovery     string
	// WALOnVolume: the log it replays survives a kill only on a volume.
	// Without a writable volume mount the restarted container starts
	// empty and has nothing to replay.
	WALOnVolume bool
}

// Servers is the classification table.
var Servers = []Server{
	{Name: "PostgreSQL", ImageTokens: []string{"postgres", "postgis", "timescaledb", "spilo", "patroni"}, ImageNames: []string{"harbor-db"},
		Ports: []int32{5432}, Env: []string{"PGDATA", "POSTGRES_INITDB_ARGS", "POSTGRES_HOST_AUTH_METHOD"},
		ClientEnv:     []string{"POSTGRES_PASSWORD", "POSTGRESQL_PASSWORD", "POSTGRES_USER", "POSTGRES_DB"},
		QueryCommands: []string{"psql", "pg_isready"},
		// RecoveryAnswer picks the 57P03 text by version (recovery.go).
		Recovery:    `refuses connections with SQLSTATE 57P03 (pg_isready exits 1)`,
		Interrupted: `"database system was interrupted while in recovery"`,
		// The postmaster listens at once and answers 57P03.
		ListensDuringRecovery: true},
	{Name: "MySQL", ImageTokens: []string{"mysql", "mariadb"}, ImageNames: []string{"percona", "percona-server", "percona-xtradb-cluster"},
		Ports: []int32{3306}, Env: []string{"MYSQL_ROOT_PASSWORD", "MARIADB_ROOT_PASSWORD", "MYSQL_ALLOW_EMPTY_PASSWORD", "MARIADB_ALLOW_EMPTY_ROOT_PASSWORD", "MYSQL_RANDOM_ROOT_PASSWORD"},
		ClientEnv:     []string{"MYSQL_PASSWORD", "MYSQL_USER", "MYSQL_DATABASE"},
		QueryCommands: []string{"mysql", "mysqladmin", "mariadb-admin", "mariadb"},
		Recovery:      "does not open its port until InnoDB crash recovery has finished",
		// mysqld applies the redo log before it listens.
		PortClosedDuringRecovery: true},
	{Name: "MongoDB", ImageTokens: []string{"mongo"}, ImageNames: []string{"percona-server-mongodb"},
		Ports: []int32{27017}, Env: []string{"MONGO_INITDB_ROOT_USERNAME"},
		QueryCommands: []string{"mongo", "mongosh"},
		Recovery:      "does not open its port until WiredTiger and oplog recovery have finished",
		// mongod recovers the storage engine before it listens.
		PortClosedDuringRecovery: true},
	{Name: "Redis", ImageTokens: []string{"redis", "valkey", "keydb"},
		Ports:         []int32{6379},
		QueryCommands: []string{"redis-cli", "valkey-cli", "keydb-cli"},
		Refuses:       "to answer PONG, which it does not (it answers -LOADING) while it loads its dataset after a crash",
		Recovery:      "answers PING and most other commands with -LOADING while it loads the dataset from disk",
		// It listens before loading, to answer LOADING.
		ListensDuringRecovery: true},
	{Name: "etcd", ImageTokens: []string{"etcd"},
		Ports: []int32{2379}, Env: []string{"ETCD_DATA_DIR"},
		QueryCommands: []string{"etcdctl"}, QueryHTTPPorts: []int32{2379},
		Recovery: "accepts connections on its client port but answers nothing until it has loaded its snapshot and replayed its WAL",
		Refuses:  "to answer, which it does not (the connection opens, no reply comes) until it has loaded its snapshot and replayed its WAL",
		// The client listeners are bound before the server bootstraps.
		ListensDuringRecovery: true},
	{Name: "Elasticsearch", ImageTokens: []string{"elasticsearch", "opensearch"},
		Ports: []int32{9200}, QueryHTTPPorts: []int32{9200},
		Recovery: "reports red or unavailable while shards recover"},
	{Name: "Cassandra", ImageTokens: []string{"cassandra", "scylla"},
		Ports: []int32{9042}, QueryCommands: []string{"cqlsh", "nodetool"},
		Recovery: "does not open its CQL port until commit-log replay has finished",
		// The native transport starts after the commit log is replayed.
		PortClosedDuringRecovery: true},
	{Name: "ZooKeeper", ImageTokens: []string{"zookeeper"}, Ports: []int32{2181},
		Recovery: "does not serve until it has loaded its snapshot and log",
		// Standalone: listens and answers, then loads; a quorum member:
		// binds its port, loads, then answers (see Members).
		EnsembleEnv: []string{"ZOO_SERVERS"}},
	{Name: "Kafka", ImageTokens: []string{"kafka"}, Ports: []int32{9092},
		Recovery: "does not serve until log recovery has finished"},
	// Before ClickHouse: its image names it too.
	{Name: "ClickHouse Keeper", ImageTokens: []string{"clickhouse-keeper"}, ImagePorts: []int32{9181},
		Recovery: "does not serve until it has loaded its snapshot and replayed its Raft log"},
	{Name: "ClickHouse", ImageTokens: []string{"clickhouse"}, ImagePorts: []int32{9000, 8123},
		QueryCommands:  []string{"clickhouse-client", "clickhouse client"},
		QueryHTTPPorts: []int32{8123},
		Recovery:       "does not accept queries until tables are loaded",
		// 18.x: Server::main loads every table's parts before it creates
		// the HTTP and TCP servers (measured by the server lab). Later
		// versions can load tables after they listen
		// (async_load_databases): not known.
		ListensAfterLoading: []int{18},
		LoadingRecovery:     "opens its ports (TCP 9000, HTTP 8123 and its /ping) only once it has loaded every table's parts (ClickHouse 18.x)"},
	{Name: "CockroachDB", ImageTokens: []string{"cockroach"}, Ports: []int32{26257},
		QueryCommands: []string{"cockroach sql", "cockroach node status"},
		Recovery:      "does not accept SQL until the node has rejoined"},
	// 8086 up to InfluxDB 2, 8181 from InfluxDB 3.
	{Name: "InfluxDB", ImageTokens: []string{"influxdb"}, ImagePorts: []int32{8086, 8181}, QueryHTTPPorts: []int32{8086},
		QueryCommands: []string{"influx"},
		Recovery:      "does not answer queries until the WAL is loaded",
		// 1.x: Server.Open opens the TSDB store (every shard) before the
		// httpd service binds its listener.
		ListensAfterLoading: []int{1},
		LoadingRecovery:     "opens its HTTP port (and /ping) only once it has loaded every shard and its WAL (InfluxDB 1.x)"},
	{Name: "Neo4j", ImageTokens: []string{"neo4j"}, ImagePorts: []int32{7687},
		Recovery: "does not accept Bolt connections during recovery"},
	{Name: "CouchDB", ImageTokens: []string{"couchdb"}, ImagePorts: []int32{5984}, QueryHTTPPorts: []int32{5984},
		Recovery: "has no crash-recovery phase: it never overwrites committed data, so its files need no check or repair after a crash",
		// Crash-only, append-only B-trees: it serves as soon as it starts.
		NoCrashRecovery: true},
	{Name: "RabbitMQ", ImageTokens: []string{"rabbitmq"}, ImagePorts: []int32{5672},
		QueryCommands: []string{"rabbitmq-diagnostics check_running", "rabbitmqctl node_health_check"},
		Recovery:      "does not accept connections until queues are recovered",
		// The boot step that starts the AMQP listener comes after the
		// queue recovery (see Recoveries); measured by the server lab.
		PortClosedDuringRecovery: true},
	{Name: "NATS Streaming", ImageTokens: []string{"nats-streaming"},
		Recovery: "does not serve until the store is recovered"},
	{Name: "MinIO", ImageTokens: []string{"minio"}, ImagePorts: []int32{9000},
		Recovery: "does not serve until drives are healed"},
	// Log-replaying servers outside the classic databases: each opens its
	// HTTP port at once and answers 503 on its readiness path until the
	// replay is over (recovery.go).
	{Name: "Prometheus", ImageNames: []string{"prometheus"}, ImagePorts: []int32{9090}, QueryHTTPPorts: []int32{9090},
		Recovery:              "answers 503 on /-/ready and on its query API until it has replayed its write-ahead log",
		Refuses:               "to be ready, which it is not (503 on /-/ready) until it has replayed its write-ahead log",
		ListensDuringRecovery: true, WALOnVolume: true},
	{Name: "Loki", ImageNames: []string{"loki", "grafana-loki"}, ImagePorts: []int32{3100},
		ComponentArg: "-target", DefaultComponent: "all", DataComponents: []string{"all", "ingester", "write"},
		Recovery:              "answers 503 on /ready until its ingester has replayed its write-ahead log",
		Refuses:               "to be ready, which it is not (503 on /ready) until its ingester has replayed its write-ahead log",
		ListensDuringRecovery: true, WALOnVolume: true},
	{Name: "Mimir", ImageNames: []string{"mimir", "grafana-mimir", "cortex"}, ImagePorts: []int32{8080},
		ComponentArg: "-target", DefaultComponent: "all", DataComponents: []string{"all", "ingester", "write"},
		Recovery:              "answers 503 on /ready until its ingester has replayed the write-ahead log of every tenant's TSDB",
		Refuses:               "to be ready, which it is not (503 on /ready) until its ingester has replayed its write-ahead log",
		ListensDuringRecovery: true, WALOnVolume: true},
}

// Refusal is what a probe that fails during recovery needs and does not
// get: "to answer a query, which it refuses during crash recovery".
func (s *Server) Refusal() string {
	if s.Refuses != "" {
		return s.Refuses
	}
	return "to answer a query, which it refuses during crash recovery"
}

// serverSuffixes may follow an image token of the table: the
// "ql" of postgresql, the "db" of mongodb and scylladb, the "d" of mysqld.
// Digits may follow too ("redis7", "postgres15").
var serverSuffixes = []string{"", "ql", "sql", "db", "d", "server"}

// NotServerTokens mark images that sit beside a server without being one
// (exporters, operators, proxies, clients, admin UIs, backup jobs) and
// application servers that bundle a database driver
// ("arungupta/wildfly-mysql-javaee7" is WildFly, not MySQL). They win over
// every other piece of evidence; a version suffix ("javaee7") still matches.
var NotServerTokens = []string{
	"exporter", "operator", "proxy", "pgbouncer", "odyssey", "pgpool", "client", "cli", "backup", "ui",
	"admin", "pgadmin", "pgadmin4", "commander", "express", "metrics", "sidecar", "agent", "controller",
	"migrate", "migration", "migrations", "migrator", "tools", "dashboard", "insight", "connect",
	"nginx", "haproxy", "envoy", "traefik", "router", "curator", "redisinsight", "postgrest",
	"wildfly", "jboss", "tomcat", "tomee", "javaee", "jakartaee", "glassfish", "payara", "jetty",
	"weblogic", "websphere", "sentinel", "reloader", "adapter", "injector", "k8s", "csi",
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

// HelmTestHooks are the helm.sh/hook values of a Pod that `helm test` runs
// once ("test-success" is the Helm 2 name).
var HelmTestHooks = []string{"test", "test-success", "test-failure"}

// RunsOnce says why the pods of a workload run once and exit, or "" when
// they serve: Jobs and CronJobs, Helm test Pods, and Pods that never
// restart (restartPolicy Never or OnFailure). Their containers are clients
// of a server, whatever image they use: they hold no data and recover
// nothing.
func RunsOnce(kind string, meta *metav1.ObjectMeta, spec *corev1.PodSpec) string {
	if RunsToCompletion(kind) {
		return "a " + kind + " runs to completion"
	}
	if meta != nil {
		for _, h := range strings.Split(meta.Annotations["helm.sh/hook"], ",") {
			if contains(HelmTestHooks, strings.TrimSpace(h)) {
				return "a Helm test " + kind + " (helm.sh/hook: " + strings.TrimSpace(h) + ") runs once"
			}
		}
	}
	if spec != nil && (spec.RestartPolicy == corev1.RestartPolicyNever || spec.RestartPolicy == corev1.RestartPolicyOnFailure) {
		return "a " + kind + " with restartPolicy " + string(spec.RestartPolicy) + " runs once"
	}
	return ""
}

// Container classifies c, a container of a workload of the given kind.
func Container(kind string, c *corev1.Container) Verdict {
	once := ""
	if RunsToCompletion(kind) {
		once = "a " + kind + " runs to completion"
	}
	return ContainerOf(once, c)
}

// ContainerOf classifies c; once says why its pod runs once (see RunsOnce),
// "" when it serves. It knows nothing of the pod's volumes: see ContainerIn.
func ContainerOf(once string, c *corev1.Container) Verdict { return ContainerIn(once, c, Pod{}) }

// ContainerIn classifies c, a container of pod: the server it runs (by
// image, port or environment), unless it runs one of the server family's
// companions (a router, a pooler, a console: see Companions), a component
// that holds no data, or a cache that persists nothing.
func ContainerIn(once string, c *corev1.Container, pod Pod) Verdict {
	repo := imageRepository(c.Image)
	base := path.Base(repo)
	tokens := splitTokens(base)
	for _, t := range tokens {
		t = trimDigits(t)
		for _, n := range NotServerTokens {
			if t == n {
				return Verdict{NotBecause: "image " + repo + ` has the token "` + n + `": it runs beside a server, it is not one`}
			}
		}
	}
	if once != "" {
		return Verdict{NotBecause: once + ": its containers are not servers"}
	}
	var v Verdict
	outweighed := ""
	main := mainProgram(c)
	first := firstBytes(tokens)
	named := rowsNamedBy(c)
	for i := range Servers {
		s := &Servers[i]
		image := matchImage(i, base, tokens, first)
		if !image && !named.has(i) {
			continue // nothing strong names s: the evidence below would not be
		}
		var ev []string
		if image {
			ev = append(ev, "image "+repo)
		}
		strong, byPort := image, int32(0)
		for _, p := range c.Ports {
			if containsPort(s.Ports, p.ContainerPort) {
				ev, strong = append(ev, "port "+itoa(p.ContainerPort)), true
				if byPort == 0 {
					byPort = p.ContainerPort
				}
			} else if image && containsPort(s.ImagePorts, p.ContainerPort) {
				ev = append(ev, "port "+itoa(p.ContainerPort))
			}
		}
		var client []string
		byEnv := false
		for _, e := range c.Env {
			switch {
			case contains(s.Env, e.Name):
				ev, strong, byEnv = append(ev, "env "+e.Name), true, true
			case contains(s.ClientEnv, e.Name):
				client = append(client, "env "+e.Name)
			}
		}
		if !strong {
			continue
		}
		// A port is weak evidence: other servers speak the protocol
		// too (YugabyteDB's tserver answers Redis commands on 6379).
		// When only the port names s and the command runs another
		// program, the command wins.
		if !image && !byEnv && main != "" && !runsServer(s, main) {
			if outweighed == "" {
				outweighed = fmt.Sprintf("container %s listens on %d, %s's port, but runs %s, which is not %s: a port alone does not outweigh the command", c.Name, byPort, s.Name, main, s.Name)
			}
			continue
		}
		ev = append(ev, client...)
		if len(ev) > len(v.Evidence) {
			v = Verdict{DatabaseLike: true, Server: s, Evidence: ev}
		}
	}
	if v.Server == nil {
		if outweighed != "" {
			if cp, how := companion(c, nil, tokens); cp != nil {
				return Verdict{NotBecause: fmt.Sprintf("container %s runs %s (%s), %s's %s, which %s", c.Name, cp.Name, how, cp.Server, cp.Role, cp.What)}
			}
			return Verdict{NotBecause: outweighed}
		}
		return v
	}
	s := v.Server
	if cp, how := companion(c, s, tokens); cp != nil {
		return Verdict{NotBecause: fmt.Sprintf("container %s runs %s (%s), %s's %s, which %s", c.Name, cp.Name, how, cp.Server, cp.Role, cp.What)}
	}
	if s.Name == "Redis" {
		if why := cacheOnly(c); why != "" {
			return Verdict{NotBecause: fmt.Sprintf("container %s runs Redis as a cache: %s, so it writes nothing to disk and a restart loses a cache, not data", c.Name, why)}
		}
	}
	if comp := componentOf(c, s); comp != "" && !contains(s.DataComponents, comp) {
		return Verdict{NotBecause: fmt.Sprintf("container %s runs %s's %s component (%s=%s), which holds no data and replays no log", c.Name, s.Name, comp, s.ComponentArg, comp)}
	}
	if slices.Contains(s.ListensAfterLoading, imageMajor(c.Image)) {
		cp := *s
		cp.PortClosedDuringRecovery, cp.ListensDuringRecovery = true, false
		cp.Recovery = s.LoadingRecovery
		v.Server = &cp
		s = v.Server
	}
	if s.WALOnVolume && pod.Spec != nil && len(pod.WritableMounts(c)) == 0 {
		cp := *s
		cp.NoCrashRecovery = true
		cp.Recovery = "keeps its write-ahead log in the container's own filesystem, which a restart discards: it starts empty and has nothing to replay"
		v.Server = &cp
	}
	return v
}

// componentOf returns the component c runs of a server with components
// (the value of -target, or the default), "" for other servers.
func componentOf(c *corev1.Container, s *Server) string {
	if s.ComponentArg == "" {
		return ""
	}
	arg := strings.TrimLeft(s.ComponentArg, "-")
	words := commandWords(c)
	for i, w := range words {
		w = strings.TrimLeft(w, "-")
		if val, ok := strings.CutPrefix(w, arg+"="); ok {
			return componentIn(val, s)
		}
		if w == arg && i+1 < len(words) {
			return componentIn(words[i+1], s)
		}
	}
	return s.DefaultComponent
}

// componentIn picks, of a comma-separated -target list, a component that
// holds data if one does, else the first.
func componentIn(list string, s *Server) string {
	parts := strings.Split(strings.Trim(list, `"'`), ",")
	for _, p := range parts {
		if contains(s.DataComponents, strings.TrimSpace(p)) {
			return strings.TrimSpace(p)
		}
	}
	return strings.TrimSpace(parts[0])
}

// ServerPort is the port a tcpSocket probe of the server should open: the
// container's own port of the server's table entry, else the server's
// well-known port. The string says which ("its containerPort postgresql",
// "PostgreSQL's well-known port; the container declares none"); 0 when
// there is none.
func ServerPort(c *corev1.Container, v Verdict) (int32, string) {
	if v.Server == nil {
		return 0, ""
	}
	for _, p := range c.Ports {
		if p.Protocol != "" && p.Protocol != corev1.ProtocolTCP {
			continue
		}
		if containsPort(v.Server.Ports, p.ContainerPort) || containsPort(v.Server.ImagePorts, p.ContainerPort) {
			if p.Name != "" {
				return p.ContainerPort, "its containerPort " + p.Name
			}
			return p.ContainerPort, "its containerPort"
		}
	}
	known := append(append([]int32{}, v.Server.Ports...), v.Server.ImagePorts...)
	if len(known) == 0 {
		return 0, ""
	}
	return known[0], v.Server.Name + "'s well-known port; the container declares none"
}

func splitTokens(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == '-' || r == '_' || r == '.' })
}

// trimDigits is t without its trailing digits ("pgbouncer2" is a
// pgbouncer).
func trimDigits(t string) string {
	for len(t) > 0 && '0' <= t[len(t)-1] && t[len(t)-1] <= '9' {
		t = t[:len(t)-1]
	}
	return t
}

// matchImage says whether the image whose repository's base is base
// (split into tokens, whose first bytes are first) names the row i of
// Servers.
func matchImage(i int, base string, tokens []string, first byteSet) bool {
	s := &Servers[i]
	for _, n := range s.ImageNames {
		if base == n {
			return true
		}
	}
	rows := serverRows()
	if !rows.imageFirst[i].meets(first) && !rows.emptyRun[i] {
		return false // every run starts with a token that begins with one of the row's bytes
	}
	for _, want := range rows.imageTokens[i] {
		for j := 0; j+len(want) <= len(tokens); j++ {
			if matchRun(tokens[j:j+len(want)], want) {
				return true
			}
		}
	}
	return false
}

// matchRun compares a run of image tokens with an entry's tokens; only the
// last token of the entry may carry a server suffix.
func matchRun(got, want []string) bool {
	for i, w := range want {
		if i < len(want)-1 {
			if got[i] != w {
				return false
			}
			continue
		}
		if !strings.HasPrefix(got[i], w) {
			return false
		}
		rest := trimDigits(got[i][len(w):])
		if !contains(serverSuffixes, rest) {
			return false
		}
	}
	return true
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

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func containsPort(list []int32, p int32) bool {
	for _, x := range list {
		if x == p {
			return true
		}
	}
	return false
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }
