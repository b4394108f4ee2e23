package serverlab

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"backfire.dev/backfire/internal/classify"
)

// zkLoadTime is how long the write load creates znodes of 4 KB: a
// snapshot and log that a standalone server loads for some seconds.
const zkLoadTime = 15 * time.Second

// A standalone ZooKeeper opens its client port, then loads its snapshot
// and log; ruok is answered imok meanwhile.
func TestZooKeeper(t *testing.T) {
	const jar = "/usr/share/java/zookeeper.jar"
	l := newLab(t, 2181, "java", jar, "nc")
	s := classify.LabServer{Server: "ZooKeeper", Package: "zookeeper", Image: "zookeeper:3.8", Port: 2181}
	s.Version = pkgVersion("zookeeper")
	if m := regexp.MustCompile(`^([0-9.]+)`).FindStringSubmatch(s.Version); m != nil {
		s.Version = m[1]
	}
	cfg := fmt.Sprintf("tickTime=2000\ndataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\nadmin.enableServer=false\n4lw.commands.whitelist=ruok,srvr,mntr\nmaxClientCnxns=0\n", l.path("data"), l.port)
	if err := os.WriteFile(l.path("zoo.cfg"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	start := func() *proc {
		return l.serve("server.log", "java", "-Xmx1g", "-cp", "/etc/zookeeper/conf:"+jar,
			"-Dzookeeper.log.dir="+l.dir, "-Dzookeeper.root.logger=INFO,CONSOLE",
			"org.apache.zookeeper.server.ZooKeeperServerMain", l.path("zoo.cfg"))
	}
	srvr := "echo srvr | nc 127.0.0.1 2181 | grep -q Mode"
	p := start()
	l.waitFor(2*time.Minute, "sh", "-c", srvr)

	// (a) SIGKILL under a write load: creates, pipelined.
	stop := make(chan struct{})
	done := make(chan int)
	go func() { done <- zkCreate(fmt.Sprintf("127.0.0.1:%d", l.port), stop) }()
	time.Sleep(zkLoadTime)
	p.kill()
	close(stop)
	created := <-done
	if created == 0 {
		t.Fatal("no znode was created during the write load")
	}
	data := dirSize(l.path("data"))

	os.Truncate(l.path("server.log"), 0)
	s.LoadAverage = loadAverage()
	p = start()
	probes := []probe{
		tcp,
		exe("sh", "-c", "echo ruok | nc 127.0.0.1 2181"),
		exe("sh", "-c", "echo ruok | nc 127.0.0.1 2181 | grep imok"),
		// Without the newline echo sends, the server has read all
		// the client sent when it closes the connection.
		exe("sh", "-c", "printf ruok | nc 127.0.0.1 2181 | grep imok"),
		exe("sh", "-c", "echo srvr | nc 127.0.0.1 2181"),
		exe("sh", "-c", srvr),
	}
	rec, out := l.watch(p, probes, 5, 3*time.Minute)
	rec.What = fmt.Sprintf("%d MB of snapshot and log (%d znodes of 4 KB)", data>>20, created)
	rec.Ready = probes[5].String()
	s.Recovery, s.Probes = rec, out

	waited := 30 * time.Second
	secs, stopped := p.signal(syscall.SIGTERM, waited)
	s.Stops = append(s.Stops, classify.LabStop{Signal: "SIGTERM", Stopped: stopped, Seconds: round(secs), WaitSeconds: waited.Seconds()})
	check(t, s)
}

// zkCreate creates znodes of 4 KB over ZooKeeper's wire protocol (jute:
// ConnectRequest, then RequestHeader and CreateRequest frames, pipelined)
// until stop, and returns how many the server confirmed.
func zkCreate(addr string, stop chan struct{}) int {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return 0
	}
	defer c.Close()
	w := bufio.NewWriter(c)
	frame := func(b []byte) {
		binary.Write(w, binary.BigEndian, int32(len(b)))
		w.Write(b)
	}
	var b []byte
	i32 := func(v int32) { b = binary.BigEndian.AppendUint32(b, uint32(v)) }
	i64 := func(v int64) { b = binary.BigEndian.AppendUint64(b, uint64(v)) }
	buf := func(v []byte) { i32(int32(len(v))); b = append(b, v...) }
	// ConnectRequest: protocolVersion, lastZxidSeen, timeOut, sessionId, passwd.
	i32(0)
	i64(0)
	i32(30000)
	i64(0)
	buf(make([]byte, 16))
	frame(b)
	w.Flush()
	r := bufio.NewReader(c)
	readFrame := func() ([]byte, error) {
		var n int32
		if err := binary.Read(r, binary.BigEndian, &n); err != nil {
			return nil, err
		}
		f := make([]byte, n)
		_, err := io.ReadFull(r, f)
		return f, err
	}
	if _, err := readFrame(); err != nil {
		return 0
	}
	ok := make(chan int)
	go func() {
		n := 0
		for {
			f, err := readFrame()
			if err != nil {
				ok <- n
				return
			}
			// ReplyHeader: xid, zxid, err.
			if len(f) >= 16 && binary.BigEndian.Uint32(f[12:16]) == 0 {
				n++
			}
		}
	}()
	data := make([]byte, 4<<10)
	for xid := int32(1); ; xid++ {
		select {
		case <-stop:
			c.Close()
			return <-ok
		default:
		}
		b = b[:0]
		i32(xid)
		i32(1) // create
		buf([]byte("/n" + strconv.Itoa(int(xid))))
		buf(data)
		i32(1) // one ACL: world:anyone, every permission
		i32(31)
		buf([]byte("world"))
		buf([]byte("anyone"))
		i32(0) // persistent
		frame(b)
		if xid%64 == 0 {
			if w.Flush() != nil {
				return <-ok
			}
			// Keep at most a few thousand requests in flight.
			time.Sleep(time.Millisecond)
		}
	}
}

// zkMembers is the size of the ensemble of TestZooKeeperQuorum.
const zkMembers = 3

// A member of an ensemble binds its client port before it loads its
// snapshot and log, but answers nothing, ruok neither, until it has loaded
// them; then, without a quorum, it answers ruok with imok and srvr with
// "not currently serving requests", until a second member joins it.
func TestZooKeeperQuorum(t *testing.T) {
	const jar = "/usr/share/java/zookeeper.jar"
	l := newLab(t, 2181, "java", jar, "nc", zkLogger)
	s := classify.LabServer{Server: "ZooKeeper", Package: "zookeeper", Image: "zookeeper:3.8", Port: 2181, Replicas: zkMembers}
	s.Version = pkgVersion("zookeeper")
	if m := regexp.MustCompile(`^([0-9.]+)`).FindStringSubmatch(s.Version); m != nil {
		s.Version = m[1]
	}
	// Member 1 is the lab's server, on the lab's port; the others have
	// ports of their own, all on localhost.
	clients := []int{l.port, freePort(t), freePort(t)}
	servers := ""
	for i := 1; i <= zkMembers; i++ {
		servers += fmt.Sprintf("server.%d=127.0.0.1:%d:%d\n", i, freePort(t), freePort(t))
	}
	cfg := func(i int) string {
		dir := l.path(fmt.Sprintf("data%d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dir+"/myid", []byte(strconv.Itoa(i)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if l.cred != nil {
			os.Chown(dir, int(l.cred.Uid), int(l.cred.Gid))
		}
		name := l.path(fmt.Sprintf("zoo%d.cfg", i))
		c := fmt.Sprintf("tickTime=2000\ninitLimit=30\nsyncLimit=10\ndataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\nadmin.enableServer=false\n4lw.commands.whitelist=ruok,srvr,mntr\nmaxClientCnxns=0\n%s", dir, clients[i-1], servers)
		if err := os.WriteFile(name, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
		return name
	}
	cfgs := []string{cfg(1), cfg(2), cfg(3)}
	start := func(i int) *proc {
		// Debian's package binds no SLF4J logger: slf4j-simple, which it
		// ships, writes the log the lab reads to stderr, with times.
		return l.serve(fmt.Sprintf("server%d.log", i), "java", "-Xmx1g", "-cp", "/etc/zookeeper/conf:"+jar+":"+zkLogger,
			"-Dorg.slf4j.simpleLogger.showDateTime=true", "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
			"org.apache.zookeeper.server.quorum.QuorumPeerMain", cfgs[i-1])
	}
	srvr := "echo srvr | nc 127.0.0.1 2181 | grep -q Mode"
	ps := []*proc{start(1), start(2), start(3)}
	l.waitFor(3*time.Minute, "sh", "-c", srvr)

	// SIGKILL of every member under a write load.
	stop := make(chan struct{})
	done := make(chan int)
	go func() { done <- zkCreate(fmt.Sprintf("127.0.0.1:%d", l.port), stop) }()
	time.Sleep(zkLoadTime)
	for _, p := range ps {
		p.kill()
	}
	close(stop)
	created := <-done
	if created == 0 {
		t.Fatal("no znode was created during the write load")
	}
	data := dirSize(l.path("data1"))

	// Member 1 restarts alone: no quorum.
	os.Truncate(l.path("server1.log"), 0)
	s.LoadAverage = loadAverage()
	p := start(1)
	probes := []probe{
		tcp,
		exe("sh", "-c", "printf ruok | nc 127.0.0.1 2181 | grep imok"),
		exe("sh", "-c", "echo srvr | nc 127.0.0.1 2181"),
		exe("sh", "-c", srvr),
	}
	// The member has recovered when it answers ruok: its port is bound
	// before the load, which the log's order shows below, and answers
	// nothing until the load is over. (Without a quorum it never serves,
	// and srvr never says Mode.)
	rec, out := l.watch(p, probes, 1, 3*time.Minute)
	rec.What = fmt.Sprintf("%d MB of snapshot and log (%d znodes of 4 KB), restarted without the other %d members", data>>20, created, zkMembers-1)
	rec.Ready = probes[1].String()
	rec.Log = l.logLines("server1.log", zkOrder, zkPrefix)
	s.Recovery, s.Probes = rec, out
	t.Logf("member 1's log: %q", rec.Log)
	loaded, bound := -1, -1
	for i, line := range rec.Log {
		if strings.Contains(line, "loaded in") && loaded < 0 {
			loaded = i
		}
		if strings.Contains(line, "binding to port") && bound < 0 {
			bound = i
		}
	}
	if loaded < 0 || bound < 0 || bound > loaded {
		t.Errorf("the quorum member's log does not show its client port bound before its snapshot and log were loaded, as the table says: %q", rec.Log)
	}
	// Alone, once it answers: srvr says it does not serve.
	var alone string
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		if _, alone = l.once(exe("sh", "-c", "echo srvr | nc 127.0.0.1 2181")); firstLine(alone) != "" {
			break
		}
	}
	_, imok := l.once(exe("sh", "-c", "printf ruok | nc 127.0.0.1 2181"))

	// A second member makes a quorum of two of three.
	at := time.Now()
	start(2)
	l.waitFor(2*time.Minute, "sh", "-c", srvr)
	_, mode := l.once(exe("sh", "-c", "echo srvr | nc 127.0.0.1 2181 | grep Mode"))
	rec.Log = append(rec.Log, fmt.Sprintf("alone, ruok answered %q and srvr %q; with a second member started, srvr answered %q %.0f s later", firstLine(imok), firstLine(alone), firstLine(mode), time.Since(at).Seconds()))
	s.Recovery = rec

	waited := 30 * time.Second
	secs, stopped := p.signal(syscall.SIGTERM, waited)
	s.Stops = append(s.Stops, classify.LabStop{Signal: "SIGTERM", Stopped: stopped, Seconds: round(secs), WaitSeconds: waited.Seconds()})
	if !strings.Contains(firstLine(alone), "not currently serving requests") {
		t.Errorf("a member without a quorum answered srvr with %q, not \"This ZooKeeper instance is not currently serving requests\"", alone)
	}
	// On an idle machine the load after the bind can end between two samples:
	// the log above is then the only evidence of the window, and the table's
	// comparison has nothing to compare.
	if rec.ListenSeconds < 0 || rec.ListenSeconds >= rec.RecoveringSeconds {
		t.Skipf("the load after the bind ended between two samples (port open at %.1f s, last recovering sample %.1f s); the log shows the bind before the load", rec.ListenSeconds, rec.RecoveringSeconds)
	}
	check(t, s)
}

// zkLogger is the SLF4J binding the quorum's members log with.
const zkLogger = "/usr/share/java/slf4j-simple.jar"

// zkOrder are the log lines of a member's start that show the order of
// its load and its client port's bind.
var zkOrder = regexp.MustCompile(`Reading snapshot|loaded in|binding to port`)

// zkPrefix is the thread, level and logger of a slf4j-simple log line,
// after its time.
var zkPrefix = regexp.MustCompile(`\[[^\]]*\] \w+ \S+ - `)
