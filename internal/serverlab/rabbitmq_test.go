package serverlab

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"backfire.dev/backfire/internal/classify"
)

// slow is a probe of the CLI tools, which start an Erlang VM of their
// own, which takes seconds before it asks the node anything: the lab
// gives them a timeoutSeconds of 20.
func slow(argv ...string) probe { return probe{argv: argv, timeout: 20 * time.Second} }

// rabbitQueues is how many durable queues the node recovers at boot.
const rabbitQueues = 3000

// RabbitMQ's node boots, recovering its durable queues, while the probes
// of the tables (rabbitmq-diagnostics ping and check_running) run.
func TestRabbitMQ(t *testing.T) {
	// Debian's /usr/sbin wrappers run the node only as root or rabbitmq:
	// the lab calls the scripts they wrap.
	const bin = "/usr/lib/rabbitmq/bin/"
	l := newLab(t, 5672, bin+"rabbitmq-server", bin+"rabbitmq-diagnostics", bin+"rabbitmqctl")
	l.programs = map[string]string{"rabbitmq-diagnostics": bin + "rabbitmq-diagnostics", "rabbitmqctl": bin + "rabbitmqctl"}
	s := classify.LabServer{Server: "RabbitMQ", Package: "rabbitmq-server", Image: "rabbitmq:3.10", Port: 5672}
	s.Version = pkgVersion("rabbitmq-server")
	if len(s.Version) > 6 {
		s.Version = s.Version[:6]
	}
	// The node starts Erlang's port mapper as a daemon, outside the
	// lab's process group: one of the lab's own, on a port of its own,
	// which the lab stops when it is done.
	epmdPort := strconv.Itoa(freePort(t))
	t.Cleanup(func() { l.try(10*time.Second, "/usr/bin/epmd", "-port", epmdPort, "-kill") })
	l.env = append(l.env,
		"ERL_EPMD_PORT="+epmdPort,
		"RABBITMQ_NODENAME=lab@localhost",
		"RABBITMQ_NODE_IP_ADDRESS=127.0.0.1",
		"RABBITMQ_NODE_PORT="+strconv.Itoa(l.port),
		"RABBITMQ_DIST_PORT="+strconv.Itoa(freePort(t)),
		"RABBITMQ_MNESIA_BASE="+l.path("mnesia"),
		"RABBITMQ_LOG_BASE="+l.path("log"),
		"RABBITMQ_LOGS=-",
		"RABBITMQ_ENABLED_PLUGINS_FILE="+l.path("enabled_plugins"),
		"RABBITMQ_CONFIG_FILE="+l.path("rabbitmq"),
		"RABBITMQ_ADVANCED_CONFIG_FILE="+l.path("advanced.config"),
		"RABBITMQ_PID_FILE="+l.path("pid"),
	)
	os.WriteFile(l.path("enabled_plugins"), []byte("[].\n"), 0o644)
	start := func() *proc { return l.serve("server.log", bin+"rabbitmq-server") }
	p := start()
	// The node boots slowly on a busy machine: one that has not booted
	// in the time allowed skips, and says so.
	if !l.within(3*time.Minute, slow("rabbitmq-diagnostics", "-q", "check_running")) {
		t.Skipf("cannot measure RabbitMQ on this machine: the node had not booted 3 minutes after it started (load average %.1f); its log:\n%s", loadAverage(), tail(l.path("server.log"), 5))
	}

	// Durable queues, declared in the node itself, and a kill.
	declare := fmt.Sprintf(`[rabbit_amqqueue:declare(rabbit_misc:r(<<"/">>, queue, list_to_binary("q" ++ integer_to_list(N))), true, false, [], none, <<"lab">>) || N <- lists:seq(1, %d)], ok.`, rabbitQueues)
	l.must(3*time.Minute, l.local([]string{"rabbitmqctl", "eval", declare})...)
	p.kill()

	os.Truncate(l.path("server.log"), 0)
	s.LoadAverage = loadAverage()
	p = start()
	probes := []probe{
		tcp,
		slow("rabbitmq-diagnostics", "-q", "ping"),
		slow("rabbitmq-diagnostics", "-q", "check_running"),
		slow("rabbitmq-diagnostics", "-q", "check_port_connectivity"),
		slow("rabbitmqctl", "-q", "node_health_check"),
		slow("rabbitmq-diagnostics", "-q", "check_local_alarms"),
	}
	rec, out := l.watch(p, probes, 2, 3*time.Minute)
	rec.What = fmt.Sprintf("a boot after SIGKILL with %d durable queues", rabbitQueues)
	rec.Ready = probes[2].String()
	s.Recovery, s.Probes = rec, out

	waited := 30 * time.Second
	secs, stopped := p.signal(syscall.SIGTERM, waited)
	s.Stops = append(s.Stops, classify.LabStop{Signal: "SIGTERM", Stopped: stopped, Seconds: round(secs), WaitSeconds: waited.Seconds()})
	check(t, s)
}
