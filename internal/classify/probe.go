package classify

import (
	"backfire.dev/backfire/internal/lazyregexp"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"backfire.dev/backfire/internal/model/probe"
)

// NonQueryCommands never need the server to answer: a probe made only of
// these checks a file or a process.
var NonQueryCommands = []string{
	"true", ":", "test", "[", "[[", "cat", "pgrep", "pidof", "ls", "stat", "echo", "printf",
	"exit", "kill", "ps", "sleep", "grep", "find", "touch", "date", "false",
}

// Script is a health-check script whose behaviour is known.
type Script struct {
	Name string // basename: "docker-healthcheck.sh"
	// Image is the image basename the script ships in; "" for any.
	Image   string
	Queries bool
	What    string
}

// Scripts are the known health-check scripts. An unknown script on a
// database-like image is assumed to query (that is what they are for).
var Scripts = []Script{
	{Name: "docker-healthcheck.sh", Image: "harbor-db", Queries: true,
		What: "Harbor's health check, which runs echo 'SELECT 1' | psql"},
	{Name: "healthcheck.sh", Image: "mariadb", Queries: true,
		What: "the MariaDB image's health check, which connects to the server"},
	// bitnami/containers zookeeper .../libzookeeper.sh zookeeper_healthcheck:
	// echo ruok | nc (openssl s_client with TLS), wanting imok.
	{Name: "healthcheck.sh", Image: "zookeeper", Queries: false,
		What: "the Bitnami ZooKeeper image's health check, which sends ruok (echo ruok | nc) and wants imok, which ZooKeeper answers as soon as its client port is open"},
	// dragonflydb/dragonfly tools/docker/healthcheck.sh (the image's
	// /usr/local/bin/healthcheck.sh): _healthcheck="nc -q1 $HOST $PORT";
	// echo PING | ${_healthcheck}; exit $?: nc's status, the answer unread.
	{Name: "healthcheck.sh", Image: "dragonfly", Queries: false,
		What: "the Dragonfly image's health check (tools/docker/healthcheck.sh), which sends PING with nc and exits with nc's status: it passes as soon as the port accepts a connection, whatever the answer"},
	// bitnami/charts redis/templates/health-configmap.yaml: the liveness
	// scripts accept PONG, LOADING (and MASTERDOWN locally); the readiness
	// scripts require PONG.
	{Name: "ping_liveness_local.sh", Queries: false,
		What: "the Bitnami Redis liveness script, which counts LOADING as alive"},
	{Name: "ping_liveness_master.sh", Queries: false,
		What: "the Bitnami Redis liveness script for the master, which counts LOADING as alive"},
	{Name: "ping_liveness_local_and_master.sh", Queries: false,
		What: "the Bitnami Redis liveness script, which runs ping_liveness_local.sh and ping_liveness_master.sh, both counting LOADING as alive"},
	{Name: "ping_readiness_local.sh", Queries: true,
		What: "the Bitnami Redis readiness script, which requires PONG"},
	{Name: "ping_readiness_master.sh", Queries: true,
		What: "the Bitnami Redis readiness script for the master, which requires PONG"},
	{Name: "ping_readiness_local_and_master.sh", Queries: true,
		What: "the Bitnami Redis readiness script, which requires PONG from the replica and its master"},
}

// HTTPEndpoint is an HTTP health endpoint whose behaviour is known.
type HTTPEndpoint struct {
	Server  string // the table entry it belongs to: "PostgreSQL"
	Who     string // "CloudNativePG instance manager"
	Port    int32
	Path    string
	Queries bool
	What    string
	// WaitParam, when set, is the prefix of query parameters that make
	// the endpoint wait for a state it may not reach during recovery
	// ("wait_for_"); with one, it queries, and WaitWhat says why.
	WaitParam, WaitWhat string
	// Source is where the behaviour was checked.
	Source string
}

// HTTPEndpoints are health endpoints of sidecars, instance managers and
// servers. Only the query API ports of the table (QueryHTTPPorts) are
// assumed to query; every other httpGet is assumed not to.
var HTTPEndpoints = []HTTPEndpoint{
	{Server: "PostgreSQL", Who: "CloudNativePG instance manager", Port: 8000, Path: "/healthz", Queries: false,
		What: "answers while the instance manager runs, without querying PostgreSQL"},
	{Server: "PostgreSQL", Who: "CloudNativePG instance manager", Port: 8000, Path: "/readyz", Queries: true,
		What: "answers 200 only while PostgreSQL accepts connections"},
	{Server: "PostgreSQL", Who: "CloudNativePG instance manager", Port: 8000, Path: "/startupz", Queries: false,
		What: "counts a PostgreSQL that rejects connections (in crash recovery) as started"},
	{Server: "PostgreSQL", Who: "Patroni REST API", Port: 8008, Path: "/liveness", Queries: false,
		What: "answers while Patroni's heartbeat loop runs, without querying PostgreSQL"},
	{Server: "PostgreSQL", Who: "Patroni REST API", Port: 8008, Path: "/health", Queries: true,
		What: "answers 200 only while PostgreSQL is up and running"},
	{Server: "PostgreSQL", Who: "Patroni REST API", Port: 8008, Path: "/readiness", Queries: true,
		What: "answers 200 only while PostgreSQL runs as leader or streaming replica"},
	{Server: "ClickHouse", Who: "ClickHouse", Port: 8123, Path: "/ping", Queries: false,
		What: "answers Ok. from the HTTP handler without running a query"},
	{Server: "InfluxDB", Who: "InfluxDB", Port: 8086, Path: "/ping", Queries: false,
		What: "answers without running a query"},
	// The status code comes from ClusterHealthResponse.status(): 408 only
	// when a wait_for_* condition timed out, 200 otherwise, red included.
	{Server: "Elasticsearch", Who: "Elasticsearch cluster health API", Port: 9200, Path: "/_cluster/health", Queries: false,
		What:      "answers 200 whatever the cluster's status (red while shards recover included); it answers 408 only when a wait_for_* condition times out",
		WaitParam: "wait_for_", WaitWhat: "waits for the condition and answers 408 when it times out, as it does while shards recover",
		Source: "elasticsearch: server/src/main/java/org/elasticsearch/action/admin/cluster/health/ClusterHealthResponse.java `status` (REQUEST_TIMEOUT only when timed out); rest/action/admin/cluster/RestClusterHealthAction.java `fromRequest` (the wait_for_* parameters)"},
	// Port 0: whichever port the server's HTTP listener has.
	{Server: "Prometheus", Who: "Prometheus", Path: "/-/healthy", Queries: false,
		What:   "answers 200 as soon as the web listener runs, TSDB open or not",
		Source: "prometheus: web/web.go `New` (/-/healthy always 200; /-/ready goes through `testReady`)"},
	{Server: "Prometheus", Who: "Prometheus", Path: "/-/ready", Queries: true,
		What:   "answers 503 until the TSDB is open, its write-ahead log replayed, and the configuration loaded",
		Source: "prometheus: web/web.go `testReady` (503 unless Ready); cmd/prometheus/main.go (`webHandler.SetReady(web.Ready)` only after `dbOpen`, which the TSDB actor closes once `tsdb.Open` has replayed the WAL)"},
	{Server: "Loki", Who: "Loki", Path: "/ready", Queries: true,
		What:   "answers 503 until every module runs; the ingester replays its write-ahead log while it starts",
		Source: "loki: pkg/loki/loki.go `readyHandler` (503 while the services manager is not healthy, and Ingester.CheckReady); pkg/ingester/ingester.go `starting` (recovers the checkpoint and replays the WAL segments when WAL.Enabled)"},
	{Server: "Mimir", Who: "Mimir", Path: "/ready", Queries: true,
		What:   "answers 503 until every module runs; the ingester opens each tenant's TSDB, replaying its write-ahead log, while it starts",
		Source: "mimir: pkg/mimir/mimir.go `readyHandler` (503 while the services manager is not healthy, and Ingester.CheckReady); pkg/ingester/ingester.go `starting` (openExistingTSDB)"},
}

// ProbeQuery is what a probe asks of the server.
type ProbeQuery struct {
	// Queries: the probe needs the server to answer (accept a login,
	// answer a query, or answer PONG rather than LOADING), so it fails
	// while a server that listens during recovery recovers.
	Queries bool
	// Connects: the probe opens a connection to the server itself, so it
	// fails while a server that keeps its port closed during recovery
	// recovers (tcpSocket on its port, mysqladmin ping, any client).
	Connects bool
	Evidence string
	// Assumed is set when the verdict is inferred (an unknown script on a
	// database-like image, nodetool status) rather than seen; Assumption
	// then says what was assumed, for the finding.
	Assumed    bool
	Assumption string
	// endpoint: the verdict comes from a known health endpoint.
	endpoint bool
	// tcp: a tcpSocket probe, which the kernel's handshake passes.
	tcp bool
}

// FailsDuringRecovery reports whether the probe fails while the server of
// verdict v recovers from a crash, and why. A server that keeps its port
// closed fails every probe that connects to it, tcpSocket included; one
// that listens (PostgreSQL, Redis) fails only those that need an answer; one
// without a recovery phase (CouchDB) fails none.
func (q ProbeQuery) FailsDuringRecovery(v Verdict) bool {
	if v.Server != nil && v.Server.NoCrashRecovery {
		return false // nothing to recover from
	}
	if v.Server != nil && v.Server.PortClosedDuringRecovery {
		return q.Queries || q.Connects
	}
	if v.Server != nil && v.Server.BoundButSilent {
		// Only the kernel's handshake succeeds: a command waits for an
		// answer (nc for the server to reply or close).
		return q.Queries || q.Connects && !q.tcp
	}
	return q.Queries
}

// PassesDuringRecovery reports whether the probe is known to pass while
// the server of verdict v recovers: the server listens while it recovers,
// and the probe only needs the connection (tcpSocket on one of the
// server's ports, a bare redis-cli ping, pg_isready with its exit 1
// accepted) or asks an endpoint that answers before the recovery is over
// (Prometheus's /-/healthy). An assumed or unknown check is not known to
// pass.
func (q ProbeQuery) PassesDuringRecovery(v Verdict) bool {
	s := v.Server
	if s != nil && s.BoundButSilent {
		return q.tcp && !q.Queries && !q.Assumed
	}
	if s == nil || s.NoCrashRecovery || !s.ListensDuringRecovery {
		return false
	}
	if q.Queries || q.Assumed {
		return false
	}
	return q.Connects || q.endpoint
}

// ServerPortOf says whether port is one of the ports the server of v is
// known to listen on (its well-known ports, and those its image serves).
func ServerPortOf(v Verdict, port int32) bool {
	return v.Server != nil && (containsPort(v.Server.Ports, port) || containsPort(v.Server.ImagePorts, port))
}

// ResolvePort is a probe's port as a number: a name is looked up among the
// container's ports; 0 when it names none.
func ResolvePort(c *corev1.Container, p intstr.IntOrString) int32 { return resolvePort(c, p) }

// File is a file of the container whose text the input holds: a key of a
// ConfigMap mounted at that path.
type File struct {
	Text string
	From string // "ConfigMap redis-health, key ping_liveness_local.sh"
}

// Files finds the text of a file of the container by its path. A nil Files
// knows none.
type Files func(path string) (File, bool)

// ProbeQueries reports whether probe p of container c (of a workload of
// the given kind, classified as v) needs the server to accept a login or
// answer a query, with the evidence.
func ProbeQueries(kind string, c *corev1.Container, p *corev1.Probe, v Verdict) (bool, string) {
	q := Probe(kind, c, p, v)
	return q.Queries, q.Evidence
}

// Probe is ProbeWith without any file of the input.
func Probe(kind string, c *corev1.Container, p *corev1.Probe, v Verdict) ProbeQuery {
	return ProbeWith(kind, c, p, v, nil)
}

// ProbeWith reads probe p of container c: what it asks of the server. A
// script the probe runs is read from files when the input holds its text.
func ProbeWith(kind string, c *corev1.Container, p *corev1.Probe, v Verdict, files Files) ProbeQuery {
	switch {
	case p == nil:
		return ProbeQuery{}
	case p.TCPSocket != nil:
		return tcpQuery(c, p.TCPSocket, v)
	case p.GRPC != nil:
		return ProbeQuery{Evidence: "grpc asks the server's health service, not known to need a query"}
	case p.HTTPGet != nil:
		return httpQuery(c, p.HTTPGet, v)
	case p.Exec != nil:
		return execQuery(kind, c, p.Exec.Command, v, files, 0)
	}
	return ProbeQuery{Evidence: "the probe has no handler"}
}

func tcpQuery(c *corev1.Container, h *corev1.TCPSocketAction, v Verdict) ProbeQuery {
	q := ProbeQuery{Connects: true, tcp: true, Evidence: "tcpSocket only opens a connection, which the kernel accepts without the server answering"}
	if v.Server == nil || !v.Server.PortClosedDuringRecovery {
		return q
	}
	port := resolvePort(c, h.Port)
	q.Evidence = fmt.Sprintf("tcpSocket :%s opens a connection to %s, which %s", h.Port.String(), v.Server.Name, v.Server.Recovery)
	if !containsPort(v.Server.Ports, port) && !containsPort(v.Server.ImagePorts, port) {
		q.Assumed = true
		q.Assumption = fmt.Sprintf("tcpSocket :%s is not one of %s's well-known ports: assumed to be a port the server opens only once it has recovered.", h.Port.String(), v.Server.Name)
	}
	return q
}

func httpQuery(c *corev1.Container, h *corev1.HTTPGetAction, v Verdict) ProbeQuery {
	port := resolvePort(c, h.Port)
	desc := fmt.Sprintf("httpGet :%s%s", h.Port.String(), h.Path)
	return urlQuery(desc, port, h.Path, v)
}

// urlQuery decides for an HTTP request to port and path of the container.
func urlQuery(desc string, port int32, urlPath string, v Verdict) ProbeQuery {
	p, query := urlPath, ""
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p, query = p[:i], p[i:]
	}
	if v.Server != nil {
		for _, e := range HTTPEndpoints {
			if e.Server == v.Server.Name && (e.Port == 0 || e.Port == port) && strings.TrimSuffix(p, "/") == e.Path {
				if param := waitParam(query, e.WaitParam); param != "" {
					return ProbeQuery{Queries: true, Connects: true, Evidence: fmt.Sprintf("%s asks the %s's %s on port %d with %s, which %s", desc, e.Who, e.Path, port, param, e.WaitWhat)}
				}
				// Served by the server's own listener, it needs that
				// listener open: a server that listens only after
				// loading fails it while it loads.
				own := e.Port == 0 || containsPort(v.Server.Ports, port) || containsPort(v.Server.ImagePorts, port)
				q := ProbeQuery{Queries: e.Queries, Connects: own, endpoint: true, Evidence: fmt.Sprintf("%s is %s's %s on port %d, which %s", desc, theWho(e.Who), e.Path, port, e.What)}
				if own && v.Server.PortClosedDuringRecovery {
					q.Evidence += ", once " + v.Server.Name + " listens: it " + v.Server.Recovery
				}
				return q
			}
		}
		if containsPort(v.Server.QueryHTTPPorts, port) {
			return ProbeQuery{Queries: true, Connects: true, Evidence: fmt.Sprintf("%s asks %s's own query API (port %d)", desc, v.Server.Name, port)}
		}
		if containsPort(v.Server.Ports, port) || containsPort(v.Server.ImagePorts, port) {
			return ProbeQuery{Connects: true, Evidence: fmt.Sprintf("%s connects to %s's port %d", desc, v.Server.Name, port)}
		}
	}
	return ProbeQuery{Evidence: desc + " is not a known query API: assumed to answer without querying the server"}
}

// theWho names an endpoint's owner in a sentence: "the Patroni REST API",
// "Prometheus" (a server's own name takes no article).
func theWho(who string) string {
	for _, s := range Servers {
		if s.Name == who {
			return who
		}
	}
	return "the " + who
}

// waitParam returns the first parameter of query ("?local=true&wait_for_status=green")
// whose name starts with prefix, as written; "" when none does.
func waitParam(query, prefix string) string {
	if prefix == "" || !strings.HasPrefix(query, "?") {
		return ""
	}
	query, _, _ = strings.Cut(query[1:], "#")
	for _, kv := range strings.Split(query, "&") {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, prefix) {
			return kv
		}
	}
	return ""
}

func resolvePort(c *corev1.Container, p intstr.IntOrString) int32 {
	if p.Type == intstr.Int {
		return p.IntVal
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return cp.ContainerPort
		}
	}
	if n, err := strconv.Atoi(p.StrVal); err == nil {
		return int32(n)
	}
	return 0
}

var shells = []string{"sh", "bash", "ash", "dash", "zsh", "ksh"}

// acceptsRejecting matches a script that treats pg_isready's exit 1
// ("rejecting connections") as success: [ $? -ne 2 ], [ $? -lt 2 ],
// [ $? -eq 1 ].
var acceptsRejecting = lazyregexp.New(`\$\?\s*(-ne|!=)\s*2\b|\$\?\s*(-lt|<)\s*2\b|\$\?\s*(-eq|==?)\s*1\b`)

// maxScriptDepth bounds how deep scripts read from the input may call
// each other.
const maxScriptDepth = 3

func execQuery(kind string, c *corev1.Container, argv []string, v Verdict, files Files, depth int) ProbeQuery {
	if len(argv) == 0 {
		return ProbeQuery{Evidence: "exec has no command"}
	}
	desc := "exec [" + strings.Join(argv, " ") + "]"
	script, cmds := commandsOf(argv)
	errexit := shellErrexit(argv) || setErrexit().MatchString(script)
	// A script's shell functions are evaluated through (functions.go).
	var cs calls
	if script != "" {
		cs = scriptCalls(script, files)
		cmds = cs.cmds
	}
	through := func(i int, q ProbeQuery) ProbeQuery {
		if i < len(cs.via) && cs.via[i] != "" {
			q.Evidence += " (called through " + cs.via[i] + ")"
		}
		return q
	}
	// What the commands seen do during recovery: one that fails is
	// enough; one that passes counts only if nothing else fails.
	var passing, assumed *ProbeQuery
	keep := func(q ProbeQuery) {
		switch {
		case q.Assumed && assumed == nil:
			assumed = &q
		case !q.Assumed && passing == nil:
			passing = &q
		}
	}
	for i, cmd := range cmds {
		name := queryCommand(cmd)
		switch {
		case name == "" && (isNetcat(cmd[0]) || isNetcat(assignedCommand(script, cmd[0]))):
			if q, ok := netcatQuery(cmd, script, errexit); ok {
				keep(through(i, q))
			}
			continue
		case name == "":
			continue
		case name == "pg_isready" && acceptsRejecting().MatchString(script):
			keep(through(i, ProbeQuery{Connects: true, Evidence: "exec runs pg_isready but accepts its exit 1: it passes while PostgreSQL rejects connections in crash recovery"}))
			continue
		case name == "curl" || name == "wget":
			if q, ok := curlQuery(cmd, v); ok {
				q = through(i, q)
				if q.Queries && !statusReaches(script, errexit, cmd) {
					q.Queries, q.Connects = false, false
					q.Evidence += ", but the script's exit status does not depend on it (neither its last command nor tested, and no set -e)"
				}
				if q.Queries {
					return q
				}
				keep(q)
			}
			continue
		}
		q := through(i, clientQuery(name, cmd, script, v))
		if q.Queries && failureIgnored(script, cmd) {
			// cmd || exit 0, cmd || true: its failure never reaches the
			// script's exit status.
			// Nor on its connection: a failed connection is a failure too.
			keep(ProbeQuery{Evidence: q.Evidence + ", but the script ignores its failure (|| exit 0, || true): the probe does not depend on it"})
			continue
		}
		if q.Queries && !statusReaches(script, errexit, cmd) {
			keep(ProbeQuery{Evidence: q.Evidence + ", but the script's exit status does not depend on it: it is neither the last command nor tested, and the script does not stop at a failure (no set -e)"})
			continue
		}
		if q.Queries && !q.Assumed {
			return q
		}
		keep(q)
	}
	// ZooKeeper's ruok needs only an open client port: the server answers
	// imok whatever its state (RuokCommand).
	// It says more than nc's exit status, so it replaces that reading.
	if v.Server != nil && len(v.Server.EnsembleEnv) > 0 && sendsWord(cmds, "ruok") {
		q := ProbeQuery{Connects: true, Evidence: "exec sends ruok, which " + v.Server.Name + " answers with imok as soon as it serves its client port, while it loads its data too when it runs alone"}
		if v.Server.BoundButSilent {
			q.Evidence = "exec sends ruok, which " + v.Server.Name + ", a quorum member, does not answer until it has loaded its snapshot and log: its client port is bound, but nothing accepts the connection"
		}
		passing = &q
	}
	// Scripts: read from the input where it holds them, known ones by
	// name, unknown ones by the image they run on.
	for _, cmd := range cmds {
		if f, ok := lookup(files, cmd[0]); ok && depth < maxScriptDepth {
			text := withScriptDir(f.Text, path.Dir(cmd[0]))
			q := execQuery(kind, c, []string{"sh", "-c", text}, v, files, depth+1)
			q.Evidence = "exec runs " + cmd[0] + " (" + f.From + "), which " + strings.TrimPrefix(strings.TrimPrefix(q.Evidence, "exec "), "[sh -c "+text+"] ")
			if q.Queries && !q.Assumed {
				return q
			}
			keep(q)
			continue
		}
		name := path.Base(cmd[0])
		if !isScript(cmd[0]) {
			continue
		}
		base := path.Base(imageRepository(c.Image))
		known := false
		for _, s := range Scripts {
			if s.Name == name && (s.Image == "" || s.Image == base) {
				q := ProbeQuery{Queries: s.Queries, Connects: true, Evidence: "exec runs " + cmd[0] + ", " + s.What}
				if q.Queries {
					return q
				}
				keep(q)
				known = true
				break
			}
		}
		if !known && v.DatabaseLike && !RunsToCompletion(kind) {
			keep(ProbeQuery{Queries: true, Connects: true, Assumed: true,
				Evidence: "exec runs the script " + cmd[0] + " on a " + v.Server.Name + " container: assumed to log in and query, as health checks of database images do"})
		}
	}
	if len(cs.unknown) > 0 && v.DatabaseLike && !RunsToCompletion(kind) {
		fns, libs := strings.Join(cs.unknown, ", "), strings.Join(cs.missing, ", ")
		if len(cs.missing) > 1 {
			libs = "one of " + libs
		}
		keep(ProbeQuery{Queries: true, Connects: true, Assumed: true,
			Evidence: "exec calls " + fns + ", from " + libs + ", which the image ships and the input does not hold: assumed to need " + v.Server.Name + " to answer",
			Assumption: fmt.Sprintf("%s is a shell function of %s, which the image ships and the input does not hold: backfire cannot read what it runs and assumes it needs %s to answer. If it does not, suppress this finding with the annotation backfire.dev/ignore: BF101.",
				fns, libs, v.Server.Name)})
	}
	if assumed != nil {
		return *assumed
	}
	if passing != nil {
		return *passing
	}
	var names []string
	for _, cmd := range cmds {
		names = append(names, path.Base(cmd[0]))
	}
	if len(names) == 0 {
		return ProbeQuery{Evidence: desc + " runs no command"}
	}
	if allNonQuery(names) {
		return ProbeQuery{Evidence: "exec runs only " + strings.Join(dedupe(names), ", ") + ": no login or query"}
	}
	return ProbeQuery{Evidence: "exec runs " + strings.Join(dedupe(names), ", ") + ", not known to need a query"}
}

// assignedCommand is the command a variable run as one holds, as the
// script assigns it (_healthcheck="nc -q1 $HOST $PORT"; ${_healthcheck}):
// its first word, or "".
func assignedCommand(script, word string) string {
	name := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(word, "$"), "{"), "}")
	if name == word || name == "" {
		return ""
	}
	re, err := regexp.Compile(`(?m)(?:^|[;&\s])` + regexp.QuoteMeta(name) + `=["']?([^"'\s;]+)`)
	if err != nil {
		return ""
	}
	if m := re.FindStringSubmatch(script); m != nil {
		return m[1]
	}
	return ""
}

// orIgnore matches a command list's end that discards the failure of what
// comes before it: || exit 0, || true, || :.
var orIgnore = lazyregexp.New(`\|\|\s*(?:exit\s+0|true|:)\s*(?:$|[;#\n])`)

// failureIgnored says whether the script runs cmd as `cmd ... || exit 0`
// (|| true, || :) on one line, so that cmd's failure cannot fail the
// probe. Lines are matched by the command's words in order.
func failureIgnored(script string, cmd []string) bool {
	if script == "" {
		return false
	}
	for _, line := range strings.Split(strings.ReplaceAll(script, "\\\n", " "), "\n") {
		i := strings.Index(line, path.Base(cmd[0]))
		if i < 0 {
			continue
		}
		rest := line[i:]
		j := strings.Index(rest, "||")
		if j < 0 {
			continue
		}
		// Only cmd and its arguments (no other command) before the ||.
		if strings.ContainsAny(rest[:j], ";&|") {
			continue
		}
		if orIgnore().MatchString(rest[j:]) {
			return true
		}
	}
	return false
}

// isNetcat: nc and its variants only open a connection and copy bytes.
func isNetcat(cmd string) bool {
	switch path.Base(cmd) {
	case "nc", "ncat", "netcat":
		return true
	}
	return false
}

// netcatQuery reads nc in a probe script. nc exits 0 once the connection
// opened and its input is sent, whatever the server answers: where the
// script exits with nc's status (its last command, or exit $?) and does
// not compare the answer, the probe needs only an open port. ok is false
// when the answer is read (piped on, or captured), which is left to the
// rest of the script.
func netcatQuery(cmd []string, script string, errexit bool) (ProbeQuery, bool) {
	if script == "" || netcatRead().MatchString(script) || !errexit && !netcatStatusIsExit(script) {
		return ProbeQuery{}, false
	}
	sends := ""
	if m := sentToNetcat().FindStringSubmatch(script); m != nil {
		sends = " sends " + m[1] + " and"
	}
	return ProbeQuery{Connects: true,
		Evidence: "exec runs " + strings.Join(cmd, " ") + ", which" + sends + " exits with nc's status: 0 as soon as the connection opens, whatever the server answers (the answer is not compared)"}, true
}

// unquoted is a line with what its quotes hold removed (-e"SHOW DATABASES;"
// holds no command list), quotes left unclosed keeping the rest.
func unquoted(line string) string {
	var b strings.Builder
	var q rune
	for _, r := range line {
		switch {
		case q != 0 && r == q:
			q = 0
		case q != 0:
		case r == '\'' || r == '"':
			q = r
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// setErrexit matches a script that stops at its first failing command:
// set -e (set -eu, set -euo pipefail), set -o errexit, or a #! line that
// starts its shell with -e. set +e anywhere leaves the question open,
// which is read as stopping (each command then decides, as before).
var setErrexit = lazyregexp.New(`(?m)(?:^|[;&]\s*)set\s+(?:-[a-zA-Z]*e[a-zA-Z]*|-o\s+errexit)\b|\A#!\S+\s+-[a-zA-Z]*e|(?:^|[;&]\s*)set\s+\+[a-zA-Z]*e`)

// shellErrexit says whether argv starts its shell with -e (sh -ec SCRIPT,
// bash -e -c SCRIPT, sh -o errexit -c SCRIPT).
func shellErrexit(argv []string) bool {
	if len(argv) == 0 || !contains(shells, path.Base(argv[0])) {
		return false
	}
	for i, a := range argv[1:] {
		switch {
		case a == "-o" && i+2 < len(argv) && argv[i+2] == "errexit":
			return true
		case strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "e"):
			return true
		case !strings.HasPrefix(a, "-") && a != "errexit":
			return false
		}
	}
	return false
}

// statusReaches says whether cmd's failure can reach the exit status of the
// script it runs in: the script stops at a failure (errexit), or cmd is its
// last command, or its status is tested (if, &&, ||, !, a pipeline, $? on
// the next line, a capture). Only a command alone on a line of a script
// without functions or blocks around it, followed by other commands that do
// not read $?, is read as not reaching it: `pg_isready; echo ok` exits 0
// whatever pg_isready says. Anything else reaches it, as before.
func statusReaches(script string, errexit bool, cmd []string) bool {
	if script == "" || errexit || strings.Contains(script, "()") || strings.Contains(script, "function ") {
		return true
	}
	var lines []string
	for _, l := range strings.Split(strings.ReplaceAll(script, "\\\n", " "), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	name := path.Base(cmd[0])
	found := false
	for i, l := range lines {
		w := strings.Fields(l)
		if len(w) == 0 || path.Base(w[0]) != name {
			if strings.Contains(l, name) {
				return true // inside something else: if, $(...), a pipeline
			}
			continue
		}
		found = true
		if bare := unquoted(l); i == len(lines)-1 || strings.ContainsAny(bare, ";&|`") || strings.Contains(bare, "$(") {
			return true
		}
		next := lines[i+1]
		if strings.Contains(next, "$?") {
			return true
		}
		switch strings.Fields(next)[0] {
		case "fi", "done", "else", "elif", "esac", ";;", "}", ")":
			return true
		}
	}
	return !found
}

var (
	// sentToNetcat: echo WORD | nc ...
	sentToNetcat = lazyregexp.New(`(?:echo|printf)\s+["']?([A-Za-z]+)["']?\s*\|\s*(?:\$\{?[A-Za-z_]+\}?|\S*\b(?:nc|ncat|netcat))\b`)
	// netcatRead: nc's output goes on to another command, or is captured.
	netcatRead = lazyregexp.New(`\b(?:nc|ncat|netcat)\b[^;\n|)]*\|[^|]|\$\([^)]*\b(?:nc|ncat|netcat)\b`)
)

// netcatStatusIsExit says whether the script's exit status is nc's: nc's
// output is neither piped on nor captured, and the script ends with the nc
// command or with exit $?.
func netcatStatusIsExit(script string) bool {
	if netcatRead().MatchString(script) {
		return false
	}
	lines := strings.Split(strings.TrimSpace(script), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if i := strings.LastIndex(last, ";"); i >= 0 && strings.TrimSpace(last[i+1:]) != "" {
		last = strings.TrimSpace(last[i+1:])
	}
	if last == "exit $?" || last == `exit "$?"` {
		return true
	}
	w := strings.Fields(last)
	return len(w) > 0 && (isNetcat(w[0]) || strings.Contains(last, "| nc ") || strings.Contains(last, "|nc "))
}

// dirnameOfSelf matches $(dirname "$0") and its spellings: the directory
// the running script was started from.
var dirnameOfSelf = lazyregexp.New("\\$\\(\\s*dirname\\s+\"?\\$(?:0|\\{0\\})\"?\\s*\\)|`\\s*dirname\\s+\"?\\$(?:0|\\{0\\})\"?\\s*`")

// dirAssignment matches a variable set to a directory only: script_dir="/health".
var dirAssignment = lazyregexp.New(`(?m)(?:^|[;&|])\s*(?:export\s+|local\s+|readonly\s+)?([A-Za-z_][A-Za-z0-9_]*)=("?)([^"\s;]+)("?)\s*(?:[;&|]|$)`)

// withScriptDir resolves, in the text of a script started as dir/name, the
// directory of the script: $(dirname "$0") and the variables set to it
// (script_dir="$(dirname "$0")"; "$script_dir/ping_liveness_primary.sh"),
// so that the sibling scripts it runs are found in the input.
func withScriptDir(text, dir string) string {
	if !dirnameOfSelf().MatchString(text) {
		return text
	}
	text = dirnameOfSelf().ReplaceAllLiteralString(text, dir)
	for _, m := range dirAssignment().FindAllStringSubmatch(text, -1) {
		if m[3] != dir || m[2] != m[4] {
			continue
		}
		name := regexp.QuoteMeta(m[1])
		ref := regexp.MustCompile(`\$\{` + name + `\}|\$` + name + `([^A-Za-z0-9_]|$)`)
		text = ref.ReplaceAllStringFunc(text, func(r string) string {
			if strings.HasPrefix(r, "${") {
				return dir
			}
			return dir + r[1+len(m[1]):]
		})
	}
	return text
}

// sendsWord reports whether a command of the probe writes word (echo ruok).
func sendsWord(cmds [][]string, word string) bool {
	for _, cmd := range cmds {
		if (path.Base(cmd[0]) == "echo" || path.Base(cmd[0]) == "printf") && slices.Contains(cmd[1:], word) {
			return true
		}
	}
	return false
}

func lookup(files Files, p string) (File, bool) {
	if files == nil || !strings.Contains(p, "/") {
		return File{}, false
	}
	return files(p)
}

// clientQuery reads one client command of the table: what it needs from
// the server, given its arguments and the script it runs in.
func clientQuery(name string, cmd []string, script string, v Verdict) ProbeQuery {
	row := CommandNamed(name)
	what := row.What
	ev := "exec runs " + name + ", which " + what
	if row.Server != "" && (v.Server == nil || v.Server.Name != row.Server) {
		ev = "exec runs " + name + " (a " + row.Server + " client), which " + what
	}
	args := operands(cmd)
	switch row.Server {
	case "Redis":
		return redisQuery(name, cmd, script)
	case "MySQL":
		if (name == "mysqladmin" || name == "mariadb-admin") && slices.Contains(args, "ping") {
			return ProbeQuery{Connects: true, Evidence: "exec runs " + name + " ping, which connects without logging in: it exits 0 on any reply of the server (even Access denied) and 1 only when nothing answers"}
		}
		if name == "mysqladmin" || name == "mariadb-admin" {
			ev = "exec runs " + name + ", which logs in to the server"
		}
	case "Cassandra":
		if name == "nodetool" {
			if slices.Contains(args, "info") && strings.Contains(strings.ToLower(script), "native transport active: true") {
				return ProbeQuery{Queries: true, Evidence: `exec runs nodetool info and requires "Native Transport active: true", which Cassandra reports only once its CQL port is open, after the commit-log replay`}
			}
			sub := "nodetool"
			if slices.Contains(args, "status") {
				sub = "nodetool status"
			}
			return ProbeQuery{Queries: true, Assumed: true,
				Evidence:   "exec runs " + sub + ", which asks the node over JMX; it is assumed to fail until the node has recovered (JMX opens before the commit-log replay)",
				Assumption: sub + " asks the node over JMX, which Cassandra opens before it replays its commit log (CassandraDaemon.setup: maybeInitJmx first): it may answer during the replay. This finding assumes it fails until the node has recovered; if it answers, the probe does not kill the recovery and the finding does not apply: suppress it with the annotation backfire.dev/ignore: BF101."}
		}
	}
	return ProbeQuery{Queries: true, Connects: true, Evidence: ev}
}

// redisQuery reads redis-cli (valkey-cli, keydb-cli): it exits 0 on an
// error reply such as LOADING unless -e is given, so it fails during
// loading only with -e or when the script compares its output with PONG.
func redisQuery(name string, cmd []string, script string) ProbeQuery {
	switch {
	case slices.Contains(cmd[1:], "-e"):
		return ProbeQuery{Queries: true, Connects: true,
			Evidence: "exec runs " + name + " -e, which exits 1 on an error reply: -LOADING while Redis loads its dataset"}
	case strings.Contains(script, "PONG") && !strings.Contains(script, "LOADING"):
		return ProbeQuery{Queries: true, Connects: true,
			Evidence: "exec runs " + name + " and requires its answer to be PONG, but Redis answers -LOADING while it loads its dataset"}
	case strings.Contains(script, "LOADING"):
		return ProbeQuery{Connects: true,
			Evidence: "exec runs " + name + " and accepts LOADING: it passes while Redis loads its dataset"}
	}
	return ProbeQuery{Connects: true,
		Evidence: "exec runs " + name + " without -e, which prints the -LOADING error and exits 0 while Redis loads its dataset (it exits 1 on an error reply only with -e)"}
}

// operands are a command's arguments that are not flags.
func operands(cmd []string) []string {
	var out []string
	for _, a := range cmd[1:] {
		if !strings.HasPrefix(a, "-") {
			out = append(out, a)
		}
	}
	return out
}

// queryCommand returns the query command cmd runs ("psql", "cockroach
// sql"), "curl"/"wget" for an HTTP client, or "".
func queryCommand(cmd []string) string {
	name := path.Base(cmd[0])
	if name == "curl" || name == "wget" {
		return name
	}
	var args []string
	for _, a := range cmd[1:] {
		if !strings.HasPrefix(a, "-") {
			args = append(args, a)
		}
	}
	for _, s := range Servers {
		for _, qc := range s.QueryCommands {
			words := strings.Fields(qc)
			if words[0] == name && subsequence(words[1:], args) {
				return qc
			}
		}
	}
	return ""
}

// subsequence reports whether want appears in order within args (flag
// values may sit between subcommands: rabbitmq-diagnostics -n node check_running).
func subsequence(want, args []string) bool {
	i := 0
	for _, a := range args {
		if i < len(want) && a == want[i] {
			i++
		}
	}
	return i == len(want)
}

// curlQuery finds the URL of a curl or wget command and decides whether it
// asks the server's query API; ok also when it asks a known health endpoint
// that answers during recovery.
func curlQuery(cmd []string, v Verdict) (ProbeQuery, bool) {
	for _, a := range cmd[1:] {
		if strings.HasPrefix(a, "-") {
			continue
		}
		port, urlPath, ok := parseURL(a)
		if !ok {
			continue
		}
		if q := urlQuery(path.Base(cmd[0])+" "+a, port, urlPath, v); q.Queries || q.endpoint {
			q.Evidence = "exec runs " + q.Evidence
			return q, true
		}
	}
	return ProbeQuery{}, false
}

// parseURL reads "http://localhost:9200/_cluster/health" or
// "localhost:9200/_cluster/health" (curl and wget take both).
func parseURL(a string) (port int32, urlPath string, ok bool) {
	rest := a
	port = 80
	switch {
	case strings.HasPrefix(a, "http://"):
		rest = a[len("http://"):]
	case strings.HasPrefix(a, "https://"):
		rest, port = a[len("https://"):], 443
	case !strings.Contains(a, ":"):
		return 0, "", false
	}
	host, p, _ := strings.Cut(rest, "/")
	if _, ps, found := strings.Cut(host, ":"); found {
		n, err := strconv.Atoi(ps)
		if err != nil {
			return 0, "", false
		}
		port = int32(n)
	}
	return port, "/" + p, true
}

// commandsOf splits an exec probe into the simple commands it runs, looking
// inside sh -c scripts. It returns the script text ("" without a shell).
func commandsOf(argv []string) (string, [][]string) {
	if contains(shells, path.Base(argv[0])) {
		hasC := false
		for i, a := range argv[1:] {
			if strings.HasPrefix(a, "-") {
				hasC = hasC || strings.Contains(strings.TrimLeft(a, "-"), "c")
				continue
			}
			if hasC {
				return a, splitScript(a)
			}
			// sh /path/script.sh args: the script is the command.
			return "", [][]string{stripWrappers(argv[1+i:])}
		}
		return "", nil
	}
	if cmd := stripWrappers(argv); len(cmd) > 0 {
		return "", [][]string{cmd}
	}
	return "", nil
}

// splitScript splits a shell script into simple commands at ; & | newlines
// and parentheses outside quotes, and each command into words. Command
// substitutions ($(...) and backticks, inside double quotes too) are
// commands of their own.
func splitScript(s string) [][]string {
	var out [][]string
	var words []string
	var w strings.Builder
	inWord := false
	flushWord := func() {
		if inWord {
			words = append(words, w.String())
			w.Reset()
			inWord = false
		}
	}
	flushCmd := func() {
		flushWord()
		if cmd := stripWrappers(words); len(cmd) > 0 {
			out = append(out, cmd)
		}
		words = nil
	}
	var quote byte
	for i := 0; i < len(s); i++ {
		r := s[i]
		switch {
		case quote != '\'' && (r == '`' || r == '$' && i+1 < len(s) && s[i+1] == '('):
			// A command substitution: its commands count, and it
			// stands for one word here.
			open := i + 1
			if r == '$' {
				open = i + 2
			}
			end := substitutionEnd(s, open, r)
			out = append(out, splitScript(s[open:end])...)
			w.WriteString("$()")
			inWord = true
			i = end
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				w.WriteByte(r)
			}
		case r == '\\' && i+1 < len(s) && s[i+1] == '\n':
			// A line continuation: the command goes on.
			flushWord()
			i++
		case r == '#' && !inWord:
			// A comment (the shebang too) runs to the end of the line.
			for i+1 < len(s) && s[i+1] != '\n' {
				i++
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			flushWord()
		case strings.IndexByte(";&|\n()", r) >= 0:
			flushCmd()
		default:
			w.WriteByte(r)
			inWord = true
		}
	}
	flushCmd()
	return out
}

// substitutionEnd finds the end of a command substitution that starts at
// open: the closing backtick, or the parenthesis that balances $(.
func substitutionEnd(s string, open int, kind byte) int {
	if kind == '`' {
		if j := strings.IndexByte(s[open:], '`'); j >= 0 {
			return open + j
		}
		return len(s)
	}
	depth := 1
	for j := open; j < len(s); j++ {
		switch s[j] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return len(s)
}

// shellWords are not commands; wrappers run the command that follows.
var (
	shellWords = []string{"if", "then", "else", "elif", "fi", "while", "until", "do", "done", "!", "{", "}"}
	wrappers   = []string{"exec", "env", "command", "nice", "nohup", "gosu", "su-exec", "sudo", "chpst", "tini", "dumb-init"}
)

// stripWrappers drops keywords, variable assignments and wrappers (exec,
// env, timeout 5) in front of a command.
func stripWrappers(words []string) []string {
	for len(words) > 0 {
		w := words[0]
		b := path.Base(w)
		switch {
		case contains(shellWords, w), strings.Contains(w, "=") && !strings.HasPrefix(w, "-"):
			words = words[1:]
		case contains(wrappers, b):
			words = words[1:]
			for len(words) > 0 && strings.HasPrefix(words[0], "-") {
				words = words[1:]
			}
			if (b == "gosu" || b == "su-exec" || b == "chpst") && len(words) > 0 {
				words = words[1:] // the user to run as
			}
		case b == "timeout":
			words = words[1:]
			for len(words) > 0 && strings.HasPrefix(words[0], "-") {
				if words[0] == "-s" || words[0] == "-k" {
					words = words[1:]
				}
				words = words[1:]
			}
			if len(words) > 0 {
				words = words[1:] // the duration
			}
		default:
			return words
		}
	}
	return nil
}

// isScript tells a health-check script from a binary by its name.
func isScript(cmd string) bool {
	b := strings.ToLower(path.Base(cmd))
	for _, ext := range []string{".sh", ".bash", ".py", ".pl"} {
		if strings.HasSuffix(b, ext) {
			return true
		}
	}
	if !strings.Contains(cmd, "/") {
		return false
	}
	for _, w := range []string{"health", "check", "probe", "alive", "ready", "live"} {
		if strings.Contains(b, w) {
			return true
		}
	}
	return false
}

func allNonQuery(names []string) bool {
	for _, n := range names {
		if !contains(NonQueryCommands, n) {
			return false
		}
	}
	return true
}

func dedupe(list []string) []string {
	var out []string
	for _, s := range list {
		if !contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// Startup is what a container's startupProbe does while the server
// recovers from a crash.
type Startup struct {
	Present bool
	// FailsDuringRecovery: the startup probe keeps failing while the
	// server recovers (it needs a query, or opens a port the server keeps
	// closed), so it holds the liveness probe back, up to Budget.
	FailsDuringRecovery bool
	// Budget is D + F x P of the startup probe: when it kills a container
	// that never passes. BudgetFormula spells it out: "0 + 60 x 10".
	Budget        int
	BudgetFormula string
	// Holds: it fails during recovery and its budget reaches the minimum.
	Holds bool
	// Why explains the verdict for a finding.
	Why string
}

// StartupOf judges c's startupProbe against a crash recovery: it holds the
// liveness probe back only if it fails during recovery itself (it needs the
// server to accept queries, or opens a port the server keeps closed during
// recovery) and allows at least minBudget seconds (D + F x P) before it
// kills. A startupProbe that passes during recovery (tcpSocket on a server
// that listens while it recovers, pg_isready with exit 1 accepted,
// CloudNativePG's /startupz) hands over to the liveness probe at once.
func StartupOf(kind string, c *corev1.Container, v Verdict, minBudget int, files Files) Startup {
	sp := c.StartupProbe
	if sp == nil {
		return Startup{Why: "there is no startupProbe"}
	}
	t := probe.TimingOf(sp, nil)
	s := Startup{Present: true, Budget: t.StartupBudget(), BudgetFormula: t.NeverHealthyKillFormula()}
	budget := fmt.Sprintf("%d s (%s)", s.Budget, s.BudgetFormula)
	q := ProbeWith(kind, c, sp, v, files)
	s.FailsDuringRecovery = q.FailsDuringRecovery(v)
	why := q.Evidence
	if sp.TCPSocket != nil && v.Server != nil {
		switch {
		case v.Server.PortClosedDuringRecovery:
			why = "tcpSocket fails while " + v.Server.Name + " recovers: it " + v.Server.Recovery
		case v.Server.ListensDuringRecovery:
			why = "tcpSocket passes as soon as " + v.Server.Name + " listens, which it does during crash recovery"
		default:
			why = "tcpSocket passes as soon as " + v.Server.Name + " listens, assumed to be during crash recovery"
		}
	}
	switch {
	case !s.FailsDuringRecovery:
		s.Why = "the startupProbe passes during recovery (" + why + ") and hands over to the liveness probe"
	case s.Budget < minBudget:
		s.Why = fmt.Sprintf("the startupProbe fails during recovery (%s), but kills the container itself after %s, less than %d s", why, budget, minBudget)
	default:
		s.Holds = true
		s.Why = fmt.Sprintf("the startupProbe fails during recovery (%s) and holds the liveness probe back for up to %s", why, budget)
	}
	return s
}

// StartupHoldsThroughRecovery reports whether c's startupProbe keeps the
// liveness probe away through a crash recovery of up to minBudget seconds
// (see StartupOf), and why.
func StartupHoldsThroughRecovery(kind string, c *corev1.Container, v Verdict, minBudget int) (bool, string) {
	s := StartupOf(kind, c, v, minBudget, nil)
	return s.Holds, s.Why
}
