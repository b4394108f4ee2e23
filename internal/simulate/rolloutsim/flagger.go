package rolloutsim

import (
	"fmt"
	"math"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	flaggerv1 "github.com/fluxcd/flagger/pkg/apis/flagger/v1beta1"

	"backfire.dev/backfire/internal/model/flagger"
	"backfire.dev/backfire/internal/model/rollout/twin"
)

// A Flagger Canary plays through flagger.Tick, the twin of one analysis
// tick of Flagger's scheduler, with the same small cluster as a Rollout:
// the ticks read the primary's and the canary's readiness from the pods,
// and the checks from the error rate of the requests the metric sees.

// Flagger scenario names (Deploy and Rollback are shared with Argo).
const (
	// Revert: the primary is broken and the canary is the last good
	// version redeployed: Flagger has no undo (BF411's case).
	Revert = "revert"
	// FailedPromotion: the canary passes, and the primary, given the
	// canary's spec at promotion, never becomes Ready (BF413's case).
	FailedPromotion = "failed-promotion"
)

// FlaggerScenarios lists them in the order the help shows.
var FlaggerScenarios = []string{Deploy, Rollback, Revert, FailedPromotion}

// Controller names.
const (
	ArgoRollouts = "Argo Rollouts"
	Flagger      = "Flagger"
)

// Check is one metric of the Canary's analysis, as the run measures it.
type Check struct {
	Name string
	// Blind: the query cannot tell the canary from the primary (BF411):
	// it reads the requests of both.
	Blind bool
	// Success: the value is a success percentage (request-success-rate);
	// else an error percentage.
	Success bool
	// NotModelled: a latency or a request rate (Kind says which); taken
	// as passing.
	NotModelled bool
	Kind        string
	Min, Max    *float64
	// Threshold is the bound without a thresholdRange: a value above it
	// fails.
	Threshold float64
	// Window is the metric's interval, the query's rate window.
	Window time.Duration
}

// Autoscaler is the primary's HPA as the run plays it: it recommends the
// pods for the primary's share of the load at once, and scales down to
// the highest recommendation of its stabilization window.
type Autoscaler struct {
	Min, Max int32
	Window   time.Duration
	// OtherTarget names the workload the target's HPA scales when it is
	// not the Canary's target: Flagger still copies it for the primary
	// (pkg/canary/hpa_reconciler.go), but nothing scales the canary past
	// what ScaleFromZero gave it.
	OtherTarget string
}

// CanaryInput is what a Flagger run needs.
type CanaryInput struct {
	Canary   *flaggerv1.Canary
	Version  string
	Scenario string
	// Replicas is what the primary needs for all the traffic; with an
	// autoscaler the primary follows its share of it.
	Replicas int32
	// CanaryReplicas is what ScaleFromZero gives the canary.
	CanaryReplicas int32
	Autoscaler     *Autoscaler
	Probe          Probe
	Checks         []Check
	// ProgressDeadline is the Deployments' progressDeadlineSeconds (the
	// primary copies the target's), after which the deployment controller
	// marks a rollout without progress ProgressDeadlineExceeded.
	ProgressDeadline time.Duration
	RPS, PodCapacity float64
	PodStart         [2]time.Duration
	// BrokenErrorRate is the share of requests the broken version fails:
	// the canary in rollback, the primary in revert.
	BrokenErrorRate float64
	// BreakAt is when the canary starts failing in rollback; negative:
	// when it reaches its highest weight (the worst case of BF412: the
	// primary's autoscaler has had the longest to shrink it).
	BreakAt time.Duration
	// MaxSurge and MaxUnavailable are the primary's rolling update
	// (the target's, which Promote copies), resolved against its replicas
	// as the deployment controller resolves them; nil: 25% each.
	MaxSurge, MaxUnavailable *intstr.IntOrString
	Duration                 time.Duration
	Seed                     int64
}

// Event is one analysis tick and what the scheduler did.
type Event struct {
	T    float64 `json:"t"`
	Tick int     `json:"tick"`
	What string  `json:"what"`
}

// deployment is one of the Canary's two Deployments: a ReplicaSet per pod
// spec (the primary rolls from its old spec to the canary's at promotion).
type deployment struct {
	replicas     int32
	old, current *twin.ReplicaSet
	// unavailableSince is when the Available condition turned False
	// (MinimumReplicasUnavailable); -1 while it is True.
	unavailableSince time.Duration
	// progressAt is the last time the rollout made progress (a pod scaled
	// or Ready), for ProgressDeadlineExceeded.
	progressAt time.Duration
	lastReady  int32
}

type canaryRun struct {
	in      *CanaryInput
	pods    *cluster
	cl      *twin.Cluster
	primary deployment
	canary  deployment
	state   flagger.State
	ticks   int
	// primaryRecs and canaryRecs are the autoscalers' recommendations,
	// one a second.
	primaryRecs, canaryRecs []int32
	// history keeps per-second (all, all failed, canary, canary failed).
	history [][4]float64
	res     *Timeline
	broken  string
	what    string
}

const (
	primaryOld = "primary"
	primaryNew = "primary-promoted"
	canaryRev  = "canary"
)

// RunCanary plays the scenario of a Flagger Canary.
func RunCanary(in CanaryInput) (*Timeline, error) {
	if !slices.Contains(FlaggerScenarios, in.Scenario) {
		return nil, fmt.Errorf("unknown scenario %q for a Canary (want one of %v)", in.Scenario, FlaggerScenarios)
	}
	if in.RPS < 0 || in.PodCapacity <= 0 {
		return nil, fmt.Errorf("--rps must not be negative and --pod-capacity must be positive")
	}
	if in.Replicas < 1 || in.Replicas > MaxReplicas || in.CanaryReplicas < 1 || in.CanaryReplicas > MaxReplicas {
		return nil, fmt.Errorf("replicas %d and canary replicas %d: want 1 to %d", in.Replicas, in.CanaryReplicas, MaxReplicas)
	}
	if why := NotModelled(in.Canary); why != "" {
		return nil, fmt.Errorf("not modelled: %s", why)
	}
	if in.Probe.Period <= 0 {
		in.Probe.Period = 10 * time.Second
	}
	in.Probe.SuccessThreshold = max(in.Probe.SuccessThreshold, 1)
	in.Probe.FailureThreshold = max(in.Probe.FailureThreshold, 1)
	if in.ProgressDeadline <= 0 {
		in.ProgressDeadline = 600 * time.Second
	}
	r := &canaryRun{in: &in, state: flagger.Start(), what: "new revision detected: the canary scaled up from zero",
		res: &Timeline{Scenario: in.Scenario, Version: in.Version, Controller: Flagger, Canary: canaryRev, Stable: primaryOld}}
	// Probe timing and pod start-up come from the shared cluster, which
	// reads them from an Input.
	r.pods = newCluster(&Input{Probe: in.Probe, PodCapacity: in.PodCapacity, PodStart: in.PodStart, Seed: in.Seed, BrokenErrorRate: in.BrokenErrorRate})
	switch in.Scenario {
	case Rollback:
		if in.BreakAt == 0 {
			r.broken = canaryRev
		}
	case Revert:
		r.broken = primaryOld
	}
	r.res.Broken = r.broken
	old := &twin.ReplicaSet{Revision: primaryOld, Replicas: in.Replicas}
	r.pods.adopt(old, 0)
	r.primary = deployment{replicas: in.Replicas, current: old, unavailableSince: -1}
	// The tick that detects the new revision scales the canary up
	// (ScaleFromZero, pkg/canary/deployment_controller.go:166-210) and
	// routes nothing to it yet: t=0 is that tick.
	can := &twin.ReplicaSet{Revision: canaryRev, Replicas: in.CanaryReplicas}
	r.canary = deployment{replicas: in.CanaryReplicas, current: can, unavailableSince: -1}
	r.cl = &twin.Cluster{ReplicaSets: []*twin.ReplicaSet{old, can}}
	r.notes()
	return r.play(), nil
}

// NotModelled says why a Canary's analysis is not one flagger.Tick
// models exactly ("" when it is).
func NotModelled(cd *flaggerv1.Canary) string {
	a := cd.GetAnalysis()
	switch {
	case a == nil:
		return "the Canary has no analysis"
	case cd.SkipAnalysis():
		return "skipAnalysis: the Canary is promoted without an analysis"
	case cd.Spec.Suspend:
		return "suspend: the scheduler leaves the Canary alone"
	case cd.Spec.Provider == flagger.KubernetesProvider:
		return "the kubernetes provider sets no weights"
	case cd.DeploymentStrategy() == flaggerv1.DeploymentStrategyBlueGreen:
		return "blue/green (iterations without weights)"
	case cd.DeploymentStrategy() == flaggerv1.DeploymentStrategyABTesting:
		return "A/B testing (routing by match conditions)"
	case a.Mirror:
		return "mirroring"
	case cd.Spec.TargetRef.Kind != "" && cd.Spec.TargetRef.Kind != "Deployment":
		return "a " + cd.Spec.TargetRef.Kind + " target (only a Deployment's is played)"
	case a.StepWeight <= 0 && len(a.StepWeights) == 0:
		return "no stepWeight or stepWeights: the canary never moves"
	}
	return ""
}

func (r *canaryRun) notes() {
	in := r.in
	n := &r.res.Notes
	*n = append(*n, fmt.Sprintf("Flagger %s: one analysis tick every %s (threshold %d); the canary runs as Deployment %s, the primary as %s-primary",
		in.Version, in.Canary.GetAnalysisInterval(), in.Canary.GetAnalysisThreshold(), in.Canary.Spec.TargetRef.Name, in.Canary.Spec.TargetRef.Name))
	for _, c := range in.Checks {
		if c.NotModelled {
			*n = append(*n, fmt.Sprintf("metric %s: %s, not modelled: taken as passing", c.Name, c.Kind))
			continue
		}
		what := "the error percentage"
		if c.Success {
			what = "the success percentage"
		}
		whose := "of the canary's requests"
		if c.Blind {
			whose = "of the canary's and the primary's requests together (BF411: the query cannot tell them apart)"
		}
		*n = append(*n, fmt.Sprintf("metric %s: read as %s %s over %s, %s", c.Name, what, whose, c.Window, bounds(c)))
	}
	if len(in.Checks) == 0 {
		*n = append(*n, "the analysis has no metric: every check passes")
	}
	if a := in.Autoscaler; a != nil {
		*n = append(*n, fmt.Sprintf("the primary's autoscaler (%d-%d) sizes it for its share of %d pods' worth of load at once, and scales down to the highest recommendation of the last %s; its metrics' lag and sync period, not modelled, would only make it later",
			a.Min, a.Max, in.Replicas, a.Window))
	}
	switch in.Scenario {
	case Rollback:
		when := fmt.Sprintf("from t=%s", in.BreakAt)
		if in.BreakAt < 0 {
			when = "from the tick it reaches its highest weight (the worst case for the primary's autoscaler; --at sets another time)"
		}
		*n = append(*n, fmt.Sprintf("the canary fails %.3g of the requests it serves, %s", in.BrokenErrorRate, when))
	case Revert:
		*n = append(*n, fmt.Sprintf("the primary fails %.3g of the requests it serves: the canary is the last good version redeployed", in.BrokenErrorRate))
	case FailedPromotion:
		*n = append(*n, fmt.Sprintf("the primary's pods with the canary's spec never become Ready (why is in no manifest); its Deployment fails after progressDeadlineSeconds, %s", in.ProgressDeadline))
	}
}

func bounds(c Check) string {
	switch {
	case c.Min != nil && c.Max != nil:
		return fmt.Sprintf("passing from %g to %g", *c.Min, *c.Max)
	case c.Min != nil:
		return fmt.Sprintf("failing below %g", *c.Min)
	case c.Max != nil:
		return fmt.Sprintf("failing above %g", *c.Max)
	}
	return fmt.Sprintf("failing above %g (no thresholdRange)", c.Threshold)
}

func (r *canaryRun) play() *Timeline {
	interval := r.in.Canary.GetAnalysisInterval()
	if interval < time.Second {
		interval = time.Second
	}
	r.res.Events = append(r.res.Events, Event{T: 0, Tick: 0, What: r.what})
	maxW := flagger.RampOf(r.in.Canary).MaxWeight
	for now := time.Duration(0); now < r.in.Duration; now += time.Second {
		if r.in.Scenario == Rollback && r.broken == "" && (r.in.BreakAt > 0 && now >= r.in.BreakAt || r.in.BreakAt < 0 && r.state.CanaryWeight >= maxW) {
			r.broken, r.res.Broken = canaryRev, canaryRev
		}
		r.pods.probe(now)
		if now > 0 && now%interval == 0 && !r.state.Done() {
			r.tick(now)
		}
		r.scale(now)
		r.record(now)
	}
	r.totals()
	return r.res
}

// tick is one analysis interval: what it reads from the cluster, then
// flagger.Tick decides.
func (r *canaryRun) tick(now time.Duration) {
	in := observed(r.readiness(&r.primary, r.in.Canary.GetAnalysisPrimaryReadyThreshold(), now),
		r.readiness(&r.canary, r.in.Canary.GetAnalysisCanaryReadyThreshold(), now), r.checksPass())
	r.ticks++
	before := r.state
	r.state, r.what = flagger.Tick(r.in.Canary, r.in.Version, r.state, in)
	if r.state.PrimaryPromoted && !before.PrimaryPromoted {
		// Promote copies the canary's spec to the primary
		// (pkg/canary/deployment_controller.go:65-138): a rolling update.
		rs := &twin.ReplicaSet{Revision: primaryNew}
		r.cl.ReplicaSets = append(r.cl.ReplicaSets, rs)
		r.primary.old, r.primary.current = r.primary.current, rs
		r.primary.progressAt = now
	}
	if r.state.CanaryScaledDown {
		r.canary.replicas = 0
	}
	r.res.Events = append(r.res.Events, Event{T: now.Seconds(), Tick: r.ticks, What: r.what})
}

// observed builds the tick's inputs.
func observed(primary, canary flagger.Readiness, checks bool) flagger.Observed {
	return flagger.Observed{Primary: primary, Canary: canary, ChecksPass: checks}
}

// readiness is IsPrimaryReady / IsCanaryReady (isDeploymentReady,
// pkg/canary/deployment_ready.go:74-110): ready when every replica runs
// the current spec, no old pod is left and readyThreshold% of them are
// available; failed (not retriable) when the Deployment exceeded its
// progress deadline, or when fewer than replicas - maxUnavailable were
// available for longer than the Canary's progressDeadlineSeconds.
func (r *canaryRun) readiness(d *deployment, threshold int, now time.Duration) flagger.Readiness {
	cur := r.pods.rss[d.current.Revision]
	updated, total, avail := int32(0), int32(0), int32(0)
	if cur != nil {
		updated = int32(len(cur.pods))
	}
	for _, rs := range []*twin.ReplicaSet{d.old, d.current} {
		if rs != nil && r.pods.rss[rs.Revision] != nil {
			total += int32(len(r.pods.rss[rs.Revision].pods))
			avail += r.pods.rss[rs.Revision].ready()
		}
	}
	switch {
	case now-d.progressAt > r.in.ProgressDeadline && (updated < d.replicas || total > updated || avail < updated):
		return flagger.Failed // ProgressDeadlineExceeded
	case d.unavailableSince >= 0 && now-d.unavailableSince > time.Duration(r.in.Canary.GetProgressDeadlineSeconds())*time.Second:
		return flagger.Failed
	case updated < d.replicas || total > updated:
		return flagger.NotYet
	case avail < int32(float64(updated)*float64(threshold)/100):
		return flagger.NotYet
	}
	return flagger.Ready
}

// checksPass runs every metric over its window: a metric without values
// (no request in its window) fails, as Flagger's "no values found".
func (r *canaryRun) checksPass() bool {
	for _, c := range r.in.Checks {
		if c.NotModelled {
			continue
		}
		all, failed := windowRequests(r.history, max(1, int(c.Window/time.Second)), !c.Blind)
		if all == 0 {
			return false
		}
		v := 100 * failed / all
		if c.Success {
			v = 100 - v
		}
		switch {
		case c.Min == nil && c.Max == nil:
			if v > c.Threshold {
				return false
			}
		case c.Min != nil && v < *c.Min, c.Max != nil && v > *c.Max:
			return false
		}
	}
	return true
}

// scale is the autoscaler and the deployment controller: the primary's
// size, the rolling update of a promotion, and pods created or deleted.
func (r *canaryRun) scale(now time.Duration) {
	if a := r.in.Autoscaler; a != nil {
		// The primary's autoscaler and the target's (which scales the
		// canary once ScaleFromZero has sized it) follow each one's share.
		r.primary.replicas = a.recommend(&r.primaryRecs, r.in.Replicas, r.state.PrimaryWeight)
		if !r.state.CanaryScaledDown && a.OtherTarget == "" {
			r.canary.replicas = max(a.recommend(&r.canaryRecs, r.in.Replicas, r.state.CanaryWeight), min(r.in.CanaryReplicas, a.Max))
		}
	}
	r.roll(&r.primary, now)
	r.canary.current.Replicas = r.canary.replicas
	r.pods.sync(r.cl, now)
	for _, d := range []*deployment{&r.primary, &r.canary} {
		var avail int32
		for _, rs := range []*twin.ReplicaSet{d.old, d.current} {
			if rs != nil {
				avail += r.pods.readyOf(rs.Revision)
			}
		}
		if avail > d.lastReady {
			d.progressAt = now
		}
		d.lastReady = avail
		unav := d.replicas / 4
		if avail < d.replicas-unav {
			if d.unavailableSince < 0 {
				d.unavailableSince = now
			}
		} else {
			d.unavailableSince = -1
		}
	}
	if r.in.Scenario == FailedPromotion {
		if p := r.pods.rss[primaryNew]; p != nil {
			for _, pd := range p.pods {
				pd.up = never
			}
		}
	}
}

// roll sizes the Deployment's ReplicaSets as a RollingUpdate with the
// defaults maxSurge 25% (rounded up) and maxUnavailable 25% (rounded
// down): the new one grows while the total stays within replicas +
// maxSurge, the old one shrinks while replicas - maxUnavailable stay
// available (kubernetes.io/docs/concepts/workloads/controllers/deployment,
// "Rolling Update Deployment"). Old pods are all Ready here.
func (r *canaryRun) roll(d *deployment, now time.Duration) {
	n := d.replicas
	if d.old == nil {
		if d.current.Replicas != n {
			d.progressAt = now
		}
		d.current.Replicas = n
		return
	}
	surge, unav := rollingBounds(r.in.MaxSurge, r.in.MaxUnavailable, n)
	old, cur := d.old.Replicas, d.current.Replicas
	if cur < n {
		if grow := min(n-cur, n+surge-old-cur); grow > 0 {
			cur += grow
			d.progressAt = now
		}
	}
	ready := r.pods.readyOf(d.old.Revision) + r.pods.readyOf(d.current.Revision)
	if drop := min(old, ready-(n-unav)); drop > 0 {
		old -= drop
	}
	if cur > n {
		cur = n
	}
	d.old.Replicas, d.current.Replicas = old, cur
}

// record serves one second of traffic at the router's weights and writes
// the timeline row.
func (r *canaryRun) record(now time.Duration) {
	r.pods.idle()
	rps := r.in.RPS
	cw := float64(r.state.CanaryWeight) / 100
	can := r.serveSide([]string{canaryRev}, rps*cw)
	revs := []string{primaryOld}
	if r.primary.old != nil {
		revs = []string{primaryOld, primaryNew}
	}
	pri := r.serveSide(revs, rps*(1-cw))
	failed := can.failed.plus(pri.failed)
	r.history = append(r.history, [4]float64{can.offered + pri.offered, failed.Total(), can.offered, can.failed.Total()})
	row := Row{T: now.Seconds(), Reconcile: r.ticks, Weight: int32(r.state.CanaryWeight), OfferedRps: rps,
		ServedRps: can.served + pri.served, FailedRps: failed.Total(), Failed: failed, CanaryRps: can.offered,
		Analysis: string(r.state.Phase)}
	if r.state.FailedChecks > 0 && !r.state.Done() {
		row.Analysis = fmt.Sprintf("%s, %d failed", r.state.Phase, r.state.FailedChecks)
	}
	if len(r.res.Events) > 0 && r.res.Events[len(r.res.Events)-1].T == now.Seconds() {
		row.Branch = r.res.Events[len(r.res.Events)-1].What
	}
	switch r.broken {
	case canaryRev:
		row.BrokenRps = can.offered
	case primaryOld:
		row.BrokenRps = pri.offered * pri.share[primaryOld]
	}
	if rps > 0 {
		row.TargetShare = 100 * (can.offered + pri.offered*pri.share[primaryNew]) / rps
	}
	row.CanaryDesired = r.canary.current.Replicas
	row.CanaryAvailable = r.pods.readyOf(canaryRev)
	row.CanaryReady = row.CanaryAvailable
	row.StableDesired = r.primary.replicas
	row.StableReady = r.pods.readyOf(primaryOld) + r.pods.readyOf(primaryNew)
	r.res.Timeline = append(r.res.Timeline, row)
}

// pool is one Service's second of traffic over the Ready pods of its
// ReplicaSets; share is each one's part of it.
type pool struct {
	side
	share map[string]float64
}

// serveSide splits rps evenly over the Ready pods of the revisions a
// Service selects. Pods over capacity fail the excess; the broken
// revision's fail BrokenErrorRate of what they serve.
func (r *canaryRun) serveSide(revs []string, rps float64) pool {
	p := pool{side: side{offered: rps}, share: map[string]float64{}}
	var ready []*pod
	var owner []string
	for _, rev := range revs {
		if rs := r.pods.rss[rev]; rs != nil {
			for _, pd := range rs.pods {
				if pd.ready {
					ready, owner = append(ready, pd), append(owner, rev)
				}
			}
		}
	}
	p.ready = int32(len(ready))
	if rps == 0 {
		return p
	}
	if len(ready) == 0 {
		p.failed.NoEndpoint = rps
		return p
	}
	per := rps / float64(len(ready))
	capacity := r.in.PodCapacity
	count := map[string]int{}
	for _, o := range owner {
		count[o]++
	}
	for o, n := range count {
		p.share[o] = float64(n) / float64(len(ready))
	}
	for i, pd := range ready {
		pd.load = per
		served := min(per, capacity)
		p.failed.TooFewReady += per - served
		if owner[i] == r.broken && r.in.BrokenErrorRate > 0 {
			bad := served * r.in.BrokenErrorRate
			served -= bad
			p.failed.BrokenVersion += bad
		}
		p.served += served
	}
	return p
}

func (r *canaryRun) totals() {
	t := &r.res.Totals
	t.Reconciles = r.ticks
	t.Settled = -1
	first, last := -1, -1
	var prevReady int32 = -1
	for i, row := range r.res.Timeline {
		t.OfferedRequests += row.OfferedRps
		t.FailedRequests += row.FailedRps
		t.FailedByCause = t.FailedByCause.plus(row.Failed)
		if row.BrokenRps > 0 {
			t.BrokenUntil = row.T + 1
		}
		if row.Weight > 0 && row.CanaryReady == 0 {
			t.ZeroEndpointSeconds++
		}
		if row.CanaryReady > 0 {
			t.PeakRpsPerCanaryPod = max(t.PeakRpsPerCanaryPod, row.CanaryRps/float64(row.CanaryReady))
		}
		if need := int32(math.Ceil(float64(r.in.Replicas) * float64(row.Weight) / 100)); row.Weight > 0 && row.CanaryReady < need {
			t.ShortSeconds++
			if row.Weight > t.PeakShortWeight {
				t.PeakShortWeight, t.ReadyAtPeak = row.Weight, row.CanaryReady
			}
		}
		if prevReady > 0 && row.CanaryReady == 0 && row.Weight > 0 {
			t.ReadyFlaps++
		}
		prevReady = row.CanaryReady
		if r.history[i][3] > 0 {
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
	for _, e := range r.res.Events {
		if r.state.Done() {
			t.Settled = e.T
		}
	}
	switch s := r.state; {
	case s.Phase == flaggerv1.CanaryPhaseSucceeded:
		t.Outcome = "promoted"
	case s.Phase == flaggerv1.CanaryPhaseFailed && s.CanaryWeight == 100:
		t.Outcome = "halted: all traffic to the canary"
	case s.Phase == flaggerv1.CanaryPhaseFailed:
		t.Outcome = "rolled back"
	default:
		t.Outcome = "in progress (" + string(s.Phase) + ")"
	}
}

// recommend is the autoscaler's size for weight% of the load that needs
// full pods: the pods for it at once, clamped to the range, and on the way
// down the highest recommendation of the stabilization window
// (kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale,
// "Stabilization window").
func (a *Autoscaler) recommend(recs *[]int32, full int32, weight int) int32 {
	want := int32(math.Ceil(float64(full) * float64(weight) / 100))
	want = min(max(want, a.Min), max(a.Max, a.Min))
	*recs = append(*recs, want)
	w := max(1, int(a.Window/time.Second))
	return slices.Max((*recs)[max(0, len(*recs)-w):])
}

// rollingBounds resolves maxSurge (rounded up) and maxUnavailable (rounded
// down) against n, 25% each by default; both 0 is read as maxUnavailable 1,
// as the deployment controller does (ResolveFenceposts,
// k8s.io/kubernetes/pkg/controller/deployment/util).
func rollingBounds(surge, unav *intstr.IntOrString, n int32) (int32, int32) {
	quarter := intstr.FromString("25%")
	if surge == nil {
		surge = &quarter
	}
	if unav == nil {
		unav = &quarter
	}
	s, err1 := intstr.GetScaledValueFromIntOrPercent(surge, int(n), true)
	u, err2 := intstr.GetScaledValueFromIntOrPercent(unav, int(n), false)
	if err1 != nil || err2 != nil || s < 0 || u < 0 {
		s, u = int((n+3)/4), int(n/4)
	}
	if s == 0 && u == 0 {
		u = 1
	}
	return int32(s), int32(u)
}
