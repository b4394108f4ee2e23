package classify

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The server lab (internal/serverlab) starts real servers from Debian's
// packages, crashes them, and records what the probe commands of this
// package's tables did while they recovered. Its last run is committed as
// lab.json; docs/servers.md is rendered from it, and LabContradictions
// holds the tables to it, in the fast tests as in the lab itself.

//go:embed lab.json
var labJSON []byte

// LabRun is one run of the server lab.
type LabRun struct {
	Date    string // "2026-12-04", UTC
	Machine string // "2 shared cores, Debian 12"
	Servers []LabServer
}

// LabServer is what one server did in the lab.
type LabServer struct {
	Server  string // its entry of Servers: "PostgreSQL"
	Package string // the Debian package: "postgresql-15"
	Version string // the server's own version: "15.18"
	// Date is the day it was measured, when it differs from the run's
	// (a run merges servers measured on several days).
	Date string `json:",omitempty"`
	// Image is the container image a manifest would run it from, for the
	// classification of its probes ("postgres:15").
	Image string
	Port  int32 // its well-known port, as a manifest writes it
	// Replicas is the size of the ensemble the measured server was a
	// member of (ZooKeeper's quorum); 0 or 1: it ran alone.
	Replicas int32 `json:",omitempty"`
	// Skipped says why it could not run on the machine; nothing else is
	// then recorded.
	Skipped string `json:",omitempty"`
	// Recovery is the restart after a SIGKILL under write load.
	Recovery LabRecovery
	// LoadAverage is the machine's 1-minute load average when the
	// recovery began: the lab shares its cores, and its seconds say how
	// fast the machine was then, not how fast the server is.
	LoadAverage float64
	Probes      []LabProbe
	Stops       []LabStop `json:",omitempty"`
	Loop        *LabLoop  `json:",omitempty"`
}

// LabRecovery is the restart that the probes were run against.
type LabRecovery struct {
	// What it had to recover: "760 MB of WAL", "a 1.1 GB AOF".
	What string
	// ReadySeconds is when, after the restart, the server first answered
	// its reference query (Ready); the probes' samples before it were
	// taken during the recovery.
	ReadySeconds float64
	Ready        string // the command that says it serves: "psql -c 'SELECT 1'"
	// RecoveringSeconds is when Ready last failed before it passed (the
	// end of that sample when it got no answer until its timeout): the
	// samples taken before it were taken during the recovery, whatever
	// order the probes ran in.
	RecoveringSeconds float64
	// RecoveringSince is when that last failing sample of Ready began:
	// before RecoveringSeconds when it got no answer until its timeout,
	// so the server may have been ready anywhere between the two; zero in
	// records that predate it.
	RecoveringSince float64 `json:",omitempty"`
	// ListenSeconds is when its port first accepted a TCP connection;
	// negative when it never did before the lab stopped sampling.
	ListenSeconds float64
	// Log lines of the server that mark the recovery, as printed.
	Log []string `json:",omitempty"`
}

// LabProbe is one probe command, run over and over from the restart until
// the server was ready (and a little after).
type LabProbe struct {
	// Command is the command line as a manifest writes it (the server's
	// well-known port); TCP is set instead for a tcpSocket probe.
	Command []string `json:",omitempty"`
	TCP     bool     `json:",omitempty"`
	Phases  []LabPhase
}

// LabPhase is a run of samples with the same exit code and output.
type LabPhase struct {
	From, To float64 // seconds after the restart, first and last sample
	Samples  int
	Exit     int    // the command's exit code; -1 when it outlasted the probe's timeout
	Output   string // its output's first line, the lab's port and paths put back to the manifest's
}

// LabStop is a stop with a signal.
type LabStop struct {
	Signal string // "SIGTERM"
	Client bool   // a client session stayed connected
	// Stopped: it exited within WaitSeconds, after Seconds.
	Stopped     bool
	Seconds     float64
	WaitSeconds float64
	What        string `json:",omitempty"` // "a 600 MB dataset written to the RDB file"
	// CPUSeconds is the CPU time the server used from the signal to its
	// exit, when measured: what the stop costs on an idle core, however
	// busy the lab's machine was.
	CPUSeconds float64 `json:",omitempty"`
}

// LabLoop is a liveness probe's loop: the lab kills the server each time
// its probe has failed for the budget, as the kubelet would.
type LabLoop struct {
	Probe         string  // the probe command
	BudgetSeconds float64 // time from the restart to the kill, the longest of the kills
	Kills         int     // kills in a row, each before the recovery had ended
	// KillSeconds is the time from each restart to its kill.
	KillSeconds []float64 `json:",omitempty"`
	// CPUShare is the share of a core the server got during the loop
	// (0.1: 10 ms of every 100 ms), as a BestEffort pod gets on a busy
	// node; 0 when it ran at full speed.
	CPUShare float64 `json:",omitempty"`
	// Evidence that each restart began the recovery again: the server's
	// log lines, one a restart.
	Evidence []string
	// RecoverySeconds is the recovery left alone afterwards.
	RecoverySeconds float64
}

// Lab is the committed lab run.
func Lab() (LabRun, error) {
	var r LabRun
	// exactjson:insensitive: the project's own file, written by encoding/json.
	err := json.Unmarshal(labJSON, &r)
	return r, err
}

// LabServerOf returns the lab's record of a server, or nil.
func (r *LabRun) LabServerOf(server string) *LabServer {
	for i := range r.Servers {
		if r.Servers[i].Server == server && r.Servers[i].Skipped == "" && r.Servers[i].Replicas <= 1 {
			return &r.Servers[i]
		}
	}
	return nil
}

// name is the server's name in the lab's tables, with its ensemble's
// size when it was a member of one.
func (s *LabServer) name() string {
	if s.Replicas > 1 {
		return fmt.Sprintf("%s, a member of %d", s.Server, s.Replicas)
	}
	return s.Server
}

// Probe renders the probe as a manifest's exec command, or tcpSocket.
func (p LabProbe) String() string {
	if p.TCP {
		return "tcpSocket"
	}
	var w []string
	for _, a := range p.Command {
		if strings.ContainsAny(a, " '|;&$") || a == "" {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		w = append(w, a)
	}
	return strings.Join(w, " ")
}

// during is the probe's samples taken during the recovery.
func (p LabProbe) during(ready float64) []LabPhase {
	var out []LabPhase
	for _, ph := range p.Phases {
		if ph.From < ready {
			out = append(out, ph)
		}
	}
	return out
}

// Expected is what the tables say the probe does while the server
// recovers: Fails, Passes, or "" when they do not say.
func (s *LabServer) Expected(p LabProbe) (string, string) {
	c := &corev1.Container{Name: "server", Image: s.Image, Ports: []corev1.ContainerPort{{ContainerPort: s.Port}}}
	// A ZooKeeper the lab runs alone is standalone; one of its ensemble
	// is a quorum member.
	v := Members(ContainerOf("", c), c, max(1, s.Replicas))
	if v.Server == nil {
		return "", "the image " + s.Image + " is not classified as a server"
	}
	pr := &corev1.Probe{}
	if p.TCP {
		pr.TCPSocket = &corev1.TCPSocketAction{Port: intstr.FromInt32(s.Port)}
	} else {
		pr.Exec = &corev1.ExecAction{Command: p.Command}
	}
	q := Probe("StatefulSet", c, pr, v)
	switch {
	case q.FailsDuringRecovery(v):
		return Fails, q.Evidence
	case q.PassesDuringRecovery(v):
		return Passes, q.Evidence
	}
	return "", q.Evidence
}

// Unstable is the verdict of a probe that failed after the server was
// ready too: its failures are not the recovery's.
const Unstable = "failed after the recovery too"

// failureThreshold is the kubelet's default failureThreshold: fewer
// failures in a row do not fail a probe, so the lab judges runs of
// failed samples, not single ones (ZooKeeper's ruok came back empty now
// and then, recovering or not).
const failureThreshold = 3

// minPeriodSeconds is the shortest period a probe can have (k8s.io/api
// core/v1 Probe.PeriodSeconds: "Default to 10 seconds. Minimum value is 1.").
const minPeriodSeconds = 1.0

// Measured is what the probe did during the recovery: Fails when every
// sample failed, Passes when it never failed failureThreshold samples in
// a row once the port was open, Unstable when it did so after the
// recovery too, Depends otherwise; "" when no sample was taken during it.
func (s *LabServer) Measured(p LabProbe) string {
	rec := s.Recovery
	ph := p.during(rec.RecoveringSeconds)
	if len(ph) == 0 {
		return ""
	}
	fail := true
	for _, x := range ph {
		if x.Exit == 0 && !rec.endsWith(x) {
			fail = false
		}
	}
	if fail {
		// A probe that never passed, not even once the server was
		// ready, says nothing about the recovery: the lab's machine or
		// the probe itself failed it (a script that outlasted its
		// timeout on a busy machine).
		// A run of passes that lasts past the ready time counts, though
		// it began a sample before it (InfluxDB's /ping passed at 17.7 s,
		// its ready query at 17.8 s).
		for _, x := range p.Phases {
			if x.To >= rec.ReadySeconds && x.Exit == 0 {
				return Fails
			}
		}
		return Unstable
	}
	// Runs of failures once the port was open, during the recovery and
	// after it. A run fails a probe only when a kubelet probing at the
	// shortest period it allows would have met failureThreshold failures
	// in a row in it: that many samples, spanning failureThreshold-1
	// periods. (The lab samples several times a second; three empty
	// answers within a second are one failure to such a probe.)
	during, after := false, false
	samples, from := 0, 0.0
	for _, x := range p.Phases {
		if x.Exit == 0 || rec.ListenSeconds < 0 || x.From < rec.ListenSeconds {
			samples = 0
			continue
		}
		if samples == 0 {
			from = x.From
		}
		samples += x.Samples
		if samples < failureThreshold || x.To-from < (failureThreshold-1)*minPeriodSeconds {
			continue
		}
		if x.From < rec.RecoveringSeconds {
			during = true
		} else if x.From > rec.ReadySeconds {
			after = true
		}
	}
	switch {
	case after:
		return Unstable
	case !during:
		return Passes
	}
	return Depends
}

// endsWith reports whether a run of passes is the recovery's end as the
// probe saw it rather than a pass during it: it began while Ready's last
// sample waited for an answer it never got (etcd's `endpoint health`
// waited from 2.3 s to 4.3 s, the same command with a 1 s timeout passed
// from 4.0 s, 2026-12-05) and lasted past the ready time.
func (rec LabRecovery) endsWith(x LabPhase) bool {
	return rec.RecoveringSince > 0 && rec.RecoveringSince < rec.RecoveringSeconds &&
		x.From >= rec.RecoveringSince && x.To >= rec.ReadySeconds
}

// listenSlack is how long before it answers a server that keeps its port
// closed during recovery may accept TCP connections: the kernel accepts
// on the bound socket before the server's first accept (MariaDB binds in
// network_init, then starts its listener thread).
const listenSlack = 1.0

// LabContradictions holds the tables to the lab's measurements: each
// string is a row that what was measured contradicts.
func LabContradictions(r LabRun) []string {
	var out []string
	for i := range r.Servers {
		s := &r.Servers[i]
		if s.Skipped != "" {
			continue
		}
		row := serverNamed(s.Server)
		if row == nil {
			out = append(out, s.Server+": no row of the server table")
			continue
		}
		rec := s.Recovery
		listened := rec.ListenSeconds >= 0 && rec.ListenSeconds < rec.RecoveringSeconds
		switch {
		case row.ListensDuringRecovery || len(row.EnsembleEnv) > 0:
			if !listened {
				out = append(out, fmt.Sprintf("%s: the table says it listens while it recovers, but its port opened at %.1f s, after the last sample that found it recovering (%.1f s)", s.Server, rec.ListenSeconds, rec.RecoveringSeconds))
			}
		case row.PortClosedDuringRecovery:
			if listened && rec.RecoveringSeconds-rec.ListenSeconds > listenSlack {
				out = append(out, fmt.Sprintf("%s: the table says its port stays closed while it recovers, but it accepted a connection at %.1f s, %.1f s before it last failed to answer", s.Server, rec.ListenSeconds, rec.RecoveringSeconds-rec.ListenSeconds))
			}
		}
		for _, p := range s.Probes {
			want, why := s.Expected(p)
			got := s.Measured(p)
			if want == "" || got == "" || got == Unstable || want == got {
				continue
			}
			out = append(out, fmt.Sprintf("%s: %s: the tables say it %s during recovery (%s), the lab measured that it %s", s.Server, p.String(), want, why, got))
		}
	}
	return append(out, messageContradictions(r)...)
}

func serverNamed(name string) *Server {
	for i := range Servers {
		if Servers[i].Name == name {
			return &Servers[i]
		}
	}
	return nil
}

// labMarkdown renders the lab's run for docs/servers.md.
func labMarkdown(r LabRun) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n## Measured in the server lab\n\n")
	fmt.Fprintf(&b, "The server lab (`internal/serverlab`, run by `hack/test-serverlab.sh`) starts each server from Debian's package in a temporary directory as an unprivileged user, kills it with SIGKILL under a write load, restarts it, and runs the probe commands over and over until it serves; then it stops it with SIGTERM with a client connected. Last run: %s, %s. A row of the tables above that these figures contradict fails the lab and the fast tests.\n\n", r.Date, r.Machine)
	b.WriteString("What the lab's first runs (December 2026) changed: no verdict of the tables. Every probe command the tables classify did during the recovery what its row says (the last column against the one before it), and so did the port of each server. One text changed: MariaDB's clients do not print MySQL's `ERROR 2003 ... (111)` while InnoDB recovers but `ERROR 2002 (HY000): Can't connect to server on '127.0.0.1' (115)`, which the table of what users see now quotes (the lab fails if they stop printing it). Two things the sources did not say: `pg_isready` exits 2 (\"no response\") in the second before the postmaster listens, then 1, as the issue's earlier run saw; and ZooKeeper answered `echo ruok | nc` with nothing now and then, during its load and after it, where `printf ruok` (no trailing newline left unread when the server closes) always got `imok` in the same run: one empty answer in a row, which a probe's default failureThreshold of 3 absorbs, so the lab judges runs of three failed samples spanning two seconds or more, what a probe run every second (the shortest period a probe can have) would count as three failures. A run of passes that began while the reference query's last sample was still waiting for the answer it never got, and lasted past the ready time, passed at the recovery's end, not during it: etcdctl's `endpoint health` with a 1 s timeout passed from 4.0 s while the same command without one waited from 2.3 s to 4.3 s (2026-12-05), and the lab had judged it to pass during the recovery in one run of three. RabbitMQ, whose rows are *assumed*, was measured too: `rabbitmq-diagnostics -q check_running` failed until the broker had booted, as assumed, its AMQP port stayed closed meanwhile, and `rabbitmq-diagnostics -q ping`, which asks the Erlang node rather than the broker, passed throughout the boot.\n\n")
	b.WriteString("What the December 5 runs changed: RabbitMQ's rows are no longer *assumed*. Its AMQP port stays closed until the boot has recovered the queues (an earlier run's sample that found it open at 0.0 s was the killed node, not yet gone: the lab now waits for the whole process group), so RabbitMQ is a server whose port is closed during recovery and a tcpSocket probe of 5672 now fails during it, a verdict that changed; `rabbitmq-diagnostics check_running`, `rabbitmqctl node_health_check` and `rabbitmq-diagnostics check_local_alarms` fail until the broker has booted (the last two with exit 64, \"this command requires the 'rabbit' app to be running\"). A health check of the shape of the MariaDB image's `healthcheck.sh --connect --innodb_initialized` failed during the recovery, as its row says. PostgreSQL's fast shutdown writes the dirty pages of shared_buffers in its shutdown checkpoint, as BF601 counts them: after some 100 MB of inserted rows, SIGINT with a client connected stopped it in 1.3 s, its checkpoint having written 11165 pages of 8 kB, 68.1 % of shared_buffers 128MB (2026-12-05, fsync off); that run's probes outlasted their 2 s timeout before and after the server was ready, at a load average of 24 on 2 cores, so its figures were not kept, and the lab's next run of PostgreSQL, the one in the tables below, measured the stop again: 0.5 s, 11229 pages, 68.5 % (the stop table). A ZooKeeper quorum member, measured as member 1 of an ensemble of 3 on localhost ports, all three killed under a write load and member 1 restarted alone, changed a verdict: its log shows the client port bound before the snapshot is read (QuorumPeerMain's `runFromConfig` configures the connection factory, which binds the socket, before `QuorumPeer.start` loads the data and only then starts the accept thread), so a tcpSocket probe passes during the load, while ruok and srvr get no answer until it has ended; the table had a quorum member's port closed, so that tcpSocket failed. Without a quorum, the member then answers ruok with imok and srvr with \"This ZooKeeper instance is not currently serving requests\" until a second member joins it.\n\n")
	b.WriteString("What the runs of Prometheus, InfluxDB and ClickHouse (2026-12-05) changed: ClickHouse 18.16 opened neither its native port 9000 nor its HTTP port 8123 until it had loaded every table's parts (`Server::main` calls `loadMetadata` before it creates the servers): a tcpSocket probe and GET /ping, which the tables did not classify for ClickHouse, fail while it loads, so ClickHouse 18.x is now a server whose port is closed during recovery, as InfluxDB 1.x is. InfluxDB 1.6 kept 8086 closed until its shards were loaded, as its row read from source says, and the `influx` CLI, which the tables did not know, exited 1 (\"Failed to connect to\") meanwhile: it is now a query command of InfluxDB. Prometheus 2.42 answered /-/healthy with 200 and /-/ready with 503 while it replayed its WAL, as its rows say. Their stop is measured without a client: no rule sizes it.\n\n")
	b.WriteString("What the lab's record changed in the table of what users see, whose rows the lab measures are now held to its record (the signs in the table's last column): etcd's row said etcdctl and HTTP clients print `Error: context deadline exceeded`; the lab's `etcdctl endpoint health`, given a --command-timeout shorter than the probe's timeout, printed `http://127.0.0.1:2379 is unhealthy: failed to commit proposal: context deadline exceeded` and exited 1 while etcd replayed its WAL, and curl got no answer at all until its timeout, so the rows now say each. Debian's etcd 3.4 does not log `\"msg\":\"bootstrap successfully\"` once the replay is over (etcd 3.6's `NewServer` does) but `embed: ready to serve client requests`, now a row of its own. MariaDB's log line goes on, `InnoDB: Starting crash recovery from checkpoint LSN=...`, where the row ended with a full stop.\n\n")
	b.WriteString("Not measured, and why: the lab runs the servers Debian 12 ships. MongoDB, Cassandra, Elasticsearch, CouchDB, Kafka, Neo4j, CockroachDB, MinIO, Loki, Mimir, NATS Streaming and ClickHouse Keeper are not in Debian 12, so their rows stay read from source or *assumed*. Debian ships Prometheus 2.42, InfluxDB 1.6 and ClickHouse 18.16, which the lab runs (their rows of later major versions stay read from source: InfluxDB 2 and 3, ClickHouse with async_load_databases, which loads tables after it listens). NATS (nats-server) and memcached are in Debian, but no rule or row of these tables speaks of how they recover: NATS Streaming's row is another server, not in Debian, and memcached appears only as a workload of BF303's examples, whose finding is about its disruption budget, not its recovery. ZooKeeper runs both ways: alone, and as member 1 of an ensemble of 3 on localhost ports, all three killed under a write load and member 1 restarted without the others, so that it has no quorum. Of the servers it runs, these rows are read from source, not measured: PostgreSQL 14's \"starting up\" text (Debian 12 ships 15 only) and the \"in recovery mode\" text of an in-place crash restart (the lab kills the whole server, as a container restart does); MySQL's own `ERROR 2003` text (Debian ships MariaDB); etcd 3.6's log line (Debian ships 3.4) and the `Error: context deadline exceeded` of etcdctl's other commands (the lab probes with `endpoint health`); a Redis started with `--save \"\"` loading nothing. The stop of etcd, ZooKeeper and RabbitMQ is measured without a client: no rule sizes their stop (BF601 sizes PostgreSQL's and Redis's).\n\n")
	b.WriteString("Its seconds are how long things took on that machine at that time (the load average when the recovery began is in the recovery's column), not how fast the servers are: the lab checks what the probes did while the server recovered, which does not depend on the speed.\n\n")
	b.WriteString("| server | version | recovered | port open | ready | probe | what it did, seconds after the restart | tables say | measured |\n|---|---|---|---|---|---|---|---|---|\n")
	servers := append([]LabServer{}, r.Servers...)
	sort.SliceStable(servers, func(i, j int) bool { return serverIndex(servers[i].Server) < serverIndex(servers[j].Server) })
	for i := range servers {
		s := &servers[i]
		if s.Skipped != "" {
			fmt.Fprintf(&b, "| %s | %s | not run: %s | | | | | | |\n", s.name(), s.Package, cell(s.Skipped))
			continue
		}
		listen := "never before ready"
		if s.Recovery.ListenSeconds >= 0 {
			listen = fmt.Sprintf("%.1f s", s.Recovery.ListenSeconds)
		}
		for j, p := range s.Probes {
			head := "| | | | | "
			if j == 0 {
				head = fmt.Sprintf("| %s | %s %s | %s (load average %.1f) | %s | %.1f s | ", s.name(), s.Package, s.Version, cell(s.Recovery.What), s.LoadAverage, listen, s.Recovery.ReadySeconds)
			}
			want, _ := s.Expected(p)
			if want == "" {
				want = "not classified"
			}
			got := s.Measured(p)
			if got == "" {
				got = "no sample"
			}
			fmt.Fprintf(&b, "%s`%s` | %s | %s | %s |\n", head, cell(p.String()), cell(phases(p.Phases)), want, got)
		}
	}
	b.WriteString("\n| server | stop | client connected | result |\n|---|---|---|---|\n")
	for i := range servers {
		s := &servers[i]
		for _, st := range s.Stops {
			res := fmt.Sprintf("had not stopped after %.0f s", st.WaitSeconds)
			if st.Stopped {
				res = fmt.Sprintf("stopped after %.1f s", st.Seconds)
				if st.CPUSeconds > 0 {
					res += fmt.Sprintf(", %.1f s of it on the CPU", st.CPUSeconds)
				}
			}
			if st.What != "" {
				res += " (" + st.What + ")"
			}
			fmt.Fprintf(&b, "| %s | %s | %v | %s |\n", s.name(), st.Signal, yesNo(st.Client), cell(res))
		}
	}
	b.WriteString("\nThe loop: the lab runs the liveness probe as the kubelet would (every second, a timeout of 1 s, failureThreshold 3), kills the server with SIGKILL when it has failed three times in a row, and restarts it, which begins the recovery again. During the loop the server gets a share of a core, as the seed outage's BestEffort pod did (cpu.weight 1 against its neighbours' 100): the lab stops its process group with SIGSTOP for the rest of every 100 ms and continues it with SIGCONT, which is what cgroup v2's `cpu.max` does to a cgroup (a writable, delegated cgroup, which cpu.max needs, is not there for an unprivileged CI job or on a cgroup v1 machine; a process group always is). Starved, a recovery that takes its dataset a second of CPU lasts ten, past the probe's budget on any machine; at full speed on an idle machine (load average 2.2, 2026-12-04) PostgreSQL replayed 1040 MB of WAL and Redis loaded its AOF in 5.2 s each, which a budget of a few seconds more lets through, so the lab no longer depends on the machine's speed to show the loop. The recovery left alone afterwards runs at full speed. The lab fails if the probe passes during the loop or a recovery ends before its kill.\n\n")
	b.WriteString("| server | liveness probe | server's share of a core | killed, seconds after each restart | kills in a row | each restart | recovery left alone, full speed |\n|---|---|---|---|---|---|---|\n")
	for i := range servers {
		s := &servers[i]
		if l := s.Loop; l != nil {
			share := "all of it"
			if l.CPUShare > 0 {
				share = fmt.Sprintf("%.0f %%", l.CPUShare*100)
			}
			at := fmt.Sprintf("%.0f s", l.BudgetSeconds)
			if len(l.KillSeconds) > 0 {
				var w []string
				for _, k := range l.KillSeconds {
					w = append(w, fmt.Sprintf("%.1f s", k))
				}
				at = strings.Join(w, ", ")
			}
			fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %d | %s | %.1f s |\n", s.Server, cell(l.Probe), share, at, l.Kills, cell(strings.Join(l.Evidence, "; ")), l.RecoverySeconds)
		}
	}
	return b.String()
}

func phases(ps []LabPhase) string {
	var w []string
	for _, p := range ps {
		exit := fmt.Sprintf("exit %d", p.Exit)
		if p.Exit < 0 {
			exit = "timed out"
		}
		out := ""
		if p.Output != "" {
			out = ` "` + p.Output + `"`
		}
		w = append(w, fmt.Sprintf("%.1f-%.1f: %s%s", p.From, p.To, exit, out))
	}
	return strings.Join(w, "; ")
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func serverIndex(name string) int {
	for i := range Servers {
		if Servers[i].Name == name {
			return i
		}
	}
	return len(Servers)
}

// measuredServer is the mark of a server row the lab ran: "*measured*
// (PostgreSQL 15.18, Debian's postgresql-15, 2026-12-04); ", or "".
func (r *LabRun) measuredServer(server string) string {
	var w []string
	for i := range r.Servers {
		s := &r.Servers[i]
		if s.Server != server || s.Skipped != "" {
			continue
		}
		date := s.Date
		if date == "" {
			date = r.Date
		}
		what := fmt.Sprintf("%s %s, Debian's %s, %s", s.Server, s.Version, s.Package, date)
		if s.Replicas > 1 {
			what = fmt.Sprintf("a member of an ensemble of %d, %s", s.Replicas, date)
		}
		w = append(w, what)
	}
	if len(w) == 0 {
		return ""
	}
	return "*measured* (" + strings.Join(w, "; ") + "); "
}

// measuredCommand is the mark of a command row whose command the lab ran
// as a probe of its server, or "".
func (r *LabRun) measuredCommand(server, name string) string {
	for i := range r.Servers {
		s := &r.Servers[i]
		if s.Skipped != "" || s.Server != server {
			continue
		}
		for _, p := range s.Probes {
			if runsCommand(p.Command, name) {
				return r.measuredServer(server)
			}
		}
	}
	return ""
}

// measuredScript is the mark of a health-check script the lab ran (one of
// the same shape, under the same name) as a probe of a server of the
// script's image, or "".
func (r *LabRun) measuredScript(sc Script) string {
	for i := range r.Servers {
		s := &r.Servers[i]
		if s.Skipped != "" || (sc.Image != "" && path.Base(imageRepository(s.Image)) != sc.Image) {
			continue
		}
		for _, p := range s.Probes {
			if len(p.Command) > 0 && path.Base(p.Command[0]) == sc.Name {
				return r.measuredServer(s.Server)
			}
		}
	}
	return ""
}

// runsCommand: the probe's command line runs name ("rabbitmq-diagnostics
// check_running" needs both words), directly or in a sh -c script.
func runsCommand(argv []string, name string) bool {
	words := strings.Fields(strings.Join(argv, " "))
	want := strings.Fields(name)
	for i := range words {
		if strings.Trim(words[i], `'"`) != want[0] {
			continue
		}
		rest := words[i+1:]
		ok := true
		for _, w := range want[1:] {
			if !containsWord(rest, w) {
				ok = false
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func containsWord(words []string, w string) bool {
	for _, x := range words {
		if strings.Trim(x, `'"`) == w {
			return true
		}
	}
	return false
}

// messageRecord is the lab's record that a message of the table of what
// users see is about: the server's, run alone or as a member of an
// ensemble as the message says; nil when the lab did not run it.
func (r *LabRun) messageRecord(server string, m Message) *LabServer {
	for i := range r.Servers {
		s := &r.Servers[i]
		if s.Server == server && s.Skipped == "" && (s.Replicas > 1) == m.Member {
			return s
		}
	}
	return nil
}

// shows says whether the record holds the sign: for a probe, a sample
// taken during the recovery with its exit code and output; for the log,
// one of the server's log lines, during the recovery or the loop.
func (s *LabServer) shows(g LabSign) bool {
	if g.Probe == "" {
		for _, line := range s.Recovery.Log {
			if strings.Contains(line, g.Says) {
				return true
			}
		}
		if s.Loop != nil {
			for _, line := range s.Loop.Evidence {
				if strings.Contains(line, g.Says) {
					return true
				}
			}
		}
		return false
	}
	for _, p := range s.Probes {
		if !p.runs(g.Probe) {
			continue
		}
		for _, ph := range p.during(s.Recovery.RecoveringSeconds) {
			if ph.Exit == g.Exit && strings.Contains(spaced(ph.Output), g.Says) {
				return true
			}
		}
	}
	return false
}

// runs: word is "tcpSocket" and the probe is one, or a word of its
// command line.
func (p LabProbe) runs(word string) bool {
	if p.TCP {
		return word == "tcpSocket"
	}
	return containsWord(strings.Fields(strings.Join(p.Command, " ")), word)
}

// spaced collapses runs of spaces: psql prints "FATAL:  the".
func spaced(s string) string { return strings.Join(strings.Fields(s), " ") }

// String is a sign as the docs and the failures write it.
func (g LabSign) String() string {
	if g.Probe == "" {
		return fmt.Sprintf("a log line with %q", g.Says)
	}
	exit := fmt.Sprintf("exit %d", g.Exit)
	if g.Exit == LabTimedOut {
		exit = "no answer within its timeout"
	}
	if g.Says == "" {
		return fmt.Sprintf("%s: %s", g.Probe, exit)
	}
	return fmt.Sprintf("%s: %s, %q", g.Probe, exit, g.Says)
}

// messageContradictions are the rows of the table of what users see that
// the lab's record of their server does not show.
func messageContradictions(r LabRun) []string {
	var out []string
	for _, rb := range Recoveries {
		for _, m := range rb.Messages {
			s := r.messageRecord(rb.Server, m)
			if s == nil {
				continue
			}
			for _, g := range m.Lab {
				if !s.shows(g) {
					out = append(out, fmt.Sprintf("%s: what users see %s, %q: the lab's record shows no %s during the recovery", s.name(), m.When, m.Text, g))
				}
			}
		}
	}
	return out
}

// measuredMessage is the "checked in" cell of a message: measured where
// the lab ran its server and its record shows the message's signs, else
// where its words were read, else the words are assumed.
func (r *LabRun) measuredMessage(rb *RecoveryBehaviour, m Message) string {
	var what string
	if s := r.messageRecord(rb.Server, m); s != nil && len(m.Lab) > 0 {
		var signs []string
		for _, g := range m.Lab {
			if !s.shows(g) {
				signs = nil
				break
			}
			signs = append(signs, g.String())
		}
		if signs != nil {
			what = fmt.Sprintf("*measured* (%s): %s", s.mark(r.Date), strings.Join(signs, "; "))
		}
	}
	switch {
	case what != "" && m.Source != "":
		return what + "; the text: " + m.Source
	case what != "":
		return what
	case m.Source != "":
		return "read from source: " + m.Source
	case rb.Source != "":
		return "the behaviour read from source (the server's row above); the words *assumed*"
	}
	return "*assumed*"
}

// mark names the record's run: server, version, package and day.
func (s *LabServer) mark(runDate string) string {
	date := s.Date
	if date == "" {
		date = runDate
	}
	if s.Replicas > 1 {
		return fmt.Sprintf("%s %s, a member of an ensemble of %d, Debian's %s, %s", s.Server, s.Version, s.Replicas, s.Package, date)
	}
	return fmt.Sprintf("%s %s, Debian's %s, %s", s.Server, s.Version, s.Package, date)
}
