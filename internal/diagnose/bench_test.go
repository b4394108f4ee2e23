package diagnose

import (
	"os"
	"path/filepath"
	"testing"

	"backfire.dev/backfire/internal/observe"
)

// BenchmarkSeed003 diagnoses the seed 003 captures: the pod with the static
// rules, 8 events, a 267-line database log and a client log.
//
//	go test ./internal/diagnose -run '^$' -bench . -benchmem
func BenchmarkSeed003(b *testing.B) {
	dir := filepath.Join("..", "..", "examples", "diagnose")
	read := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			b.Fatal(err)
		}
		return data
	}
	in := Input{Pods: Stream{Name: "pod.txt", Data: read("pod.txt")}, Events: []Stream{{Name: "events.txt", Data: read("events.txt")}},
		Logs: []observe.Log{{Container: "database", File: "database.log", Data: read("database.log")}, {Container: "registry-core", File: "registry-core.log", Data: read("registry-core.log")}}}
	b.ReportAllocs()
	for b.Loop() {
		res, err := Run(in)
		if err != nil || len(res.Of("BF501")) != 1 {
			b.Fatal(err)
		}
	}
}
