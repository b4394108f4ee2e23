package probesim

import "testing"

// BenchmarkRunDay simulates a day of seed 003's loop (about 250 restarts,
// 8,000 probes).
//
//	go test ./internal/simulate/probesim -run '^$' -bench . -benchmem
func BenchmarkRunDay(b *testing.B) {
	tr, err := ParseTrace("spike", []byte("0s 55ms\n3600s 1.2s\n3630s 55ms\n"))
	if err != nil {
		b.Fatal(err)
	}
	cfg := Config{Liveness: seedLiveness(), Recovery: 600, Latency: tr, Duration: 24 * 3600}
	b.ReportAllocs()
	for b.Loop() {
		if res := Run(cfg); res.Restarts < 200 {
			b.Fatal(res.Restarts)
		}
	}
}
