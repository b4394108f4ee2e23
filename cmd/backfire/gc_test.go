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

// The limit is three times the live heap between the room and the
// ceiling, and 1.75 times it above, held at the cap while 1.25 times fits
// under it: the collector marks the live heap once per two live heaps
// allocated wherever memory allows it.
func TestLimitForFollowsThreeTimesTheLiveHeapUpToTheCeiling(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct{ live, want int64 }{
		{0, gcRoom},
		{10 * mib, gcRoom},
		{100 * mib, 300 * mib},
		{200 * mib, 600 * mib},
		{300 * mib, gcCeiling},
		{500 * mib, 875 * mib},
		{600 * mib, gcCap},
		{716 * mib, gcCap},
		{800 * mib, 1000 * mib},
		{math.MaxInt64, math.MaxInt64 / 8 * 5 / 4},
	} {
		if got := limitFor(uint64(c.live)); got != c.want {
			t.Errorf("limitFor(%d MiB) = %d MiB, want %d MiB", c.live/mib, got/mib, c.want/mib)
		}
	}
}
