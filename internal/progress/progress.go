// Package progress shows how far long work has come (a large tree, a live
// cluster, fix's proofs) as a bar on stderr, with
// github.com/schollz/progressbar/v3, and only when stderr is a terminal: a
// CI log or a redirected stream gets nothing, so output stays the same
// wherever it is read.
package progress

import (
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Delay is how long a stage runs before its bar appears: work shorter
// than that shows no bar at all.
var Delay = 500 * time.Millisecond

// Meter turns counts of work done into bars, one per stage; it is safe for
// use from many goroutines. The zero of *Meter (nil) shows nothing.
type Meter struct {
	w      io.Writer
	delay  time.Duration // before the first bar: short work shows none
	redraw time.Duration // between two drawings of a bar
	mu     sync.Mutex
	bar    *progressbar.ProgressBar
	stages []string // descriptions, in order; the last repeats
	stage  int
	last   int
	// started is when the current stage's first count came.
	started time.Time
	// complete: the stage counted its last unit; the next count starts
	// the next stage.
	complete bool
}

// ForTerminal returns a Meter on w when w is a terminal, else nil. The
// stages name what the successive runs of the work are ("scanning", then
// "proving the fixes"): a count that starts again from zero is the next
// stage.
func ForTerminal(w io.Writer, stages ...string) *Meter {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return New(w, stages...)
}

// New returns a Meter on w whatever w is (for tests).
func New(w io.Writer, stages ...string) *Meter {
	if len(stages) == 0 {
		stages = []string{"working"}
	}
	return &Meter{w: w, stages: stages, delay: Delay, redraw: 100 * time.Millisecond}
}

// Count reports that done of total units of the current stage are done.
// A count after the stage's last unit, or one smaller than the last
// count, starts the next stage.
func (m *Meter) Count(done, total int) {
	if m == nil || total <= 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.complete || done < m.last {
		m.finish()
		if m.last > 0 {
			m.stage++
		}
		m.started = time.Time{}
	}
	m.last, m.complete = done, done >= total
	if m.started.IsZero() {
		m.started = time.Now()
	}
	if m.bar == nil {
		// Work shorter than the delay shows no bar at all.
		if time.Since(m.started) < m.delay || done >= total {
			return
		}
		m.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(m.w),
			progressbar.OptionSetDescription(m.stages[min(m.stage, len(m.stages)-1)]),
			progressbar.OptionShowCount(),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(m.redraw),
			progressbar.OptionSetPredictTime(false),
			progressbar.OptionClearOnFinish(),
		)
	}
	if m.bar.GetMax() != total {
		m.bar.ChangeMax(total)
	}
	m.bar.Set(done)
}

// Done clears the bar, so that the report that follows starts on a clean
// line.
func (m *Meter) Done() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.finish()
}

func (m *Meter) finish() {
	if m.bar != nil {
		m.bar.Finish()
		m.bar = nil
	}
}
