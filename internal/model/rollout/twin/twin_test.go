package twin

import (
	"strings"
	"testing"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
)

func ptr[T any](v T) *T { return &v }

func set(w int32) v1alpha1.CanaryStep { return v1alpha1.CanaryStep{SetWeight: ptr(w)} }

var pause = v1alpha1.CanaryStep{Pause: &v1alpha1.RolloutPause{}}

// rollback builds the verified run: 10 replicas, steps [10, pause, 50,
// pause], rollbackWindow 1, the target created before the stable.
func rollback(target *ReplicaSet) (*Controller, *Cluster) {
	ro := &v1alpha1.Rollout{}
	ro.Spec.RollbackWindow = &v1alpha1.RollbackWindowSpec{Revisions: 1}
	ro.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{
		Steps:          []v1alpha1.CanaryStep{set(10), pause, set(50), pause},
		TrafficRouting: &v1alpha1.RolloutTrafficRouting{}, CanaryService: "canary", StableService: "stable",
	}
	c, err := NewController(ro, 10, "v1.8.2")
	if err != nil {
		panic(err)
	}
	end := int32(4)
	target.Revision, target.Created = "old", -2*time.Minute
	cl := &Cluster{Template: "old", CanarySelector: "new", StableSelector: "new",
		ReplicaSets: []*ReplicaSet{target, {Revision: "new", Created: -time.Minute, Replicas: 10, Pods: 10, Available: 10}},
		Status:      Status{CurrentRevision: "new", StableRevision: "new", StepIndex: &end}}
	return c, cl
}

// TestVerifiedRun is the run of the real controller recorded in the
// project's verified facts: the target scaled to zero first resets to step
// 0, is sized for step 0, jumps to the end, and gets 50% (the last
// setWeight) once one pod is available, then is promoted.
func TestVerifiedRun(t *testing.T) {
	c, cl := rollback(&ReplicaSet{})
	old := cl.ReplicaSet("old")
	want := []struct {
		available int32 // set before the reconcile
		spec      int32
		weight    string
		index     int32
	}{
		{0, 0, "-", 0},
		{0, 1, "0", 4},
		{0, 10, "0", 4},
		{1, 10, "50", 4},
		{3, 10, "50", 4},
		{10, 10, "100", 4}, // at its desired counts: the end of the steps' 100, and promoted
	}
	for i, w := range want {
		old.Available = w.available
		d := c.Reconcile(cl, time.Duration(i)*time.Second)
		if old.Replicas != w.spec || show(d.Weight) != w.weight || *cl.Status.StepIndex != w.index {
			t.Errorf("round %d: spec %d weight %s index %d (%s); want %d %s %d", i+1, old.Replicas, show(d.Weight), *cl.Status.StepIndex, d.Branch, w.spec, w.weight, w.index)
		}
	}
	if cl.Status.StableRevision != "old" {
		t.Errorf("not promoted: stable %s", cl.Status.StableRevision)
	}
}

// TestActiveTargetJumpsOnTheFirstReconcile: a target that still has
// replicas is thrown to the end at once (canary.go:379, v1.6.0+), and gets
// the walked-back weight on the next reconcile.
func TestActiveTargetJumpsOnTheFirstReconcile(t *testing.T) {
	c, cl := rollback(&ReplicaSet{Replicas: 10, Pods: 10, Available: 1})
	d := c.Reconcile(cl, 0)
	if d.Weight != nil || *cl.Status.StepIndex != 4 {
		t.Fatalf("first reconcile: weight %s index %d, want none and 4", show(d.Weight), *cl.Status.StepIndex)
	}
	if d = c.Reconcile(cl, time.Second); show(d.Weight) != "50" {
		t.Fatalf("second reconcile: weight %s (%s), want 50", show(d.Weight), d.Branch)
	}
}

func TestWindowCountsReplicaSetsScaledToZero(t *testing.T) {
	c, cl := rollback(&ReplicaSet{})
	// One ReplicaSet between the target and the stable, scaled to zero:
	// the window of 1 is missed.
	cl.ReplicaSets = append(cl.ReplicaSets, &ReplicaSet{Revision: "between", Created: -90 * time.Second})
	c.Reconcile(cl, 0)
	if *cl.Status.StepIndex != 0 {
		t.Fatalf("index %d", *cl.Status.StepIndex)
	}
	r := &reconcile{c: c, cl: cl, newRS: cl.ReplicaSet("old"), stableRS: cl.ReplicaSet("new")}
	if r.isRollbackWithinWindow() {
		t.Error("a ReplicaSet scaled to zero between them must count")
	}
	// Created in the same instant as the target: Before is false both
	// ways, so it does not count.
	cl.ReplicaSet("between").Created = -2 * time.Minute
	if !r.isRollbackWithinWindow() {
		t.Error("a ReplicaSet created in the same instant as the target must not count")
	}
}

// TestStepIndexPastTheEnd reproduces the controller's persisted index of
// stepCount+1 and the panic of the backward walk it leads to.
func TestStepIndexPastTheEnd(t *testing.T) {
	c, cl := rollback(&ReplicaSet{})
	c.Rollout.Spec.Strategy.Canary.Steps[0] = set(0)
	old := cl.ReplicaSet("old")
	c.Reconcile(cl, 0) // template changed: index 0
	c.Reconcile(cl, 1) // step 0 wants 0 pods and has them: completes, on top of the jump
	if got := *cl.Status.StepIndex; got != 5 {
		t.Fatalf("index %d, want 5 (stepCount + 1)", got)
	}
	// The ReplicaSet's status lags: it still reports an available pod.
	old.Available = 1
	d := c.Reconcile(cl, 2)
	if !strings.Contains(d.Panic, "index out of range [4] with length 4") {
		t.Fatalf("decision %+v, want the backward walk's panic", d)
	}
	if *cl.Status.StepIndex != 5 {
		t.Fatalf("a reconcile that panics persists nothing: index %d", *cl.Status.StepIndex)
	}
	// Once the status catches up, the next reconcile throws the index back
	// to the end (the window's line) and sizes the canary for all pods.
	old.Available = 0
	if d = c.Reconcile(cl, 3); d.Panic != "" || *cl.Status.StepIndex != 4 || old.Replicas != 10 {
		t.Fatalf("after: %+v, index %d, canary %d; want index 4 and 10 pods", d, *cl.Status.StepIndex, old.Replicas)
	}
}

// TestDestinationRuleDelay: with Istio subsets and no canary or stable
// Service, the hash switch waits for fully available ReplicaSets: v1.8.2
// any with replicas, v1.9.0 only the stable and the canary.
func TestDestinationRuleDelay(t *testing.T) {
	for _, tc := range []struct {
		version string
		stop    bool
	}{{"v1.8.2", true}, {"v1.9.0", false}} {
		c, cl := rollback(&ReplicaSet{Replicas: 10, Pods: 10, Available: 10})
		c.Version = tc.version
		tr := c.Rollout.Spec.Strategy.Canary
		tr.CanaryService, tr.StableService = "", ""
		tr.TrafficRouting.Istio = &v1alpha1.IstioTrafficRouting{DestinationRule: &v1alpha1.IstioDestinationRule{Name: "dr"}}
		// An intermediate ReplicaSet with replicas that is not available.
		cl.ReplicaSets = append(cl.ReplicaSets, &ReplicaSet{Revision: "other", Created: -3 * time.Minute, Replicas: 2, Pods: 2})
		c.Reconcile(cl, 0)
		d := c.Reconcile(cl, time.Second)
		if got := strings.HasPrefix(d.Stop, "DestinationRule switch delayed"); got != tc.stop {
			t.Errorf("%s: stop %q, want delayed %v", tc.version, d.Stop, tc.stop)
		}
	}
}

func TestGateDenominator(t *testing.T) {
	c, cl := rollback(&ReplicaSet{})
	c.Rollout.Spec.Strategy.Canary.TrafficRouting.MaxTrafficWeight = ptr(int32(1000))
	r := &reconcile{c: c, cl: cl, stableRS: cl.ReplicaSet("new")}
	r.stableRS.Available = 9
	// 950 of 1000 needs 9 pods of 10 over 1000 (v1.9.0), 95 over 100 (v1.8.x).
	c.Version = "v1.9.0"
	if !r.stableHasCapacity(950) {
		t.Error("v1.9.0: 9 available pods cover 950/1000 of 10")
	}
	c.Version = "v1.8.2"
	if r.stableHasCapacity(950) {
		t.Error("v1.8.2 divides by 100: 950 x 10 / 100 = 95 pods")
	}
}
