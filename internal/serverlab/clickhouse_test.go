package serverlab

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"syscall"
	"testing"
	"time"

	"backfire.dev/backfire/internal/classify"
)

// ClickHouse's data to load at start: a MergeTree table of chParts parts
// (one a partition, which merges never join), each opened when the server
// loads its tables.
const (
	chParts     = 5000
	chPerInsert = 100 // max_partitions_per_insert_block's default
)

// ClickHouse 18.16 loads its tables' metadata and parts before it opens
// its ports.
func TestClickHouse(t *testing.T) {
	server := "/usr/sbin/clickhouse-server"
	l := newLab(t, 9000, server, "clickhouse-client", "curl")
	s := classify.LabServer{Server: "ClickHouse", Package: "clickhouse-server", Image: "yandex/clickhouse-server:18.16", Port: 9000}
	s.Version = l.version(`version ([0-9.]+[0-9])`, "clickhouse-client", "--version")
	httpPort := l.another(8123)
	config := fmt.Sprintf(`<?xml version="1.0"?>
<yandex>
  <logger><level>information</level><log>%[1]s/clickhouse.log</log><errorlog>%[1]s/clickhouse.err.log</errorlog></logger>
  <http_port>%[2]d</http_port>
  <tcp_port>%[3]d</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <path>%[1]s/data/</path>
  <tmp_path>%[1]s/tmp/</tmp_path>
  <user_files_path>%[1]s/user_files/</user_files_path>
  <format_schema_path>%[1]s/format_schemas/</format_schema_path>
  <users_config>users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>268435456</mark_cache_size>
  <uncompressed_cache_size>268435456</uncompressed_cache_size>
</yandex>
`, l.dir, httpPort, l.port)
	users := `<?xml version="1.0"?>
<yandex>
  <profiles><default></default></profiles>
  <users><default><password></password><networks><ip>127.0.0.1</ip></networks><profile>default</profile><quota>default</quota></default></users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
`
	for name, text := range map[string]string{"config.xml": config, "users.xml": users} {
		if err := os.WriteFile(l.path(name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	start := func() *proc { return l.serve("server.log", server, "--config-file="+l.path("config.xml")) }
	client := []string{"clickhouse-client", "--host", "127.0.0.1", "--port", "9000", "-q", "SELECT 1"}
	p := start()
	l.waitFor(60*time.Second, client...)

	base := fmt.Sprintf("http://127.0.0.1:%d/", httpPort)
	hc := &http.Client{Timeout: time.Minute}
	query := func(q string) error {
		resp, err := hc.Post(base+"?"+url.Values{"query": {q}}.Encode(), "text/plain", nil)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s", q, bytes.TrimSpace(body))
		}
		return nil
	}
	if err := query("CREATE TABLE parts (p UInt32, x UInt64, s String) ENGINE = MergeTree PARTITION BY p ORDER BY x"); err != nil {
		t.Fatal(err)
	}
	if err := query("CREATE TABLE load (x UInt64, s String) ENGINE = MergeTree ORDER BY x"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < chParts/chPerInsert; i++ {
		if err := query(fmt.Sprintf("INSERT INTO parts SELECT %d + number %% %d, number, toString(number) FROM numbers(1000)", i*chPerInsert, chPerInsert)); err != nil {
			t.Fatal(err)
		}
	}

	// (a) SIGKILL under a write load: inserts into another table.
	stopLoad := writeLoad(1, func(int, int) int {
		if query("INSERT INTO load SELECT number, toString(number) FROM numbers(100000)") == nil {
			return 1
		}
		return 0
	})
	time.Sleep(3 * time.Second)
	p.kill()
	inserts := stopLoad()
	size := dirSize(l.path("data"))

	os.Truncate(l.path("clickhouse.log"), 0)
	s.LoadAverage = loadAverage()
	p = start()
	probes := []probe{
		tcp,
		exe("curl", "-fsS", "http://127.0.0.1:8123/ping"),
		exe(client...),
	}
	rec, out := l.watch(p, probes, 2, 3*time.Minute)
	rec.What = fmt.Sprintf("%d MergeTree parts, %d MB (and %d inserts killed under way)", chParts, size>>20, inserts)
	rec.Ready = probes[2].String()
	rec.Log = l.logLines("clickhouse.log", regexp.MustCompile(`Loading data parts|Loaded data parts|Loading metadata|Loaded metadata|Listening http|Listening tcp|Ready for connections`), chPrefix)
	s.Recovery, s.Probes = rec, out

	// (b) SIGTERM, without a client: no rule sizes ClickHouse's stop.
	waited := 30 * time.Second
	secs, stopped := p.signal(syscall.SIGTERM, waited)
	s.Stops = append(s.Stops, classify.LabStop{Signal: "SIGTERM", Stopped: stopped, Seconds: round(secs), WaitSeconds: waited.Seconds()})
	check(t, s)
}

// chPrefix is the timestamp, thread and level of a ClickHouse log line.
var chPrefix = regexp.MustCompile(`^\S+ \S+ \[ \d+ \] \{?[^}]*\}? ?<\w+> `)
