package scan

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"backfire.dev/backfire/internal/benchcorpus"
	"backfire.dev/backfire/internal/load"
)

var (
	corpusOnce  sync.Once
	corpusDir   string
	corpusBytes int64
)

// corpus10k generates the 10,000-object repository once per test binary.
func corpus10k(b *testing.B) (string, int64) {
	corpusOnce.Do(func() {
		dir, err := os.MkdirTemp("", "backfire-bench-")
		if err != nil {
			b.Fatal(err)
		}
		n, err := benchcorpus.Generate(dir, 100)
		if err != nil {
			b.Fatal(err)
		}
		corpusDir, corpusBytes = dir, n
	})
	return corpusDir, corpusBytes
}

// BenchmarkScan10k is the whole scan (read, parse, decode, index, every
// rule) of 10,000 objects in 100 files.
//
//	go test ./internal/scan -run '^$' -bench . -benchmem
func BenchmarkScan10k(b *testing.B) {
	dir, n := corpus10k(b)
	b.SetBytes(n)
	b.ReportAllocs()
	var objects int
	defer reportCPU(b)()
	for b.Loop() {
		res, err := Run(Options{Paths: []string{dir}})
		if err != nil || len(res.Errors) > 0 {
			b.Fatal(err, res.Errors)
		}
		objects = res.Summary.Objects
	}
	b.ReportMetric(float64(objects)*float64(b.N)/b.Elapsed().Seconds(), "objects/s")
}

// BenchmarkParseFloor parses the same files into yaml.v3 nodes and nothing
// else, on one goroutine per file like the scan: the floor a scan that
// reports positions cannot go under.
func BenchmarkParseFloor10k(b *testing.B) {
	dir, n := corpus10k(b)
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	b.SetBytes(n)
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		eachFile(files, func(path string, data []byte) {
			dec := yaml.NewDecoder(bytes.NewReader(data))
			for {
				var node yaml.Node
				if dec.Decode(&node) != nil {
					break
				}
			}
		})
	}
}

// BenchmarkParseOwn10k is backfire's own parse of the same files (the
// block parser into compact JSON and positions, load.Stream) and nothing
// after it, on as many goroutines as the scan: BenchmarkScan10k's cpu-s/op
// over this one's is what the stages after the parse cost.
func BenchmarkParseOwn10k(b *testing.B) {
	dir, n := corpus10k(b)
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	b.SetBytes(n)
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		eachFile(files, func(path string, data []byte) {
			load.Stream(path, data, func(*load.Document, int) {})
		})
	}
}

// eachFile reads the files and hands each to parse, on as many goroutines
// as the scan runs.
func eachFile(files []string, parse func(path string, data []byte)) {
	var wg sync.WaitGroup
	work := make(chan string)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for p := range work {
				data, _ := os.ReadFile(p)
				parse(p, data)
			}
		})
	}
	for _, f := range files {
		work <- f
	}
	close(work)
	wg.Wait()
}

// reportCPU adds the process's CPU time per operation (user + system, all
// cores): on a shared machine it varies less than wall time.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		b.ReportMetric((cpuTime()-start).Seconds()/float64(b.N), "cpu-s/op")
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
