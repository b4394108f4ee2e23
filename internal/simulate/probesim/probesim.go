// Package probesim plays a container's probes forward in time against a
// server model: the kubelet side (initial delay, period, timeout,
// thresholds, the startup probe holding liveness back, the kill, the grace
// period, the restart back-off) with the arithmetic of internal/model/probe,
// and a server whose query latency follows a distribution or a trace and
// that, after a kill, spends a recovery time during which a probe that
// fails during recovery fails. It is deterministic: the same input gives
// the same run.
package probesim

import (
	"math"

	"backfire.dev/backfire/internal/model/probe"
)

// Probe is one probe as the simulator needs it.
type Probe struct {
	Name string // "liveness", "startup", "readiness"
	probe.Timing
	// Query: the probe waits for the program's answer (exec, httpGet,
	// grpc), so the latency applies to it; the kernel answers a tcpSocket
	// probe at once.
	Query bool
	// FailsDuringRecovery: it fails while the server recovers.
	FailsDuringRecovery bool
	Handler             string // "exec [/docker-healthcheck.sh]", for reports
}

// Assumed timings of the container runtime: how long a server takes to
// exit after SIGTERM (at most the grace period), and from the restart
// decision to the new process running (image present). Seed 003 observed
// 5.7 min against 5.5 min of probe arithmetic: about 10 s per cycle.
const (
	ShutdownSeconds = 2
	StartSeconds    = 8
	// AnswerSeconds is how fast a probe that does not wait for a query
	// (or that the recovering server refuses) gets its answer.
	AnswerSeconds = 0.001
)

// Config is one simulation.
type Config struct {
	Liveness, Startup *Probe
	// Readiness kills nothing: it only says when the pod is in rotation.
	Readiness *Probe
	// Recovery is how long the server recovers after a start that
	// follows a kill; every kill starts it over.
	Recovery float64
	// AfterCrash: the first start recovers too, as a start after a crash
	// does (an OOM kill, a node failure, a stop that ended in SIGKILL).
	// A startup probe that fails during recovery kills nothing on a
	// clean start, so its loop only shows from a crash.
	AfterCrash bool
	Latency    Latency
	Duration   float64 // seconds simulated
	// BackoffCap is the node's cap of the restart back-off in seconds
	// (the kubelet's crashLoopBackOff.maxContainerRestartPeriod); 0 is
	// the default, 300 s.
	BackoffCap int
}

// State is what the container is doing.
type State string

const (
	Serving    State = "serving"
	Recovering State = "recovering"
	Stopped    State = "stopped" // killed, shutting down, waiting to restart
)

// Span is a stretch of one state.
type Span struct {
	From, To float64
	State    State
}

// Kill is one kill by a probe.
type Kill struct {
	At         float64
	Probe      string
	Run        float64 // seconds since the container started
	InRecovery bool
}

// Sample is one probe sent.
type Sample struct {
	T, Latency float64
	Probe      string
	OK         bool
}

// Timeline is what happened.
type Timeline struct {
	Restarts            int
	RestartsPerDay      float64
	RecoverySeconds     float64 // time spent recovering
	RecoveriesStarted   int
	RecoveriesCompleted int
	// LoopEnds: every recovery that started also completed (or none
	// started): the container ends the run serving.
	LoopEnds bool
	// FirstKill is when the first kill happened; -1 without one.
	FirstKill float64
	Kills     []Kill
	Spans     []Span
	Samples   []Sample
	// Ready is every change of the readiness worker's result (not
	// ready until then); empty without a readiness probe.
	Ready    []ReadyChange
	Duration float64
}

// ReadyChange is the readiness worker's result changing at At. The
// container's Ready condition is this result while the container runs
// (the probe manager's UpdatePodStatus).
type ReadyChange struct {
	At    float64
	Ready bool
}

// readiness is the readiness worker, which lives as long as the pod: its
// ticker, its run of equal answers (which, unlike the result, a new
// container does not reset) and its result.
type readiness struct {
	next   float64
	lastOK bool // the kubelet's zero Result is Success
	run    int
	ready  bool
}

// set records the worker's result after a tick at t.
func (r *readiness) set(t float64, ready bool, res *Timeline) {
	if ready != r.ready {
		r.ready = ready
		res.Ready = append(res.Ready, ReadyChange{t, ready})
	}
}

// answered counts one answer; the result changes once successThreshold
// passes or failureThreshold failures come in a row.
func (r *readiness) answered(p *Probe, ok bool) (bool, bool) {
	if ok == r.lastOK {
		r.run++
	} else {
		r.lastOK, r.run = ok, 1
	}
	if ok {
		return r.run >= p.Success.N, true
	}
	return r.run >= p.Failure.N, false
}

// Run simulates cfg.
func Run(cfg Config) Timeline {
	res := Timeline{FirstKill: -1, Duration: cfg.Duration}
	bo := probe.NewBackoffCap(cfg.BackoffCap)
	n := 0 // probes sent
	rd := &readiness{next: math.Inf(1), lastOK: true}
	if cfg.Readiness != nil {
		rd.next = 0
	}
	start, needsRecovery := 0.0, cfg.AfterCrash
	for start < cfg.Duration {
		recEnd := start
		if needsRecovery {
			recEnd = start + cfg.Recovery
			res.RecoveriesStarted++
		}
		kill, kt, kp := runOnce(cfg, start, recEnd, &n, rd, &res)
		stop := math.Min(kt, cfg.Duration)
		if recEnd > start {
			res.Spans = append(res.Spans, Span{start, math.Min(recEnd, stop), Recovering})
			res.RecoverySeconds += math.Min(recEnd, stop) - start
			if recEnd <= stop {
				res.RecoveriesCompleted++
			}
		}
		if recEnd < stop {
			res.Spans = append(res.Spans, Span{math.Max(start, recEnd), stop, Serving})
		}
		if !kill {
			break
		}
		if res.FirstKill < 0 {
			res.FirstKill = kt
		}
		res.Kills = append(res.Kills, Kill{At: kt, Probe: kp, Run: kt - start, InRecovery: kt < recEnd})
		exit := kt + math.Min(ShutdownSeconds, float64(cfg.grace(kp)))
		wait := bo.Wait(int(math.Round(exit)), true)
		next := exit + float64(wait) + StartSeconds
		res.Spans = append(res.Spans, Span{kt, math.Min(next, cfg.Duration), Stopped})
		// The readiness worker's ticks while no container runs fail it
		// (worker.go: a container not running sets Failure).
		for ; rd.next < math.Min(next, cfg.Duration); rd.next += float64(cfg.Readiness.Period.N) {
			rd.set(rd.next, false, &res)
		}
		if next >= cfg.Duration {
			break
		}
		res.Restarts++
		start, needsRecovery = next, true
	}
	res.RestartsPerDay = float64(res.Restarts) * 86400 / cfg.Duration
	res.LoopEnds = res.RecoveriesStarted == res.RecoveriesCompleted
	return res
}

func (cfg Config) grace(name string) int {
	if name == "startup" && cfg.Startup != nil {
		return cfg.Startup.Grace.N
	}
	if cfg.Liveness != nil {
		return cfg.Liveness.Grace.N
	}
	return probe.DefaultGracePeriod
}

// runOnce plays one container run from start until a probe kills it
// (kill, its time and the probe) or the simulation ends.
//
// It follows the kubelet's probe worker (pkg/kubelet/prober/worker.go,
// checked against it at v1.34 and v1.37 by hack/test-prober.sh): each
// probe has one worker for the pod's life, whose ticker fires when it
// starts (with the first container, at 0) and every periodSeconds after,
// whatever the restarts; a tick probes a running container once
// initialDelaySeconds have passed since its start as the status holds it,
// to the second (the status manager's normalizeStatus); the liveness
// worker probes only once the status says the startup probe passed, which
// a startup success reaches after the instant it happens.
//
// The readiness worker ticks on its own grid too: the first tick of a
// new container sets its result to not ready, and it probes, as liveness
// does, only once the startup probe has passed; a tick at the instant of
// a kill still probes the container, which is killed after the tick.
func runOnce(cfg Config, start, recEnd float64, n *int, rd *readiness, res *Timeline) (bool, float64, string) {
	started := cfg.Startup == nil
	var sFail, lFail int
	nextS, nextL := math.Inf(1), math.Inf(1)
	if cfg.Startup != nil {
		nextS = firstTick(start, cfg.Startup.Period.N)
	}
	if cfg.Liveness != nil {
		nextL = firstTick(start, cfg.Liveness.Period.N)
	}
	// The start the status holds: seconds, rounded down.
	startedAt := math.Floor(math.Round(start*1000) / 1000)
	due := func(p *Probe, t float64) bool { return t-startedAt >= float64(p.InitialDelay.N) }
	fresh := true // the readiness worker has not seen this container
	for {
		t := math.Min(math.Min(nextS, nextL), rd.next)
		if math.IsInf(t, 1) || t >= cfg.Duration {
			return false, cfg.Duration, ""
		}
		kill, killAt, killer := false, 0.0, ""
		passedNow := false
		if !started && t == nextS {
			nextS = t + float64(cfg.Startup.Period.N)
			if due(cfg.Startup, t) {
				ok, lat := answer(cfg, cfg.Startup, t, recEnd, n)
				res.Samples = append(res.Samples, Sample{t, lat, "startup", ok})
				if ok {
					passedNow, sFail, nextS = true, 0, math.Inf(1)
				} else if sFail++; sFail >= cfg.Startup.Failure.N {
					kill, killAt, killer = true, t+math.Min(lat, float64(cfg.Startup.Timeout.N)), "startup"
				}
			}
		}
		if t == nextL {
			nextL = t + float64(cfg.Liveness.Period.N)
			// Held back until the startup probe has passed.
			if started && due(cfg.Liveness, t) {
				ok, lat := answer(cfg, cfg.Liveness, t, recEnd, n)
				res.Samples = append(res.Samples, Sample{t, lat, "liveness", ok})
				if ok {
					lFail = 0
				} else if lFail++; lFail >= cfg.Liveness.Failure.N {
					kill, killAt, killer = true, t+math.Min(lat, float64(cfg.Liveness.Timeout.N)), "liveness"
				}
			}
		}
		if t == rd.next {
			rd.next = t + float64(cfg.Readiness.Period.N)
			ready := rd.ready && !fresh
			fresh = false
			if started && due(cfg.Readiness, t) {
				ok, lat := answer(cfg, cfg.Readiness, t, recEnd, n)
				res.Samples = append(res.Samples, Sample{t, lat, "readiness", ok})
				if crossed, r := rd.answered(cfg.Readiness, ok); crossed {
					ready = r
				}
			}
			rd.set(t, ready, res)
		}
		if kill {
			return true, killAt, killer
		}
		started = started || passedNow
	}
}

// firstTick is a worker's first tick at or after start: its ticker runs
// from 0 every period seconds.
func firstTick(start float64, period int) float64 {
	p := float64(period)
	k := math.Ceil(start / p)
	if (k-1)*p >= start { // float rounding
		k--
	}
	return k * p
}

// answer is the server's reply to one probe at t: during recovery a probe
// that fails during recovery is refused at once and any other passes;
// afterwards a query probe passes if the latency is within its timeout.
func answer(cfg Config, p *Probe, t, recEnd float64, n *int) (bool, float64) {
	if t < recEnd {
		return !p.FailsDuringRecovery, AnswerSeconds
	}
	if !p.Query {
		return true, AnswerSeconds
	}
	*n++
	lat := cfg.Latency.At(t, *n)
	return lat <= float64(p.Timeout.N), lat
}

// NeverEnds reports, from the arithmetic alone, whether a recovery longer
// than the probe allows can never complete: the liveness (or startup)
// probe fails during recovery and kills the container before the recovery
// ends, and every kill starts the recovery over.
func NeverEnds(cfg Config) (bool, int) {
	p := cfg.Startup
	if p == nil || !p.FailsDuringRecovery {
		p = cfg.Liveness
	}
	if p == nil || !p.FailsDuringRecovery {
		return false, 0
	}
	budget := p.NeverHealthyKill()
	return cfg.Recovery > float64(budget), budget
}
