package webhook

import (
	"bytes"
	"container/list"
	"context"
	"sync"
)

// The memory a judging holds is estimated from its body: JudgingBaseBytes,
// JudgingBytesPerByte for each byte (the body, the decoded review, the
// object decoded from its JSON), and JudgingBytesPerContainer for each
// container (its findings, their fixes decoded and composed): what a
// judging costs grows with its containers far more than with its bytes.
// Measured (TestJudgingMemoryEstimate, docs/webhook.md): a 3 MB
// Deployment of 100 containers with long environments peaks at about 2
// bytes of heap a byte; PostgreSQL containers with four findings each at
// 35 to 40 KiB a container (about 110 bytes a byte); a small object at
// 1.6 MiB, most of it the rules' first use.
const (
	JudgingBaseBytes         = 2 << 20
	JudgingBytesPerByte      = 4
	JudgingBytesPerContainer = 64 << 10
	// BodyBytesPerByte is what a body costs until its judging holds its
	// estimate: the bytes read, and the object's copy in the decoded
	// review.
	BodyBytesPerByte = 2
)

// containerKey counts containers (and init and ephemeral ones) in a
// review as the API server writes it: compact JSON, where a key is
// "image" and a string value that holds those characters has its quotes
// escaped. An object written otherwise is counted low, and costs no more
// than its bytes say unless it has many containers.
var containerKey = []byte(`"image"`)

// judgingBytes is the memory a judging of body is estimated to hold.
func judgingBytes(body []byte) int64 {
	return JudgingBaseBytes + JudgingBytesPerByte*int64(len(body)) + JudgingBytesPerContainer*int64(bytes.Count(body, containerKey))
}

// memory is a weighted semaphore on bytes of estimated memory. The
// judgings' is first come first served: a large request waiting for room
// is not passed by smaller ones that came after it (it would wait forever
// under a stream of them). The bodies' is not: a small review passes the
// large bodies waiting for room, so that clients that claim large bodies
// and trickle them (holding their room until cut off) do not hold up the
// API server's reviews behind them.
type memory struct {
	mu      sync.Mutex
	size    int64
	used    int64
	fifo    bool
	waiters list.List // of *waiter, in arrival order
}

type waiter struct {
	n     int64
	ready chan struct{}
}

// noWait is a context done already: acquire does not wait with it.
var noWait = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

func newMemory(size int64, fifo bool) *memory { return &memory{size: size, fifo: fifo} }

// acquire takes n bytes, waiting until ctx is done (not at all when it
// is done already: noWait). A request larger than the whole budget takes all of it: it is
// judged alone. It returns the bytes taken, or false.
func (m *memory) acquire(ctx context.Context, n int64) (int64, bool) {
	n = min(n, m.size)
	m.mu.Lock()
	if m.size-m.used >= n && (m.waiters.Len() == 0 || !m.fifo) {
		m.used += n
		m.mu.Unlock()
		return n, true
	}
	if ctx.Err() != nil {
		m.mu.Unlock()
		return 0, false
	}
	w := &waiter{n: n, ready: make(chan struct{})}
	e := m.waiters.PushBack(w)
	m.mu.Unlock()
	select {
	case <-w.ready:
		return n, true
	case <-ctx.Done():
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	select {
	case <-w.ready:
		// Granted while giving up: give it back.
		m.used -= n
	default:
		m.waiters.Remove(e)
	}
	// Those behind it may fit now.
	m.grant()
	return 0, false
}

func (m *memory) release(n int64) {
	m.mu.Lock()
	m.used -= n
	m.grant()
	m.mu.Unlock()
}

// grant wakes the waiters that fit, in order: only those at the front
// when first come is first served.
func (m *memory) grant() {
	for e := m.waiters.Front(); e != nil; {
		w, next := e.Value.(*waiter), e.Next()
		if m.size-m.used >= w.n {
			m.used += w.n
			m.waiters.Remove(e)
			close(w.ready)
		} else if m.fifo {
			return
		}
		e = next
	}
}

// inUse is the bytes held now (tests, metrics).
func (m *memory) inUse() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.used
}

// hold is one request's bytes, given back when both the handler and the
// judging (which ends after the answer when it is cancelled) are done.
type hold struct {
	mem  *memory
	mu   sync.Mutex
	n    int64
	refs int
}

// take adds n bytes to the hold; a hold never takes more than the whole
// budget (a body read chunk by chunk stops taking there, and is judged
// alone).
func (h *hold) take(ctx context.Context, n int64) bool {
	h.mu.Lock()
	n = min(n, h.mem.size-h.n)
	h.mu.Unlock()
	if n <= 0 {
		return true
	}
	got, ok := h.mem.acquire(ctx, n)
	if ok {
		h.mu.Lock()
		h.n += got
		h.mu.Unlock()
	}
	return ok
}

func (h *hold) add() {
	h.mu.Lock()
	h.refs++
	h.mu.Unlock()
}

func (h *hold) done() {
	h.mu.Lock()
	h.refs--
	var n int64
	if h.refs == 0 {
		n, h.n = h.n, 0
	}
	h.mu.Unlock()
	if n > 0 {
		h.mem.release(n)
	}
}
