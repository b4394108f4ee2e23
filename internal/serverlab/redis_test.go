package serverlab

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"backfire.dev/backfire/internal/classify"
)

// redisKeys is the dataset's size: an AOF without an RDB preamble, which
// Redis replays command by command, loads for ten seconds or more on 2
// shared cores.
const redisKeys = 1500000

// The LOADING case: Redis listens while it loads its AOF and answers
// -LOADING, which redis-cli prints and exits 0 on, unless -e.
func TestRedis(t *testing.T) {
	l := newLab(t, 6379, "redis-server", "redis-cli", "redis-benchmark")
	s := classify.LabServer{Server: "Redis", Package: "redis-server", Image: "redis:7.0", Port: 6379}
	s.Version = l.version(`v=([0-9.]+)`, "redis-server", "--version")
	start := func() *proc {
		return l.serve("server.log", "redis-server", "--port", strconv.Itoa(l.port), "--bind", "127.0.0.1",
			"--dir", l.dir, "--save", "", "--appendonly", "yes", "--aof-use-rdb-preamble", "no",
			"--enable-debug-command", "yes", "--daemonize", "no")
	}
	cli := []string{"redis-cli", "-h", "127.0.0.1", "-p", "6379"}
	p := start()
	l.waitFor(30*time.Second, append(cli, "-e", "ping")...)
	l.must(5*time.Minute, l.local(append(cli, "-e", "debug", "populate", strconv.Itoa(redisKeys), "key", "100"))...)
	l.must(10*time.Second, l.local(append(cli, "-e", "bgrewriteaof"))...)
	for deadline := time.Now().Add(5 * time.Minute); ; {
		_, info := l.try(probeTimeout, l.local(append(cli, "info", "persistence"))...)
		if strings.Contains(info, "aof_rewrite_in_progress:0") && strings.Contains(info, "aof_rewrite_scheduled:0") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the AOF rewrite did not end: %s", info)
		}
		time.Sleep(500 * time.Millisecond)
	}
	aof := dirSize(l.path("appendonlydir"))

	// (a) SIGKILL under a write load: redis-benchmark's SETs.
	bench := l.command(l.local(append([]string{}, "redis-benchmark", "-h", "127.0.0.1", "-p", "6379", "-t", "set", "-r", "1000000", "-n", "100000000", "-q"))...)
	if err := bench.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	p.kill()
	syscall.Kill(-bench.Process.Pid, syscall.SIGKILL)
	bench.Wait()

	// (c) The loop: a liveness probe that wants PONG (-e: an error reply
	// such as -LOADING exits 1) kills the load, the server starved of CPU
	// as the seed's BestEffort pod was.
	os.Truncate(l.path("server.log"), 0)
	l.share = loopShare
	p = start()
	live := exe(cli...).with("-e", "ping")
	live.timeout = loopTimeout
	loaded := regexp.MustCompile(`loading_loaded_perc:([\d.]+)`)
	progress := func() string {
		_, info := l.try(probeTimeout, l.local(append(cli, "info", "persistence"))...)
		if m := loaded.FindStringSubmatch(info); m != nil {
			return "loading, " + m[1] + " % loaded"
		}
		return firstLine(info)
	}
	p, kills, said := l.liveness(p, start, live, loopPeriod, loopThreshold, loopKills, progress)
	p.kill()
	l.share = 0
	s.Loop = &classify.LabLoop{Probe: live.String(), BudgetSeconds: slices.Max(kills), Kills: len(kills), KillSeconds: kills, CPUShare: loopShare, Evidence: said}
	for _, line := range l.logLines("server.log", regexp.MustCompile(`DB loaded from append only file`), redisPrefix) {
		t.Errorf("a load finished within the liveness budget of %.0f s: %s", s.Loop.BudgetSeconds, line)
	}
	for _, line := range said {
		if !strings.Contains(line, "% loaded") {
			t.Errorf("Redis was not loading when the liveness probe killed it: %s", line)
		}
	}

	// (a) The probes, while Redis loads the AOF to its end.
	os.Truncate(l.path("server.log"), 0)
	s.LoadAverage = loadAverage()
	p = start()
	probes := []probe{
		tcp,
		exe(cli...).with("ping"),
		exe(cli...).with("-e", "ping"),
		exe("sh", "-c", `[ "$(redis-cli -h 127.0.0.1 -p 6379 ping)" = PONG ]`),
		exe("sh", "-c", `case "$(redis-cli -h 127.0.0.1 -p 6379 ping)" in PONG|LOADING*) exit 0;; esac; exit 1`),
	}
	rec, out := l.watch(p, probes, 2, 4*time.Minute)
	rec.What = fmt.Sprintf("a %d MB AOF (%d keys, no RDB preamble)", aof>>20, redisKeys)
	rec.Ready = probes[2].String()
	rec.Log = l.logLines("server.log", regexp.MustCompile(`DB loaded from|Ready to accept connections`), redisPrefix)
	s.Recovery, s.Probes = rec, out
	s.Loop.RecoverySeconds = rec.ReadySeconds

	// (b) SIGTERM with a client connected and save points on: Redis
	// writes its whole dataset to the RDB file before it exits.
	l.must(10*time.Second, l.local(append(cli, "-e", "config", "set", "save", "3600 1"))...)
	_, mem := l.try(probeTimeout, l.local(append(cli, "info", "memory"))...)
	used := regexp.MustCompile(`used_memory:(\d+)`).FindStringSubmatch(mem)
	client := l.command(l.local(cli)...)
	stdin, _ := client.StdinPipe()
	if err := client.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); client.Wait() }()
	waited := 60 * time.Second
	before := p.cpu()
	secs, stopped := p.signal(syscall.SIGTERM, waited)
	cpu := p.cpu() - before
	rdb := dirSize(l.path("dump.rdb"))
	what := fmt.Sprintf("it wrote a %d MB dump.rdb first", rdb>>20)
	if used != nil {
		n, _ := strconv.ParseInt(used[1], 10, 64)
		what = fmt.Sprintf("it wrote its %d MB dataset to a %d MB dump.rdb first", n>>20, rdb>>20)
	}
	s.Stops = append(s.Stops, classify.LabStop{Signal: "SIGTERM", Client: true, Stopped: stopped, Seconds: round(secs), WaitSeconds: waited.Seconds(), What: what, CPUSeconds: round(cpu)})
	if !stopped {
		t.Errorf("Redis had not stopped %v after SIGTERM", waited)
	}
	if rdb == 0 {
		t.Errorf("Redis with save points exited on SIGTERM without writing dump.rdb: BF601's clean stop says it writes its dataset")
	}
	check(t, s)
	if !strings.Contains(strings.Join(messages(out), "\n"), "LOADING") {
		t.Errorf("no probe saw LOADING during the load: %v", messages(out))
	}
}

// redisPrefix is the process number, role and timestamp of a Redis log line.
var redisPrefix = regexp.MustCompile(`^\d+:[A-Z] \d+ \w+ \d+ [\d:.]+ . `)

// with adds arguments to an exec probe.
func (p probe) with(args ...string) probe {
	p.argv = append(append([]string{}, p.argv...), args...)
	return p
}
