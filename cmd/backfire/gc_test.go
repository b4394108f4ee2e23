package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
)

// The collector is tuned only when the user has not set it.
func TestTuneGCLeavesTheUsersSettings(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	defer gcTuned.Store(false)

	t.Setenv("GOGC", "50")
	debug.SetGCPercent(50)
	tuneGC()
	if got := debug.SetGCPercent(50); got != 50 {
		t.Errorf("with GOGC set, the GC percent became %d", got)
	}

	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	tuneGC()
	if got := debug.SetGCPercent(100); got != 200 {
		t.Errorf("GC percent %d, want 200", got)
	}
	if got := debug.SetMemoryLimit(-1); got != gcRoom {
		t.Errorf("memory limit %d, want %d", got, gcRoom)
	}
}

// After a collection the limit follows the live heap: never under twice
// of it, so that a large input does not make the collector run without
// pause.
func TestAfterGCRaisesTheLimitWithTheLiveHeap(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	gcTuned.Store(true)
	defer gcTuned.Store(false)
	keep := make([]byte, gcRoom) // live, and more than the room over 1.75
	for i := range keep {
		keep[i] = 1
	}
	runtime.GC()
	debug.SetMemoryLimit(gcRoom)
	afterGC(&gcCycle{})
	if got := debug.SetMemoryLimit(-1); got < 7*gcRoom/4 {
		t.Errorf("limit %d MiB with %d MiB live", got>>20, len(keep)>>20)
	}
	runtime.KeepAlive(keep)
}
