package serverlab

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"backfire.dev/backfire/internal/classify"
)

// The write load of Prometheus: a target of the lab's own exposing
// promSeries series, scraped every second for promLoadTime, so that the
// restart replays a write-ahead log of some million samples.
const (
	promSeries   = 100000
	promLoadTime = 20 * time.Second
)

// Prometheus serves its web listener while the TSDB replays the WAL:
// /-/healthy answers 200 throughout, /-/ready 503 until the replay is
// over.
func TestPrometheus(t *testing.T) {
	l := newLab(t, 9090, "prometheus", "curl")
	s := classify.LabServer{Server: "Prometheus", Package: "prometheus", Image: "prom/prometheus:v2.42.0", Port: 9090}
	s.Version = l.version(`prometheus, version ([0-9.]+)`, "prometheus", "--version")

	// The target: promSeries gauges, the same page every scrape.
	var page bytes.Buffer
	page.WriteString("# TYPE lab_gauge gauge\n")
	for i := 0; i < promSeries; i++ {
		fmt.Fprintf(&page, "lab_gauge{shard=\"%d\",series=\"series-%d\"} %d\n", i%64, i, i)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	target := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		w.Write(page.Bytes())
	})}
	go target.Serve(ln)
	t.Cleanup(func() { target.Close() })
	config := fmt.Sprintf("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: lab\n    static_configs:\n      - targets: ['%s']\n", ln.Addr())
	if err := os.WriteFile(l.path("prometheus.yml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	start := func() *proc {
		return l.serve("server.log", "prometheus", "--config.file="+l.path("prometheus.yml"),
			"--storage.tsdb.path="+l.path("data"), "--web.listen-address=127.0.0.1:"+strconv.Itoa(l.port))
	}
	ready := exe("curl", "-fsS", "http://127.0.0.1:9090/-/ready")
	p := start()
	l.waitForProbe(60*time.Second, ready)

	// (a) SIGKILL under the scrape load.
	time.Sleep(promLoadTime)
	p.kill()
	target.Close()
	wal := dirSize(l.path("data/wal"))

	os.Truncate(l.path("server.log"), 0)
	s.LoadAverage = loadAverage()
	p = start()
	probes := []probe{
		tcp,
		exe("curl", "-fsS", "http://127.0.0.1:9090/-/healthy"),
		ready,
	}
	rec, out := l.watch(p, probes, 2, 3*time.Minute)
	rec.What = fmt.Sprintf("%d MB of WAL (%d series scraped every second for %.0f s)", wal>>20, promSeries, promLoadTime.Seconds())
	rec.Ready = probes[2].String()
	rec.Log = l.logLines("server.log", regexp.MustCompile(`Replaying WAL|WAL replay completed|Server is ready to receive web requests|Start listening for connections`), promPrefix)
	s.Recovery, s.Probes = rec, out

	// (b) SIGTERM, without a client: no rule sizes Prometheus's stop.
	waited := 30 * time.Second
	secs, stopped := p.signal(syscall.SIGTERM, waited)
	s.Stops = append(s.Stops, classify.LabStop{Signal: "SIGTERM", Stopped: stopped, Seconds: round(secs), WaitSeconds: waited.Seconds()})
	check(t, s)
}

// promPrefix is the timestamp and caller of a Prometheus log line.
var promPrefix = regexp.MustCompile(`^ts=\S+ caller=\S+ `)
