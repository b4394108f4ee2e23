package classify

import (
	"fmt"
	"strconv"
	"strings"
)

// This file is the server-behaviour table: what each server does while it
// recovers from a crash, what its users see, and what its clients (the
// commands that probes run) do meanwhile. Every row names the place in the
// server's own source it was checked against; a row without a source is an
// assumption and is rendered as one (docs/servers.md is generated from it:
// go test ./internal/classify -update).

// Message is a text users of a server see while it recovers.
type Message struct {
	When string // "PostgreSQL 15 and later, after the container restarts"
	Text string // `FATAL: the database system is not yet accepting connections`
	// Source is where the text itself was read, when it was; the
	// server's Source says where its behaviour was.
	Source string
	// Lab is what the server lab's record of the server shows where it
	// ran the server: every sign must be in the record, or the lab
	// contradicts the row (see LabContradictions).
	Lab []LabSign
	// Member: the row is about a member of a quorum, which the lab
	// measures as a member of an ensemble, not alone.
	Member bool
}

// LabSign is a sample or a log line of the server lab's record that a
// message of the table stands for.
type LabSign struct {
	// Probe is a word of the probe's command line ("psql",
	// "check_running") or "tcpSocket"; "" for the server's log.
	Probe string
	// Exit is the probe's exit code in that sample; LabTimedOut when it
	// outlasted its timeout. Not read for the log.
	Exit int
	// Says is what the sample's output or the log line holds, in words
	// of the message's Text ("" for a sample without output).
	Says string
}

// LabTimedOut is the exit code the lab records for a probe that
// outlasted its timeout.
const LabTimedOut = -1

// RecoveryBehaviour is how a server recovers, for the table and the docs.
type RecoveryBehaviour struct {
	Server   string // the entry of Servers it belongs to
	Messages []Message
	// Source is where the behaviour was checked: repository, file, function.
	Source string
}

// Recoveries are the servers whose behaviour during crash recovery was
// checked in their own source. Servers without a row are assumed not to
// serve queries while they recover; whether they listen is not known.
var Recoveries = []RecoveryBehaviour{
	{Server: "PostgreSQL",
		Messages: []Message{
			{When: "PostgreSQL 15 and later, after the container restarts (crash recovery of a fresh postmaster)",
				Text:   `FATAL: the database system is not yet accepting connections (SQLSTATE 57P03; DETAIL: Consistent recovery state has not been yet reached.)`,
				Source: "postgres: src/backend/tcop/backend_startup.c `BackendInitialize` (postmaster.c before 17)",
				Lab:    []LabSign{{Probe: "psql", Exit: 2, Says: "the database system is not yet accepting connections"}}},
			{When: "PostgreSQL 14 and earlier, after the container restarts",
				Text:   `FATAL: the database system is starting up (SQLSTATE 57P03)`,
				Source: "postgres: src/backend/tcop/backend_startup.c `BackendInitialize` (postmaster.c before 17)"},
			{When: "any version, while a running postmaster restarts after one of its backends crashed (in-place crash restart)",
				Text:   `FATAL: the database system is in recovery mode (SQLSTATE 57P03)`,
				Source: "postgres: src/backend/tcop/backend_startup.c `BackendInitialize` (postmaster.c before 17)"},
			{When: "the server log, when a kill cut the previous recovery short",
				Text: `LOG: database system was interrupted while in recovery at ...`,
				Lab:  []LabSign{{Says: "database system was interrupted while in recovery at"}}},
		},
		Source: "postgres: src/backend/postmaster/postmaster.c `canAcceptConnections` (PM_STARTUP -> CAC_STARTUP, PM_RECOVERY -> CAC_NOTCONSISTENT, FatalError -> CAC_RECOVERY); " +
			"src/backend/access/transam/xlogrecovery.c `PerformWalRecovery` (15+: PMSIGNAL_RECOVERY_STARTED for crash recovery too; up to 14 xlog.c `StartupXLOG` sends it only for archive recovery); " +
			"src/backend/tcop/backend_startup.c `BackendInitialize` (the texts; postmaster.c before 17)"},
	{Server: "MySQL",
		Messages: []Message{
			{When: "MySQL's clients and tcpSocket probes, until InnoDB has applied its redo log", Text: `ERROR 2003 (HY000): Can't connect to MySQL server on '127.0.0.1:3306' (111) / connection refused`},
			// Measured by the server lab (mariadb-server 10.11): the client
			// connects without blocking, so the refusal comes back as
			// error 115 (EINPROGRESS), not 111 (ECONNREFUSED).
			{When: "MariaDB's clients (mariadb, mariadb-admin, mysqladmin of MariaDB 10.11), until InnoDB has applied its redo log", Text: `ERROR 2002 (HY000): Can't connect to server on '127.0.0.1' (115)`,
				Lab: []LabSign{{Probe: "mariadb", Exit: 1, Says: "ERROR 2002 (HY000): Can't connect to server on '127.0.0.1' (115)"}}},
			// MariaDB 10.11 goes on: "from checkpoint LSN=...".
			{When: "the server log", Text: `InnoDB: Starting crash recovery`,
				Lab: []LabSign{{Says: "InnoDB: Starting crash recovery"}}},
		},
		Source: "mysql-server: sql/mysqld.cc `mysqld_main` (`init_server_components()`, which starts InnoDB and applies the redo log, runs before `network_init()` opens the port; rollback of unfinished transactions continues in the background); MariaDB server: sql/mysqld.cc `mysqld_main`, same order"},
	{Server: "MongoDB",
		Messages: []Message{
			{When: "clients and tcpSocket probes, until storage-engine and oplog recovery end", Text: `MongoNetworkError: connect ECONNREFUSED 127.0.0.1:27017`},
			{When: "the server log, once it listens", Text: `Waiting for connections`},
		},
		Source: "mongo: src/mongo/db/mongod_main.cpp `_initAndListen` (storage engine startup, `repairAndRecoverDatabases`, replication startup and `recoverFromOplog` before the transport layer's `start()`)"},
	{Server: "Cassandra",
		Messages: []Message{
			{When: "CQL clients and tcpSocket probes on 9042, until commit-log replay and gossip settling end", Text: `Connection error: ('Unable to connect to any servers', {'127.0.0.1:9042': ConnectionRefusedError(111, ...)})`},
			{When: "nodetool, over JMX, which opens before the replay", Text: `answers; "nodetool info" shows "Native Transport active: false" until the CQL port opens`},
		},
		Source: "cassandra: src/java/org/apache/cassandra/service/CassandraDaemon.java `setup` (`maybeInitJmx` ... `CommitLog.recoverSegmentsOnDisk` ... `initializeClientTransports`); scylla: main.cc replays the commit log before it starts CQL"},
	{Server: "Redis",
		Messages: []Message{
			{When: "every command without the loading flag (PING, GET, SET...), while the dataset loads", Text: `-LOADING Redis is loading the dataset in memory`,
				Lab: []LabSign{{Probe: "redis-cli", Exit: 0, Says: "LOADING Redis is loading the dataset in memory"}}},
		},
		Source: "redis: src/server.c `main` (`initListeners()` before `loadDataFromDisk()`), `processCommand` (commands without CMD_LOADING get shared.loadingerr); Valkey and KeyDB keep that code"},
	{Server: "ZooKeeper",
		Messages: []Message{
			{When: "a standalone server (one server), while it loads its snapshot and log", Text: `ruok is answered imok; other requests: "This ZooKeeper instance is not currently serving requests"`,
				Lab: []LabSign{{Probe: "ruok", Exit: 0, Says: "imok"}, {Probe: "srvr", Exit: 0, Says: "This ZooKeeper instance is not currently serving requests"}}},
			{When: "clients of a quorum member, until it has loaded its snapshot and log", Text: `no answer: the connection opens (the client port is bound), nothing accepts it; nc waits until its timeout`,
				Lab: []LabSign{{Probe: "tcpSocket", Exit: 0}, {Probe: "nc", Exit: LabTimedOut}}, Member: true},
		},
		Source: "zookeeper: zookeeper-server/src/main/java/org/apache/zookeeper/server/NIOServerCnxnFactory.java `startup` (`start()` opens the port, then `zks.startdata()` loads the data); command/RuokCommand.java `commandRun` (prints imok whatever the server's state); quorum/QuorumPeerMain.java `runFromConfig` (`cnxnFactory.configure`, whose NIOServerCnxnFactory `configure` binds the socket, before `quorumPeer.start()`); quorum/QuorumPeer.java `start` (`loadDataBase()` before `startServerCnxnFactory()`, which starts the accept thread)"},
	{Server: "CouchDB",
		Messages: []Message{
			{When: "clients, after a crash and restart", Text: `answers as soon as it listens: there is no recovery phase; a partly written update is simply not in the file's last committed header`},
		},
		Source: "CouchDB documentation, Technical Overview, \"ACID Properties\" (docs.couchdb.org/en/stable/intro/overview.html): it never overwrites committed data, a crash-only design that needs no check or repair after a crash apart from the header"},
	{Server: "etcd",
		Messages: []Message{
			// The connection opens and nothing answers: etcdctl gives up at
			// its --command-timeout (5 s by default), a probe's own
			// timeout may end it first.
			{When: "etcdctl endpoint health, while it loads its snapshot and replays its WAL", Text: `http://127.0.0.1:2379 is unhealthy: failed to commit proposal: context deadline exceeded`,
				Lab: []LabSign{{Probe: "tcpSocket", Exit: 0}, {Probe: "etcdctl", Exit: 1, Says: "is unhealthy: failed to commit proposal: context deadline exceeded"}}},
			{When: "other etcdctl commands (get, put...), meanwhile", Text: `Error: context deadline exceeded`},
			{When: "HTTP clients of the client port (curl http://127.0.0.1:2379/health), meanwhile", Text: `no answer: the connection opens, nothing answers until the client's own timeout`,
				Lab: []LabSign{{Probe: "curl", Exit: LabTimedOut}}},
			{When: "etcd 3.4, the server log, once the replay is over and it serves", Text: `embed: ready to serve client requests`,
				Lab: []LabSign{{Says: "embed: ready to serve client requests"}}},
			{When: "etcd 3.6, the server log, once the replay is over", Text: `"msg":"bootstrap successfully"`,
				Source: "etcd: server/etcdserver/server.go `NewServer` (logs it once `bootstrap` has returned)"},
		},
		Source: "etcd: server/embed/etcd.go `StartEtcd` (`configureClientListeners` binds the client port, then `etcdserver.NewServer`, then `serveClients`); server/etcdserver/bootstrap.go `bootstrap` (`bootstrapWALFromSnapshot`: `openWALFromSnapshot` reads the whole WAL)"},
	{Server: "InfluxDB",
		Messages: []Message{
			{When: "InfluxDB 1.x: clients, tcpSocket probes and GET /ping on 8086, until every shard is loaded", Text: `connect: connection refused (the HTTP listener is not bound yet); the log shows "Opened shard" and "Listening on HTTP" lines`,
				// Their order is not claimed: the lab's record of 1.6 has the
				// first "Opened shard" after "Listening on HTTP", though the
				// port stayed closed until the load was over; not explained.
				Lab: []LabSign{{Probe: "tcpSocket", Exit: 1, Says: "connect: connection refused"}, {Says: "Opened shard"}, {Says: "Listening on HTTP"}}},
			{When: "InfluxDB 1.x: the influx CLI, meanwhile", Text: `Failed to connect to http://127.0.0.1:8086: Get "http://127.0.0.1:8086/ping": dial tcp 127.0.0.1:8086: connect: connection refused`,
				Source: "influxdb 1.x: cmd/influx/cli/cli.go `Run`",
				Lab:    []LabSign{{Probe: "influx", Exit: 1, Says: "Failed to connect to http://127.0.0.1:8086"}}},
		},
		Source: "influxdb 1.x: cmd/influxd/run/server.go `Server.Open` (`s.TSDBStore.Open()`, which opens every shard and replays its WAL, returns before `service.Open()` runs for `s.Services`, where `appendHTTPDService` put the httpd service); services/httpd/service.go `Service.Open` (`net.Listen` of the HTTP bind address); tsdb/store.go `Store.Open` (`loadShards`)"},
	{Server: "ClickHouse",
		Messages: []Message{
			{When: "ClickHouse 18.x: clickhouse-client, tcpSocket probes on 9000 and GET /ping on 8123, until every table's parts are loaded", Text: `Code: 210. DB::NetException: Connection refused (127.0.0.1:9000)`,
				Lab: []LabSign{{Probe: "clickhouse-client", Exit: 210, Says: "Code: 210. DB::NetException: Connection refused"}, {Probe: "tcpSocket", Exit: 1}, {Probe: "curl", Exit: 7}}},
		},
		Source: "clickhouse 18.x: dbms/programs/server/Server.cpp `Server::main` (`loadMetadata`, which loads every table and its parts, before the loop over listen_host that creates the HTTP and TCP servers)"},
	{Server: "Prometheus",
		Messages: []Message{
			{When: "GET /-/ready and the query API, while the TSDB opens and replays its write-ahead log", Text: `503 Service Unavailable`,
				Lab: []LabSign{{Probe: "curl", Exit: 22, Says: "503"}}},
			{When: "GET /-/healthy, meanwhile", Text: `200 Prometheus Server is Healthy.`,
				Lab: []LabSign{{Probe: "curl", Exit: 0, Says: "Prometheus Server is Healthy."}}},
			{When: "the server log", Text: `msg="Replaying WAL, this may take a while"`,
				Source: "prometheus: tsdb/head.go `Init` (logs it before it replays the WAL)",
				Lab:    []LabSign{{Says: "Replaying WAL, this may take a while"}}},
		},
		Source: "prometheus: cmd/prometheus/main.go (the web handler runs from the start; `webHandler.SetReady(web.Ready)` only once `dbOpen` is closed, after `tsdb.Open`); web/web.go `testReady` (503 while NotReady), `/-/healthy` (always 200); tsdb/head.go `Init` (replays the WAL)"},
	{Server: "Loki",
		Messages: []Message{
			{When: "GET /ready, while the ingester replays its write-ahead log", Text: `503 Some services are not Running: Starting: 1`},
			{When: "the server log", Text: `msg="recovering from WAL"`,
				Source: "loki: pkg/ingester/ingester.go `starting` (logs it once the checkpoint is recovered, before the WAL segments)"},
		},
		Source: "loki: pkg/loki/loki.go `readyHandler` (503 while the services manager is not healthy); the Server module is a dependency of Ingester, so the HTTP listener runs first; pkg/ingester/ingester.go `starting` (RecoverCheckpoint, then the WAL segments, when WAL.Enabled) and `CheckReady` (not ready until Running)"},
	{Server: "Mimir",
		Messages: []Message{
			{When: "GET /ready, while the ingester opens its TSDBs", Text: `503 Some services are not Running: ingester: Starting`},
		},
		Source: "mimir: pkg/mimir/mimir.go `Run` (registers /ready before the services start) and `readyHandler` (503 while the services manager is not healthy, then Ingester.CheckReady); pkg/ingester/ingester.go `starting` (`openExistingTSDB`, which replays each tenant's WAL)"},
	{Server: "RabbitMQ",
		Messages: []Message{
			{When: "AMQP clients and tcpSocket probes of 5672, until the boot has recovered the queues", Text: `connect: connection refused`,
				Lab: []LabSign{{Probe: "tcpSocket", Exit: 1, Says: "connect: connection refused"}}},
			{When: "rabbitmq-diagnostics check_running, meanwhile (ping, which asks the Erlang node, passes)", Text: `Error: ... (exit 69)`,
				Lab: []LabSign{{Probe: "check_running", Exit: 69, Says: "Error:"}}},
		},
		Source: "rabbitmq-server: deps/rabbit/src/rabbit.erl, the boot steps (`recovery`, \"exchange, queue and binding recovery\", enables `routing_ready`; `networking`, `rabbit_networking:boot`, which starts the AMQP listener, runs only after `routing_ready`)"},
}

// Verdict of a client command while the server recovers.
const (
	Fails   = "fails"
	Passes  = "passes"
	Depends = "depends"
	Assumed = "assumed to fail"
)

// Command is a client that probes run, and what it does while its server
// recovers.
type Command struct {
	Name   string // "redis-cli"; several words need those subcommands
	Server string
	// What it needs from the server, for a finding's evidence.
	What string
	// During is what it does while the server recovers.
	During string
	// Verdict: Fails, Passes, Depends (on its flags and how its output is
	// read: see Probe) or Assumed (not checked in the source).
	Verdict string
	Source  string
}

// Commands are the clients the probe reading knows. Their Names are the
// QueryCommands of the server table.
var Commands = []Command{
	{Name: "psql", Server: "PostgreSQL", What: "logs in and runs a query", Verdict: Fails,
		During: "exits 2 with the 57P03 message", Source: "postgres: src/bin/psql/startup.c `main` (a failed connection exits EXIT_BADCONN)"},
	{Name: "pg_isready", Server: "PostgreSQL", What: "exits 1 while PostgreSQL rejects connections: during startup, shutdown and crash recovery", Verdict: Fails,
		During: "exits 1 (\"rejecting connections\") on 57P03; exits 0 even on an authentication error, 2 when nothing answers",
		Source: "postgres: src/interfaces/libpq/fe-connect.c `internal_ping` (57P03 -> PQPING_REJECT); src/bin/scripts/pg_isready.c `main`"},
	{Name: "mysql", Server: "MySQL", What: "logs in and runs a query", Verdict: Fails,
		During: "cannot connect: the port is closed", Source: "mysql-server: sql/mysqld.cc `mysqld_main` (the port opens after recovery)"},
	{Name: "mariadb", Server: "MySQL", What: "logs in and runs a query", Verdict: Fails,
		During: "cannot connect: the port is closed", Source: "MariaDB server: sql/mysqld.cc `mysqld_main`"},
	{Name: "mysqladmin", Server: "MySQL", What: "connects to the server (ping does not log in: it exits 0 on any reply, even Access denied, and 1 only when nothing answers)", Verdict: Fails,
		During: "exits 1: nothing answers, the port is closed", Source: "mysql-server: client/mysqladmin.cc `main` and `execute_commands` (ping: a reply of any kind is \"alive\")"},
	{Name: "mariadb-admin", Server: "MySQL", What: "connects to the server (ping does not log in: it exits 0 on any reply, even Access denied, and 1 only when nothing answers)", Verdict: Fails,
		During: "exits 1: nothing answers, the port is closed", Source: "MariaDB server: client/mysqladmin.cc, the same code"},
	{Name: "redis-cli", Server: "Redis", What: "sends a command the server must answer", Verdict: Depends,
		During: "prints LOADING and exits 0; exits 1 on an error reply only with -e (6.2+); fails when its output is compared with PONG",
		Source: "redis: src/redis-cli.c `cliReadReply` (exit 1 on REDIS_REPLY_ERROR only when config.set_errcode, set by -e)"},
	{Name: "valkey-cli", Server: "Redis", What: "sends a command the server must answer", Verdict: Depends,
		During: "as redis-cli", Source: "valkey: src/valkey-cli.c `cliReadReply`, the same code"},
	{Name: "keydb-cli", Server: "Redis", What: "sends a command the server must answer", Verdict: Depends,
		During: "as redis-cli", Source: "keydb: src/redis-cli.c `cliReadReply`, the same code"},
	{Name: "mongo", Server: "MongoDB", What: "connects and runs a command", Verdict: Fails,
		During: "cannot connect: the port is closed", Source: "mongo: src/mongo/db/mongod_main.cpp `_initAndListen`; src/mongo/db/repl/replication_coordinator_impl.cpp `_startLoadLocalConfig` (`recoverFromOplog` runs before the networking layer accepts connections, \"which doesn't happen until startReplication finishes\"); a ping (`db.adminCommand(\"ping\")`) needs that connection"},
	{Name: "mongosh", Server: "MongoDB", What: "connects and runs a command", Verdict: Fails,
		During: "cannot connect: the port is closed", Source: "mongo: src/mongo/db/mongod_main.cpp `_initAndListen`; src/mongo/db/repl/replication_coordinator_impl.cpp `_startLoadLocalConfig` (`recoverFromOplog` runs before the networking layer accepts connections, \"which doesn't happen until startReplication finishes\"); a ping (`db.adminCommand(\"ping\")`) needs that connection"},
	{Name: "cqlsh", Server: "Cassandra", What: "logs in over CQL", Verdict: Fails,
		During: "cannot connect: the CQL port opens after the replay", Source: "cassandra: CassandraDaemon.java `setup` (`initializeClientTransports` last)"},
	{Name: "nodetool", Server: "Cassandra", What: "asks the node over JMX", Verdict: Assumed,
		During: "JMX opens before the commit-log replay, so it may answer during it; `nodetool info | grep \"Native Transport active: true\"` fails until the CQL port opens",
		Source: "cassandra: CassandraDaemon.java `setup` (`maybeInitJmx` first)"},
	{Name: "etcdctl", Server: "etcd", What: "sends a request etcd must answer", Verdict: Fails,
		During: "connects, and gets no reply until the bootstrap is over: it fails with context deadline exceeded",
		Source: "etcd: server/embed/etcd.go `StartEtcd` (clients are served only after `etcdserver.NewServer` has replayed the WAL)"},
	{Name: "clickhouse-client", Server: "ClickHouse", What: "runs a query", Verdict: Assumed,
		During: "ClickHouse 18.x: cannot connect until the tables are loaded, exit 210 (\"Code: 210. DB::NetException: Connection refused\"); later versions: not known"},
	{Name: "clickhouse client", Server: "ClickHouse", What: "runs a query", Verdict: Assumed,
		During: "as clickhouse-client"},
	{Name: "influx", Server: "InfluxDB", What: "pings the server over HTTP before it runs its query", Verdict: Fails,
		During: "InfluxDB 1.x: exits 1, \"Failed to connect to http://127.0.0.1:8086: ... connection refused\", until every shard is loaded",
		Source: "influxdb 1.x: cmd/influx/cli/cli.go `Run` (`Connect`, whose `Client.Ping` fails, returns \"Failed to connect to\" before any query runs)"},
	{Name: "cockroach sql", Server: "CockroachDB", What: "connects over SQL", Verdict: Assumed},
	{Name: "cockroach node status", Server: "CockroachDB", What: "asks the cluster for the node's status over SQL", Verdict: Assumed},
	{Name: "rabbitmq-diagnostics check_running", Server: "RabbitMQ", What: "asks the node whether the broker has booted", Verdict: Fails,
		During: "exits 69 (\"Error:\") until the broker has booted, its queues recovered included",
		Source: "rabbitmq-server: deps/rabbitmq_cli/lib/rabbitmq/cli/diagnostics/commands/check_running_command.ex and is_running_command.ex (`rabbit:is_booted`, not `is_running`, \"to avoid returning a positive result when the node is still booting\")"},
	{Name: "rabbitmqctl node_health_check", Server: "RabbitMQ", What: "runs the node's health checks, on a booted node only", Verdict: Fails,
		During: "exits 64, \"this command requires the 'rabbit' app to be running on the target node\", until the broker has booted",
		Source: "rabbitmq-server: deps/rabbitmq_cli/lib/rabbitmq/cli/ctl/commands/node_health_check_command.ex (deprecated; \"requires a fully booted node\")"},
}

// CommandNamed returns the row of a client command, or nil.
func CommandNamed(name string) *Command {
	for i := range Commands {
		if Commands[i].Name == name {
			return &Commands[i]
		}
	}
	return nil
}

// RecoveryOf returns the behaviour row of a server, or nil.
func RecoveryOf(server string) *RecoveryBehaviour {
	for i := range Recoveries {
		if Recoveries[i].Server == server {
			return &Recoveries[i]
		}
	}
	return nil
}

// RecoveryAnswer is what the server in container image answers while it
// recovers after the container restarted, in the words its users see. For
// PostgreSQL the text depends on the major version, read from the image tag
// when it has one.
func (s *Server) RecoveryAnswer(image string) string {
	if s.Name != "PostgreSQL" {
		return s.Recovery
	}
	const new = `"the database system is not yet accepting connections"`
	const old = `"the database system is starting up"`
	switch major := postgresMajor(image); {
	case major >= 15:
		return "refuses connections with SQLSTATE 57P03 " + new + fmt.Sprintf(" (PostgreSQL %d; pg_isready exits 1)", major)
	case major > 0:
		return "refuses connections with SQLSTATE 57P03 " + old + fmt.Sprintf(" (PostgreSQL %d; pg_isready exits 1)", major)
	}
	return "refuses connections with SQLSTATE 57P03 " + new + " (PostgreSQL 15 and later; " + old + " up to 14; pg_isready exits 1)"
}

// imageMajor is the major version an image's tag starts with
// (influxdb:1.11.8-alpine is 1), 0 without a numeric tag or with a number
// alone ("latest", "alpine", a date, a build).
func imageMajor(image string) int {
	n, rest := tagNumber(image)
	if !strings.HasPrefix(rest, ".") {
		return 0
	}
	return n
}

// postgresMajor reads the major version from the tag of a PostgreSQL image
// ("postgres:16.4", "bitnami/postgresql:15.6.0-debian-12-r0",
// "postgis/postgis:16-3.4"); 0 when the tag does not start with one.
func postgresMajor(image string) int {
	n, _ := tagNumber(image)
	if n < 9 || n > 40 {
		return 0 // not a PostgreSQL major (harbor-db's v2.13.0 is Harbor's version)
	}
	return n
}

// tagNumber splits the number an image's tag starts with (after an
// optional "v") from the rest of the tag; -1 when the tag starts with no
// number or the image has no tag.
func tagNumber(image string) (n int, rest string) {
	if i := strings.IndexByte(image, '@'); i >= 0 {
		image = image[:i]
	}
	i := strings.LastIndexByte(image, ':')
	if i < 0 || strings.Contains(image[i:], "/") {
		return -1, ""
	}
	tag := strings.TrimPrefix(image[i+1:], "v")
	end := 0
	for end < len(tag) && tag[end] >= '0' && tag[end] <= '9' {
		end++
	}
	n, err := strconv.Atoi(tag[:end])
	if err != nil {
		return -1, ""
	}
	return n, tag[end:]
}
