package main

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// tuneGC lets the heap grow to three times what is live (GOGC=200) while
// that stays under gcRoom, and to 1.75 times above it: at 300k objects,
// where some 250 MB are live, twice (the default) peaked at 540 MiB of
// RSS, above the parse floor's 521 MiB, and 1.75 times at 450 MiB, for
// collections a seventh more often (docs/benchmarks.md). A scan
// allocates far more than it keeps: the collector's marking was a seventh
// of its CPU at 100k objects, and halving how often it runs takes a tenth
// off the whole. Above the room, the soft memory limit keeps the heap
// below the default's (it is raised after every collection to 1.75 times
// the live heap, so a large input never makes the collector run without
// pause: runtime/debug.SetMemoryLimit says a limit under what the runtime
// uses "may cause the garbage collector to run nearly continuously", held
// to about half the CPU by the GC CPU limiter, runtime/mgclimit.go). Set
// GOGC or GOMEMLIMIT to run with your own settings.
func tuneGC() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(200)
	debug.SetMemoryLimit(gcRoom)
	gcTuned.Store(true)
	runtime.SetFinalizer(&gcCycle{}, afterGC)
}

// gcTuned is whether afterGC goes on following the live heap (tests turn
// it off again).
var gcTuned atomic.Bool

// gcRoom is the memory below which the heap may grow to three times what
// is live.
const gcRoom = 192 << 20

// gcCycle is garbage once it is made: its finalizer runs after each
// collection and sets the next one up.
type gcCycle struct{ _ [16]byte }

var liveHeap = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}

func afterGC(*gcCycle) {
	if !gcTuned.Load() {
		return
	}
	metrics.Read(liveHeap)
	if liveHeap[0].Value.Kind() == metrics.KindUint64 {
		live := liveHeap[0].Value.Uint64()
		limit := max(int64(gcRoom), int64(min(live, math.MaxInt64/8))*7/4)
		debug.SetMemoryLimit(limit)
	}
	runtime.SetFinalizer(&gcCycle{}, afterGC)
}
