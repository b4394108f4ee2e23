package serverlab

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"backfire.dev/backfire/internal/classify"
)

// Switch is the environment variable that turns the lab on.
const Switch = "BACKFIRE_SERVER_LAB"

var update = flag.Bool("update", false, "write the run to internal/classify/lab.json")

// run collects what each server's test measured.
var run struct {
	sync.Mutex
	servers []classify.LabServer
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if *update && len(run.servers) > 0 {
		if err := writeRun(); err != nil {
			fmt.Fprintln(os.Stderr, "serverlab:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// writeRun merges this run's servers into the committed run: a server not
// run this time keeps its earlier record.
func writeRun() error {
	path := filepath.Join("..", "classify", "lab.json")
	var r classify.LabRun
	if b, err := os.ReadFile(path); err == nil && len(bytes.TrimSpace(b)) > 0 {
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
	}
	// A server kept from an earlier run keeps that run's date.
	for i := range r.Servers {
		if r.Servers[i].Date == "" {
			r.Servers[i].Date = r.Date
		}
	}
	r.Date = time.Now().UTC().Format("2006-01-02")
	r.Machine = machine()
	for _, s := range run.servers {
		s.Date = r.Date
		replaced := false
		for i := range r.Servers {
			if r.Servers[i].Server == s.Server && r.Servers[i].Replicas == s.Replicas {
				r.Servers[i], replaced = s, true
			}
		}
		if !replaced {
			r.Servers = append(r.Servers, s)
		}
	}
	sort.SliceStable(r.Servers, func(i, j int) bool {
		a, b := r.Servers[i], r.Servers[j]
		return a.Server < b.Server || a.Server == b.Server && a.Replicas < b.Replicas
	})
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// machine describes the machine in a few words: cores and distribution.
func machine() string {
	cores := 0
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		cores = strings.Count(string(b), "\nprocessor") + 1
	}
	distro := "Linux"
	if b, err := os.ReadFile("/etc/os-release"); err == nil {
		if m := regexp.MustCompile(`(?m)^PRETTY_NAME="?([^"\n]*)`).FindSubmatch(b); m != nil {
			distro = string(m[1])
		}
	}
	return fmt.Sprintf("%d cores, %s", cores, distro)
}

func record(s classify.LabServer) {
	run.Lock()
	defer run.Unlock()
	run.servers = append(run.servers, s)
}

// lab is one server's temporary directory, user and port.
type lab struct {
	t         *testing.T
	dir       string
	cred      *syscall.Credential
	port      int    // the port the lab's server listens on
	wellKnown string // the port a manifest writes, put back in outputs
	// more maps a server's other well-known ports (ClickHouse's HTTP
	// port beside its native one) to the lab's.
	more  map[string]string
	env   []string
	start time.Time // the last restart, for the samples' times
	// programs are where the lab finds a probe's program when it is not
	// on PATH under the name a manifest uses.
	programs map[string]string
	// share, when above 0, is the share of a core every server the lab
	// starts gets (see starve).
	share float64
}

// newLab skips unless the lab is on and every program is installed, and
// makes a directory the server's user owns.
func newLab(t *testing.T, wellKnown int, programs ...string) *lab {
	t.Helper()
	if os.Getenv(Switch) != "1" {
		t.Skipf("the server lab runs with %s=1 (hack/test-serverlab.sh installs the servers and sets it)", Switch)
	}
	for _, p := range programs {
		if _, err := exec.LookPath(p); err != nil {
			if _, err2 := os.Stat(p); err2 != nil {
				t.Skipf("cannot start the server: %s is not installed (hack/test-serverlab.sh installs it): %v", p, err)
			}
		}
	}
	return labIn(t, wellKnown)
}

// labIn makes the lab's directory and user, and the cleanup that leaves
// nothing of it behind.
func labIn(t *testing.T, wellKnown int) *lab {
	t.Helper()
	dir, err := os.MkdirTemp("", "serverlab-")
	if err != nil {
		t.Fatal(err)
	}
	l := &lab{t: t, dir: dir, wellKnown: strconv.Itoa(wellKnown)}
	t.Cleanup(func() { os.RemoveAll(dir) })
	// Cleanups run last first: the sweep after the servers' own kills.
	t.Cleanup(func() {
		if left := sweep(markVar + "=" + dir); len(left) > 0 {
			t.Logf("killed %d processes the lab started that outlived their process group: %v", len(left), left)
		}
	})
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Servers refuse to run as root, and a database's files belong to
	// its own user: as root, the lab runs them as nobody.
	if os.Geteuid() == 0 {
		u, err := user.Lookup("nobody")
		if err != nil {
			t.Skipf("cannot run the server as an unprivileged user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		l.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	l.port = freePort(t)
	l.env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8", "TMPDIR=" + dir, markVar + "=" + dir}
	return l
}

// markVar marks every process a lab starts, in its environment, which
// its children and daemons inherit.
const markVar = "BACKFIRE_SERVERLAB"

// sweep kills every process whose environment holds mark, and waits, a
// little, until they are gone; it returns what each was. A server's
// process group is killed when it stops, but a daemon leaves the group
// (epmd -daemon, which RabbitMQ's node starts, calls setsid) and once
// outlived a run, holding port 4369.
func sweep(mark string) []string {
	var killed []string
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(append([]byte{0}, env...), []byte("\x00"+mark+"\x00")) {
			continue
		}
		comm, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			killed = append(killed, fmt.Sprintf("%s (%d)", strings.TrimSpace(string(comm)), pid))
			pids = append(pids, pid)
		}
	}
	for i := 0; i < 50 && slices.ContainsFunc(pids, alive); i++ {
		time.Sleep(100 * time.Millisecond)
	}
	return killed
}

// alive: the process exists and is not a zombie (one that its parent,
// init in a container, has not reaped holds no port and no file).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// another gives the server another well-known port, mapped to a free one.
func (l *lab) another(wellKnown int) int {
	port := freePort(l.t)
	if l.more == nil {
		l.more = map[string]string{}
	}
	l.more[strconv.Itoa(wellKnown)] = strconv.Itoa(port)
	return port
}

// path is a file in the lab's directory.
func (l *lab) path(name string) string { return filepath.Join(l.dir, name) }

// local puts the lab's port in place of the well-known one.
func (l *lab) local(argv []string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = strings.ReplaceAll(a, l.wellKnown, strconv.Itoa(l.port))
		for known, local := range l.more {
			out[i] = strings.ReplaceAll(out[i], known, local)
		}
	}
	if p, ok := l.programs[out[0]]; ok {
		out[0] = p
	}
	return out
}

// manifest puts the well-known port and a placeholder directory back in
// an output.
func (l *lab) manifest(s string) string {
	s = strings.ReplaceAll(s, l.dir, "DIR")
	for known, local := range l.more {
		s = strings.ReplaceAll(s, local, known)
	}
	return strings.ReplaceAll(s, strconv.Itoa(l.port), l.wellKnown)
}

func (l *lab) command(argv ...string) *exec.Cmd {
	c := exec.Command(argv[0], argv[1:]...)
	c.Dir = l.dir
	c.Env = l.env
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: l.cred}
	return c
}

// try runs argv with a timeout (a probe's timeoutSeconds): its exit code,
// -1 when it outlasted the timeout, and its output.
func (l *lab) try(timeout time.Duration, argv ...string) (int, string) {
	c := l.command(argv...)
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	c.WaitDelay = time.Second
	if err := c.Start(); err != nil {
		return 127, err.Error()
	}
	timer := time.AfterFunc(timeout, func() { syscall.Kill(-c.Process.Pid, syscall.SIGKILL) })
	err := c.Wait()
	fired := !timer.Stop()
	var ee *exec.ExitError
	switch {
	case fired:
		return -1, out.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String()
	case err != nil:
		return 127, err.Error()
	}
	return 0, out.String()
}

// must runs argv and fails the test when it fails.
func (l *lab) must(timeout time.Duration, argv ...string) string {
	l.t.Helper()
	code, out := l.try(timeout, argv...)
	if code != 0 {
		l.t.Fatalf("%s: exit %d: %s", strings.Join(argv, " "), code, out)
	}
	return out
}

// proc is a running server.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
	log  *os.File
}

// serve starts a server in its own process group, its output appended to
// log in the lab's directory.
func (l *lab) serve(log string, argv ...string) *proc {
	l.t.Helper()
	f, err := os.OpenFile(l.path(log), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		l.t.Fatal(err)
	}
	c := l.command(argv...)
	c.Stdout, c.Stderr = f, f
	if err := c.Start(); err != nil {
		f.Close()
		l.t.Fatalf("start %s: %v", argv[0], err)
	}
	l.start = time.Now()
	p := &proc{cmd: c, done: make(chan struct{}), log: f}
	go func() { c.Wait(); f.Close(); close(p.done) }()
	if l.share > 0 {
		go p.starve(l.share)
	}
	l.t.Cleanup(func() { p.kill() })
	return p
}

// starvePeriod is the period of starve's duty cycle: cgroup v2's default
// cpu.max period (100000 µs).
const starvePeriod = 100 * time.Millisecond

// starve runs the server's process group for share of every period and
// stops it (SIGSTOP) for the rest, until it exits: what cpu.max "10000
// 100000" does to a cgroup, and what a BestEffort pod's cpu.weight of 1
// against its neighbours' 100 does to it on a busy node, as in the seed
// outage. The lab does it in userspace because cpu.max needs a writable,
// delegated cgroup v2, which an unprivileged CI job or a cgroup v1 machine
// does not have, while a process group can always be signalled by the
// user who started it. Children the server forks join its group, and are
// starved with it; the probes run in groups of their own, at full speed.
func (p *proc) starve(share float64) {
	on := time.Duration(float64(starvePeriod) * share)
	pg := -p.cmd.Process.Pid
	for {
		select {
		case <-p.done:
			return
		case <-time.After(on):
		}
		syscall.Kill(pg, syscall.SIGSTOP)
		select {
		case <-p.done:
			return
		case <-time.After(starvePeriod - on):
		}
		syscall.Kill(pg, syscall.SIGCONT)
	}
}

// kill is what a container runtime does at the end: SIGKILL to every
// process of the container.
func (p *proc) kill() {
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
	// The main process's exit is not the group's: a child the kill has
	// not yet reaped (RabbitMQ's Erlang VM under its start script) can
	// still hold the port, and a restart's first sample would find the
	// dead server listening. Wait, a little, for the whole group.
	for i := 0; i < 50 && syscall.Kill(-p.cmd.Process.Pid, 0) == nil; i++ {
		time.Sleep(100 * time.Millisecond)
	}
}

// signal sends sig to the server's main process, as a runtime sends the
// stop signal to PID 1, and returns how long it took to exit, or false
// when it had not after wait.
func (p *proc) signal(sig syscall.Signal, wait time.Duration) (float64, bool) {
	at := time.Now()
	p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
		return time.Since(at).Seconds(), true
	case <-time.After(wait):
		return wait.Seconds(), false
	}
}

// cpu is the CPU time the server's main process has used so far, read
// from /proc; after it exited, its total.
func (p *proc) cpu() float64 {
	if p.exited() {
		st := p.cmd.ProcessState
		return (st.UserTime() + st.SystemTime()).Seconds()
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	// utime and stime, fields 14 and 15 of stat, in clock ticks of 1/100 s
	// (USER_HZ on Linux).
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// probe is a probe command as a manifest writes it, or a tcpSocket probe.
type probe struct {
	argv    []string
	tcp     bool
	timeout time.Duration // timeoutSeconds; probeTimeout when 0
}

func exe(argv ...string) probe { return probe{argv: argv} }

var tcp = probe{tcp: true}

const probeTimeout = 2 * time.Second

// loopShare is the share of a core the lab gives a server while its
// liveness probe kills it: 10 %, as cpu.max "10000 100000" would. The seed
// outage's pod was BestEffort, cpu.weight 1 against its neighbours' 100:
// some 1 % of a core on a busy node, so 10 % is the kinder case. A
// recovery that takes its dataset one second of CPU (PostgreSQL's 1 GB of
// WAL, Redis's AOF take more on a fast, idle machine) then lasts ten, past
// the budget of loopKills: the loop shows on any machine.
const loopShare = 0.1

// The liveness probe of the loop: every second, a timeoutSeconds of 1,
// failureThreshold 3 (the kubelet's default), and two kills in a row.
const (
	loopPeriod    = time.Second
	loopTimeout   = time.Second
	loopThreshold = 3
	loopKills     = 2
)

// once runs a probe once against the lab's server.
func (l *lab) once(p probe) (int, string) {
	if p.tcp {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(l.port), probeTimeout)
		if err != nil {
			return 1, err.Error()
		}
		c.Close()
		return 0, ""
	}
	timeout := p.timeout
	if timeout == 0 {
		timeout = probeTimeout
	}
	return l.try(timeout, l.local(p.argv)...)
}

// timings are the durations outputs print ("took = 5.5ms", "after 12
// ms"), which would make every sample a phase of its own.
var timings = regexp.MustCompile(`\b[0-9][0-9.]*\s?(?:ns|µs|ms|s)\b`)

// firstLine is the first line of an output that says something, its
// timings elided. A client library's structured log line (etcdctl's gRPC
// client logs {"level":"warn","ts":...} before its own error) is passed
// over: its time stamp and connection id would make every sample a phase
// of its own, and the command's own words follow it.
func firstLine(s string) string {
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(strings.Trim(line, "\a"))
		line = timings.ReplaceAllString(line, "...")
		if strings.HasPrefix(line, `{"level":`) {
			continue
		}
		if line != "" {
			if len(line) > 160 {
				line = line[:160]
			}
			return line
		}
	}
	return ""
}

// watch runs each probe over and over, each in its own loop (a probe
// that waits out its timeout does not hold the others back), from the last
// restart until the one at index ready exits 0, and a few seconds more; it
// fails the test when the server is not ready within limit.
func (l *lab) watch(p *proc, probes []probe, ready int, limit time.Duration) (classify.LabRecovery, []classify.LabProbe) {
	l.t.Helper()
	rec := classify.LabRecovery{ReadySeconds: -1, ListenSeconds: -1}
	out := make([]classify.LabProbe, len(probes))
	var mu sync.Mutex
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i, pr := range probes {
		out[i] = classify.LabProbe{Command: pr.argv, TCP: pr.tcp}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				at := time.Since(l.start).Seconds()
				code, text := l.once(pr)
				mu.Lock()
				add(&out[i], at, code, l.manifest(firstLine(text)))
				if pr.tcp && code == 0 && rec.ListenSeconds < 0 {
					rec.ListenSeconds = round(at)
				}
				if i == ready && rec.ReadySeconds < 0 {
					switch code {
					case 0:
						rec.ReadySeconds = round(at)
					case -1:
						// No answer until the timeout: it was still
						// recovering when the sample began, and may have
						// been until its end.
						rec.RecoveringSince = round(at)
						rec.RecoveringSeconds = round(time.Since(l.start).Seconds())
					default:
						rec.RecoveringSince, rec.RecoveringSeconds = round(at), round(at)
					}
				}
				mu.Unlock()
				time.Sleep(250 * time.Millisecond)
			}
		}()
	}
	defer func() { close(stop); wg.Wait() }()
	for {
		time.Sleep(100 * time.Millisecond)
		mu.Lock()
		done := rec.ReadySeconds >= 0 && time.Since(l.start).Seconds() > rec.ReadySeconds+5
		mu.Unlock()
		if done {
			break
		}
		if time.Since(l.start) > limit {
			l.t.Fatalf("the server was not ready %v after its restart", limit)
		}
		if p.exited() {
			l.t.Fatalf("the server exited while it recovered; its log:\n%s", tail(l.path("server.log"), 20))
		}
	}
	close(stop)
	wg.Wait()
	stop = make(chan struct{}) // for the deferred close
	return rec, out
}

func round(f float64) float64 { return float64(int(f*10+0.5)) / 10 }

// add appends a sample to a probe's phases.
func add(p *classify.LabProbe, at float64, code int, text string) {
	at = round(at)
	if n := len(p.Phases); n > 0 && p.Phases[n-1].Exit == code && p.Phases[n-1].Output == text {
		p.Phases[n-1].To = at
		p.Phases[n-1].Samples++
		return
	}
	p.Phases = append(p.Phases, classify.LabPhase{From: at, To: at, Samples: 1, Exit: code, Output: text})
}

// liveness is the kubelet's liveness probe against a restarting server:
// every period, the probe; after threshold failures in a row, SIGKILL and
// a restart. It kills kills times in a row and returns the seconds from
// each restart to its kill, and what progress said just before each kill.
// A probe that passes fails the test: the recovery did not outlast the
// budget, and the loop was not shown.
func (l *lab) liveness(p *proc, restart func() *proc, pr probe, period time.Duration, threshold, kills int, progress func() string) (*proc, []float64, []string) {
	l.t.Helper()
	var at []float64
	var said []string
	for k := 0; k < kills; k++ {
		for failures := 0; failures < threshold; failures++ {
			time.Sleep(period)
			if code, out := l.once(pr); code == 0 {
				l.t.Fatalf("the liveness probe passed %.1f s after restart %d (%s), the server at %.0f %% of a core: its recovery did not outlast the budget, so the loop was not shown", time.Since(l.start).Seconds(), k+1, firstLine(out), l.share*100)
			}
		}
		secs := time.Since(l.start).Seconds()
		at = append(at, round(secs))
		if progress != nil {
			said = append(said, fmt.Sprintf("killed at %.0f s: %s", secs, progress()))
		}
		p.kill()
		p = restart()
	}
	return p, at, said
}

// tail is the last n lines of a file.
func tail(path string, n int) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// logLines are the lines of the server's log that match re, with the
// timestamp and process prefix cut off.
func (l *lab) logLines(name string, re *regexp.Regexp, prefix *regexp.Regexp) []string {
	b, _ := os.ReadFile(l.path(name))
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if re.MatchString(line) {
			if prefix != nil {
				line = prefix.ReplaceAllString(line, "")
			}
			out = append(out, l.manifest(strings.TrimSpace(line)))
		}
	}
	return out
}

// waitFor polls until argv exits 0.
func (l *lab) waitFor(limit time.Duration, argv ...string) {
	l.t.Helper()
	l.waitForProbe(limit, exe(argv...))
}

// within polls until the probe passes, and says whether it did within
// limit.
func (l *lab) within(limit time.Duration, p probe) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if code, _ := l.once(p); code == 0 {
			return true
		}
		time.Sleep(200 * time.Millisecond)
	}
	return false
}

// waitForProbe polls until the probe passes.
func (l *lab) waitForProbe(limit time.Duration, p probe) {
	l.t.Helper()
	argv := p.argv
	deadline := time.Now().Add(limit)
	for {
		code, out := l.once(p)
		if code == 0 {
			return
		}
		if time.Now().After(deadline) {
			l.t.Fatalf("%s still fails after %v: exit %d: %s\nserver log:\n%s", strings.Join(argv, " "), limit, code, out, tail(l.path("server.log"), 20))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// check fails the test on every row of the tables the server's record
// contradicts, and records it.
func check(t *testing.T, s classify.LabServer) {
	t.Helper()
	for _, c := range classify.LabContradictions(classify.LabRun{Servers: []classify.LabServer{s}}) {
		t.Error(c)
	}
	for _, p := range s.Probes {
		want, _ := s.Expected(p)
		t.Logf("%-60s tables: %-8s measured: %-8s %s", p.String(), want, s.Measured(p), phasesText(p))
	}
	if lp := s.Loop; lp != nil {
		t.Logf("loop: %s at %.0f %% of a core, killed %d times in a row at %v s after each restart; left alone at full speed, ready after %.1f s; %q", lp.Probe, lp.CPUShare*100, lp.Kills, lp.KillSeconds, lp.RecoverySeconds, lp.Evidence)
	}
	record(s)
}

func phasesText(p classify.LabProbe) string {
	var w []string
	for _, ph := range p.Phases {
		w = append(w, fmt.Sprintf("%.1f-%.1f exit %d %q", ph.From, ph.To, ph.Exit, ph.Output))
	}
	return strings.Join(w, "; ")
}

// version is the first match of re in a command's output.
func (l *lab) version(re string, argv ...string) string {
	_, out := l.try(10*time.Second, argv...)
	if m := regexp.MustCompile(re).FindStringSubmatch(out); m != nil {
		return m[1]
	}
	return "unknown"
}

// pkgVersion is a Debian package's version, "" when it is not installed.
func pkgVersion(pkg string) string {
	out, err := exec.Command("dpkg-query", "-W", "-f=${Version}", pkg).Output()
	if err != nil {
		return ""
	}
	return string(out)
}

// String is the probe as the lab's record writes it.
func (p probe) String() string { return classify.LabProbe{Command: p.argv, TCP: p.tcp}.String() }

// loadAverage is the machine's 1-minute load average, 0 when unknown.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f, _ := strconv.ParseFloat(strings.Fields(string(b))[0], 64)
	return f
}

// writeLoad runs write on workers goroutines, each calling it with its
// worker number and its count of calls, again and again until the returned
// stop is called; write returns how many units it wrote (0 when it failed)
// and stop, once the writers are done, their sum.
func writeLoad(workers int, write func(worker, i int) int) (stop func() int) {
	quit := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-quit:
					return
				default:
				}
				if n := write(w, i); n > 0 {
					mu.Lock()
					total += n
					mu.Unlock()
				}
			}
		}()
	}
	return func() int {
		close(quit)
		wg.Wait()
		return total
	}
}
