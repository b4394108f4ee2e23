// Command parse is backfire's own parse of the benchmarks' inputs and
// nothing after it: the files a scan would read (source.Discover), each
// read or mapped as a scan does (source.MapFile) and parsed by the block
// parser into compact JSON and the position table (load.Stream), on as
// many goroutines as cores, each document dropped once converted, under
// the collector setting a scan starts with (GOGC=200 while the heap is
// small). hack/bench/run.sh measures it beside the scan: the scan's CPU
// over this one's is what the stages after the parse cost.
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/source"
)

// maxFileSize is above the 100 MB input of the benchmarks.
const maxFileSize = 200_000_000

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(200)
	}
	inputs, errs := source.Discover(os.Args[1:])
	for _, e := range errs {
		fmt.Fprintln(os.Stderr, "parse:", e.Error())
	}
	var docs, failed atomic.Int64
	work := make(chan string)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for p := range work {
				n, bad := parse(p)
				docs.Add(int64(n))
				failed.Add(int64(bad))
			}
		})
	}
	files := 0
	for _, in := range inputs {
		if in.Kind != source.File {
			continue // charts and overlays are rendered, not parsed alone
		}
		files++
		work <- in.Path
	}
	close(work)
	wg.Wait()
	fmt.Printf("%d files, %d documents, %d errors\n", files, docs.Load(), failed.Load())
}

// parse returns the documents of one file and its errors.
func parse(path string) (docs, errs int) {
	data, release, err := source.MapFile(path, maxFileSize)
	if err != nil {
		fmt.Fprintln(os.Stderr, "parse:", path+":", err)
		return 0, 1
	}
	f := load.Stream(path, data, func(*load.Document, int) { docs++ })
	release(len(data))
	return docs, len(f.Errors)
}
