package twin

import (
	"fmt"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"github.com/argoproj/argo-rollouts/utils/defaults"
	"k8s.io/apimachinery/pkg/util/intstr"

	"backfire.dev/backfire/internal/model/rollout"
)

// Controller reconciles one Rollout as the rollout controller of one
// release does.
type Controller struct {
	// Rollout supplies the spec: steps, minPodsPerReplicaSet, rollback
	// window, traffic routing, analysis, delays.
	Rollout *v1alpha1.Rollout
	// Replicas is spec.replicas (an autoscaler's count, when one owns it).
	Replicas int32
	// Version is the controller release modelled (vX.Y.Z).
	Version string
}

// NewController checks that the twin models the Rollout's strategy: a
// canary with traffic routing whose steps are setWeight and pause. Other
// strategies and step kinds are refused by name rather than modelled wrong.
func NewController(ro *v1alpha1.Rollout, replicas int32, version string) (*Controller, error) {
	v, err := rollout.ParseVersion(version)
	if err != nil {
		return nil, err
	}
	if !rollout.AtLeast(v, "v1.8.0") {
		return nil, fmt.Errorf("the twin models Argo Rollouts v1.8.0 and later, not %s", v)
	}
	c := ro.Spec.Strategy.Canary
	if c == nil {
		return nil, fmt.Errorf("Rollout %s: the twin models the canary strategy only", ro.Name)
	}
	if c.TrafficRouting == nil {
		return nil, fmt.Errorf("Rollout %s: the twin models a canary with trafficRouting only (a basic canary scales by surge, not by weight)", ro.Name)
	}
	if c.ReplicaProgressThreshold != nil {
		return nil, fmt.Errorf("Rollout %s: replicaProgressThreshold is not modelled by the twin", ro.Name)
	}
	for i, s := range c.Steps {
		if s.SetWeight == nil && s.Pause == nil {
			return nil, fmt.Errorf("Rollout %s: spec.strategy.canary.steps[%d]: only setWeight and pause steps are modelled by the twin", ro.Name, i)
		}
	}
	if replicas < 0 {
		return nil, fmt.Errorf("replicas must not be negative, got %d", replicas)
	}
	return &Controller{Rollout: ro, Replicas: replicas, Version: v}, nil
}

func (c *Controller) canary() *v1alpha1.CanaryStrategy { return c.Rollout.Spec.Strategy.Canary }
func (c *Controller) steps() []v1alpha1.CanaryStep     { return c.canary().Steps }
func (c *Controller) stepCount() int32                 { return int32(len(c.steps())) }
func (c *Controller) maxWeight() int32                 { return rollout.MaxTrafficWeight(c.Rollout) }
func (c *Controller) atLeast(v string) bool            { return rollout.AtLeast(c.Version, v) }
func (c *Controller) dynamic() bool                    { return c.canary().DynamicStableScale }

// resync is the controller's default resync period
// (controller.DefaultRolloutResyncPeriod): a scale-down deadline further
// away than that is not waited for (replicaset.go reconcileNewReplicaSet
// :144, v1.10.2 :176).
const resync = 15 * time.Minute

// reconcile is one pass: the controller's rolloutContext.
type reconcile struct {
	c        *Controller
	cl       *Cluster
	now      time.Duration
	old      Status // c.rollout.Status: what the reconcile read
	newRS    *ReplicaSet
	stableRS *ReplicaSet
	others   []*ReplicaSet
	// newWeights is c.newStatus.Canary.Weights.
	newWeights *Weights
	// the pauseContext's requests
	addAbort, removeAbort, clearPause, addPause, removePause bool
	d                                                        Decision
}

// Reconcile runs one reconcile at time now over the cluster's state and
// writes what the controller writes: ReplicaSet sizes and annotations,
// Service selectors and the Rollout's status.
func (c *Controller) Reconcile(cl *Cluster, now time.Duration) Decision {
	r := &reconcile{c: c, cl: cl, now: now}
	// newRolloutContext creates the desired ReplicaSet, at 0 replicas,
	// when none matches the template (controller.go:561-562), and records
	// it in the Progressing condition (sync.go:255-266).
	r.newRS = cl.ReplicaSet(cl.Template)
	created := r.newRS == nil
	if created {
		r.newRS = &ReplicaSet{Revision: cl.Template, Created: now}
		cl.ReplicaSets = append(cl.ReplicaSets, r.newRS)
		cl.Status.Conditions.Progressing = ReasonNewReplicaSetCreated
	}
	r.old = cl.Status
	if EarlyReturnOnWrite.Contains(c.Version) {
		// v1.10.0+: a reconcile that wrote the Rollout ends there
		// (controller.go:451-455, context.go:62-65).
		if created {
			r.d.Stop = "new ReplicaSet created: the Rollout was written, the next reconcile goes on"
			return r.d
		}
		if r.checkPausedConditions() {
			r.d.Stop = "Progressing or Paused condition patched: the next reconcile goes on"
			return r.d
		}
	}
	r.stableRS = cl.ReplicaSet(r.old.StableRevision)
	for _, rs := range cl.ReplicaSets {
		if rs != r.newRS && rs != r.stableRS {
			r.others = append(r.others, rs)
		}
	}
	r.newWeights = cloneWeights(r.old.Weights)
	r.run()
	return r.d
}

// run is rolloutCanary (canary.go:20-99).
func (r *reconcile) run() {
	// The first reconcile after a template change only resets the status
	// (canary.go:22-27): no Services, no traffic routing, no scaling.
	if r.templateChanged() {
		r.d.Stop = "template changed: status reset only"
		r.syncStatus()
		return
	}
	r.reconcileServices()
	if stop := r.reconcileTrafficRouting(); stop != "" {
		r.d.Stop = stop
		return
	}
	r.reconcileAnalysis()
	if scaled := r.reconcileReplicaSets(); scaled {
		r.d.Stop = "ReplicaSets scaled"
		r.syncStatus()
		return
	}
	if r.reconcilePause() {
		r.d.Stop = "pause step"
	}
	r.syncStatus()
}

// templateChanged is PodTemplateOrStepsChanged: the status's current
// pod-template hash is not the template's (the steps are never edited in
// the twin's scenarios).
func (r *reconcile) templateChanged() bool { return r.old.CurrentRevision != r.newRS.Revision }

func (r *reconcile) fullyPromoted() bool { return r.old.StableRevision == r.old.CurrentRevision }

func (r *reconcile) aborted() bool {
	if r.removeAbort {
		return false
	}
	return r.addAbort || r.old.Abort
}

// currentStep is GetCurrentCanaryStep.
func (r *reconcile) currentStep() (*v1alpha1.CanaryStep, int32) {
	i := int32(0)
	if r.old.StepIndex != nil {
		i = *r.old.StepIndex
	}
	if i >= r.c.stepCount() {
		return nil, i
	}
	return &r.c.steps()[i], i
}

// isRollbackWithinWindow (sync.go:903-934).
func (r *reconcile) isRollbackWithinWindow() bool {
	if r.newRS == nil || r.stableRS == nil {
		return false
	}
	return r.c.window(r.cl.ReplicaSets, r.newRS, r.stableRS).Within
}

// Window is isRollbackWithinWindow's count, spelled out: the desired
// ReplicaSet must be older than the stable one (metav1.Time.Before, on
// timestamps of one-second precision: two ReplicaSets created in the same
// second are neither before nor after each other), and fewer than
// rollbackWindow.revisions ReplicaSets may have been created between them,
// those scaled to zero included and an Experiment's excluded (sync.go
// v1.8.2 :903-934, v1.9.0 :905-936, v1.10.2 :966-996).
type Window struct {
	// Older is the first gate: the target was created before the stable.
	Older bool
	// Between are the revisions counted; SameInstant those created in the
	// same instant as the target or the stable, which Before does not count
	// (the window widens); Experiments those an Experiment owns.
	Between, SameInstant, Experiments []string
	// Revisions is rollbackWindow.revisions (0 when unset).
	Revisions int32
	Within    bool
}

// Window counts the rollback window for a rollback from the stable
// revision to the target, over the cluster's ReplicaSets.
func (c *Controller) Window(cl *Cluster, target, stable string) Window {
	t, s := cl.ReplicaSet(target), cl.ReplicaSet(stable)
	if t == nil || s == nil {
		return Window{}
	}
	return c.window(cl.ReplicaSets, t, s)
}

func (c *Controller) window(all []*ReplicaSet, target, stable *ReplicaSet) Window {
	w := Window{Older: target.Created < stable.Created}
	if rw := c.Rollout.Spec.RollbackWindow; rw != nil {
		w.Revisions = rw.Revisions
	}
	if !w.Older {
		return w
	}
	for _, rs := range all {
		if rs == target || rs == stable {
			continue
		}
		switch {
		case rs.Experiment:
			// An Experiment's ReplicaSets are not revisions (:914).
			w.Experiments = append(w.Experiments, rs.Revision)
		case rs.Created < stable.Created && target.Created < rs.Created:
			w.Between = append(w.Between, rs.Revision)
		case rs.Created == target.Created || rs.Created == stable.Created:
			w.SameInstant = append(w.SameInstant, rs.Revision)
		}
	}
	w.Within = w.Revisions > 0 && int32(len(w.Between)) < w.Revisions
	return w
}

// desiredCanaryWeight is GetCanaryReplicasOrWeight's weight for the status
// read at the start of the reconcile (no setCanaryScale steps).
func (r *reconcile) desiredCanaryWeight() int32 {
	if r.old.PromoteFull || r.old.StableRevision == "" || r.old.CurrentRevision == r.old.StableRevision {
		return r.c.maxWeight()
	}
	if r.old.Abort && r.c.dynamic() && r.stableRS != nil && DynamicAbortFollowsSteps.Contains(r.c.Version) {
		return r.dynamicAbortWeight()
	}
	return r.currentSetWeight()
}

// dynamicAbortWeight is GetDesiredCanaryWeight for an aborted Rollout
// with dynamicStableScale (utils/replicaset/canary.go v1.9.0 :512-545):
// the last setWeight whose pods are fewer than the canary still needs,
// counted from the stable's missing pods or the canary's available ones.
func (r *reconcile) dynamicAbortWeight() int32 {
	n, maxW := r.c.Replicas, r.c.maxWeight()
	expected := n - r.stableRS.Available
	canary := max(expected, r.newRS.Available)
	if AbortWeightIgnoresHeldCanary.Contains(r.c.Version) && r.explicitAbortDelay() {
		// #4900: a canary the delay keeps up must not hold the weight.
		canary = expected
	}
	steps := r.c.steps()
	for i := len(steps) - 1; i >= 0; i-- {
		if w := steps[i].SetWeight; w != nil && rollout.WeightToReplicas(n, *w, maxW) < canary {
			return *w
		}
	}
	return 0
}

// explicitAbortDelay is HasExplicitAbortScaleDownDelay (master): the
// Rollout sets abortScaleDownDelaySeconds, and not to 0.
func (r *reconcile) explicitAbortDelay() bool {
	delay, set := defaults.GetAbortScaleDownDelaySecondsOrDefault(r.c.Rollout)
	return set && delay != nil
}

// currentSetWeight is GetCurrentSetWeight.
func (r *reconcile) currentSetWeight() int32 {
	if r.old.Abort {
		return 0
	}
	i := r.c.stepCount()
	if r.old.StepIndex != nil {
		i = *r.old.StepIndex
	}
	return rollout.SetWeightAt(r.c.Rollout, i)
}

// replicaCounts is CalculateReplicaCountsForTrafficRoutedCanary
// (utils/replicaset/canary.go v1.8.2 :341-383, v1.10.2 :377-419): the
// canary sized for the weight (ceil, then minPodsPerReplicaSet). Without
// dynamicStableScale the stable stays at spec.replicas; with it, the stable
// is sized for the larger of its desired share and the share the weights
// given (the status's, or the ones just written) still send it, and an
// aborted canary for the larger of its desired share and its current one.
func (r *reconcile) replicaCounts(weights *Weights) (canary, stable int32) {
	n, maxW := r.c.Replicas, r.c.maxWeight()
	desired := r.desiredCanaryWeight()
	minPods := func(count int32) int32 { return rollout.MinPods(r.c.Rollout, n, count, r.c.Version) }
	canary = minPods(rollout.WeightToReplicas(n, desired, maxW))
	if !r.c.dynamic() {
		return canary, n
	}
	stable = rollout.WeightToReplicas(n, maxW-desired, maxW)
	if weights != nil {
		stable = max(stable, rollout.WeightToReplicas(n, weights.Stable, maxW))
		if r.old.Abort {
			canary = max(rollout.WeightToReplicas(n, weights.Canary, maxW), canary)
		}
	}
	return minPods(canary), minPods(stable)
}

// atDesiredReplicaCounts is AtDesiredReplicaCountsForCanary with traffic
// routing (utils/replicaset/canary.go v1.8.2 :31-56): the canary has
// exactly its desired pods, all available, and, without
// dynamicStableScale, the stable exactly its desired pods created.
func (r *reconcile) atDesiredReplicaCounts(weights *Weights) bool {
	canary, stable := r.replicaCounts(weights)
	if r.newRS == nil || r.newRS.Replicas != canary || r.newRS.Available != canary {
		return false
	}
	if r.c.dynamic() {
		return true
	}
	return r.stableRS != nil && r.stableRS.Replicas == stable && r.stableRS.Pods == stable
}

// dynamicRollbackToStable is isDynamicallyRollingBackToStable (canary.go
// v1.8.2 :259-272, utils/rollout v1.9.0 :29-45): with dynamicStableScale, an
// update interrupted by going back to the stable (fully promoted again)
// while the weights still name the interrupted canary and the stable is not
// whole. It returns that canary's revision.
func (r *reconcile) dynamicRollbackToStable() (string, bool) {
	if !r.fullyPromoted() || !r.c.dynamic() || r.old.Weights == nil {
		return "", false
	}
	prev := r.old.Weights.CanaryRevision
	if prev == r.newRS.Revision || r.newRS.Available >= r.c.Replicas {
		return "", false
	}
	return prev, true
}

// abortWeight is calculateDesiredWeightOnAbortOrStableRollback: 0 without
// dynamicStableScale; with it, the share the stable's available pods
// cannot carry, never above the weight already written (v1.8.2
// trafficrouting.go :337-351), and from v1.9.0 stepping down through the
// setWeight steps (:360-395).
func (r *reconcile) abortWeight() int32 {
	n, maxW := r.c.Replicas, r.c.maxWeight()
	if !r.c.dynamic() || r.stableRS == nil || n == 0 {
		return 0
	}
	expected := max(0, maxW-maxW*r.stableRS.Available/n)
	if !DynamicAbortFollowsSteps.Contains(r.c.Version) {
		if r.old.Weights != nil {
			expected = min(expected, r.old.Weights.Canary)
		}
		return expected
	}
	desired := r.desiredCanaryWeight()
	if r.old.Weights == nil {
		return max(expected, desired)
	}
	current := r.old.Weights.Canary
	if desired <= 0 {
		return min(expected, current)
	}
	if maxW*r.stableRS.Available/n < maxW-desired {
		// The stable is still growing: keep the weight.
		return current
	}
	return min(desired, current)
}

// reconcileServices is reconcileStableAndCanaryService (service.go:253-291)
// for Services the controller already manages: a selector moves to a
// ReplicaSet once it has at least one available pod (service.go:323-326).
func (r *reconcile) reconcileServices() {
	if r.stableRS != nil && r.stableRS.Available > 0 {
		r.cl.StableSelector = r.stableRS.Revision
	}
	// Going back to a stable that is not whole, the canary Service stays
	// on the interrupted canary (service.go v1.8.2 :270-279).
	if _, back := r.dynamicRollbackToStable(); back {
		return
	}
	if r.newRS != nil && r.newRS.Available > 0 {
		r.cl.CanarySelector = r.newRS.Revision
	}
}

// reconcileTrafficRouting is trafficrouting.go:155-334: the weight chain,
// the stable-only capacity gate, the DestinationRule hash update and
// SetWeight. It returns why the reconcile stops, or "".
func (r *reconcile) reconcileTrafficRouting() string {
	c := r.c
	_, index := r.currentStep()
	var desired int32
	canaryRev := r.newRS.Revision
	prev, back := r.dynamicRollbackToStable()
	switch {
	case back:
		// :187 going back to a stable that is not whole, with
		// dynamicStableScale: the weight between the interrupted canary and
		// the stable follows what the stable can carry.
		r.d.Branch = "dynamic rollback to the stable"
		desired = r.abortWeight()
		canaryRev = prev
	case r.fullyPromoted():
		// :194 RemoveManagedRoutes; the weight stays 0.
		r.d.Branch = "fully promoted"
	case r.aborted():
		// :199 calculateDesiredWeightOnAbortOrStableRollback: 0 without
		// dynamicStableScale, and the canary Service goes back to the
		// stable; with it, the share the stable cannot carry yet, and the
		// Service moves once that is 0 (:201).
		r.d.Branch = "aborted"
		desired = r.abortWeight()
		if r.stableRS != nil && (!r.c.dynamic() || desired == 0) {
			r.cl.CanarySelector = r.stableRS.Revision
		}
	case r.newRS.Available == 0:
		// :217 never weight to a canary with no available pod.
		r.d.Branch = "canary has 0 available"
	case r.old.PromoteFull:
		// :229 promote --full freezes the current weight; with
		// dynamicStableScale it follows the canary's available pods (:233).
		r.d.Branch = "promote full"
		if r.c.dynamic() {
			desired = r.c.maxWeight() * r.newRS.Available / r.c.Replicas
		} else if r.old.Weights != nil {
			desired = r.old.Weights.Canary
		}
	default:
		// :243 the step index.
		switch {
		case !r.atDesiredReplicaCounts(nil):
			// :245-252 the canary is short: walk back from index-1 to the
			// previous setWeight.
			r.d.Branch = "backward walk"
			if index-1 >= c.stepCount() {
				// Steps[index-1] is out of range: the controller panics
				// (recovered by the work queue) and requeues.
				r.d.Panic = fmt.Sprintf("runtime error: index out of range [%d] with length %d", index-1, c.stepCount())
				return "panic in the backward walk"
			}
			for i := index - 1; i >= 0; i-- {
				if s := c.steps()[i]; s.SetWeight != nil {
					desired = *s.SetWeight
					break
				}
			}
		case index != c.stepCount():
			r.d.Branch = "step weight"
			desired = r.currentSetWeight()
		default:
			r.d.Branch = "end of steps"
			desired = c.maxWeight()
		}
	}
	// The stable-only capacity gate (:266, from v1.8.1): the stable must
	// have the pods for the stable's share; the canary is never asked.
	// It returns nil, not an error: nothing is written and the reconcile
	// goes on to analysis, scaling and status.
	if rollout.StableCapacityGate.Contains(c.Version) && !r.stableHasCapacity(c.maxWeight()-desired) {
		r.d.Branch += ", held by the stable capacity gate"
		return ""
	}
	// v1.9.0+ (:298-305) writes the weight once before the hash update when
	// the canary has no available pod and the last weight was above 0; the
	// value is the same as the write below.
	if stop := r.updateHash(canaryRev); stop != "" {
		return stop
	}
	r.d.Weight = &desired
	// calculateWeightStatus (:371-395).
	w := &Weights{Canary: desired, Stable: c.maxWeight() - desired, CanaryRevision: canaryRev}
	if r.stableRS != nil {
		w.StableRevision = r.stableRS.Revision
	}
	r.newWeights = w
	return ""
}

// stableHasCapacity is checkReplicasAvailable(stableRS, weight)
// (trafficrouting.go:138-153): integer arithmetic over 100 in v1.8.x, over
// maxTrafficWeight from v1.9.0.
func (r *reconcile) stableHasCapacity(weight int32) bool {
	if r.stableRS == nil {
		return false
	}
	denominator := int32(100)
	if r.c.atLeast("v1.9.0") {
		denominator = r.c.maxWeight()
	}
	return r.stableRS.Available >= weight*r.c.Replicas/denominator
}

// updateHash is the Istio reconciler's UpdateHash when the Rollout routes
// with DestinationRule subsets and names no canary or stable Service: the
// hash switch is refused, and the reconcile ends with an error, while a
// ReplicaSet is not fully available (rollout/trafficrouting/istio/istio.go
// UpdateHash, v1.8.2: any ReplicaSet with replicas; v1.9.0
// shouldDelayDestinationRuleUpdate: only the stable and canary, and not the
// canary while aborting).
func (r *reconcile) updateHash(canaryRev string) string {
	tr := r.c.canary().TrafficRouting
	if tr.Istio == nil || tr.Istio.DestinationRule == nil || r.c.canary().CanaryService != "" || r.c.canary().StableService != "" {
		return ""
	}
	stableRev := ""
	if r.stableRS != nil {
		stableRev = r.stableRS.Revision
	}
	for _, rs := range r.cl.ReplicaSets {
		if rs.Replicas == 0 {
			continue
		}
		if r.c.atLeast("v1.9.0") {
			if rs.Revision != stableRev && rs.Revision != canaryRev {
				continue
			}
			// AbortOrDynamicRollbackToStable (utils/rollout v1.9.0 :50-66).
			_, back := r.dynamicRollbackToStable()
			if (r.old.Abort || back) && rs.Revision == canaryRev {
				continue
			}
		}
		if !(rs.Available != 0 && rs.Replicas <= rs.Available) {
			return "DestinationRule switch delayed: ReplicaSet " + rs.Revision + " not fully available"
		}
	}
	return ""
}

// reconcileAnalysis is reconcileAnalysisRuns (analysis.go:73-147) for the
// background analysis.
func (r *reconcile) reconcileAnalysis() {
	a := r.c.canary().Analysis
	skip := r.aborted() || r.old.PromoteFull || r.old.StableRevision == ""
	if r.c.atLeast("v1.10.0") {
		// v1.10.0 (analysis.go:75-91): isFastRollback (a rollback within
		// the window, or to the stable) or fully promoted; a canary rolling
		// back to a ReplicaSet with a scale-down deadline no longer skips.
		skip = skip || r.fullyPromoted() || r.isRollbackWithinWindow()
	} else {
		// v1.7.2-v1.9.x (analysis.go:75-78).
		skip = skip || r.newRS.ScaleDownAt != nil ||
			(rollout.RollbackWindowSkipsAnalysis.Contains(r.c.Version) && r.isRollbackWithinWindow())
	}
	if skip || a == nil || len(a.Templates) == 0 {
		r.cancelAnalysis()
		return
	}
	// Not when fully promoted, nor before the starting step (:329-331).
	if r.fullyPromoted() || r.beforeStartingStep() {
		r.cl.Status.Background = nil
		return
	}
	ar := r.old.Background
	if ar == nil || ar.Revision != r.newRS.Revision || ar.Phase == AnalysisCancelled {
		r.cl.Status.Background = &AnalysisRun{Revision: r.newRS.Revision, Created: r.now, Phase: AnalysisRunning}
		return
	}
	if ar.Phase == AnalysisFailed {
		// :343-346 a failed run aborts the update.
		r.addAbort = true
	}
}

func (r *reconcile) cancelAnalysis() {
	if ar := r.cl.Status.Background; ar != nil && ar.Phase == AnalysisRunning {
		ar.Phase, ar.Message = AnalysisCancelled, "cancelled by the rollout controller"
	}
}

// beforeStartingStep is BeforeStartingStep.
func (r *reconcile) beforeStartingStep() bool {
	a := r.c.canary().Analysis
	if a == nil || a.StartingStep == nil {
		return false
	}
	_, i := r.currentStep()
	return i < *a.StartingStep
}

// reconcileReplicaSets is reconcileCanaryReplicaSets (canary.go:433-469):
// stable, then canary, then the others; it reports whether it scaled.
func (r *reconcile) reconcileReplicaSets() bool {
	r.removeScaleDownDeadlines()
	// The stable's size uses the weights read at the start (canary.go:116).
	if r.stableRS != nil && r.stableRS != r.newRS {
		if _, stable := r.replicaCounts(r.old.Weights); r.scale(r.stableRS, stable) {
			return true
		}
	}
	if r.reconcileNewReplicaSet() {
		return true
	}
	return r.scaleDownOthers()
}

// removeScaleDownDeadlines (replicaset.go v1.8.2 :100-117): the desired
// ReplicaSet, unless an abort holds it, and the stable lose their
// scale-down deadline.
func (r *reconcile) removeScaleDownDeadlines() {
	if !r.delayScaleDownOnAbort() {
		r.newRS.ScaleDownAt = nil
	}
	if r.stableRS != nil {
		r.stableRS.ScaleDownAt = nil
	}
}

func (r *reconcile) scale(rs *ReplicaSet, n int32) bool {
	if rs.Replicas == n {
		return false
	}
	rs.Replicas = n
	if n == 0 && !r.delayScaleDownOnAbort() {
		rs.ScaleDownAt = nil
	}
	return true
}

// reconcileNewReplicaSet (replicaset.go:119-185): the canary is sized for
// the weight; on abort it stays up until abortScaleDownDelaySeconds after
// the stable is fully available.
func (r *reconcile) reconcileNewReplicaSet() bool {
	// NewRSNewReplicas sizes it with the weights just written.
	n, _ := r.replicaCounts(r.newWeights)
	if r.delayScaleDownOnAbort() {
		delay, _ := defaults.GetAbortScaleDownDelaySecondsOrDefault(r.c.Rollout)
		switch {
		case r.newRS.ScaleDownAt != nil:
			if at := *r.newRS.ScaleDownAt; at > r.now {
				if at-r.now < resync {
					return false
				}
				// A deadline further than a resync away is not waited for
				// (:144): the canary is sized as it would be without it.
			} else {
				n = 0
			}
		case delay != nil:
			// Only once the stable can take all the traffic (v1.10.0
			// tolerates a stable above spec.replicas: >=).
			whole := r.stableRS.Available == r.c.Replicas
			if r.c.atLeast("v1.10.0") {
				whole = r.stableRS.Available >= r.c.Replicas
			}
			if whole {
				at := r.now + *delay
				r.newRS.ScaleDownAt = &at
			}
			return false
		}
	}
	return r.scale(r.newRS, n)
}

// delayScaleDownOnAbort is shouldDelayScaleDownOnAbort (replicaset.go:187-213).
func (r *reconcile) delayScaleDownOnAbort() bool {
	if !r.aborted() || r.stableRS == nil {
		return false
	}
	delay, set := defaults.GetAbortScaleDownDelaySecondsOrDefault(r.c.Rollout)
	if delay == nil {
		return false
	}
	// dynamicStableScale drains the canary as the weight steps down,
	// unless the Rollout asks for a delay (:205-208).
	return !r.c.dynamic() || set
}

// scaleDownOthers is scaleDownOldReplicaSetsForCanary (canary.go:168-250)
// with traffic routing: ReplicaSets that are neither stable nor canary go
// to zero, a previous stable only after scaleDownDelaySeconds.
func (r *reconcile) scaleDownOthers() bool {
	var active []*ReplicaSet
	for _, rs := range r.others {
		if rs.Replicas > 0 {
			active = append(active, rs)
		}
	}
	if len(active) == 0 {
		return false
	}
	var available int32
	for _, rs := range r.cl.ReplicaSets {
		available += rs.Available
	}
	maxUnavailable, _ := intstr.GetScaledValueFromIntOrPercent(defaults.GetMaxUnavailableOrDefault(r.c.Rollout), int(r.c.Replicas), false)
	maxScaleDown := available - (r.c.Replicas - int32(maxUnavailable))
	if maxScaleDown <= 0 {
		return false
	}
	scaledDown := int32(0)
	for _, rs := range active {
		if r.referenced(rs) {
			continue
		}
		if maxScaleDown <= 0 {
			break
		}
		desired := int32(0)
		if (r.fullyPromoted() || rs.ScaleDownAt != nil) && !r.c.dynamic() {
			// scaleDownDelayHelper (replicaset.go:282-319); with
			// dynamicStableScale the previous stable goes at once (canary.go
			// :215-217).
			if rs.ScaleDownAt == nil {
				at := r.now + defaults.GetScaleDownDelaySecondsOrDefault(r.c.Rollout)
				rs.ScaleDownAt = &at
				desired = rs.Replicas
			} else if *rs.ScaleDownAt > r.now {
				desired = r.c.Replicas
			}
		}
		if rs.Replicas == desired {
			continue
		}
		down := rs.Replicas - desired
		r.scale(rs, desired)
		maxScaleDown -= down
		scaledDown += down
	}
	return scaledDown > 0
}

// referenced is isReplicaSetReferenced (replicaset.go:321-345).
func (r *reconcile) referenced(rs *ReplicaSet) bool {
	refs := []string{r.old.StableRevision, r.old.CurrentRevision}
	if w := r.old.Weights; w != nil {
		refs = append(refs, w.CanaryRevision, w.StableRevision)
	}
	for _, ref := range refs {
		if ref == rs.Revision {
			return true
		}
	}
	return false
}

// reconcilePause is reconcileCanaryPause (canary.go:125-164).
func (r *reconcile) reconcilePause() bool {
	if r.old.PromoteFull || r.c.stepCount() == 0 {
		return false
	}
	step, _ := r.currentStep()
	if step == nil || step.Pause == nil {
		return false
	}
	if r.old.PauseStart == nil && !r.old.ControllerPause {
		r.addPause = true
	}
	return true
}

// completedCurrentStep is completedCurrentCanaryStep (canary.go:319-355).
func (r *reconcile) completedCurrentStep() bool {
	step, _ := r.currentStep()
	if step == nil {
		return false
	}
	switch {
	case step.Pause != nil:
		if r.old.ControllerPause && r.old.PauseStart == nil {
			return true
		}
		if step.Pause.Duration != nil && r.old.PauseStart != nil {
			end := *r.old.PauseStart + time.Duration(step.Pause.DurationSeconds())*time.Second
			return r.now > end
		}
		return false
	case step.SetWeight != nil:
		// With the weights this reconcile wrote (canary.go :318).
		return r.atDesiredReplicaCounts(r.newWeights)
	}
	return false
}

// shouldFullPromote (sync.go:937-968) for a canary.
func (r *reconcile) shouldFullPromote() string {
	if r.stableRS == nil {
		return "Initial deploy"
	}
	if r.aborted() {
		return ""
	}
	// v1.10.0 promotes a canary with more available pods than replicas too
	// (an autoscaler that scaled the Rollout down, sync.go:1008-1014).
	if r.newRS.Available != r.c.Replicas && !(r.c.atLeast("v1.10.0") && r.newRS.Available > r.c.Replicas) {
		return ""
	}
	if r.old.PromoteFull {
		return "Full promotion requested"
	}
	if r.isRollbackWithinWindow() {
		return "Rollback within window"
	}
	_, i := r.currentStep()
	if r.c.stepCount() == 0 || i == r.c.stepCount() {
		return "Completed all steps"
	}
	return ""
}

// syncStatus is syncRolloutStatusCanary (canary.go:358-431) followed by
// persistRolloutStatus's pause arithmetic (pause.go:59-117).
func (r *reconcile) syncStatus() {
	ns := r.cl.Status
	ns.Counts = r.counts()
	ns.Weights = r.newWeights
	ns.CurrentRevision = r.newRS.Revision
	// calculateBaseStatus: promoteFull survives only while updating.
	ns.PromoteFull = ns.CurrentRevision != ns.StableRevision && r.old.PromoteFull
	stepCount := r.c.stepCount()
	_, idx := r.currentStep()
	index := &idx
	if stepCount == 0 {
		index = nil
	}

	if r.templateChanged() {
		// resetRolloutStatus (sync.go:889-901), then the rollback
		// shortcuts (canary.go:372-385).
		r.clearPause, r.removeAbort = true, true
		ns.PromoteFull = false
		ns.Background = nil
		zero := int32(0)
		ns.StepIndex = nil
		if stepCount > 0 {
			ns.StepIndex = &zero
		}
		if stepCount > 0 {
			if r.old.StableRevision == r.newRS.Revision {
				ns.StepIndex = &stepCount
			} else if rollout.SkipStepsWhenActive.Contains(r.c.Version) && r.isRollbackWithinWindow() && r.newRS.Replicas > 0 {
				ns.StepIndex = &stepCount
			}
		}
		r.persist(ns)
		return
	}

	// canary.go:390-396: promote --full and a rollback within the window
	// throw the index to the end.
	if r.old.PromoteFull || r.isRollbackWithinWindow() {
		r.clearPause, r.removeAbort = true, true
		if stepCount > 0 {
			index = &stepCount
		}
	}
	if reason := r.shouldFullPromote(); reason != "" {
		// promoteStable (sync.go:1003-1040).
		r.clearPause, r.removeAbort = true, true
		ns.PromoteFull = false
		ns.StepIndex = nil
		if stepCount > 0 {
			ns.StepIndex = &stepCount
		}
		if ns.StableRevision != ns.CurrentRevision {
			ns.StableRevision = ns.CurrentRevision
			r.d.Promoted = true
		}
		r.persist(ns)
		return
	}
	if r.aborted() {
		if stepCount > 0 {
			zero := int32(0)
			ns.StepIndex = &zero
			if ns.StableRevision == ns.CurrentRevision {
				ns.StepIndex = &stepCount
			}
		}
		r.persist(ns)
		return
	}
	if r.completedCurrentStep() {
		next := *index + 1
		index = &next
		r.removePause = true
	}
	ns.StepIndex = index
	r.persist(ns)
}

// persist applies the pause context (CalculatePauseStatus) and stores the
// status.
func (r *reconcile) persist(ns Status) {
	ns.ControllerPause = false
	ns.PauseStart = nil
	if r.addAbort || (!r.removeAbort && r.old.Abort) {
		// An aborted status keeps no pause condition: CalculatePauseStatus
		// returns before copying them (pause.go:67-75).
		ns.Abort = true
		r.conditions(&ns)
		r.cl.Status = ns
		return
	}
	ns.Abort = false
	if !r.clearPause {
		start := r.old.PauseStart
		if r.removePause {
			start = nil
		}
		if r.addPause && start == nil {
			now := r.now
			start = &now
		}
		if start != nil {
			ns.PauseStart = start
			ns.ControllerPause = r.old.ControllerPause || (r.addPause && r.old.PauseStart == nil)
		}
	}
	r.conditions(&ns)
	r.cl.Status = ns
}

func cloneWeights(w *Weights) *Weights {
	if w == nil {
		return nil
	}
	c := *w
	return &c
}

// counts is calculateBaseStatus's replica counts (sync.go :394-424) over
// the ReplicaSets as the reconcile read them.
func (r *reconcile) counts() Counts {
	var n Counts
	for _, rs := range r.cl.ReplicaSets {
		n.Replicas += rs.Pods
		n.Available += rs.Available
	}
	n.Updated = r.newRS.Pods
	return n
}

// checkPausedConditions (sync.go :485-558) reconciles the Progressing and
// Paused conditions with the pause conditions the status holds, and
// reports whether it patched them (from v1.10.0 the reconcile then ends).
func (r *reconcile) checkPausedConditions() bool {
	cur := r.old.Conditions
	next := cur
	paused := r.old.PauseStart != nil
	progressingPaused := cur.Progressing == ReasonPaused
	abortedCondition := cur.Progressing == ReasonAborted
	completed := r.old.StableRevision != "" && r.old.StableRevision == r.old.CurrentRevision
	if paused != progressingPaused && !abortedCondition && !completed {
		next.Progressing = ReasonResumed
		if paused {
			next.Progressing = ReasonPaused
		}
	}
	if !r.old.Abort && abortedCondition {
		next.Progressing = ReasonRetry
	}
	if paused != (cur.Paused == "True") && !abortedCondition {
		next.Paused = conditionStatus(paused)
	}
	if next == cur {
		return false
	}
	r.cl.Status.Conditions = next
	return true
}

// conditions is calculateRolloutConditions (sync.go v1.10.2 :623-756) for
// the conditions the controller reads back. From v1.10.0 it runs after the
// pause status is calculated and reads the new pause conditions; v1.8.x and
// v1.9.x read the old ones (v1.9.0 :587-588) and never read the conditions
// back, so there they are bookkeeping only. Not modelled: the progress
// deadline (a Progressing condition timed out changes no decision the twin
// makes) and status.observedGeneration (taken as current).
func (r *reconcile) conditions(ns *Status) {
	paused := r.old.PauseStart != nil
	if EarlyReturnOnWrite.Contains(r.c.Version) {
		paused = ns.PauseStart != nil
	}
	aborted := r.aborted()
	healthy := r.healthy(ns)
	cond := &ns.Conditions
	becameUnhealthy := false
	if !paused && healthy {
		cond.Healthy = "True"
	} else if cond.Healthy != "" {
		becameUnhealthy = cond.Healthy != "False"
		cond.Healthy = "False"
	}
	if aborted {
		cond.Progressing = ReasonAborted
		return
	}
	switch {
	case healthy:
		cond.Progressing = ReasonNewReplicaSetAvailable
	case r.progressing(ns) || becameUnhealthy:
		cond.Progressing = ReasonReplicaSetUpdated
		if ns.StableRevision == ns.CurrentRevision && becameUnhealthy {
			cond.Progressing = ReasonReplicaSetNotAvailable
		}
	}
}

// healthy is conditions.RolloutHealthy (utils/conditions v1.10.2 :286-313)
// for a canary.
func (r *reconcile) healthy(ns *Status) bool {
	n := r.c.Replicas
	steps := r.c.stepCount()
	allSteps := steps == 0 || ns.StepIndex == nil || *ns.StepIndex == steps
	return ns.Counts.Updated == n && ns.Counts.Available == n && allSteps &&
		ns.StableRevision != "" && ns.StableRevision == ns.CurrentRevision && ns.Counts.Replicas == n
}

// progressing is conditions.RolloutProgressing (:253-282) for a canary.
func (r *reconcile) progressing(ns *Status) bool {
	o, n := r.old.Counts, ns.Counts
	stepMoved := ns.StepIndex != nil && r.old.StepIndex != nil && *ns.StepIndex != *r.old.StepIndex
	return n.Updated != o.Updated || n.Replicas-n.Updated < o.Replicas-o.Updated || n.Available > o.Available ||
		ns.StableRevision != r.old.StableRevision || stepMoved
}

func conditionStatus(b bool) string {
	if b {
		return "True"
	}
	return "False"
}
