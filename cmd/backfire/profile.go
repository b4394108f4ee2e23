package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
)

// startProfiles writes a CPU profile of the whole process to the file named
// by BACKFIRE_CPUPROFILE and a heap profile, taken at exit, to the one named
// by BACKFIRE_MEMPROFILE, for the benchmarks page (docs/benchmarks.md): the
// in-process benchmarks leave out start-up and the report. It returns what
// stops them. Environment variables rather than flags keep them out of the
// command-line contract.
func startProfiles(stderr io.Writer) func() {
	var stops []func()
	if path := os.Getenv("BACKFIRE_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(stderr, "backfire: BACKFIRE_CPUPROFILE:", err)
		} else {
			stops = append(stops, func() { pprof.StopCPUProfile(); f.Close() })
		}
	}
	if path := os.Getenv("BACKFIRE_MEMPROFILE"); path != "" {
		stops = append(stops, func() {
			f, err := os.Create(path)
			if err == nil {
				runtime.GC()
				err = pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
			if err != nil {
				fmt.Fprintln(stderr, "backfire: BACKFIRE_MEMPROFILE:", err)
			}
		})
	}
	return func() {
		for _, stop := range stops {
			stop()
		}
	}
}
