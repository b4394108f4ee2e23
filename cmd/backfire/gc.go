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
// that stays under gcCeiling, and to 1.75 times the live heap above it. A
// scan allocates far more than it keeps, and what the collector costs is
// the live heap it marks per byte allocated: at three times, a collection
// every two live heaps allocated, at 1.75 times one every 0.75, 2.7 times
// the marking. Before, the heap grew to 1.75 times as soon as it passed
// 192 MiB, so a scan of 300k objects (some 200 MB live) cost 1.34 times
// the CPU per object of one of 10k (docs/benchmarks.md). Under the
// ceiling the soft memory limit follows three times the live heap (it is
// raised after every collection); above it, 1.75 times (but see gcCap),
// so a large input never makes the collector run without pause:
// runtime/debug.SetMemoryLimit says a limit under what the runtime uses "may cause the garbage
// collector to run nearly continuously", held to about half the CPU by the
// GC CPU limiter, runtime/mgclimit.go. Set GOGC or GOMEMLIMIT to run with
// your own settings.
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

// gcRoom is the memory limit while little is live.
const gcRoom = 192 << 20

// gcCeiling is the memory below which the heap may grow to three times
// what is live: the parse floor peaks at 1.1 GiB at 300k objects, where a
// scan keeps some 200 MB live.
const gcCeiling = 768 << 20

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
		debug.SetMemoryLimit(limitFor(liveHeap[0].Value.Uint64()))
	}
	runtime.SetFinalizer(&gcCycle{}, afterGC)
}

// gcCap is the memory the heap's 1.75 times may not pass while 1.25 times
// the live heap fits under it: issue 40 asks for a million objects under
// 1 GiB of RSS, whose scan keeps 590 to 690 MB live at its peak, and 1.75
// times that was 1.2 GiB. Between 512 and 717 MiB live the collector
// marks more often (the room to allocate is 896 MiB less the live heap,
// not 0.75 of it: at 600 MiB, 1.5 times as often; at 717, three times);
// elsewhere nothing changes.
const gcCap = 896 << 20

// limitFor is the memory limit for a live heap of live bytes.
func limitFor(live uint64) int64 {
	l := int64(min(live, math.MaxInt64/8))
	return max(gcRoom, min(3*l, gcCeiling), min(l*7/4, gcCap), l*5/4)
}
