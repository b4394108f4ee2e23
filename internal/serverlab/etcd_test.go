package serverlab

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"backfire.dev/backfire/internal/classify"
)

// etcdLoadTime is how long the write load runs: 8 KB values put by many
// clients at once, so that the restart replays a WAL of some hundred MB.
const etcdLoadTime = 20 * time.Second

// etcd binds its client port before it replays its WAL, and answers
// nothing on it until the replay is over.
func TestEtcd(t *testing.T) {
	l := newLab(t, 2379, "etcd", "etcdctl", "curl")
	s := classify.LabServer{Server: "etcd", Package: "etcd-server", Image: "quay.io/coreos/etcd:v3.4.23", Port: 2379}
	s.Version = l.version(`etcd Version: ([0-9.]+)`, "etcd", "--version")
	peer := freePort(t)
	client := fmt.Sprintf("http://127.0.0.1:%d", l.port)
	peers := fmt.Sprintf("http://127.0.0.1:%d", peer)
	start := func() *proc {
		return l.serve("server.log", "etcd", "--name", "lab", "--data-dir", l.path("data"),
			"--listen-client-urls", client, "--advertise-client-urls", client,
			"--listen-peer-urls", peers, "--initial-advertise-peer-urls", peers,
			"--initial-cluster", "lab="+peers,
			// No snapshot during the load: the restart replays the whole WAL.
			"--snapshot-count", "10000000", "--quota-backend-bytes", strconv.Itoa(8<<30))
	}
	p := start()
	l.waitFor(60*time.Second, "etcdctl", "--endpoints=http://127.0.0.1:2379", "endpoint", "health")

	// (a) SIGKILL under a write load: puts through etcd's HTTP gateway.
	value := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("x"), 8<<10))
	hc := &http.Client{Timeout: 5 * time.Second}
	stopLoad := writeLoad(16, func(w, i int) int {
		key := base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("k/%d/%d", w, i)))
		body := fmt.Sprintf(`{"key":%q,"value":%q}`, key, value)
		resp, err := hc.Post(client+"/v3/kv/put", "application/json", bytes.NewBufferString(body))
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return 1
	})
	time.Sleep(etcdLoadTime)
	p.kill()
	puts := stopLoad()
	wal := dirSize(l.path("data/member/wal"))
	if puts == 0 {
		t.Fatal("no put succeeded during the write load")
	}

	os.Truncate(l.path("server.log"), 0)
	s.LoadAverage = loadAverage()
	p = start()
	probes := []probe{
		tcp,
		exe("etcdctl", "--endpoints=http://127.0.0.1:2379", "endpoint", "health"),
		exe("sh", "-c", "curl -fsS http://127.0.0.1:2379/health"),
		// etcdctl's own words when nothing answers: it gives up at its
		// --command-timeout, before the lab's timeout of 2 s.
		exe("etcdctl", "--endpoints=http://127.0.0.1:2379", "--command-timeout=1s", "endpoint", "health"),
	}
	rec, out := l.watch(p, probes, 1, 3*time.Minute)
	rec.What = fmt.Sprintf("%d MB of WAL (%d puts of 8 KB)", wal>>20, puts)
	rec.Ready = probes[1].String()
	rec.Log = l.logLines("server.log", regexp.MustCompile(`serving insecure client requests|bootstrap|replay|ready to serve client requests`), nil)
	s.Recovery, s.Probes = rec, out

	waited := 30 * time.Second
	secs, stopped := p.signal(syscall.SIGTERM, waited)
	s.Stops = append(s.Stops, classify.LabStop{Signal: "SIGTERM", Stopped: stopped, Seconds: round(secs), WaitSeconds: waited.Seconds()})
	check(t, s)
}
