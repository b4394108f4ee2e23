//go:build backfiretrace

// This file is copied into the rollout package of the Argo Rollouts module
// (releases v1.8.2, v1.9.0 and v1.10.2) by hack/test-controller.sh; it is never built
// in backfire's own module (hence the build tag). It runs the real rollout
// controller over backfire's scenario matrix, reusing the package's own test
// fixture (newFixture, newController, newReplicaSetWithStatus, newService),
// plays the ReplicaSet controller and the API server between reconciles, and
// writes what the controller decided at every reconcile as JSON. backfire's
// twin is then checked against those traces.
package rollout

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"github.com/argoproj/argo-rollouts/rollout/mocks"
	"github.com/argoproj/argo-rollouts/utils/annotations"
	"github.com/argoproj/argo-rollouts/utils/conditions"
	"github.com/argoproj/argo-rollouts/utils/hash"
	timeutil "github.com/argoproj/argo-rollouts/utils/time"
)

// bfScenario mirrors the twin's controller scenario (testdata/controller/scenarios.json).
type bfScenario struct {
	Name                 string                `json:"name"`
	Replicas             int32                 `json:"replicas"`
	Steps                []v1alpha1.CanaryStep `json:"steps"`
	MinPodsPerReplicaSet *int32                `json:"minPodsPerReplicaSet,omitempty"`
	RollbackWindow       int32                 `json:"rollbackWindow,omitempty"`
	Revisions            []bfRevision          `json:"revisions"`
	Target               string                `json:"target"`
	Rounds               int                   `json:"rounds"`
	PodsPerRound         int32                 `json:"podsPerRound"`
	SecondsPerRound      int                   `json:"secondsPerRound"`
	Actions              []bfAction            `json:"actions,omitempty"`
	// Set forces a ReplicaSet's available pods before a round's reconcile
	// (pods failing readiness).
	Set []bfSet `json:"set,omitempty"`
	// Analysis gives the canary a background analysis (the package's own
	// analysisTemplate); the action failAnalysis plays the analysis
	// controller failing its current run.
	Analysis bool `json:"analysis,omitempty"`
	// DynamicStableScale and AbortScaleDownDelaySeconds are the canary
	// strategy's fields of the same names.
	DynamicStableScale         bool   `json:"dynamicStableScale,omitempty"`
	AbortScaleDownDelaySeconds *int32 `json:"abortScaleDownDelaySeconds,omitempty"`
}

type bfSet struct {
	Round     int    `json:"round"`
	Revision  string `json:"revision"`
	Available int32  `json:"available"`
}

type bfRevision struct {
	Name      string `json:"name"`
	Spec      int32  `json:"spec"`
	Available int32  `json:"available"`
	// Stuck pods never become available.
	Stuck int32 `json:"stuck,omitempty"`
	// CreatedAt is the creation time in seconds from the start (default:
	// one minute apart, the last a minute before the start); ScaleDownIn
	// gives the ReplicaSet a scale-down deadline that many seconds after
	// the start.
	CreatedAt   *int `json:"createdAt,omitempty"`
	ScaleDownIn *int `json:"scaleDownIn,omitempty"`
}

type bfAction struct {
	Round int    `json:"round"`
	Do    string `json:"do"` // abort | promoteFull | failAnalysis | setTemplate | setReplicas
	// Revision is the template setTemplate puts in the Rollout (an undo).
	Revision string `json:"revision,omitempty"`
	// Replicas is the spec.replicas setReplicas writes (an autoscaler or
	// kubectl scale): the template, so the ReplicaSets, stay as they are.
	Replicas int32 `json:"replicas,omitempty"`
}

// bfRound is what the controller decided in one reconcile.
type bfRound struct {
	Round         int    `json:"round"`
	Weight        *int32 `json:"weight"`
	CanaryDesired int32  `json:"canaryDesired"`
	StableDesired int32  `json:"stableDesired"`
	StepIndex     *int32 `json:"stepIndex"`
	StableRS      string `json:"stableRS"`
	CanaryService string `json:"canaryService"`
	Aborted       bool   `json:"aborted"`
	Error         string `json:"error,omitempty"`
	// Progressing is the Progressing condition's reason and Paused the
	// Paused condition's status, as the reconcile left them.
	Progressing string `json:"progressing,omitempty"`
	Paused      string `json:"paused,omitempty"`
}

type bfTrace struct {
	Scenario string    `json:"scenario"`
	Rounds   []bfRound `json:"rounds"`
}

func bfTemplate(ro *v1alpha1.Rollout, rev string) corev1.PodTemplateSpec {
	t := *ro.Spec.Template.DeepCopy()
	t.Spec.Containers[0].Image = "registry.example/app:" + rev
	return t
}

func bfHash(t *corev1.PodTemplateSpec) string { return hash.ComputePodTemplateHash(t, nil) }

func TestBackfireTwinTrace(t *testing.T) {
	in, out := os.Getenv("BACKFIRE_SCENARIOS"), os.Getenv("BACKFIRE_TRACE_OUT")
	if in == "" || out == "" {
		t.Skip("BACKFIRE_SCENARIOS and BACKFIRE_TRACE_OUT are set by backfire's hack/test-controller.sh")
	}
	data, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	var scenarios []bfScenario
	if err := json.Unmarshal(data, &scenarios); err != nil {
		t.Fatal(err)
	}
	var traces []bfTrace
	for _, sc := range scenarios {
		traces = append(traces, bfRun(t, sc))
	}
	b, err := json.MarshalIndent(traces, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// bfWorld is the cluster between reconciles: what the API server stores.
type bfWorld struct {
	rollout  *v1alpha1.Rollout
	template *v1alpha1.AnalysisTemplate
	runs     []*v1alpha1.AnalysisRun
	rss      []*appsv1.ReplicaSet
	services []*corev1.Service
	names    map[string]string // pod-template hash -> revision name
}

func bfRun(t *testing.T, sc bfScenario) bfTrace {
	base := time.Date(2026, 8, 21, 9, 0, 0, 0, time.UTC)
	now := base
	ro := newCanaryRollout("foo", int(sc.Replicas), nil, sc.Steps, nil, intstr.FromInt(1), intstr.FromInt(0))
	ro.Spec.Strategy.Canary.TrafficRouting = &v1alpha1.RolloutTrafficRouting{}
	ro.Spec.Strategy.Canary.CanaryService = "canary"
	ro.Spec.Strategy.Canary.StableService = "stable"
	ro.Spec.Strategy.Canary.MinPodsPerReplicaSet = sc.MinPodsPerReplicaSet
	ro.Spec.Strategy.Canary.DynamicStableScale = sc.DynamicStableScale
	ro.Spec.Strategy.Canary.AbortScaleDownDelaySeconds = sc.AbortScaleDownDelaySeconds
	if sc.RollbackWindow > 0 {
		ro.Spec.RollbackWindow = &v1alpha1.RollbackWindowSpec{Revisions: sc.RollbackWindow}
	}
	w := &bfWorld{names: map[string]string{}}
	if sc.Analysis {
		w.template = analysisTemplate("error-rate")
		ro.Spec.Strategy.Canary.Analysis = &v1alpha1.RolloutAnalysisBackground{
			RolloutAnalysis: v1alpha1.RolloutAnalysis{Templates: []v1alpha1.AnalysisTemplateRef{{TemplateName: "error-rate"}}},
		}
	}
	// The revisions exist in creation order, a minute apart; the last is stable.
	for i, rev := range sc.Revisions {
		r := ro.DeepCopy()
		r.Spec.Template = bfTemplate(ro, rev.Name)
		annotations.SetRolloutRevision(r, strconv.Itoa(i+1))
		rs := newReplicaSetWithStatus(r, int(rev.Spec), int(rev.Available))
		rs.CreationTimestamp = metav1.NewTime(base.Add(time.Duration(i-len(sc.Revisions)) * time.Minute))
		if rev.CreatedAt != nil {
			rs.CreationTimestamp = metav1.NewTime(base.Add(time.Duration(*rev.CreatedAt) * time.Second))
		}
		if rev.ScaleDownIn != nil {
			rs.Annotations[v1alpha1.DefaultReplicaSetScaleDownDeadlineAnnotationKey] = base.Add(time.Duration(*rev.ScaleDownIn) * time.Second).UTC().Format(time.RFC3339)
		}
		w.rss = append(w.rss, rs)
		w.names[bfHash(&r.Spec.Template)] = rev.Name
	}
	stable := sc.Revisions[len(sc.Revisions)-1]
	stableTmpl := bfTemplate(ro, stable.Name)
	stableHash := bfHash(&stableTmpl)
	// The Rollout was fully promoted to the stable revision; now its
	// template names the target.
	ro.Spec.Template = bfTemplate(ro, stable.Name)
	ro.Status.CurrentPodHash = stableHash
	ro.Status.StableRS = stableHash
	ro.Status.CurrentStepHash = conditions.ComputeStepHash(ro)
	ro.Status.CurrentStepIndex = bfPtr(int32(len(sc.Steps)))
	ro = updateCanaryRolloutStatus(ro, stableHash, stable.Available, stable.Available, stable.Available, false)
	// The conditions a fully promoted Rollout has, as the controller left
	// them at the end of its last update.
	ro.Status.ObservedGeneration = strconv.Itoa(int(ro.Generation))
	for _, c := range []*v1alpha1.RolloutCondition{
		conditions.NewRolloutCondition(v1alpha1.RolloutProgressing, corev1.ConditionTrue, conditions.NewRSAvailableReason, "done"),
		conditions.NewRolloutCondition(v1alpha1.RolloutHealthy, corev1.ConditionTrue, conditions.RolloutHealthyReason, conditions.RolloutHealthyMessage),
		conditions.NewRolloutCondition(v1alpha1.RolloutAvailable, corev1.ConditionTrue, conditions.AvailableReason, conditions.AvailableMessage),
		conditions.NewRolloutCondition(v1alpha1.RolloutCompleted, corev1.ConditionTrue, conditions.RolloutCompletedReason, conditions.RolloutCompletedReason),
	} {
		conditions.SetRolloutCondition(&ro.Status, *c)
	}
	annotations.SetRolloutRevision(ro, strconv.Itoa(len(sc.Revisions)))
	base0 := ro.DeepCopy()
	ro.Spec.Template = bfTemplate(ro, sc.Target)
	targetTmpl := ro.Spec.Template
	if _, ok := w.names[bfHash(&targetTmpl)]; !ok {
		w.names[bfHash(&targetTmpl)] = sc.Target
	}
	w.rollout = ro
	sel := map[string]string{v1alpha1.DefaultRolloutUniqueLabelKey: stableHash}
	w.services = []*corev1.Service{newService("canary", 80, sel, ro), newService("stable", 80, sel, ro)}

	tr := bfTrace{Scenario: sc.Name}
	for round := 1; round <= sc.Rounds; round++ {
		for _, a := range sc.Actions {
			if a.Round != round {
				continue
			}
			switch a.Do {
			case "abort":
				w.rollout.Status.Abort = true
			case "promoteFull":
				w.rollout.Status.PromoteFull = true
			case "setTemplate":
				// kubectl argo rollouts undo: the template of another revision.
				t := bfTemplate(base0, a.Revision)
				w.rollout.Spec.Template = t
				if _, ok := w.names[bfHash(&t)]; !ok {
					w.names[bfHash(&t)] = a.Revision
				}
			case "setReplicas":
				w.rollout.Spec.Replicas = bfPtr(a.Replicas)
			case "failAnalysis":
				cur := w.rollout.Status.Canary.CurrentBackgroundAnalysisRunStatus
				for _, ar := range w.runs {
					if cur != nil && ar.Name == cur.Name {
						ar.Status.Phase, ar.Status.Message = v1alpha1.AnalysisPhaseFailed, "failed by the scenario"
					}
				}
			default:
				t.Fatalf("%s: unknown action %q", sc.Name, a.Do)
			}
		}
		for _, set := range sc.Set {
			if set.Round != round {
				continue
			}
			for _, rs := range w.rss {
				if w.names[rs.Labels[v1alpha1.DefaultRolloutUniqueLabelKey]] == set.Revision {
					rs.Status.AvailableReplicas, rs.Status.ReadyReplicas = set.Available, set.Available
				}
			}
		}
		timeutil.SetNowTimeFunc(func() time.Time { return now })
		r := bfReconcile(t, w, now)
		r.Round = round
		tr.Rounds = append(tr.Rounds, r)
		now = now.Add(time.Duration(sc.SecondsPerRound) * time.Second)
		bfPlayReplicaSets(w, sc)
	}
	timeutil.SetNowTimeFunc(time.Now)
	return tr
}

// bfPlayReplicaSets is the ReplicaSet controller and the kubelet: pods are
// created at once, become available podsPerRound at a time, and go at once.
func bfPlayReplicaSets(w *bfWorld, sc bfScenario) {
	podsPerRound := sc.PodsPerRound
	for _, rs := range w.rss {
		spec := *rs.Spec.Replicas
		for _, rev := range sc.Revisions {
			if rev.Name == w.names[rs.Labels[v1alpha1.DefaultRolloutUniqueLabelKey]] {
				spec = max(0, spec-rev.Stuck)
			}
		}
		rs.Status.Replicas = *rs.Spec.Replicas
		a := rs.Status.AvailableReplicas
		switch {
		case a > spec:
			a = spec
		case a < spec:
			a = min(spec, a+podsPerRound)
		}
		rs.Status.AvailableReplicas, rs.Status.ReadyReplicas = a, a
		rs.Status.FullyLabeledReplicas = *rs.Spec.Replicas
		rs.Status.ObservedGeneration = rs.Generation
	}
}

func bfReconcile(t *testing.T, w *bfWorld, now time.Time) (out bfRound) {
	f := newFixture(t)
	defer f.Close()
	timeutil.SetNowTimeFunc(func() time.Time { return now })
	f.objects = append(f.objects, w.rollout)
	f.rolloutLister = append(f.rolloutLister, w.rollout)
	if w.template != nil {
		f.objects = append(f.objects, w.template)
		f.analysisTemplateLister = append(f.analysisTemplateLister, w.template)
	}
	for _, ar := range w.runs {
		f.objects = append(f.objects, ar)
		f.analysisRunLister = append(f.analysisRunLister, ar)
	}
	for _, rs := range w.rss {
		f.kubeobjects = append(f.kubeobjects, rs)
		f.replicaSetLister = append(f.replicaSetLister, rs)
	}
	for _, s := range w.services {
		f.kubeobjects = append(f.kubeobjects, s)
		f.serviceLister = append(f.serviceLister, s)
	}
	var weight *int32
	router := &mocks.TrafficRoutingReconciler{}
	router.On("Type").Return("fake")
	router.On("SetWeight", mock.Anything, mock.Anything).Return(func(desired int32, _ ...v1alpha1.WeightDestination) error {
		weight = bfPtr(desired)
		return nil
	})
	router.On("SetHeaderRoute", mock.Anything, mock.Anything).Return(nil)
	router.On("SetMirrorRoute", mock.Anything, mock.Anything).Return(nil)
	router.On("VerifyWeight", mock.Anything, mock.Anything).Return(bfPtr(true), nil)
	router.On("UpdateHash", mock.Anything, mock.Anything, mock.Anything).Return(nil)
	router.On("RemoveManagedRoutes", mock.Anything, mock.Anything).Return(nil)
	f.fakeTrafficRouting = router

	// The controller's default resync (controller.DefaultRolloutResyncPeriod,
	// 15 minutes): the scale-down deadlines compare what remains with it
	// (replicaset.go reconcileNewReplicaSet), so the fixture's 0 would scale
	// an aborted canary down before its abortScaleDownDelaySeconds.
	c, i, k8sI := f.newController(func() time.Duration { return 15 * time.Minute })
	// The API server stamps what the controller creates; the fake client
	// does not, and a ReplicaSet with no creation time looks older than
	// every other (a rollback, to isRollback and isRollbackWithinWindow).
	f.kubeclient.PrependReactor("create", "replicasets", func(action core.Action) (bool, runtime.Object, error) {
		if rs, ok := action.(core.CreateAction).GetObject().(*appsv1.ReplicaSet); ok && rs.CreationTimestamp.IsZero() {
			rs.CreationTimestamp = metav1.NewTime(now)
		}
		return false, nil, nil
	})
	stopCh := make(chan struct{})
	defer close(stopCh)
	i.Start(stopCh)
	k8sI.Start(stopCh)
	if !cache.WaitForCacheSync(stopCh, c.replicaSetSynced, c.rolloutsSynced) {
		t.Fatal("informers did not sync")
	}
	func() {
		defer func() {
			if p := recover(); p != nil {
				out.Error = fmt.Sprintf("panic: %v", p)
			}
		}()
		if err := c.syncHandler(context.Background(), "default/"+w.rollout.Name); err != nil {
			out.Error = err.Error()
		}
	}()
	out.Weight = weight

	// Read back what the controller wrote: the API server's state.
	ctx := context.Background()
	ro, err := f.client.ArgoprojV1alpha1().Rollouts("default").Get(ctx, w.rollout.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.rollout = ro
	runs, err := f.client.ArgoprojV1alpha1().AnalysisRuns("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.runs = w.runs[:0]
	for i := range runs.Items {
		w.runs = append(w.runs, runs.Items[i].DeepCopy())
	}
	list, err := f.kubeclient.AppsV1().ReplicaSets("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.rss = w.rss[:0]
	for i := range list.Items {
		rs := list.Items[i].DeepCopy()
		if rs.CreationTimestamp.IsZero() {
			// The API server stamps what the controller creates.
			rs.CreationTimestamp = metav1.NewTime(now)
		}
		w.rss = append(w.rss, rs)
	}
	sort.Slice(w.rss, func(a, b int) bool { return w.rss[a].CreationTimestamp.Before(&w.rss[b].CreationTimestamp) })
	w.services = w.services[:0]
	for _, name := range []string{"canary", "stable"} {
		s, err := f.kubeclient.CoreV1().Services("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w.services = append(w.services, s)
		if name == "canary" {
			out.CanaryService = w.names[s.Spec.Selector[v1alpha1.DefaultRolloutUniqueLabelKey]]
		}
	}
	targetHash := bfHash(&ro.Spec.Template)
	for _, rs := range w.rss {
		h := rs.Labels[v1alpha1.DefaultRolloutUniqueLabelKey]
		if h == targetHash {
			out.CanaryDesired = *rs.Spec.Replicas
		}
		if h == ro.Status.StableRS {
			out.StableDesired = *rs.Spec.Replicas
		}
	}
	out.StepIndex = ro.Status.CurrentStepIndex
	out.StableRS = w.names[ro.Status.StableRS]
	out.Aborted = ro.Status.Abort
	if c := conditions.GetRolloutCondition(ro.Status, v1alpha1.RolloutProgressing); c != nil {
		out.Progressing = c.Reason
	}
	if c := conditions.GetRolloutCondition(ro.Status, v1alpha1.RolloutPaused); c != nil {
		out.Paused = string(c.Status)
	}
	return out
}

func bfPtr[T any](v T) *T { return &v }
