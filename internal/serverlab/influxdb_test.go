package serverlab

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"backfire.dev/backfire/internal/classify"
)

// The write load of InfluxDB: batches of points of new series, written
// over HTTP for influxLoadTime, which the restart loads back from the
// shards' WAL and files and indexes in memory (inmem, 1.6's default).
const (
	influxLoadTime = 20 * time.Second
	influxBatch    = 5000
)

// InfluxDB 1.x opens every shard before its HTTP service binds its port.
func TestInfluxDB(t *testing.T) {
	l := newLab(t, 8086, "influxd", "influx", "curl")
	s := classify.LabServer{Server: "InfluxDB", Package: "influxdb", Image: "influxdb:1.6", Port: 8086}
	s.Version = l.version(`InfluxDB v([0-9.]+[0-9])`, "influxd", "version")
	config := fmt.Sprintf(`reporting-disabled = true
bind-address = "127.0.0.1:%d"
[meta]
  dir = %q
[data]
  dir = %q
  wal-dir = %q
  query-log-enabled = false
[http]
  bind-address = "127.0.0.1:%d"
  log-enabled = false
[monitor]
  store-enabled = false
[continuous_queries]
  enabled = false
`, freePort(t), l.path("meta"), l.path("data"), l.path("wal"), l.port)
	if err := os.WriteFile(l.path("influxdb.conf"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	start := func() *proc { return l.serve("server.log", "influxd", "run", "-config", l.path("influxdb.conf")) }
	base := fmt.Sprintf("http://127.0.0.1:%d", l.port)
	p := start()
	l.waitFor(60*time.Second, "curl", "-fsS", "http://127.0.0.1:8086/ping")
	l.must(10*time.Second, "curl", "-fsS", "-XPOST", base+"/query", "--data-urlencode", "q=CREATE DATABASE lab")

	// (a) SIGKILL under a write load: points of new series.
	hc := &http.Client{Timeout: 10 * time.Second}
	stopLoad := writeLoad(4, func(w, i int) int {
		var b bytes.Buffer
		for j := 0; j < influxBatch; j++ {
			fmt.Fprintf(&b, "lab,worker=%d,series=s%d value=%d,text=\"%s\"\n", w, i*influxBatch+j, j, strings.Repeat("x", 32))
		}
		resp, err := hc.Post(base+"/write?db=lab&"+url.Values{"precision": {"s"}}.Encode(), "text/plain", &b)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent {
			return 0
		}
		return influxBatch
	})
	time.Sleep(influxLoadTime)
	p.kill()
	points := stopLoad()
	if points == 0 {
		t.Fatal("no write succeeded during the write load")
	}
	size := dirSize(l.path("data")) + dirSize(l.path("wal"))

	os.Truncate(l.path("server.log"), 0)
	s.LoadAverage = loadAverage()
	p = start()
	probes := []probe{
		tcp,
		exe("curl", "-fsS", "http://127.0.0.1:8086/ping"),
		exe("influx", "-host", "127.0.0.1", "-port", "8086", "-execute", "SHOW DATABASES"),
	}
	rec, out := l.watch(p, probes, 2, 3*time.Minute)
	rec.What = fmt.Sprintf("%d MB of shard and WAL (%d points of new series)", size>>20, points)
	rec.Ready = probes[2].String()
	rec.Log = influxMessages(l.logLines("server.log", regexp.MustCompile(`Opened shard|Reading file|Listening on HTTP`), nil))
	s.Recovery, s.Probes = rec, out

	// (b) SIGTERM, without a client: no rule sizes InfluxDB's stop.
	waited := 30 * time.Second
	secs, stopped := p.signal(syscall.SIGTERM, waited)
	s.Stops = append(s.Stops, classify.LabStop{Signal: "SIGTERM", Stopped: stopped, Seconds: round(secs), WaitSeconds: waited.Seconds()})
	check(t, s)
}

// influxMessages keeps the msg="..." of each log line, once: the rest
// (trace ids, paths, durations) differs from line to line.
func influxMessages(lines []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, line := range lines {
		if m := influxMsg.FindString(line); m != "" && !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	return out
}

var influxMsg = regexp.MustCompile(`msg="[^"]*"`)
