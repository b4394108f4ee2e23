//go:build backfiretrace

// This file is added to the kubelet's own prober package
// (k8s.io/kubernetes/pkg/kubelet/prober) by hack/test-prober.sh, so that it
// can drive the unexported probe worker. For each scenario of
// BACKFIRE_SCENARIOS it plays a container's life around the real worker
// (doProbe, the real exec prober and the results managers) and the real
// restart back-off (client-go's flowcontrol.Backoff, configured as the
// kubelet configures it), and writes every probe sent, every kill and
// every change of the readiness worker's result to BACKFIRE_TRACE_OUT; backfire's simulator must then produce the same trace
// (internal/simulate/probesim, TestSimulatorMatchesKubelet).
//
// What is the kubelet's here, and what is the scenario's:
//   - the worker decides, at each tick, whether to probe (initial delay,
//     startup gating, hold after a kill) and when the result crosses a
//     threshold; the exec prober decides that an answer slower than
//     timeoutSeconds fails; the back-off decides the wait before a restart.
//   - the ticks are the worker's ticker's (time.NewTicker(periodSeconds),
//     first probe when the worker starts, with the first container); the
//     container's StartedAt is kept to the second, as the status manager's
//     normalizeStatus keeps it; the server's answers, the time a container
//     takes to stop and to start, and the sync that restarts a container at
//     the moment its back-off ends are the scenario's assumptions, shared
//     with the simulator.
package prober

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/flowcontrol"
	remote "k8s.io/cri-client/pkg"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"
	"k8s.io/kubernetes/pkg/kubelet/prober/results"
	"k8s.io/kubernetes/pkg/kubelet/status"
	execprobe "k8s.io/kubernetes/pkg/probe/exec"
	testingclock "k8s.io/utils/clock/testing"
	utilexec "k8s.io/utils/exec"
)

// The scenario file's format (internal/simulate/probesim/testdata/kubelet).
type btProbe struct {
	InitialDelaySeconds int32 `json:"initialDelaySeconds"`
	PeriodSeconds       int32 `json:"periodSeconds"`
	TimeoutSeconds      int32 `json:"timeoutSeconds"`
	SuccessThreshold    int32 `json:"successThreshold"`
	FailureThreshold    int32 `json:"failureThreshold"`
	// Query: the answer takes the scenario's latency; otherwise it comes
	// at once. FailsDuringRecovery: refused while the server recovers.
	Query               bool `json:"query"`
	FailsDuringRecovery bool `json:"failsDuringRecovery"`
}

type btScenario struct {
	Name            string       `json:"name"`
	Liveness        *btProbe     `json:"liveness,omitempty"`
	Startup         *btProbe     `json:"startup,omitempty"`
	Readiness       *btProbe     `json:"readiness,omitempty"`
	GraceSeconds    float64      `json:"graceSeconds"`
	RecoverySeconds float64      `json:"recoverySeconds"`
	AfterCrash      bool         `json:"afterCrash"`
	Latency         [][2]float64 `json:"latency"` // [offset s, latency s], each holds until the next; the median after the last
	DurationSeconds float64      `json:"durationSeconds"`
	// Cap of the restart back-off (s): the node's
	// crashLoopBackOff.maxContainerRestartPeriod; 0 is the default 300.
	BackoffCapSeconds float64 `json:"backoffCapSeconds,omitempty"`
}

// Assumptions shared with the simulator (probesim.ShutdownSeconds,
// StartSeconds, AnswerSeconds).
const (
	btShutdown = 2.0
	btStart    = 8.0
	btAnswer   = 0.001
)

type btSample struct {
	T     float64 `json:"t"`
	Probe string  `json:"probe"`
	OK    bool    `json:"ok"`
}

type btKill struct {
	At    float64 `json:"at"`
	Probe string  `json:"probe"`
	Run   float64 `json:"run"`
	// Wait is the restart back-off after this kill's exit, from the
	// real Backoff.
	Wait float64 `json:"wait"`
}

// btReady is the readiness worker's result changing (not ready until
// the first one).
type btReady struct {
	T     float64 `json:"t"`
	Ready bool    `json:"ready"`
}

type btTrace struct {
	Name    string     `json:"name"`
	Samples []btSample `json:"samples"`
	Kills   []btKill   `json:"kills"`
	Ready   []btReady  `json:"ready"`
}

// ms rounds to the millisecond, so that sums of float seconds compare.
func ms(x float64) float64 { return math.Round(x*1000) / 1000 }

// btStatus is the status manager as the worker reads it: the container's
// state at the simulated moment, its StartedAt placed that many seconds
// before the wall clock's now (the worker measures the initial delay with
// time.Since).
type btStatus struct {
	status.Manager
	pod     *v1.Pod
	running bool
	id      string
	started bool
	// sinceStart is now - StartedAt in the simulated clock.
	sinceStart time.Duration
}

func (s *btStatus) GetPodStatus(types.UID) (v1.PodStatus, bool) {
	st := v1.ContainerStatus{Name: s.pod.Spec.Containers[0].Name, ContainerID: s.id, Started: &s.started}
	if s.running {
		st.State.Running = &v1.ContainerStateRunning{StartedAt: metav1.NewTime(time.Now().Add(-s.sinceStart))}
	} else {
		st.State.Terminated = &v1.ContainerStateTerminated{ExitCode: 137}
	}
	return v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{st}}, true
}

// btRunner answers exec probes as the scenario's server does: the command
// names the probe; an answer slower than the timeout the prober passes is
// a timeout, as the CRI client reports one.
type btRunner struct {
	answer func(probe string) (ok bool, latency float64)
}

func (r *btRunner) RunInContainer(_ context.Context, _ kubecontainer.ContainerID, cmd []string, timeout time.Duration) ([]byte, error) {
	ok, lat := r.answer(cmd[0])
	if lat > timeout.Seconds() {
		return nil, fmt.Errorf("exec: %w", remote.ErrCommandTimedOut)
	}
	if !ok {
		return []byte("refused"), utilexec.CodeExitError{Err: errors.New("exit status 1"), Code: 1}
	}
	return []byte("ok"), nil
}

func (sc *btScenario) latencyAt(t float64) float64 {
	l := sc.Latency
	if len(l) == 0 {
		return btAnswer
	}
	if t > l[len(l)-1][0] {
		vals := make([]float64, len(l))
		for i, s := range l {
			vals[i] = s[1]
		}
		slices.Sort(vals)
		return vals[len(vals)/2]
	}
	i := 0
	for i+1 < len(l) && l[i+1][0] <= t {
		i++
	}
	return l[i][1]
}

func btSpec(p *btProbe, name string) *v1.Probe {
	return &v1.Probe{
		ProbeHandler:        v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{name}}},
		InitialDelaySeconds: p.InitialDelaySeconds, PeriodSeconds: p.PeriodSeconds, TimeoutSeconds: p.TimeoutSeconds,
		SuccessThreshold: p.SuccessThreshold, FailureThreshold: p.FailureThreshold,
	}
}

func btRun(tb *testing.T, sc btScenario) btTrace {
	pod := getTestPod()
	pod.Spec.RestartPolicy = v1.RestartPolicyAlways
	c := &pod.Spec.Containers[0]
	if sc.Liveness != nil {
		c.LivenessProbe = btSpec(sc.Liveness, "liveness")
	}
	if sc.Startup != nil {
		c.StartupProbe = btSpec(sc.Startup, "startup")
	}
	if sc.Readiness != nil {
		c.ReadinessProbe = btSpec(sc.Readiness, "readiness")
	}
	m := newTestManager()
	m.start = time.Now().Add(-365 * 24 * time.Hour) // the kubelet has run for long
	st := &btStatus{Manager: m.statusManager, pod: pod}
	m.statusManager = st
	m.prober.exec = execprobe.New()
	// The kubelet's sync loop reads the results' updates; a full channel
	// would block the worker.
	for _, r := range []results.Manager{m.livenessManager, m.readinessManager, m.startupManager} {
		go func() {
			for range r.Updates() {
			}
		}()
	}

	// The simulated moment, the current container's start and the end
	// of its recovery; the latency of the last answer.
	var now, start, recEnd, lastLat float64
	tr := btTrace{Name: sc.Name}
	probes := map[string]*btProbe{"liveness": sc.Liveness, "startup": sc.Startup, "readiness": sc.Readiness}
	m.prober.runner = &btRunner{answer: func(name string) (bool, float64) {
		p := probes[name]
		ok, lat := true, btAnswer
		switch {
		case now < recEnd:
			ok = !p.FailsDuringRecovery
		case p.Query:
			lat = sc.latencyAt(now)
		}
		if name != "readiness" { // a readiness answer kills nothing
			lastLat = min(lat, float64(p.TimeoutSeconds))
		}
		tr.Samples = append(tr.Samples, btSample{ms(now), name, ok && lat <= float64(p.TimeoutSeconds)})
		return ok, lat
	}}

	type wk struct {
		name string
		w    *worker
		next float64 // the worker's ticker: its first probe when it starts, then every period
		p    *btProbe
	}
	var workers []*wk
	if sc.Startup != nil {
		workers = append(workers, &wk{"startup", newWorker(m, startup, pod, *c), 0, sc.Startup})
	}
	if sc.Liveness != nil {
		workers = append(workers, &wk{"liveness", newWorker(m, liveness, pod, *c), 0, sc.Liveness})
	}
	if sc.Readiness != nil {
		workers = append(workers, &wk{"readiness", newWorker(m, readiness, pod, *c), 0, sc.Readiness})
	}
	// The readiness worker's result as its results manager holds it for
	// the worker's container: not ready until it says otherwise.
	ready := false

	// The kubelet's crash-loop back-off (pkg/kubelet/kubelet.go:
	// flowcontrol.NewBackOff(base, boMax), an entry expiring 600 s after
	// its last update), on a fake clock.
	epoch := time.Unix(1_000_000, 0)
	at := func(s float64) time.Time { return epoch.Add(time.Duration(math.Round(s*1000)) * time.Millisecond) }
	clock := testingclock.NewFakeClock(epoch)
	boMax := 300 * time.Second
	if sc.BackoffCapSeconds > 0 {
		boMax = time.Duration(sc.BackoffCapSeconds * float64(time.Second))
	}
	base := min(10*time.Second, boMax)
	bo := flowcontrol.NewFakeBackOff(base, boMax, clock)
	bo.HasExpiredFunc = func(eventTime, lastUpdate time.Time, _ time.Duration) bool {
		return eventTime.Sub(lastUpdate) > 600*time.Second
	}
	const key = "pod_container"
	prevExit := -1.0

	run := 0
	alive := false
	prevID := ""
	startRun := func(s float64, recover bool) {
		run++
		start, recEnd = s, s
		if recover {
			recEnd = s + sc.RecoverySeconds
		}
		alive = true
		// Without a startup probe the status says started once
		// running (the probe manager's UpdatePodStatus).
		st.started = sc.Startup == nil
	}
	startRun(0, sc.AfterCrash)
	ctx := context.Background()
	for {
		t := math.Inf(1)
		for _, w := range workers {
			t = min(t, w.next)
		}
		if t >= sc.DurationSeconds {
			break
		}
		now = t
		// The status every worker due now reads: a result set now
		// reaches it (Started) only after this instant.
		if alive && t >= start {
			st.running, st.id = true, fmt.Sprintf("test://run-%d", run)
			// StartedAt to the second, as normalizeStatus stores it.
			st.sinceStart = time.Duration(math.Round((t-math.Floor(ms(start)))*1000)) * time.Millisecond
		} else {
			st.running, st.id = false, prevID
		}
		var kill, startedNow bool
		var killProbe string
		var killAt float64
		for _, w := range workers {
			if w.next != t {
				continue
			}
			w.next += float64(w.p.PeriodSeconds)
			held := w.w.onHold
			w.w.doProbe(ctx)
			if w.name == "readiness" {
				r, ok := m.readinessManager.Get(w.w.containerID)
				if (ok && r == results.Success) != ready {
					ready = !ready
					tr.Ready = append(tr.Ready, btReady{ms(t), ready})
				}
				continue
			}
			if !st.running || held || !w.w.onHold {
				continue
			}
			// The worker crossed a threshold and holds until a new
			// container: a liveness or startup failure is a kill.
			switch {
			case w.w.lastResult == results.Failure:
				kill, killProbe, killAt = true, w.name, t+lastLat
			case w.name == "startup" && w.w.lastResult == results.Success:
				startedNow = true
			}
		}
		if startedNow {
			st.started = true
		}
		if !kill {
			continue
		}
		k := btKill{At: ms(killAt), Probe: killProbe, Run: ms(killAt - start), Wait: -1}
		exit := killAt + min(btShutdown, sc.GraceSeconds)
		// The sync that kills restarts at once unless the previous
		// exit is still in back-off (kuberuntime's doBackOff reads the
		// exited container of the status taken before the kill);
		// otherwise the first sync after this exit's back-off ends
		// restarts it.
		clock.SetTime(at(exit))
		next := exit
		switch {
		case prevExit < 0:
		case !bo.IsInBackOffSince(key, at(prevExit)):
			bo.Next(key, at(prevExit))
		default:
			if !bo.IsInBackOffSince(key, at(exit)) {
				tb.Fatalf("%s: the exit at %.3f s is not in back-off", sc.Name, exit)
			}
			next = exit + bo.Get(key).Seconds()
			clock.SetTime(at(next))
			if bo.IsInBackOffSince(key, at(exit)) {
				tb.Fatalf("%s: still in back-off at its end", sc.Name)
			}
			bo.Next(key, at(exit))
		}
		prevExit = exit
		alive, prevID = false, fmt.Sprintf("test://run-%d", run)
		k.Wait = ms(next - exit)
		tr.Kills = append(tr.Kills, k)
		next += btStart
		if next >= sc.DurationSeconds {
			// No restart in the run: the workers still tick on a
			// container that is not running.
			continue
		}
		startRun(next, true)
	}
	return tr
}

func TestBackfireKubeletTrace(t *testing.T) {
	in, out := os.Getenv("BACKFIRE_SCENARIOS"), os.Getenv("BACKFIRE_TRACE_OUT")
	if in == "" || out == "" {
		t.Skip("BACKFIRE_SCENARIOS and BACKFIRE_TRACE_OUT name the scenarios and the trace to write")
	}
	data, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	var scs []btScenario
	if err := json.Unmarshal(data, &scs); err != nil {
		t.Fatal(err)
	}
	var traces []btTrace
	for _, sc := range scs {
		traces = append(traces, btRun(t, sc))
	}
	b, err := traceLines(traces)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// traceLines writes the traces as compact JSON, each scenario's name, and
// each of its samples and kills, on a line of its own: indented, the
// traces of two releases were 900 KB, mostly whitespace; on one line
// each, a changed probe would be a changed line of 20 KB.
func traceLines(traces []btTrace) ([]byte, error) {
	b := []byte("[\n")
	for i, tr := range traces {
		if i > 0 {
			b = append(b, ",\n"...)
		}
		name, err := json.Marshal(tr.Name)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, `{"name":`...), name...), `,"samples":`...)
		if b, err = elementLines(b, tr.Samples); err != nil {
			return nil, err
		}
		b = append(b, `,"kills":`...)
		if b, err = elementLines(b, tr.Kills); err != nil {
			return nil, err
		}
		b = append(b, `,"ready":`...)
		if b, err = elementLines(b, tr.Ready); err != nil {
			return nil, err
		}
		b = append(b, '}')
	}
	return append(b, "\n]\n"...), nil
}

// elementLines appends xs as a JSON array, an element a line.
func elementLines[T any](b []byte, xs []T) ([]byte, error) {
	switch {
	case xs == nil:
		return append(b, "null"...), nil
	case len(xs) == 0:
		return append(b, "[]"...), nil
	}
	b = append(b, "[\n"...)
	for i, x := range xs {
		if i > 0 {
			b = append(b, ",\n"...)
		}
		e, err := json.Marshal(x)
		if err != nil {
			return nil, err
		}
		b = append(b, e...)
	}
	return append(b, "\n]"...), nil
}
