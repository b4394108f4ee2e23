package recoverylog

import (
	"strings"
	"testing"
	"time"
)

// Every pattern of the table with a line as its server prints it; the
// table and this list must cover each other.
var samples = map[string]string{
	"57P03":                              `2026-11-12T07:31:02Z [ERROR] failed to connect to host=registry-database: server error (FATAL: the database system is in recovery mode (SQLSTATE 57P03))`,
	"the database system is starting up": `psql: error: connection to server at "127.0.0.1", port 5432 failed: FATAL:  the database system is starting up`,
	"the database system is not yet accepting connections":                       `2026-11-12 07:29:14.486 UTC [100] FATAL:  the database system is not yet accepting connections`,
	"the database system is not accepting connections":                           `2026-11-12 07:29:14.486 UTC [100] FATAL:  the database system is not accepting connections`,
	"the database system is in recovery mode":                                    `pq: the database system is in recovery mode`,
	"the database system is shutting down":                                       `2026-11-12 07:29:44.001 UTC [131] FATAL:  the database system is shutting down`,
	"database system was interrupted while in recovery":                          `2026-11-12 07:29:54.482 UTC [21] LOG:  database system was interrupted while in recovery at 2026-11-12 07:29:42 UTC`,
	"database system was interrupted; last known up at":                          `2026-11-12 07:24:13.134 UTC [20] LOG:  database system was interrupted; last known up at 2026-11-12 07:17:40 UTC`,
	"database system was not properly shut down; automatic recovery in progress": `2026-11-12 07:24:14.001 UTC [20] LOG:  database system was not properly shut down; automatic recovery in progress`,
	"Database was not shutdown normally!":                                        `2026-11-12T09:15:04.902145Z 1 [Note] [MY-012551] [InnoDB] Database was not shutdown normally!`,
	"Starting crash recovery":                                                    `2023-06-04  8:24:16 0 [Note] InnoDB: Starting crash recovery from checkpoint LSN=46590`,
	"Detected unclean shutdown":                                                  `{"t":{"$date":"2026-11-12T10:00:01.512+00:00"},"s":"W","c":"STORAGE","id":22271,"ctx":"initandlisten","msg":"Detected unclean shutdown - Lock file is not empty","attr":{"lockFile":"/data/db/mongod.lock"}}`,
	"Recovering from stable timestamp":                                           `{"t":{"$date":"2026-11-12T10:00:04.001+00:00"},"s":"I","c":"REPL","id":21544,"ctx":"initandlisten","msg":"Recovering from stable timestamp"}`,
	"LOADING Redis is loading the dataset in memory":                             `Error: LOADING Redis is loading the dataset in memory`,
}

func TestEveryPatternHasASampleAndASource(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range Patterns {
		seen[p.Text] = true
		line, ok := samples[p.Text]
		if !ok {
			t.Errorf("%s %q: no sample line", p.Server, p.Text)
			continue
		}
		if !strings.Contains(p.Source, "/") || !strings.Contains(p.Source, ".") {
			t.Errorf("%q: source %q names no repository and file", p.Text, p.Source)
		}
		res := Scan([]byte(line + "\n"))
		if len(res.Matches) != 1 || res.Matches[0].Pattern.Text != p.Text {
			t.Errorf("%q does not match its own sample: %+v", p.Text, res.Matches)
		}
	}
	for text := range samples {
		if !seen[text] {
			t.Errorf("sample %q has no pattern", text)
		}
	}
}

func TestOrdinaryLinesDoNotMatch(t *testing.T) {
	log := `2026-11-12 06:00:01.219 UTC [23] LOG:  database system was shut down at 2026-11-12 05:59:48 UTC
2026-11-12 06:00:01.231 UTC [1] LOG:  database system is ready to accept connections
2026-11-12T09:15:40.1Z 0 [System] [MY-010931] [Server] /usr/sbin/mysqld: ready for connections.
1:M 12 Nov 2026 10:00:00.000 * DB loaded from disk: 12.004 seconds
`
	if res := Scan([]byte(log)); len(res.Matches) != 0 || res.Lines != 4 {
		t.Errorf("clean start: %d lines, matches %+v", res.Lines, res.Matches)
	}
}

func TestStartsAreOnePerRun(t *testing.T) {
	log := `2026-11-12 07:24:13.134 UTC [20] LOG:  database system was interrupted; last known up at 2026-11-12 07:17:40 UTC
2026-11-12 07:24:14.001 UTC [20] LOG:  database system was not properly shut down; automatic recovery in progress
2026-11-12 07:29:14.486 UTC [100] FATAL:  the database system is not yet accepting connections
2026-11-12 07:29:54.482 UTC [21] LOG:  database system was interrupted while in recovery at 2026-11-12 07:29:42 UTC
2026-11-12 07:29:55.001 UTC [21] LOG:  database system was not properly shut down; automatic recovery in progress
`
	res := Scan([]byte(log))
	want := []time.Time{time.Date(2026, 11, 12, 7, 24, 13, 134e6, time.UTC), time.Date(2026, 11, 12, 7, 29, 54, 482e6, time.UTC)}
	if len(res.Starts) != 2 || !res.Starts[0].Equal(want[0]) || !res.Starts[1].Equal(want[1]) {
		t.Errorf("starts = %v, want %v", res.Starts, want)
	}
	if n := len(res.Of(Interrupted)); n != 1 {
		t.Errorf("%d interrupted, want 1", n)
	}
}

func TestInvalidUTF8IsSearchedAndCounted(t *testing.T) {
	log := []byte("\xff\xfe garbage\n2026-11-12 07:29:54.482 UTC [21] LOG:  database system was interrupted while in recovery at \xc3\x28\n")
	res := Scan(log)
	if res.InvalidUTF8 != 2 || len(res.Matches) != 1 {
		t.Fatalf("invalid lines %d, matches %d", res.InvalidUTF8, len(res.Matches))
	}
	if !strings.Contains(res.Matches[0].Text, "\uFFFD") {
		t.Errorf("bad bytes not replaced: %q", res.Matches[0].Text)
	}
}

func TestHugeLineDoesNotStopTheScan(t *testing.T) {
	log := strings.Repeat("x", MaxLine+10) + "\nLOADING Redis is loading the dataset in memory\n"
	if res := Scan([]byte(log)); len(res.Matches) != 1 {
		t.Errorf("a line longer than %d bytes ended the scan: %+v", MaxLine, res.Matches)
	}
}

func TestTimestamp(t *testing.T) {
	for line, want := range map[string]string{
		"2026-11-12T07:24:13.123456789Z LOG: x":            "2026-11-12T07:24:13.123456789Z",
		"2026-11-12 07:24:13.134 UTC [20] LOG:  x":         "2026-11-12T07:24:13.134Z",
		"2026-11-12 07:24:13 UTC [20] LOG:  x":             "2026-11-12T07:24:13Z",
		"2026-11-12T09:15:04.902145Z 1 [Note] [MY-012551]": "2026-11-12T09:15:04.902145Z",
		"no time here": "0001-01-01T00:00:00Z",
	} {
		if got := Timestamp(line).Format(time.RFC3339Nano); got != want {
			t.Errorf("Timestamp(%q) = %s, want %s", line, got, want)
		}
	}
}
