package serverlab

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"backfire.dev/backfire/internal/classify"
)

// mariadbLoadTime is how long the write load runs before the kill: an
// uncommitted INSERT whose redo InnoDB applies for some seconds.
const mariadbLoadTime = 15 * time.Second

// MariaDB applies its redo log before it opens its port, so every probe
// that connects fails, tcpSocket and mariadb-admin ping included.
func TestMariaDB(t *testing.T) {
	l := newLab(t, 3306, "mariadbd", "mariadb-install-db", "mariadb", "mariadb-admin", "mysqladmin")
	s := classify.LabServer{Server: "MySQL", Package: "mariadb-server", Image: "mariadb:10.11", Port: 3306}
	s.Version = l.version(`Ver ([0-9.]+)`, "mariadbd", "--version")
	data := l.path("data")
	l.must(2*time.Minute, "mariadb-install-db", "--no-defaults", "--datadir="+data, "--auth-root-authentication-method=normal", "--skip-test-db")
	start := func() *proc {
		return l.serve("server.log", "mariadbd", "--no-defaults", "--datadir="+data, "--socket="+l.path("sock"),
			"--port="+strconv.Itoa(l.port), "--bind-address=127.0.0.1", "--pid-file="+l.path("pid"),
			"--skip-grant-tables", "--innodb-log-file-size=1G", "--innodb-buffer-pool-size=512M")
	}
	client := []string{"mariadb", "-h", "127.0.0.1", "-P", "3306", "-uroot"}
	// The image's healthcheck.sh finds the server through the client's
	// defaults: here, the lab user's ~/.my.cnf (HOME is the lab's
	// directory). The client ignored MYSQL_UNIX_PORT.
	healthcheck := l.path("healthcheck.sh")
	script, err := os.ReadFile(filepath.Join("testdata", "healthcheck.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(healthcheck, script, 0o755); err != nil {
		t.Fatal(err)
	}
	l.programs = map[string]string{"healthcheck.sh": healthcheck}
	if err := os.WriteFile(l.path(".my.cnf"), []byte(fmt.Sprintf("[client]\nport=%d\nsocket=%s\n", l.port, l.path("sock"))), 0o644); err != nil {
		t.Fatal(err)
	}
	p := start()
	l.waitFor(60*time.Second, append(client, "-e", "SELECT 1")...)
	l.must(10*time.Second, l.local(append(client, "-e", "CREATE DATABASE d; CREATE TABLE d.t (a int PRIMARY KEY AUTO_INCREMENT, b varchar(200)) ENGINE=InnoDB"))...)

	// (a) SIGKILL under a write load: an INSERT still running.
	load := l.command(l.local(append(client, "-D", "d", "-e", "INSERT INTO t (b) SELECT repeat('x', 200) FROM seq_1_to_20000000"))...)
	if err := load.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(mariadbLoadTime)
	p.kill()
	load.Wait()

	os.Truncate(l.path("server.log"), 0)
	s.LoadAverage = loadAverage()
	p = start()
	probes := []probe{
		tcp,
		exe("mysqladmin", "ping", "-h", "127.0.0.1", "-P", "3306"),
		exe("mariadb-admin", "ping", "-h", "127.0.0.1", "-P", "3306"),
		exe("mariadb", "-h", "127.0.0.1", "-P", "3306", "-uroot", "-e", "SELECT 1"),
		exe("mysql", "-h", "127.0.0.1", "-P", "3306", "-uroot", "-e", "SELECT 1"),
		// A script of two clients: timeoutSeconds 10, not the lab's 2,
		// or a busy machine fails it whatever the server does.
		{argv: []string{"healthcheck.sh", "--connect", "--innodb_initialized"}, timeout: 10 * time.Second},
	}
	rec, out := l.watch(p, probes, 3, 3*time.Minute)
	rec.What = fmt.Sprintf("the redo of an INSERT killed after %.0f s", mariadbLoadTime.Seconds())
	rec.Ready = probes[3].String()
	rec.Log = l.logLines("server.log", regexp.MustCompile(`Starting crash recovery|To recover|rollback of recovered|Server socket created|ready for connections`), mariadbPrefix)
	s.Recovery, s.Probes = rec, out

	// (b) SIGTERM with a client connected.
	sess := l.command(l.local(client)...)
	stdin, _ := sess.StdinPipe()
	if err := sess.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); sess.Wait() }()
	time.Sleep(time.Second)
	waited := 60 * time.Second
	secs, stopped := p.signal(syscall.SIGTERM, waited)
	s.Stops = append(s.Stops, classify.LabStop{Signal: "SIGTERM", Client: true, Stopped: stopped, Seconds: round(secs), WaitSeconds: waited.Seconds(),
		What: "it closes the sessions and stops"})
	check(t, s)
	// The words the server table says MariaDB's clients print.
	for _, m := range classify.RecoveryOf("MySQL").Messages {
		if strings.HasPrefix(m.When, "MariaDB") && !strings.Contains(strings.Join(messages(out), "\n"), m.Text) {
			t.Errorf("no client printed %q during the recovery: %q", m.Text, messages(out))
		}
	}
}

// mariadbPrefix is the timestamp and thread of a MariaDB log line.
var mariadbPrefix = regexp.MustCompile(`^\S+ \S+ \d+ `)
