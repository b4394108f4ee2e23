package probe

// The kubelet's restart back-off (pkg/kubelet/kubelet.go: newCrashLoopBackOff
// and flowcontrol.NewBackOff, with k8s.io/client-go/util/flowcontrol.Backoff):
// the wait starts at 10 s and doubles up to the cap, 300 s by default, and an
// entry last updated more than 600 s before the exit it is asked about starts
// over (the kubelet's HasExpiredFunc: 600 s whatever the cap). The cap is the
// node's crashLoopBackOff.maxContainerRestartPeriod where the
// KubeletCrashLoopBackOffMax feature is on (beta, on by default, from 1.35);
// a cap below 10 s lowers the first wait to the cap.
const (
	BackoffInitial = 10
	BackoffMax     = 300
	BackoffReset   = 600
)

// Restart is one cycle of a container that keeps being stopped.
type Restart struct {
	Start int // seconds since the first start
	Stop  int // when it was killed or exited
	// Wait is the back-off between Stop and the next start.
	Wait int
}

// backoff mirrors flowcontrol.Backoff for one container, without jitter.
type backoff struct {
	ok             bool
	delay          int
	lastUpdate     int
	initial, limit int
}

func (b *backoff) expired(event int) bool { return event-b.lastUpdate > BackoffReset }

// inBackOffSince is flowcontrol's IsInBackOffSince: true while less than
// the current delay has passed since event.
func (b *backoff) inBackOffSince(event, now int) bool {
	return b.ok && !b.expired(event) && now-event < b.delay
}

// next is flowcontrol's Next: start over, or double up to the cap.
func (b *backoff) next(event, now int) {
	if !b.ok || b.expired(event) {
		b.ok, b.delay = true, b.initial
	} else {
		b.delay = min(2*b.delay, b.limit)
	}
	b.lastUpdate = now
}

// RestartSchedule plays n cycles of a container that is stopped run seconds
// after every start. killedByProbe selects how the kubelet restarts it:
//
//   - a container that exits on its own is restarted by a later sync, which
//     measures the back-off from that exit: 0, 10, 20, 40 ... 300 s;
//   - a container its liveness (or startup) probe kills is restarted in the
//     same sync that kills it, and that sync measures the back-off from the
//     previous exit. A container killed after more than the current delay of
//     run (after more than 300 s, always) restarts at once: the restart
//     count climbs every run seconds and never shows a growing back-off.
//
// Shutdown time (at most the grace period) is not counted.
func RestartSchedule(run int, killedByProbe bool, n int) []Restart {
	b := NewBackoff()
	out := make([]Restart, 0, n)
	start := 0
	for range n {
		stop := start + run
		wait := b.Wait(stop, killedByProbe)
		out = append(out, Restart{Start: start, Stop: stop, Wait: wait})
		start = stop + wait
	}
	return out
}

// Backoff is the kubelet's restart back-off of one container, stepped one
// stop at a time: RestartSchedule plays it for runs of one length, a
// simulator for runs of any length.
type Backoff struct {
	b        backoff
	prevExit int
}

// NewBackoff returns the back-off of a container that has not stopped yet,
// on a node with the default cap.
func NewBackoff() *Backoff { return NewBackoffCap(BackoffMax) }

// NewBackoffCap is NewBackoff on a node whose back-off is capped at limit
// seconds (0: the default, 300).
func NewBackoffCap(limit int) *Backoff {
	if limit <= 0 {
		limit = BackoffMax
	}
	return &Backoff{prevExit: -1, b: backoff{initial: min(BackoffInitial, limit), limit: limit}}
}

// Wait returns how long after stopping at stop (seconds) the container
// starts again; killedByProbe selects how the kubelet restarts it (see
// RestartSchedule).
func (k *Backoff) Wait(stop int, killedByProbe bool) int {
	b := &k.b
	next := stop
	switch {
	case killedByProbe && k.prevExit >= 0 && !b.inBackOffSince(k.prevExit, stop):
		b.next(k.prevExit, stop)
	case killedByProbe && k.prevExit < 0:
		// No earlier exit to measure from: restarted at once, and
		// the back-off is not even started.
	default:
		// Restarted by a later sync that sees this very exit.
		if b.inBackOffSince(stop, stop) {
			next = stop + b.delay
		}
		b.next(stop, next)
	}
	k.prevExit = stop
	return next - stop
}

// NeverWaits reports whether a container killed by its probe after run
// seconds restarts at once every time: the kubelet measures the back-off
// from the previous exit, so a run at least as long as the cap always
// clears it.
func NeverWaits(run int) bool { return run >= BackoffMax }
