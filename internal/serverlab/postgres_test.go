package serverlab

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"backfire.dev/backfire/internal/classify"
)

// The write load stops at pgWALBytes of WAL or after pgLoadTime, whichever
// comes first: a recovery of ten seconds or more on 2 shared cores, longer
// than the liveness budget below, without making a busy machine's run
// last minutes.
const (
	pgWALBytes = 1000 << 20
	pgLoadTime = 30 * time.Second
)

// The seed incident's server: a crash under a write load leaves a large
// WAL, and the probes of the tables run while PostgreSQL replays it.
func TestPostgreSQL(t *testing.T) {
	bin := "/usr/lib/postgresql/15/bin"
	l := newLab(t, 5432, bin+"/postgres", bin+"/initdb", "psql", "pg_isready")
	s := classify.LabServer{Server: "PostgreSQL", Package: "postgresql-15", Image: "postgres:15", Port: 5432}
	s.Version = l.version(`PostgreSQL\)? ([0-9.]+)`, bin+"/postgres", "--version")
	data := l.path("data")
	l.must(60*time.Second, bin+"/initdb", "-D", data, "-A", "trust", "-U", "postgres", "--no-sync")
	start := func() *proc {
		return l.serve("server.log", bin+"/postgres", "-D", data, "-k", l.dir, "-p", fmt.Sprint(l.port),
			"-c", "listen_addresses=127.0.0.1",
			// No checkpoint during the load, so that the recovery replays
			// all of it; fsync off, since a SIGKILL keeps the page cache.
			"-c", "checkpoint_timeout=1h", "-c", "max_wal_size=8GB", "-c", "fsync=off",
			"-c", "synchronous_commit=off", "-c", "shared_buffers=128MB")
	}
	psql := []string{"psql", "-h", "127.0.0.1", "-p", "5432", "-U", "postgres"}
	p := start()
	l.waitFor(30*time.Second, append(psql, "-c", "SELECT 1")...)
	l.must(10*time.Second, l.local(append(psql, "-c", "CREATE TABLE t (a int, b text)"))...)

	// (a) SIGKILL under a write load: an INSERT still running when the
	// WAL has grown to pgWALBytes. generate_series is materialized before
	// the first row is inserted: 20 million rows took minutes on a busy
	// machine before any WAL was written, 5 million give some 1.2 GB of WAL.
	load := l.command(l.local(append(psql, "-c", "INSERT INTO t SELECT g, repeat('x', 200) FROM generate_series(1, 5000000) g"))...)
	if err := load.Start(); err != nil {
		t.Fatal(err)
	}
	loadStart := time.Now()
	for dirSize(filepath.Join(data, "pg_wal")) < pgWALBytes && time.Since(loadStart) < pgLoadTime {
		time.Sleep(200 * time.Millisecond)
	}
	wal := dirSize(filepath.Join(data, "pg_wal"))
	p.kill()
	load.Wait()
	t.Logf("killed after %.0f s of write load, %d MB of WAL", time.Since(loadStart).Seconds(), wal>>20)

	// (c) The loop: a liveness probe with a budget shorter than the
	// recovery kills it, and the next start replays the same WAL again.
	// The server is starved of CPU meanwhile, as the seed's BestEffort
	// pod was.
	l.share = loopShare
	p = start()
	live := exe("psql", "-h", "127.0.0.1", "-p", "5432", "-U", "postgres", "-c", "SELECT 1")
	live.timeout = loopTimeout
	p, kills, _ := l.liveness(p, start, live, loopPeriod, loopThreshold, loopKills, nil)
	p.kill()
	l.share = 0
	redo := l.logLines("server.log", regexp.MustCompile(`redo starts at|was interrupted while in recovery|redo done`), pgPrefix)
	s.Loop = &classify.LabLoop{Probe: live.String(), BudgetSeconds: slices.Max(kills), Kills: len(kills), KillSeconds: kills, CPUShare: loopShare, Evidence: redo}
	for _, line := range redo {
		if strings.Contains(line, "redo done") {
			t.Errorf("a recovery ended within the liveness budget of %.0f s: %s", s.Loop.BudgetSeconds, line)
		}
	}
	// Each start of the loop began the redo again, from the same point:
	// the restart (the last one too, killed at once) may not have logged.
	if !sameRedo(redo) || strings.Count(strings.Join(redo, "\n"), "redo starts at") < loopKills {
		t.Errorf("the loop's %d restarts did not each start the redo from the same point: %q", loopKills, redo)
	}

	// (a) The probes, while the recovery runs to its end.
	os.Truncate(l.path("server.log"), 0)
	s.LoadAverage = loadAverage()
	p = start()
	probes := []probe{
		tcp,
		exe("pg_isready", "-h", "127.0.0.1", "-p", "5432", "-U", "postgres"),
		exe("psql", "-h", "127.0.0.1", "-p", "5432", "-U", "postgres", "-c", "SELECT 1"),
		exe("sh", "-c", "echo 'SELECT 1' | psql -h 127.0.0.1 -p 5432 -U postgres"),
	}
	rec, out := l.watch(p, probes, 2, 5*time.Minute)
	rec.What = fmt.Sprintf("%d MB of WAL", wal>>20)
	rec.Ready = probes[2].String()
	rec.Log = l.logLines("server.log", regexp.MustCompile(`automatic recovery in progress|redo starts|redo done|ready to accept connections`), pgPrefix)
	s.Recovery, s.Probes = rec, out
	s.Loop.RecoverySeconds = rec.ReadySeconds

	// Dirty pages for the stop's shutdown checkpoint to write, as BF601's
	// short-window cause counts them (at most shared_buffers): some 100
	// MB of rows, which a checkpoint has not yet written when the stop
	// comes (a plain INSERT, not a COPY: a COPY would write through a
	// small ring of buffers).
	l.must(2*time.Minute, l.local(append(psql, "-c", "CREATE TABLE d (a int, b text); INSERT INTO d SELECT g, repeat('x', 200) FROM generate_series(1, 400000) g"))...)

	// (b) SIGTERM with a client connected: a smart shutdown waits for it.
	client := l.command(l.local(psql)...)
	stdin, _ := client.StdinPipe()
	if err := client.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); client.Wait() }()
	// Until the session is connected: psql exits 1 on the exception (a
	// query that answers false would exit 0).
	l.waitFor(30*time.Second, append(psql, "-c", "DO $$ BEGIN IF (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend') < 2 THEN RAISE EXCEPTION 'the session is not connected yet'; END IF; END $$")...)
	waited := 10 * time.Second
	secs, stopped := p.signal(syscall.SIGTERM, waited)
	s.Stops = append(s.Stops, classify.LabStop{Signal: "SIGTERM", Client: true, Stopped: stopped, Seconds: round(secs), WaitSeconds: waited.Seconds(),
		What: "a smart shutdown: it waits for the session to end"})
	if stopped {
		t.Errorf("PostgreSQL stopped %.1f s after SIGTERM with a client connected: BF601's smart-shutdown cause says it waits for every session", secs)
	}
	os.Truncate(l.path("server.log"), 0)
	secs, stopped = p.signal(syscall.SIGINT, 30*time.Second)
	what := "a fast shutdown, as the fix's preStop kill -INT 1 starts"
	written := l.logLines("server.log", regexp.MustCompile(`checkpoint complete: wrote \d+ buffers`), pgPrefix)
	if m := pgWrote.FindStringSubmatch(strings.Join(written, "\n")); m != nil {
		what += fmt.Sprintf("; its shutdown checkpoint wrote %s buffers of 8 kB, %s%% of shared_buffers 128MB (fsync off: into the page cache)", m[1], m[2])
	} else {
		t.Errorf("no \"checkpoint complete: wrote N buffers\" line after SIGINT: BF601 counts on the shutdown checkpoint to write shared_buffers' dirty pages; the log:\n%s", tail(l.path("server.log"), 10))
	}
	s.Stops = append(s.Stops, classify.LabStop{Signal: "SIGINT", Client: true, Stopped: stopped, Seconds: round(secs), WaitSeconds: 30, What: what})
	if !stopped {
		t.Errorf("PostgreSQL had not stopped 30 s after SIGINT")
	}
	check(t, s)
	if !strings.Contains(strings.Join(messages(out), "\n"), "not yet accepting connections") {
		t.Errorf("psql never said \"not yet accepting connections\" during the recovery: %v", messages(out))
	}
}

// pgWrote is the shutdown checkpoint's count of the pages it wrote and
// their share of shared_buffers.
var pgWrote = regexp.MustCompile(`checkpoint complete: wrote (\d+) buffers \(([0-9.]+)%\)`)

// pgPrefix is the timestamp and process number of a PostgreSQL log line.
var pgPrefix = regexp.MustCompile(`^\S+ \S+ \S+ \[\d+\] `)

// sameRedo: every "redo starts at" line names the same point.
func sameRedo(lines []string) bool {
	var at string
	n := 0
	for _, l := range lines {
		if i := strings.Index(l, "redo starts at "); i >= 0 {
			n++
			if at == "" {
				at = l[i:]
			} else if l[i:] != at {
				return false
			}
		}
	}
	return n >= 2
}

// messages are the outputs the probes printed.
func messages(ps []classify.LabProbe) []string {
	var out []string
	for _, p := range ps {
		for _, ph := range p.Phases {
			out = append(out, ph.Output)
		}
	}
	return out
}

func dirSize(dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n
}
