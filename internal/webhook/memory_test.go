package webhook

import (
	"context"
	"testing"
	"time"
)

// The judgings' budget is first come first served: a large request waiting
// is not passed by a small one behind it, and once it gives up, the small
// one gets its room. The bodies' budget lets the small one pass.
func TestMemoryOrder(t *testing.T) {
	for _, fifo := range []bool{true, false} {
		m := newMemory(100, fifo)
		if n, ok := m.acquire(context.Background(), 60); !ok || n != 60 {
			t.Fatalf("fifo %v: first take %d %v", fifo, n, ok)
		}
		bigCtx, giveUp := context.WithCancel(context.Background())
		bigDone := make(chan bool)
		go func() { _, ok := m.acquire(bigCtx, 80); bigDone <- ok }()
		time.Sleep(20 * time.Millisecond) // the large one is in line
		smallCtx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		_, ok := m.acquire(smallCtx, 30)
		cancel()
		if ok == fifo {
			t.Errorf("fifo %v: a small request behind a large one got room: %v", fifo, ok)
		}
		if !fifo {
			m.release(30)
		}
		giveUp()
		if <-bigDone {
			t.Fatalf("fifo %v: the large request got room it did not have", fifo)
		}
		if _, ok := m.acquire(noWait, 40); !ok {
			t.Errorf("fifo %v: no room once the large one gave up", fifo)
		}
		// More than the whole budget is the whole budget: judged alone.
		m.release(100)
		if n, ok := m.acquire(noWait, 1000); !ok || n != 100 || m.inUse() != 100 {
			t.Errorf("fifo %v: an oversized take got %d %v", fifo, n, ok)
		}
	}
}
