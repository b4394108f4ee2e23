// Package rolloutsim plays a scenario (deploy, abort, promote --full,
// rollback) of one Argo Rollouts canary forward in time, second by second:
// the controller twin decides, and a small cluster around it runs pods that
// become Ready after a start-up time, readiness probes that fail when a pod
// is over capacity, traffic split by weight over Ready endpoints, and the
// background AnalysisRun measuring the error rate it can see.
package rolloutsim

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"github.com/argoproj/argo-rollouts/utils/defaults"

	"backfire.dev/backfire/internal/model/rollout"
	"backfire.dev/backfire/internal/model/rollout/twin"
)

// Scenario names.
const (
	Deploy                = "deploy"
	Abort                 = "abort"
	PromoteFull           = "promote-full"
	Rollback              = "rollback"
	RollbackActive        = "rollback-active"
	RollbackOutsideWindow = "rollback-outside-window"
)

// Scenarios lists them in the order the help shows.
var Scenarios = []string{Deploy, Abort, PromoteFull, Rollback, RollbackActive, RollbackOutsideWindow}

// Probe is a readiness probe's timing.
type Probe struct {
	InitialDelay, Period               time.Duration
	SuccessThreshold, FailureThreshold int32
}

// Analysis is the background analysis as the AnalysisRun measures it.
type Analysis struct {
	Name         string
	Interval     time.Duration
	FailureLimit int32
	// MaxErrorRate is the successCondition's bound: a measurement fails at
	// or above it.
	MaxErrorRate float64
	// RevisionAware is true when the query separates the canary's requests
	// from the stable's; otherwise it reads the whole Service.
	RevisionAware bool
	// Window is the query's rate window (rate(...[1m])).
	Window time.Duration
}

// MaxReplicas bounds the replica count a run plays: the cluster around the
// twin keeps each pod (its start-up time, its probe's phase and counts), so
// the work and memory of a run grow with replicas times seconds. It is
// Kubernetes' own bound for a whole cluster, 150,000 pods
// (https://kubernetes.io/docs/setup/best-practices/cluster-large/): a
// Rollout past it cannot run anywhere.
const MaxReplicas = 150_000

// Input is everything a run needs: the Rollout as the manifest gives it,
// and what a manifest cannot know.
type Input struct {
	Rollout  *v1alpha1.Rollout
	Replicas int32
	Version  string
	Scenario string
	Probe    Probe
	Analysis *Analysis
	// RPS is the offered load; PodCapacity what one pod serves before its
	// readiness probe times out; PodStart the start-up time range.
	RPS         float64
	PodCapacity float64
	PodStart    [2]time.Duration
	// BrokenErrorRate is the share of requests the version being rolled
	// back from fails (rollback scenarios only).
	BrokenErrorRate float64
	// BrokenNotReady is how many pods of the version being rolled back from
	// are not Ready (crash-looping, failing readiness) throughout
	// (rollback scenarios only).
	BrokenNotReady int32
	// ActionAt is when the abort or promote --full of those scenarios is
	// issued.
	ActionAt time.Duration
	// Commands are more kubectl argo rollouts commands, at their times (an
	// undo followed by promote --full is the rollback scenario with a
	// promote --full command).
	Commands []Command
	// Duration is how long the run lasts; with UntilSettled, at most that
	// long: the run then ends one second after it settles (the target
	// promoted with every pod Ready and both Services on it, or the update
	// aborted with all traffic back on the stable).
	Duration     time.Duration
	UntilSettled bool
	Seed         int64
	// Live, when set, starts the run from a Rollout's real state and plays
	// an undo to Live.Target (the scenario is then Rollback).
	Live *Live
}

// Command is one kubectl argo rollouts command at a time.
type Command struct {
	At time.Duration
	Do string // Abort or PromoteFull
}

// Row is one second of the timeline.
type Row struct {
	T               float64 `json:"t"`
	Reconcile       int     `json:"reconcile"`
	StepIndex       *int32  `json:"stepIndex"`
	Weight          int32   `json:"weight"`
	CanaryDesired   int32   `json:"canaryDesired"`
	CanaryAvailable int32   `json:"canaryAvailable"`
	CanaryReady     int32   `json:"canaryReady"`
	StableDesired   int32   `json:"stableDesired"`
	StableReady     int32   `json:"stableReady"`
	OfferedRps      float64 `json:"offeredRps"`
	ServedRps       float64 `json:"servedRps"`
	FailedRps       float64 `json:"failedRps"`
	// Failed splits FailedRps by cause.
	Failed    Failures `json:"failedByCause"`
	CanaryRps float64  `json:"canaryRps"`
	// BrokenRps is what the version rolled back from received.
	BrokenRps float64 `json:"brokenVersionRps"`
	// TargetShare is the percentage of requests that reach pods of the
	// revision being rolled out (through either Service: after promotion
	// both select it, and the weight written goes back to 0).
	TargetShare float64 `json:"targetShare"`
	Analysis    string  `json:"analysis"`
	// Branch is the weight chain's branch of the last reconcile.
	Branch string `json:"branch,omitempty"`
}

// Totals sum a run.
type Totals struct {
	OfferedRequests float64 `json:"offeredRequests"`
	FailedRequests  float64 `json:"failedRequests"`
	// FailedByCause splits FailedRequests.
	FailedByCause       Failures `json:"failedByCause"`
	FailedShare         float64  `json:"failedShare"`
	ZeroEndpointSeconds float64  `json:"zeroEndpointSeconds"`
	PeakRpsPerCanaryPod float64  `json:"peakRpsPerCanaryPod"`
	Outcome             string   `json:"outcome"`
	// The incident window runs from the first to the last second in which
	// the canary side failed requests (no Ready endpoint or over capacity).
	WindowStart       float64 `json:"windowStart"`
	WindowSeconds     float64 `json:"windowSeconds"`
	WindowOffered     float64 `json:"windowOffered"`
	WindowFailed      float64 `json:"windowFailed"`
	WindowFailedShare float64 `json:"windowFailedShare"`
	// ShortSeconds counts seconds in which the weight asked for more pods
	// than the canary had Ready, and PeakShortWeight is the highest such
	// weight with ReadyAtPeak the Ready canary pods then.
	ShortSeconds       float64 `json:"shortSeconds"`
	PeakShortWeight    int32   `json:"peakShortWeight"`
	ReadyAtPeak        int32   `json:"canaryReadyAtPeakShortWeight"`
	Reconciles         int     `json:"reconciles"`
	ReadyFlaps         int     `json:"canaryReadyDrops"`
	StepIndexPastSteps bool    `json:"stepIndexPastSteps,omitempty"`
	// BrokenUntil is the end of the last second in which the version rolled
	// back from still received requests (0 when it never did).
	BrokenUntil float64 `json:"brokenVersionUntil"`
	// Settled is when the run settled (see Input.UntilSettled), -1 if it
	// did not within its duration.
	Settled float64 `json:"settledAt"`
}

// Timeline is a run.
type Timeline struct {
	Scenario string `json:"scenario"`
	Version  string `json:"version"`
	// Controller is Flagger for a Canary; "" is Argo Rollouts.
	Controller string `json:"controller,omitempty"`
	// Canary and Stable name the revisions the run moves between.
	Canary string `json:"canary"`
	Stable string `json:"stable"`
	// Broken is the revision rolled back from, whose pods fail
	// BrokenErrorRate of requests ("" when no version is broken).
	Broken   string `json:"broken,omitempty"`
	Timeline []Row  `json:"timeline"`
	Totals   Totals `json:"totals"`
	// Notes say what the run assumed.
	Notes []string `json:"notes,omitempty"`
	// Events are a Canary's analysis ticks.
	Events []Event `json:"events,omitempty"`
}

// Run plays the scenario.
func Run(in Input) (*Timeline, error) {
	if !slices.Contains(Scenarios, in.Scenario) {
		return nil, fmt.Errorf("unknown scenario %q (want one of %v)", in.Scenario, Scenarios)
	}
	if in.RPS < 0 || in.PodCapacity <= 0 {
		return nil, fmt.Errorf("--rps must not be negative and --pod-capacity must be positive")
	}
	if err := checkReplicas(&in); err != nil {
		return nil, err
	}
	if in.Probe.Period <= 0 {
		in.Probe.Period = 10 * time.Second
	}
	in.Probe.SuccessThreshold = max(in.Probe.SuccessThreshold, 1)
	in.Probe.FailureThreshold = max(in.Probe.FailureThreshold, 1)
	ctl, err := twin.NewController(in.Rollout, in.Replicas, in.Version)
	if err != nil {
		return nil, err
	}
	s := newRun(&in, ctl)
	return s.play(), nil
}

// checkReplicas refuses a run past MaxReplicas, of the count given or of a
// live ReplicaSet's.
func checkReplicas(in *Input) error {
	if in.Replicas > MaxReplicas {
		return fmt.Errorf("%d replicas is more than the %d pods a run plays one by one", in.Replicas, MaxReplicas)
	}
	if in.Live != nil {
		for _, rs := range in.Live.Cluster.ReplicaSets {
			if max(rs.Replicas, rs.Pods) > MaxReplicas {
				return fmt.Errorf("ReplicaSet %s has %d pods, more than the %d a run plays one by one", rs.Revision, max(rs.Replicas, rs.Pods), MaxReplicas)
			}
		}
	}
	return nil
}

type run struct {
	in     *Input
	ctl    *twin.Controller
	cl     *twin.Cluster
	pods   *cluster
	res    *Timeline
	broken string // the revision that fails BrokenErrorRate of requests
	// weight is what the router holds: the last weight written.
	weight int32
	// history keeps per-second (all, all failed, canary, canary failed)
	// for the analysis query's rate window.
	history     [][4]float64
	settledAt   time.Duration
	nextMeasure time.Duration
	failures    int32
	reconciles  int
	lastSeen    string
	lastRun     time.Duration
	aborted     bool
	last        twin.Decision
	measuring   *time.Duration // creation of the run being measured
}

// revisions sets up the ReplicaSets a scenario starts from, in creation
// order, and returns the target and the stable revision.
func revisions(in *Input) (list []*twin.ReplicaSet, target, stable string) {
	n := in.Replicas
	add := func(name string, replicas int32) {
		list = append(list, &twin.ReplicaSet{Revision: name, Created: time.Duration(len(list)-10) * time.Minute, Replicas: replicas})
	}
	switch in.Scenario {
	case Rollback, RollbackActive, RollbackOutsideWindow:
		target, stable = "previous", "current"
		kept := int32(0)
		if in.Scenario == RollbackActive {
			kept = n // still up within scaleDownDelaySeconds
		}
		add(target, kept)
		if in.Scenario == RollbackActive {
			// Rolled back right after it was replaced: its scale-down
			// deadline is scaleDownDelaySeconds away.
			at := defaults.GetScaleDownDelaySecondsOrDefault(in.Rollout)
			list[0].ScaleDownAt = &at
		}
		if in.Scenario == RollbackOutsideWindow {
			between := int32(1)
			if w := in.Rollout.Spec.RollbackWindow; w != nil && w.Revisions > 0 {
				between = w.Revisions
			}
			for i := range between {
				add(fmt.Sprintf("between-%d", i+1), 0)
			}
		}
		add(stable, n)
	default:
		target, stable = "new", "current"
		add(stable, n)
	}
	return list, target, stable
}

func newRun(in *Input, ctl *twin.Controller) *run {
	if in.Live != nil {
		return newLiveRun(in, ctl)
	}
	list, target, stable := revisions(in)
	steps := int32(len(in.Rollout.Spec.Strategy.Canary.Steps))
	cl := &twin.Cluster{Template: target, ReplicaSets: list, Status: twin.Promoted(stable, steps, twin.Counts{}),
		CanarySelector: stable, StableSelector: stable}
	r := &run{in: in, ctl: ctl, cl: cl, pods: newCluster(in), lastRun: -1,
		res: &Timeline{Scenario: in.Scenario, Version: ctl.Version, Canary: target, Stable: stable}}
	if in.Scenario != Deploy && in.Scenario != Abort && in.Scenario != PromoteFull {
		r.broken = stable
	}
	r.res.Broken = r.broken
	for _, rs := range list {
		down := int32(0)
		if rs.Revision == r.broken {
			down = min(in.BrokenNotReady, rs.Replicas)
		}
		r.pods.adopt(rs, down)
	}
	// The status counts them as the last reconcile of the promotion did.
	c := &cl.Status.Counts
	for _, rs := range list {
		c.Replicas += rs.Pods
		c.Available += rs.Available
		if rs.Revision == stable {
			c.Updated = rs.Pods
		}
	}
	r.noteAnalysis()
	return r
}

// newLiveRun starts from a cluster's state: a copy, so that every run of
// a comparison starts from the same one.
func newLiveRun(in *Input, ctl *twin.Controller) *run {
	lv := in.Live
	cl := *lv.Cluster
	cl.ReplicaSets = nil
	for _, rs := range lv.Cluster.ReplicaSets {
		c := *rs
		cl.ReplicaSets = append(cl.ReplicaSets, &c)
	}
	r := &run{in: in, ctl: ctl, cl: &cl, pods: newCluster(in), lastRun: -1, broken: lv.Current,
		res: &Timeline{Scenario: Rollback, Version: ctl.Version, Canary: lv.Target, Stable: lv.Stable, Broken: lv.Current}}
	for _, rs := range cl.ReplicaSets {
		r.pods.adoptLive(rs, rs.Revision == lv.Current)
	}
	r.noteAnalysis()
	return r
}

func (r *run) noteAnalysis() {
	in := r.in
	if in.Analysis != nil {
		r.res.Notes = append(r.res.Notes, fmt.Sprintf("background analysis %s: every %s, failureLimit %d, fails at an error rate >= %.3g over %s, reading %s",
			in.Analysis.Name, in.Analysis.Interval, in.Analysis.FailureLimit, in.Analysis.MaxErrorRate, in.Analysis.Window,
			map[bool]string{true: "the canary's requests only", false: "canary and stable together"}[in.Analysis.RevisionAware]))
	}
}

func (r *run) play() *Timeline {
	// The metrics backend already holds the minute before the run: the
	// stable serving everything.
	if a := r.in.Analysis; a != nil {
		for range int(a.Window / time.Second) {
			r.pods.idle()
			s := r.pods.serve(r.cl.StableSelector, r.in.RPS, r.broken)
			r.history = append(r.history, [4]float64{s.offered, s.failed.Total(), 0, 0})
		}
	}
	start := len(r.history)
	end := r.in.Duration
	r.settledAt = -1
	for now := time.Duration(0); now < end; now += time.Second {
		r.act(now)
		r.pods.probe(now)
		r.pods.sync(r.cl, now)
		r.reconcile(now)
		r.pods.sync(r.cl, now)
		r.record(now)
		r.measure(now)
		if ar := r.cl.Status.Background; ar != nil {
			r.res.Timeline[len(r.res.Timeline)-1].Analysis = string(ar.Phase)
		}
		if r.settledAt < 0 && r.settled() {
			r.settledAt = now
			if r.in.UntilSettled {
				end = min(end, now+2*time.Second)
			}
		}
	}
	r.history = r.history[start:]
	r.totals()
	return r.res
}

// act issues the commands due: kubectl argo rollouts abort and promote
// --full patch the status (status.abort, status.promoteFull:
// pkg/kubectl-argo-rollouts/cmd/abort/abort.go :30, promote/promote.go :39).
func (r *run) act(now time.Duration) {
	cmds := r.in.Commands
	if r.in.Scenario == Abort || r.in.Scenario == PromoteFull {
		cmds = append([]Command{{At: r.in.ActionAt, Do: r.in.Scenario}}, cmds...)
	}
	for _, c := range cmds {
		if c.At != now {
			continue
		}
		switch c.Do {
		case Abort:
			r.cl.Status.Abort = true
		case PromoteFull:
			r.cl.Status.PromoteFull = true
		}
	}
}

// settled reports whether the run reached a state it stays in: the target
// promoted, every pod of it Ready and both Services on it; or the update
// aborted with the weight at 0 and both Services back on the stable.
func (r *run) settled() bool {
	st, cl := r.cl.Status, r.cl
	if st.StableRevision == r.res.Canary {
		return cl.CanarySelector == r.res.Canary && cl.StableSelector == r.res.Canary && r.pods.readyOf(r.res.Canary) >= r.in.Replicas
	}
	return st.Abort && r.weight == 0 && cl.CanarySelector == st.StableRevision && cl.StableSelector == st.StableRevision
}

// fingerprint is what the controller's informers would report a change in.
func (r *run) fingerprint() string {
	st := r.cl.Status
	s := fmt.Sprintf("%s|%s|%s|%v|%v|%v|%s|%s|%+v", r.cl.Template, st.CurrentRevision, st.StableRevision, st.Abort, st.PromoteFull, st.ControllerPause,
		ptrString(st.StepIndex), ptrString(st.PauseStart), st.Conditions)
	if w := st.Weights; w != nil {
		s += fmt.Sprintf("|w:%+v", *w)
	}
	for _, rs := range r.cl.ReplicaSets {
		s += fmt.Sprintf("|%s:%d/%d/%d", rs.Revision, rs.Replicas, rs.Pods, rs.Available)
	}
	if ar := r.cl.Status.Background; ar != nil {
		s += "|ar:" + string(ar.Phase)
	}
	return s
}

// due reports whether a timer the controller set (a pause's end, a
// scale-down deadline) has passed since the last reconcile.
func (r *run) due(now time.Duration) bool {
	var times []time.Duration
	st := r.cl.Status
	if st.PauseStart != nil && st.StepIndex != nil && int(*st.StepIndex) < len(r.in.Rollout.Spec.Strategy.Canary.Steps) {
		if p := r.in.Rollout.Spec.Strategy.Canary.Steps[*st.StepIndex].Pause; p != nil && p.Duration != nil {
			times = append(times, *st.PauseStart+time.Duration(p.DurationSeconds())*time.Second+time.Second)
		}
	}
	for _, rs := range r.cl.ReplicaSets {
		if rs.ScaleDownAt != nil {
			times = append(times, *rs.ScaleDownAt)
		}
	}
	for _, t := range times {
		if t > r.lastRun && t <= now {
			return true
		}
	}
	return false
}

// reconcile runs the controller while something it watches changed: each
// of its own writes is an event too, as with the real informers.
func (r *run) reconcile(now time.Duration) {
	for range 20 {
		fp := r.fingerprint()
		if fp == r.lastSeen && !r.due(now) {
			return
		}
		r.lastSeen = fp
		d := r.ctl.Reconcile(r.cl, now)
		r.reconciles++
		r.lastRun = now
		r.last = d
		if d.Weight != nil {
			r.weight = *d.Weight
		}
		r.pods.sync(r.cl, now)
		if d.Panic != "" {
			r.res.Totals.StepIndexPastSteps = true
		}
	}
}

// measure is the analysis controller: it takes a measurement every
// interval from the run's creation and fails the run after failureLimit
// failed measurements.
func (r *run) measure(now time.Duration) {
	a, ar := r.in.Analysis, r.cl.Status.Background
	if a == nil || ar == nil || ar.Phase != twin.AnalysisRunning {
		return
	}
	if r.measuring == nil || *r.measuring != ar.Created {
		// A new run: its first measurement is taken at once.
		created := ar.Created
		r.measuring, r.nextMeasure, r.failures = &created, created, 0
	}
	if now < r.nextMeasure {
		return
	}
	r.nextMeasure = now + a.Interval
	if r.errorRate(a) >= a.MaxErrorRate {
		r.failures++
	}
	if r.failures > a.FailureLimit {
		ar.Phase = twin.AnalysisFailed
		ar.Message = fmt.Sprintf("metric failed %d times (failureLimit %d)", r.failures, a.FailureLimit)
	}
}

// errorRate is the query's value: failed over offered in the rate window,
// for the whole Service or, revision-aware, the canary's requests.
func (r *run) errorRate(a *Analysis) float64 {
	all, failed := windowRequests(r.history, int(a.Window/time.Second), a.RevisionAware)
	if all == 0 {
		return math.NaN()
	}
	return failed / all
}

// windowRequests sums the requests offered and failed in the last n
// seconds of history (each second: offered and failed on the whole
// Service, then on the canary's side), for the canary's side alone or the
// whole Service.
func windowRequests(history [][4]float64, n int, canaryOnly bool) (all, failed float64) {
	for _, s := range history[max(0, len(history)-n):] {
		if canaryOnly {
			all, failed = all+s[2], failed+s[3]
		} else {
			all, failed = all+s[0], failed+s[1]
		}
	}
	return all, failed
}

// record serves one second of traffic at the router's weight and writes
// the timeline row.
func (r *run) record(now time.Duration) {
	maxW := float64(rollout.MaxTrafficWeight(r.in.Rollout))
	share := float64(r.weight) / maxW
	r.pods.idle()
	var can, stb side
	switch {
	case r.cl.CanarySelector == r.cl.StableSelector:
		// Both Services select the same pods: one pool serves it all.
		stb = r.pods.serve(r.cl.StableSelector, r.in.RPS, r.broken)
	case share == 0:
		stb = r.pods.serve(r.cl.StableSelector, r.in.RPS, r.broken)
	case share == 1:
		can = r.pods.serve(r.cl.CanarySelector, r.in.RPS, r.broken)
	default:
		can = r.pods.serve(r.cl.CanarySelector, r.in.RPS*share, r.broken)
		stb = r.pods.serve(r.cl.StableSelector, r.in.RPS*(1-share), r.broken)
	}
	failed := can.failed.plus(stb.failed)
	r.history = append(r.history, [4]float64{can.offered + stb.offered, failed.Total(), can.offered, can.failed.Total()})
	row := Row{T: now.Seconds(), Reconcile: r.reconciles, Weight: r.weight,
		OfferedRps: r.in.RPS, ServedRps: can.served + stb.served, FailedRps: failed.Total(), Failed: failed,
		CanaryRps: can.offered, Analysis: "-", Branch: r.last.Branch}
	if r.broken != "" {
		if r.cl.CanarySelector == r.broken {
			row.BrokenRps += can.offered
		}
		if r.cl.StableSelector == r.broken {
			row.BrokenRps += stb.offered
		}
	}
	if r.in.RPS > 0 {
		var to float64
		if r.cl.CanarySelector == r.res.Canary {
			to += can.offered
		}
		if r.cl.StableSelector == r.res.Canary {
			to += stb.offered
		}
		row.TargetShare = 100 * to / r.in.RPS
	}
	if st := r.cl.Status.StepIndex; st != nil {
		v := *st
		row.StepIndex = &v
	}
	if rs := r.cl.ReplicaSet(r.cl.Template); rs != nil {
		row.CanaryDesired, row.CanaryAvailable = rs.Replicas, rs.Available
		row.CanaryReady = r.pods.readyOf(rs.Revision)
	}
	if rs := r.cl.ReplicaSet(r.res.Stable); rs != nil {
		row.StableDesired, row.StableReady = rs.Replicas, r.pods.readyOf(rs.Revision)
	}
	if ar := r.cl.Status.Background; ar != nil {
		row.Analysis = string(ar.Phase)
	}
	if r.cl.Status.Abort {
		r.aborted = true
	}
	r.res.Timeline = append(r.res.Timeline, row)
}

func (r *run) totals() {
	t := &r.res.Totals
	t.Reconciles = r.reconciles
	first, last := -1, -1
	var prevReady int32 = -1
	maxW := rollout.MaxTrafficWeight(r.in.Rollout)
	t.Settled = -1
	if r.settledAt >= 0 {
		t.Settled = r.settledAt.Seconds()
	}
	for i, row := range r.res.Timeline {
		t.OfferedRequests += row.OfferedRps
		t.FailedRequests += row.FailedRps
		t.FailedByCause = t.FailedByCause.plus(row.Failed)
		if row.BrokenRps > 0 {
			t.BrokenUntil = row.T + 1
		}
		canaryFailed := r.history[i][3]
		if row.Weight > 0 && row.CanaryReady == 0 && r.cl.CanarySelector != r.res.Stable {
			t.ZeroEndpointSeconds++
		}
		if row.CanaryReady > 0 {
			t.PeakRpsPerCanaryPod = max(t.PeakRpsPerCanaryPod, row.CanaryRps/float64(row.CanaryReady))
		}
		if need := rollout.WeightToReplicas(r.in.Replicas, row.Weight, maxW); row.Weight > 0 && row.CanaryReady < need {
			t.ShortSeconds++
			if row.Weight > t.PeakShortWeight {
				t.PeakShortWeight, t.ReadyAtPeak = row.Weight, row.CanaryReady
			}
		}
		if prevReady > 0 && row.CanaryReady < prevReady && row.CanaryReady == 0 {
			t.ReadyFlaps++
		}
		prevReady = row.CanaryReady
		if canaryFailed > 0 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if t.OfferedRequests > 0 {
		t.FailedShare = t.FailedRequests / t.OfferedRequests
	}
	t.window(r.res.Timeline, first, last)
	switch st := r.cl.Status; {
	case r.aborted && st.StableRevision != r.res.Canary:
		t.Outcome = "aborted"
	case st.StableRevision == r.res.Canary:
		t.Outcome = "completed"
	default:
		t.Outcome = "in progress"
	}
}

func ptrString[T any](p *T) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

// window fills the incident window's totals from the seconds first to
// last of the timeline (first < 0: no second failed on the canary side).
func (t *Totals) window(timeline []Row, first, last int) {
	if first < 0 {
		return
	}
	t.WindowStart = timeline[first].T
	t.WindowSeconds = float64(last - first + 1)
	for _, row := range timeline[first : last+1] {
		t.WindowOffered += row.OfferedRps
		t.WindowFailed += row.FailedRps
	}
	if t.WindowOffered > 0 {
		t.WindowFailedShare = t.WindowFailed / t.WindowOffered
	}
}
