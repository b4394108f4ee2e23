package recoverylog

import (
	"bytes"
	"testing"
)

// BenchmarkScan reads a 64 MB PostgreSQL log with a recovery line in every
// hundred: what diagnose pays for a day of a busy server's log.
//
//	go test ./internal/recoverylog -run '^$' -bench . -benchmem
func BenchmarkScan(b *testing.B) {
	var buf bytes.Buffer
	for i := 0; buf.Len() < 64<<20; i++ {
		if i%100 == 0 {
			buf.WriteString("2026-11-12 07:29:14.486 UTC [100] FATAL:  the database system is not yet accepting connections\n")
			continue
		}
		buf.WriteString("2026-11-12 07:29:14.486 UTC [4211] LOG:  duration: 0.412 ms  statement: SELECT id, name FROM projects WHERE owner_id = $1\n")
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if res := Scan(data); len(res.Matches) == 0 {
			b.Fatal("no match")
		}
	}
}
