package twin

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"backfire.dev/backfire/internal/model/rollout"
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

// deploy builds a plain update: 10 replicas, steps [20, pause 20s, 50,
// pause 20s], from r1 (stable, all available) to r2.
func deploy(version string, dynamic bool) (*Controller, *Cluster) {
	ro := &v1alpha1.Rollout{}
	pause20 := v1alpha1.CanaryStep{Pause: &v1alpha1.RolloutPause{Duration: ptrDuration(20)}}
	ro.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{
		Steps:          []v1alpha1.CanaryStep{set(20), pause20, set(50), pause20},
		TrafficRouting: &v1alpha1.RolloutTrafficRouting{}, CanaryService: "canary", StableService: "stable",
		DynamicStableScale: dynamic,
	}
	c, err := NewController(ro, 10, version)
	if err != nil {
		panic(err)
	}
	cl := &Cluster{Template: "r2", CanarySelector: "r1", StableSelector: "r1",
		ReplicaSets: []*ReplicaSet{{Revision: "r1", Created: -time.Minute, Replicas: 10, Pods: 10, Available: 10}},
		Status:      Promoted("r1", 4, Counts{Replicas: 10, Updated: 10, Available: 10})}
	return c, cl
}

func ptrDuration(s int) *intstr.IntOrString { v := intstr.FromString(fmt.Sprintf("%ds", s)); return &v }

// TestEarlyReturnsFromV1100: v1.10 ends the reconcile that created the new
// ReplicaSet, and the one that patched the Progressing condition when a
// pause starts; v1.9 carries on in both.
func TestEarlyReturnsFromV1100(t *testing.T) {
	for _, tc := range []struct {
		version string
		early   bool
	}{{"v1.9.0", false}, {"v1.10.2", true}} {
		c, cl := deploy(tc.version, false)
		d := c.Reconcile(cl, 0)
		created := strings.HasPrefix(d.Stop, "new ReplicaSet created")
		// v1.9 goes on to the status sync, which marks progress.
		want := ReasonReplicaSetUpdated
		if tc.early {
			want = ReasonNewReplicaSetCreated
		}
		if created != tc.early || cl.ReplicaSet("r2") == nil || cl.Status.Conditions.Progressing != want {
			t.Errorf("%s: first reconcile stop %q, conditions %+v", tc.version, d.Stop, cl.Status.Conditions)
		}
		if tc.early && cl.Status.CurrentRevision != "r1" {
			t.Errorf("%s: the early return wrote the status: current %s", tc.version, cl.Status.CurrentRevision)
		}
		// Play the update to its first pause.
		patched := false
		for now := time.Second; now < 40*time.Second && !patched; now += time.Second {
			for _, rs := range cl.ReplicaSets {
				rs.Pods, rs.Available = rs.Replicas, rs.Replicas
			}
			d = c.Reconcile(cl, now)
			patched = strings.HasPrefix(d.Stop, "Progressing or Paused condition patched")
		}
		if patched != tc.early {
			t.Errorf("%s: a reconcile ended on the condition patch: %v", tc.version, patched)
		}
		if tc.early && (cl.Status.Conditions.Progressing != ReasonPaused || cl.Status.Conditions.Paused != "True") {
			t.Errorf("%s: conditions after the pause started %+v", tc.version, cl.Status.Conditions)
		}
	}
}

// TestAbortWeightWithAnExplicitDelay: with dynamicStableScale and an
// explicit abortScaleDownDelaySeconds, released controllers let the
// canary's available pods hold the abort weight up (a canary the delay
// keeps whole keeps it at its last setWeight); #4900, on master only, does
// not. No release modelled enables it.
func TestAbortWeightWithAnExplicitDelay(t *testing.T) {
	for _, v := range []string{rollout.OldestVersion, "v1.8.2", "v1.9.0", "v1.10.0", "v1.10.2", rollout.DefaultVersion} {
		if AbortWeightIgnoresHeldCanary.Contains(v) {
			t.Errorf("release %s enables #4900, which no release ships", v)
		}
	}
	weight := func(version string) int32 {
		c, cl := deploy(version, true)
		thirty := int32(30)
		c.Rollout.Spec.Strategy.Canary.AbortScaleDownDelaySeconds = &thirty
		// Aborted at setWeight 50: canary 5 available, stable scaled to 5
		// and grown back to 8 of 10.
		cl.ReplicaSets = append(cl.ReplicaSets, &ReplicaSet{Revision: "r2", Replicas: 5, Pods: 5, Available: 5})
		cl.ReplicaSet("r1").Available = 8
		two := int32(2)
		cl.Status.CurrentRevision, cl.Status.StepIndex, cl.Status.Abort = "r2", &two, true
		r := &reconcile{c: c, cl: cl, old: cl.Status, newRS: cl.ReplicaSet("r2"), stableRS: cl.ReplicaSet("r1")}
		return r.dynamicAbortWeight()
	}
	// The canary's 5 available pods outnumber the 2 the stable misses: the
	// last setWeight below 5 pods is 20 (2 pods).
	if w := weight("v1.10.2"); w != 20 {
		t.Errorf("v1.10.2: abort weight %d, want 20", w)
	}
	// #4900 counts only the 2 pods the stable misses: the last setWeight
	// under 2 pods is none, so 0.
	if w := weight(rollout.Master); w != 0 {
		t.Errorf("#4900: abort weight %d, want 0", w)
	}
}
