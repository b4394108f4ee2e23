// Package recoverylog recognises what database servers log, and what their
// clients are told, while a server recovers from a crash. Each pattern is
// cited to the server's own source, where the text was checked.
//
// The table is the whole policy; extend it, not the code.
package recoverylog

import (
	"bufio"
	"bytes"
	"strings"
	"time"
	"unicode/utf8"
)

// Kind says what a line proves.
type Kind int

const (
	// Refused: a client was turned away because the server is starting up
	// or recovering (PostgreSQL's SQLSTATE 57P03, Redis's -LOADING). In the
	// server's own log or in a probe's output it shows the probe fails by
	// design; in another pod's log it ties that client's errors to the
	// server's restarts.
	Refused Kind = iota + 1
	// Recovering: the server starts a crash recovery, so its last stop was
	// not clean (a kill).
	Recovering
	// Interrupted: a recovery was cut short by another stop: the server was
	// killed while it recovered.
	Interrupted
)

func (k Kind) String() string {
	switch k {
	case Refused:
		return "refused"
	case Recovering:
		return "recovering"
	case Interrupted:
		return "interrupted"
	}
	return "unknown"
}

// Pattern is one message of one server.
type Pattern struct {
	Server string // the classify table's name: "PostgreSQL"
	Kind   Kind
	// Text is matched as a substring, case-sensitively: these are the
	// server's own format strings up to their first placeholder.
	Text string
	// Source is where the text was checked: repository, file, function.
	Source string
}

// Patterns is the table.
var Patterns = []Pattern{
	// PostgreSQL: BackendInitialize rejects a connection by the
	// postmaster's state (canAcceptConnections) with ERRCODE_CANNOT_CONNECT_NOW.
	{"PostgreSQL", Refused, "57P03", "postgres/postgres src/backend/utils/errcodes.txt: ERRCODE_CANNOT_CONNECT_NOW"},
	{"PostgreSQL", Refused, "the database system is starting up", "postgres/postgres src/backend/tcop/backend_startup.c BackendInitialize (CAC_STARTUP)"},
	{"PostgreSQL", Refused, "the database system is not yet accepting connections", "postgres/postgres src/backend/tcop/backend_startup.c BackendInitialize (CAC_NOTCONSISTENT)"},
	{"PostgreSQL", Refused, "the database system is not accepting connections", "postgres/postgres src/backend/tcop/backend_startup.c BackendInitialize (CAC_NOTCONSISTENT, hot standby off)"},
	{"PostgreSQL", Refused, "the database system is in recovery mode", "postgres/postgres src/backend/tcop/backend_startup.c BackendInitialize (CAC_RECOVERY)"},
	{"PostgreSQL", Refused, "the database system is shutting down", "postgres/postgres src/backend/tcop/backend_startup.c BackendInitialize (CAC_SHUTDOWN)"},
	// StartupXLOG reports the state the control file was left in.
	{"PostgreSQL", Interrupted, "database system was interrupted while in recovery", "postgres/postgres src/backend/access/transam/xlog.c StartupXLOG (DB_IN_CRASH_RECOVERY, DB_IN_ARCHIVE_RECOVERY)"},
	{"PostgreSQL", Recovering, "database system was interrupted; last known up at", "postgres/postgres src/backend/access/transam/xlog.c StartupXLOG (DB_IN_PRODUCTION)"},
	{"PostgreSQL", Recovering, "database system was not properly shut down; automatic recovery in progress", "postgres/postgres src/backend/access/transam/xlogrecovery.c InitWalRecovery"},
	// MySQL 8 and MariaDB: InnoDB applies the redo log before mysqld listens.
	{"MySQL", Recovering, "Database was not shutdown normally!", "mysql/mysql-server storage/innobase/log/log0recv.cc recv_init_crash_recovery_spaces"},
	{"MySQL", Recovering, "Starting crash recovery", "mysql/mysql-server storage/innobase/log/log0recv.cc recv_init_crash_recovery_spaces; MariaDB/server storage/innobase/log/log0recv.cc (\"Starting crash recovery from checkpoint LSN=\")"},
	// MongoDB: the lock file tells an unclean stop; replication recovery
	// replays the oplog from the stable timestamp before mongod listens.
	{"MongoDB", Recovering, "Detected unclean shutdown", "mongodb/mongo src/mongo/db/storage/storage_engine_init.cpp initializeStorageEngine (log id 22271)"},
	{"MongoDB", Recovering, "Recovering from stable timestamp", "mongodb/mongo src/mongo/db/repl/replication_recovery.cpp recoverFromOplog (log id 21544)"},
	// Redis, Valkey, KeyDB: commands without the loading flag get this
	// shared error while the dataset loads.
	{"Redis", Refused, "LOADING Redis is loading the dataset in memory", "redis/redis src/server.c createSharedObjects (shared.loadingerr), processCommand"},
}

// patternBytes are the patterns' texts, once.
var patternBytes = func() [][]byte {
	out := make([][]byte, len(Patterns))
	for i, p := range Patterns {
		out[i] = []byte(p.Text)
	}
	return out
}()

// Match is one line that matched.
type Match struct {
	Pattern *Pattern
	Line    int    // 1-based
	Text    string // the line, valid UTF-8, trimmed
	// Time is the line's timestamp when it carries one (kubectl logs
	// --timestamps, or the server's own prefix); zero otherwise.
	Time time.Time
}

// Reading is what one log said.
type Reading struct {
	Lines   int
	Matches []Match
	// InvalidUTF8 counts lines that held bytes that are not UTF-8: they
	// were searched with those bytes replaced, never dropped.
	InvalidUTF8 int
	// Starts are the timestamps of lines that open a server run (a
	// recovery or an interrupted recovery), one per run: the restart times
	// the log proves.
	Starts []time.Time
}

// MaxLine is the longest line read; longer ones are cut (a log is text,
// and a binary blob must not take the memory).
const MaxLine = 1 << 20

// Scan searches a log for the patterns of every server.
func Scan(data []byte) Reading {
	var res Reading
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), MaxLine)
	sc.Split(scanLines)
	var lastStart time.Time
	for sc.Scan() {
		res.Lines++
		raw := sc.Bytes()
		if !utf8.Valid(raw) {
			res.InvalidUTF8++
		}
		// The patterns are ASCII: matching the raw bytes finds what
		// matching the repaired text would, without a copy per line.
		for i := range Patterns {
			p := &Patterns[i]
			if !bytes.Contains(raw, patternBytes[i]) {
				continue
			}
			line := strings.TrimRight(strings.ToValidUTF8(string(raw), "\uFFFD"), "\r")
			m := Match{Pattern: p, Line: res.Lines, Text: strings.TrimSpace(line), Time: Timestamp(line)}
			res.Matches = append(res.Matches, m)
			// One run may log several opening lines within seconds.
			if p.Kind != Refused && !m.Time.IsZero() && (lastStart.IsZero() || m.Time.Sub(lastStart) > time.Minute) {
				res.Starts = append(res.Starts, m.Time)
				lastStart = m.Time
			}
			break // one pattern per line: 57P03 and its text are one message
		}
	}
	return res
}

// scanLines is bufio.ScanLines, but a line longer than the buffer is cut
// rather than ending the scan.
func scanLines(data []byte, atEOF bool) (int, []byte, error) {
	adv, tok, err := bufio.ScanLines(data, atEOF)
	if adv == 0 && tok == nil && err == nil && len(data) >= MaxLine {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return len(data), data, nil
		}
		return i + 1, data[:i], nil
	}
	return adv, tok, err
}

// Servers returns the servers whose patterns matched, in table order.
func (r Reading) Servers() []string {
	var out []string
	for _, m := range r.Matches {
		found := false
		for _, s := range out {
			found = found || s == m.Pattern.Server
		}
		if !found {
			out = append(out, m.Pattern.Server)
		}
	}
	return out
}

// Of returns the matches of one kind.
func (r Reading) Of(k Kind) []Match {
	var out []Match
	for _, m := range r.Matches {
		if m.Pattern.Kind == k {
			out = append(out, m)
		}
	}
	return out
}

// MatchText checks one message (an event's, a probe's output) against the
// table; nil when nothing matches.
func MatchText(s string) *Pattern {
	for i := range Patterns {
		if strings.Contains(s, Patterns[i].Text) {
			return &Patterns[i]
		}
	}
	return nil
}

// timeLayouts are the prefixes a log line's time is written in: kubectl
// logs --timestamps (RFC 3339 with nanoseconds), PostgreSQL's %m and %t,
// MySQL 8's RFC 3339 with microseconds, MariaDB's "2006-01-02  7:04:05".
var timeLayouts = []struct {
	layout string
	width  int // characters the layout takes at the start of the line
}{
	{time.RFC3339Nano, 0},
	{"2006-01-02 15:04:05.000 MST", 27},
	{"2006-01-02 15:04:05 MST", 23},
	{"2006-01-02 15:04:05.000", 23},
	{"2006-01-02 15:04:05", 19},
}

// Timestamp reads the time a log line starts with; zero when it has none.
func Timestamp(line string) time.Time {
	line = strings.TrimSpace(line)
	if i := strings.IndexByte(line, ' '); i > 0 {
		if t, err := time.Parse(time.RFC3339Nano, line[:i]); err == nil {
			return t.UTC()
		}
	}
	for _, l := range timeLayouts[1:] {
		if len(line) < l.width {
			continue
		}
		if t, err := time.Parse(l.layout, line[:l.width]); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}
