package classify

import (
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"backfire.dev/backfire/internal/model/probe"
)

// commandWhat says what a query command needs from the server, for the
// evidence of a finding.
var commandWhat = map[string]string{
	"psql":                               "logs in and runs a query",
	"pg_isready":                         "exits 1 while PostgreSQL rejects connections: during startup, shutdown and crash recovery",
	"mysql":                              "logs in and runs a query",
	"mariadb":                            "logs in and runs a query",
	"mysqladmin":                         "logs in to the server",
	"mariadb-admin":                      "logs in to the server",
	"redis-cli":                          "sends a command the server must answer",
	"valkey-cli":                         "sends a command the server must answer",
	"keydb-cli":                          "sends a command the server must answer",
	"mongo":                              "connects and runs a command",
	"mongosh":                            "connects and runs a command",
	"etcdctl":                            "sends a request etcd must answer",
	"cqlsh":                              "logs in over CQL",
	"nodetool":                           "asks the node over JMX",
	"clickhouse-client":                  "runs a query",
	"clickhouse client":                  "runs a query",
	"cockroach sql":                      "connects over SQL",
	"cockroach node status":              "asks the cluster for the node's status over SQL",
	"rabbitmq-diagnostics check_running": "fails while the node is booting",
	"rabbitmqctl node_health_check":      "runs the node's health checks",
}

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
	{Name: "ping_liveness_local.sh", Queries: false,
		What: "the Bitnami Redis liveness script, which counts LOADING as alive"},
	{Name: "ping_readiness_local.sh", Queries: true,
		What: "the Bitnami Redis readiness script, which requires PONG"},
}

// HTTPEndpoint is an HTTP health endpoint whose behaviour is known.
type HTTPEndpoint struct {
	Server  string // the table entry it belongs to: "PostgreSQL"
	Who     string // "CloudNativePG instance manager"
	Port    int32
	Path    string
	Queries bool
	What    string
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
}

// ProbeQuery is what a probe asks of the server.
type ProbeQuery struct {
	// Queries: the probe needs the server to accept a connection or
	// answer a query, so it fails while the server recovers.
	Queries  bool
	Evidence string
	// Assumed is set when the query is inferred (an unknown script on a
	// database-like image) rather than seen in the command.
	Assumed bool
}

// ProbeQueries reports whether probe p of container c (of a workload of
// the given kind, classified as v) needs the server to accept a login or
// answer a query, with the evidence.
func ProbeQueries(kind string, c *corev1.Container, p *corev1.Probe, v Verdict) (bool, string) {
	q := Probe(kind, c, p, v)
	return q.Queries, q.Evidence
}

// Probe is ProbeQueries with the whole verdict.
func Probe(kind string, c *corev1.Container, p *corev1.Probe, v Verdict) ProbeQuery {
	switch {
	case p == nil:
		return ProbeQuery{}
	case p.TCPSocket != nil:
		return ProbeQuery{Evidence: "tcpSocket only opens a connection, which the kernel accepts without the server answering"}
	case p.GRPC != nil:
		return ProbeQuery{Evidence: "grpc asks the server's health service, not known to need a query"}
	case p.HTTPGet != nil:
		return httpQuery(c, p.HTTPGet, v)
	case p.Exec != nil:
		return execQuery(kind, c, p.Exec.Command, v)
	}
	return ProbeQuery{Evidence: "the probe has no handler"}
}

func httpQuery(c *corev1.Container, h *corev1.HTTPGetAction, v Verdict) ProbeQuery {
	port := resolvePort(c, h.Port)
	desc := fmt.Sprintf("httpGet :%s%s", h.Port.String(), h.Path)
	return urlQuery(desc, port, h.Path, v)
}

// urlQuery decides for an HTTP request to port and path of the container.
func urlQuery(desc string, port int32, urlPath string, v Verdict) ProbeQuery {
	p := urlPath
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	if v.Server != nil {
		for _, e := range HTTPEndpoints {
			if e.Server == v.Server.Name && e.Port == port && strings.TrimSuffix(p, "/") == e.Path {
				return ProbeQuery{Queries: e.Queries, Evidence: fmt.Sprintf("%s is the %s's %s on port %d, which %s", desc, e.Who, e.Path, e.Port, e.What)}
			}
		}
		if containsPort(v.Server.QueryHTTPPorts, port) {
			return ProbeQuery{Queries: true, Evidence: fmt.Sprintf("%s asks %s's own query API (port %d)", desc, v.Server.Name, port)}
		}
	}
	return ProbeQuery{Evidence: desc + " is not a known query API: assumed to answer without querying the server"}
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
var acceptsRejecting = regexp.MustCompile(`\$\?\s*(-ne|!=)\s*2\b|\$\?\s*(-lt|<)\s*2\b|\$\?\s*(-eq|==?)\s*1\b`)

func execQuery(kind string, c *corev1.Container, argv []string, v Verdict) ProbeQuery {
	if len(argv) == 0 {
		return ProbeQuery{Evidence: "exec has no command"}
	}
	desc := "exec [" + strings.Join(argv, " ") + "]"
	script, cmds := commandsOf(argv)
	// Query commands first: one is enough.
	var accepting string
	for _, cmd := range cmds {
		name := queryCommand(cmd)
		if name == "" {
			continue
		}
		if name == "pg_isready" && acceptsRejecting.MatchString(script) {
			accepting = name
			continue
		}
		if name == "curl" || name == "wget" {
			if q, ok := curlQuery(cmd, v); ok {
				return q
			}
			continue
		}
		ev := "exec runs " + name + ", which " + commandWhat[name]
		if s := serverOfCommand(name); s != "" && (v.Server == nil || v.Server.Name != s) {
			ev = "exec runs " + name + " (a " + s + " client), which " + commandWhat[name]
		}
		return ProbeQuery{Queries: true, Evidence: ev}
	}
	if accepting != "" {
		return ProbeQuery{Evidence: "exec runs pg_isready but accepts its exit 1: it passes while PostgreSQL rejects connections in crash recovery"}
	}
	// Scripts: known ones by name, unknown ones by the image they run on.
	for _, cmd := range cmds {
		name := path.Base(cmd[0])
		if !isScript(cmd[0]) {
			continue
		}
		base := path.Base(imageRepository(c.Image))
		for _, s := range Scripts {
			if s.Name == name && (s.Image == "" || s.Image == base) {
				return ProbeQuery{Queries: s.Queries, Evidence: "exec runs " + cmd[0] + ", " + s.What}
			}
		}
		if v.DatabaseLike && !RunsToCompletion(kind) {
			return ProbeQuery{Queries: true, Assumed: true,
				Evidence: "exec runs the script " + cmd[0] + " on a " + v.Server.Name + " container: assumed to log in and query, as health checks of database images do"}
		}
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

func serverOfCommand(qc string) string {
	for _, s := range Servers {
		if contains(s.QueryCommands, qc) {
			return s.Name
		}
	}
	return ""
}

// curlQuery finds the URL of a curl or wget command and decides whether it
// asks the server's query API.
func curlQuery(cmd []string, v Verdict) (ProbeQuery, bool) {
	for _, a := range cmd[1:] {
		if strings.HasPrefix(a, "-") {
			continue
		}
		port, urlPath, ok := parseURL(a)
		if !ok {
			continue
		}
		if q := urlQuery(path.Base(cmd[0])+" "+a, port, urlPath, v); q.Queries {
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
	wrappers   = []string{"exec", "env", "command", "nice", "nohup", "gosu", "su-exec", "sudo", "chpst"}
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
func StartupOf(kind string, c *corev1.Container, v Verdict, minBudget int) Startup {
	sp := c.StartupProbe
	if sp == nil {
		return Startup{Why: "there is no startupProbe"}
	}
	t := probe.TimingOf(sp, nil)
	s := Startup{Present: true, Budget: t.StartupBudget(), BudgetFormula: t.NeverHealthyKillFormula()}
	budget := fmt.Sprintf("%d s (%s)", s.Budget, s.BudgetFormula)
	q := Probe(kind, c, sp, v)
	s.FailsDuringRecovery = q.Queries
	why := q.Evidence
	if sp.TCPSocket != nil && v.Server != nil {
		switch {
		case v.Server.PortClosedDuringRecovery:
			s.FailsDuringRecovery = true
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
	s := StartupOf(kind, c, v, minBudget)
	return s.Holds, s.Why
}
