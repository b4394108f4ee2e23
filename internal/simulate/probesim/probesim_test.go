package probesim

import (
	"math"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"backfire.dev/backfire/internal/model/probe"
)

func ptr[T any](v T) *T { return &v }

// seedLiveness is seed 003's probe: exec psql, 300/10/1/3, pod grace 120.
func seedLiveness() *Probe {
	return &Probe{Name: "liveness", Timing: probe.TimingOf(&corev1.Probe{InitialDelaySeconds: 300, PeriodSeconds: 10, TimeoutSeconds: 1, FailureThreshold: 3}, ptr(int64(120))),
		Query: true, FailsDuringRecovery: true}
}

// fixLiveness is BF101's fix: tcpSocket, timeout 3, failureThreshold 6.
func fixLiveness() *Probe {
	return &Probe{Name: "liveness", Timing: probe.TimingOf(&corev1.Probe{InitialDelaySeconds: 300, PeriodSeconds: 10, TimeoutSeconds: 3, FailureThreshold: 6}, ptr(int64(120)))}
}

func spike(t *testing.T) *Trace {
	t.Helper()
	tr, err := ParseTrace("spike", []byte("0s 55ms\n3600s 1.2s\n3630s 55ms\n"))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// Seed 003: a 30 s spike beyond the 1 s timeout kills the database; its
// 10-minute recovery is longer than the 330 s the probe allows, so every
// restart is killed again, all day.
func TestSeed003LoopNeverEnds(t *testing.T) {
	cfg := Config{Liveness: seedLiveness(), Recovery: 600, Latency: spike(t), Duration: 24 * 3600}
	res := Run(cfg)
	if res.FirstKill < 3600 || res.FirstKill > 3640 {
		t.Errorf("first kill at %.0f s, want during the spike at 3600-3630 s", res.FirstKill)
	}
	// After the first kill, every run is killed by refused probes
	// between D + (F-1) x P = 320 s and D + F x P = 330 s (the first
	// probe waits for the worker's next tick); the restart never waits
	// (>= 300 s of run) and the stop and start take 10 s: about one
	// restart every 330 s.
	want := int((24*3600 - res.FirstKill) / 330)
	if res.Restarts < want-1 || res.Restarts > want+1 {
		t.Errorf("%d restarts, want about %d", res.Restarts, want)
	}
	if res.LoopEnds || res.RecoveriesCompleted != 0 || res.RecoveriesStarted != res.Restarts {
		t.Errorf("loop ends %v, %d of %d recoveries completed", res.LoopEnds, res.RecoveriesCompleted, res.RecoveriesStarted)
	}
	for _, k := range res.Kills[1:] {
		if !k.InRecovery || k.Run < 319.99 || k.Run >= 330 {
			t.Fatalf("kill %+v: want every later kill 320 to 330 s into a recovery", k)
		}
	}
	if never, budget := NeverEnds(cfg); !never || budget != 330 {
		t.Errorf("NeverEnds = %v, %d", never, budget)
	}
	if again := Run(cfg); again.Restarts != res.Restarts || again.RecoverySeconds != res.RecoverySeconds {
		t.Error("not deterministic")
	}
}

// The fix: a tcpSocket liveness probe is not delayed by query latency and
// passes during recovery: no kill at all.
func TestSeed003FixHasNoRestart(t *testing.T) {
	res := Run(Config{Liveness: fixLiveness(), Recovery: 600, Latency: spike(t), Duration: 24 * 3600})
	if res.Restarts != 0 || len(res.Kills) != 0 || !res.LoopEnds {
		t.Errorf("%d restarts, kills %v", res.Restarts, res.Kills)
	}
}

// A recovery the probe allows: one kill, one recovery, and it completes.
func TestShortRecoveryEnds(t *testing.T) {
	res := Run(Config{Liveness: seedLiveness(), Recovery: 120, Latency: spike(t), Duration: 6 * 3600})
	if res.Restarts != 1 || res.RecoveriesCompleted != 1 || !res.LoopEnds {
		t.Errorf("%d restarts, %d of %d recoveries completed", res.Restarts, res.RecoveriesCompleted, res.RecoveriesStarted)
	}
	if math.Abs(res.RecoverySeconds-120) > 0.01 {
		t.Errorf("recovery %.1f s, want 120", res.RecoverySeconds)
	}
}

// A startup probe that fails during recovery and allows 15 minutes holds
// the liveness probe back through a 10-minute recovery.
func TestStartupProbeHoldsThroughRecovery(t *testing.T) {
	startup := &Probe{Name: "startup", Timing: probe.TimingOf(&corev1.Probe{PeriodSeconds: 10, FailureThreshold: 90}, nil), Query: true, FailsDuringRecovery: true}
	live := seedLiveness()
	live.InitialDelay = probe.Value{N: 0, Set: true}
	cfg := Config{Liveness: live, Startup: startup, Recovery: 600, Latency: spike(t), Duration: 6 * 3600}
	res := Run(cfg)
	if res.Restarts != 1 || !res.LoopEnds {
		t.Errorf("%d restarts, loop ends %v", res.Restarts, res.LoopEnds)
	}
	if never, _ := NeverEnds(cfg); never {
		t.Error("NeverEnds with a startup budget of 900 s against a 600 s recovery")
	}
	// With 30 x 10 = 300 s of startup budget it does not hold.
	startup.Failure = probe.Value{N: 30, Set: true}
	res = Run(cfg)
	if res.LoopEnds || res.Kills[len(res.Kills)-1].Probe != "startup" {
		t.Errorf("a 300 s startup budget against a 600 s recovery: loop ends %v, last kill %+v", res.LoopEnds, res.Kills[len(res.Kills)-1])
	}
}

// A probe killed after less than 300 s of run waits for the kubelet's
// back-off (10 s doubling to 300 s, measured from the previous exit, as
// probe.RestartSchedule plays it): far fewer restarts than runs of 30 s
// would allow, with gaps up to the cap.
func TestBackoffSlowsAFastLoop(t *testing.T) {
	live := seedLiveness()
	live.InitialDelay = probe.Value{N: 0, Set: true}
	res := Run(Config{Liveness: live, Recovery: 3600, Latency: spike(t), Duration: 3 * 3600})
	widest := 0.0
	for i := 1; i < len(res.Kills); i++ {
		widest = max(widest, res.Kills[i].At-res.Kills[i-1].At)
	}
	// 10 s to stop and start, the first probe on the worker's next
	// 10 s tick, the third failure 20 s later: killed 30 s into each run,
	// 40 s a cycle without back-off, 180 kills in the two hours after the
	// spike.
	if len(res.Kills) > 60 || widest < 300 {
		t.Errorf("%d kills, widest gap %.0f s: the back-off does not hold the loop back", len(res.Kills), widest)
	}
	if got := res.Kills[2].At - res.Kills[1].At; math.Abs(got-40) > 0.1 {
		t.Errorf("second gap %.1f s, want 40: the first restarts are immediate", got)
	}
}

func TestQuantiles(t *testing.T) {
	q, err := ParseQuantiles("p50=40ms,p99=1.2s")
	if err != nil {
		t.Fatal(err)
	}
	if got := q.Quantile(0.5); math.Abs(got-0.040) > 1e-9 {
		t.Errorf("p50 = %v", got)
	}
	if got := q.Quantile(0.99); math.Abs(got-1.2) > 1e-9 {
		t.Errorf("p99 = %v", got)
	}
	over := 0
	for n := range 100000 {
		if q.At(0, n) > 1.2 {
			over++
		}
	}
	if over < 700 || over > 1300 {
		t.Errorf("%d of 100000 samples above p99, want about 1000", over)
	}
	if q.At(5, 42) != q.At(99, 42) {
		t.Error("the n-th sample must not depend on time")
	}
	for _, bad := range []string{"", "p50", "p50=x", "p0=1s", "p100=1s", "p99=1s,p50=2s", "q50=1s", "p50=-1s", "pNaN=1s", "pnan=1s,p99=2s"} {
		if _, err := ParseQuantiles(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestTrace(t *testing.T) {
	tr := spike(t)
	for at, want := range map[float64]float64{0: 0.055, 3599: 0.055, 3600: 1.2, 3629.9: 1.2, 3630: 0.055, 99999: 0.055} {
		if got := tr.At(at, 0); got != want {
			t.Errorf("At(%v) = %v, want %v", at, got, want)
		}
	}
	abs, err := ParseTrace("abs", []byte("2026-11-12T07:00:00Z 50ms\n2026-11-12T07:01:00Z 2s\n"))
	if err != nil || abs.At(60, 0) != 2 {
		t.Errorf("RFC 3339 trace: %v %v", abs, err)
	}
	for _, bad := range []string{"", "# only a comment\n", "10s\n", "x 1s\n", "10s x\n", "20s 1s\n10s 1s\n"} {
		if _, err := ParseTrace("bad", []byte(bad)); err == nil || !strings.HasPrefix(err.Error(), "bad") {
			t.Errorf("%q: err %v", bad, err)
		}
	}
}

// A startup probe alone kills nothing on a clean start: the loop of a
// startup budget below the recovery (BF105) begins with a crash, which
// AfterCrash plays.
func TestStartupLoopBeginsAfterACrash(t *testing.T) {
	startup := &Probe{Name: "startup", Timing: probe.TimingOf(&corev1.Probe{InitialDelaySeconds: 30, PeriodSeconds: 10, FailureThreshold: 15}, nil), Query: true, FailsDuringRecovery: true}
	cfg := Config{Startup: startup, Recovery: 600, Latency: spike(t), Duration: 6 * 3600}
	if res := Run(cfg); len(res.Kills) != 0 || res.RecoveriesStarted != 0 {
		t.Errorf("a clean start: %d kills, %d recoveries", len(res.Kills), res.RecoveriesStarted)
	}
	cfg.AfterCrash = true
	res := Run(cfg)
	// The 15th failure is at 30 + 14 x 10 = 170 s (D + F x P = 180 s is
	// the bound the rules print).
	if len(res.Kills) == 0 || res.Kills[0].Probe != "startup" || !res.Kills[0].InRecovery || res.Kills[0].Run < 170 || res.Kills[0].Run > 171 {
		t.Fatalf("after a crash: %d kills, the first %+v", len(res.Kills), res.Kills[:min(1, len(res.Kills))])
	}
	if res.LoopEnds || res.RecoveriesCompleted != 0 {
		t.Errorf("a 180 s startup budget against a 600 s recovery: loop ends %v, %d of %d completed", res.LoopEnds, res.RecoveriesCompleted, res.RecoveriesStarted)
	}
	// 30 + 60 x 10 = 630 s covers it: one recovery, which completes.
	startup.Failure = probe.Value{N: 60, Set: true}
	if res := Run(cfg); len(res.Kills) != 0 || !res.LoopEnds || res.RecoveriesCompleted != 1 {
		t.Errorf("a 630 s startup budget: %d kills, loop ends %v, %d completed", len(res.Kills), res.LoopEnds, res.RecoveriesCompleted)
	}
}

// The kubelet probes on its worker's ticker, which runs from the pod's
// first container every period, whatever the restarts; the initial delay
// counts from the start the status holds, to the second. A container
// restarted at 3631 s (killed at 3621 s, 2 s to stop, 8 s to start) is first
// probed at 3940 s, not 3931 s: the later kills come 329 s into a run, not
// 320 s (checked against the kubelet by TestSimulatorMatchesKubelet).
func TestProbesTickOnTheWorkersGrid(t *testing.T) {
	res := Run(Config{Liveness: seedLiveness(), Recovery: 600, Latency: spike(t), Duration: 2 * 3600})
	if len(res.Kills) < 2 || res.Kills[0].At != 3621 {
		t.Fatalf("kills %+v, want the first at 3621 s", res.Kills)
	}
	if k := res.Kills[1]; math.Abs(k.Run-329.001) > 1e-6 || math.Abs(k.At-3960.001) > 1e-6 {
		t.Errorf("second kill %+v, want at 3960.001 s, 329.001 s into its run", k)
	}
	for _, s := range res.Samples {
		if math.Mod(s.T, 10) != 0 {
			t.Fatalf("a probe at %v s, off the worker's 10 s ticker", s.T)
		}
	}
}

// A startup success reaches the status after the instant it happens: the
// liveness worker ticking at that same instant still sees the container
// not started, and probes it one period later.
func TestStartupSuccessReachesLivenessAfterTheInstant(t *testing.T) {
	startup := &Probe{Name: "startup", Timing: probe.TimingOf(&corev1.Probe{PeriodSeconds: 10, FailureThreshold: 90}, nil), Query: true, FailsDuringRecovery: true}
	live := seedLiveness()
	live.InitialDelay = probe.Value{N: 0, Set: true}
	res := Run(Config{Liveness: live, Startup: startup, Recovery: 600, AfterCrash: true, Latency: spike(t), Duration: 700})
	for _, s := range res.Samples {
		if s.Probe == "liveness" {
			if s.T != 610 {
				t.Errorf("first liveness probe at %v s, want 610 s (the startup probe passed at 600 s)", s.T)
			}
			return
		}
	}
	t.Error("no liveness probe")
}

// The node caps the back-off (crashLoopBackOff.maxContainerRestartPeriod):
// a 60 s cap holds a fast loop's restarts to a minute apart at most.
func TestBackoffCapIsTheNodes(t *testing.T) {
	live := seedLiveness()
	live.InitialDelay = probe.Value{N: 0, Set: true}
	res := Run(Config{Liveness: live, Recovery: 3600, Latency: spike(t), Duration: 3 * 3600, BackoffCap: 60})
	widest := 0.0
	for i := 1; i < len(res.Kills); i++ {
		widest = max(widest, res.Kills[i].At-res.Kills[i-1].At)
	}
	// 60 s of back-off, 10 s to stop and start, about 30 s of run.
	if widest > 60+10+31 || widest < 60 {
		t.Errorf("widest gap between kills %.1f s with a 60 s cap", widest)
	}
}

func readinessProbe(delay, period, success, failure int32, query bool) *Probe {
	return &Probe{Name: "readiness", Query: query, FailsDuringRecovery: query,
		Timing: probe.TimingOf(&corev1.Probe{InitialDelaySeconds: delay, PeriodSeconds: period, TimeoutSeconds: 1,
			SuccessThreshold: success, FailureThreshold: failure}, nil)}
}

// readyAt is when the container became ready after from, or -1.
func readyAt(res Timeline, from float64) float64 {
	for _, r := range res.Ready {
		if r.At > from && r.Ready {
			return r.At
		}
	}
	return -1
}

// successThreshold 3 makes a new container ready on its third success in
// a row, and failureThreshold 2 takes it out on the second failure.
func TestReadinessThresholds(t *testing.T) {
	tr, err := ParseTrace("flap", []byte("0s 50ms\n30s 2s\n40s 50ms\n50s 2s\n55s 50ms\n"))
	if err != nil {
		t.Fatal(err)
	}
	res := Run(Config{Readiness: readinessProbe(5, 5, 3, 2, true), Latency: tr, Duration: 120})
	want := []ReadyChange{{15, true}, {35, false}, {65, true}}
	if len(res.Ready) != len(want) {
		t.Fatalf("ready changes %v, want %v", res.Ready, want)
	}
	for i := range want {
		if res.Ready[i] != want[i] {
			t.Fatalf("ready changes %v, want %v", res.Ready, want)
		}
	}
}

// The startup probe holds readiness back: no readiness probe before the
// startup probe has passed, and none at the instant it passes.
func TestStartupProbeGatesReadiness(t *testing.T) {
	startup := &Probe{Name: "startup", Query: true, FailsDuringRecovery: true,
		Timing: probe.TimingOf(&corev1.Probe{PeriodSeconds: 10, TimeoutSeconds: 1, FailureThreshold: 30}, nil)}
	res := Run(Config{Startup: startup, Readiness: readinessProbe(0, 5, 1, 3, true), Recovery: 95, AfterCrash: true,
		Latency: spike(t), Duration: 300})
	for _, s := range res.Samples {
		if s.Probe == "readiness" && s.T <= 100 {
			t.Fatalf("readiness probed at %g s, before the startup probe passed at 100 s", s.T)
		}
	}
	if got := readyAt(res, 0); got != 105 {
		t.Errorf("ready at %g s, want 105 s (the first readiness tick after the startup success)", got)
	}
}

// The readiness worker's run of successes is the worker's, not the
// container's: a readiness probe that passed until a liveness kill makes
// the next container ready on its first success, whatever its
// successThreshold (as the kubelet's worker does).
func TestReadinessRunCarriesOverARestart(t *testing.T) {
	liveness := &Probe{Name: "liveness", Query: true, FailsDuringRecovery: false,
		Timing: probe.TimingOf(&corev1.Probe{PeriodSeconds: 10, TimeoutSeconds: 1, FailureThreshold: 3}, nil)}
	res := Run(Config{Liveness: liveness, Readiness: readinessProbe(0, 5, 3, 3, false), Latency: spike(t), Duration: 3800})
	if len(res.Kills) == 0 {
		t.Fatal("no kill")
	}
	k := res.Kills[0]
	restart := k.At + ShutdownSeconds + StartSeconds
	got := readyAt(res, k.At)
	if next := math.Ceil(restart/5) * 5; got != next {
		t.Errorf("ready at %g s after the restart at %g s, want %g s: its first readiness tick", got, restart, next)
	}
}
