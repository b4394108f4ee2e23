package printed

import (
	"strings"
	"testing"
)

// BenchmarkReadDescribe reads a describe capture with a long Events table
// and wrapped messages: the reader is linear in the lines.
//
//	go test ./internal/observe/printed -run '^$' -bench Read
func BenchmarkReadDescribe(b *testing.B) {
	var s strings.Builder
	s.WriteString(describe137)
	for range 5000 {
		s.WriteString("  Warning  Unhealthy  4m58s (x123 over 3h56m)  kubelet  Liveness probe failed: psql: error: connection to server failed\nDETAIL:  Consistent recovery state has not been yet reached.\n")
	}
	data := []byte(s.String())
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for range b.N {
		c := Read("b.txt", data)
		if len(c.Pods) != 1 || len(c.Pods[0].Events) != 5002 {
			b.Fatalf("%d pods, %d events", len(c.Pods), len(c.Pods[0].Events))
		}
	}
}
