package rollout

import (
	"testing"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
)

func dynamicRollout(steps ...int32) *v1alpha1.Rollout {
	ro := &v1alpha1.Rollout{}
	ro.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{DynamicStableScale: true, TrafficRouting: &v1alpha1.RolloutTrafficRouting{}}
	for _, w := range steps {
		ro.Spec.Strategy.Canary.Steps = append(ro.Spec.Strategy.Canary.Steps, set(w), v1alpha1.CanaryStep{Pause: &v1alpha1.RolloutPause{}})
	}
	return ro
}

// The numbers are the real controller's in the differential scenarios
// (internal/model/rollout/twin/testdata/controller): dynamic-abort-min-pods,
// dynamic-abort-explicit-delay, dynamic-abort-scale-up.
func TestAbortBugs(t *testing.T) {
	// #4841: 10 replicas, minPods 3, steps [5, 50, 100]: parks at 5 on 3 pods.
	ro := dynamicRollout(5, 50, 100)
	ro.Spec.Strategy.Canary.MinPodsPerReplicaSet = ptr(int32(3))
	if s, ok := ParkedByMinPods(ro, 10, "v1.10.2"); !ok || s.Weight != 5 || s.CanaryPods != 3 || s.StablePods != 10 || s.AbortedAt != 50 {
		t.Errorf("#4841 v1.10.2: %+v %v", s, ok)
	}
	if _, ok := ParkedByMinPods(ro, 10, "v1.8.2"); ok {
		t.Error("#4841 is not in v1.8.2")
	}
	// A first setWeight whose pods reach the floor: 30% of 10 is 3 pods.
	ro.Spec.Strategy.Canary.Steps[0] = set(30)
	if s, ok := ParkedByMinPods(ro, 10, "v1.10.2"); ok {
		t.Errorf("setWeight 30 gives the floor's 3 pods: %+v", s)
	}

	// #4898: 10 replicas, steps [20, 50], abortScaleDownDelaySeconds 30:
	// weight 20, canary 5, stable 8.
	ro = dynamicRollout(20, 50)
	ro.Spec.Strategy.Canary.AbortScaleDownDelaySeconds = ptr(int32(30))
	if s, ok := DelayDeadlock(ro, 10, "v1.9.0"); !ok || s.Weight != 20 || s.CanaryPods != 5 || s.StablePods != 8 {
		t.Errorf("#4898 v1.9.0: %+v %v", s, ok)
	}
	if _, ok := DelayDeadlock(ro, 10, "v1.8.2"); ok {
		t.Error("#4898 is not in v1.8.2")
	}
	// Master 9f8d111d8 has #4900 (traces/master.json: weight 0).
	master, err := ParseVersion("master")
	if err != nil || master != Master {
		t.Fatalf("ParseVersion(master) = %q, %v", master, err)
	}
	if _, ok := DelayDeadlock(ro, 10, master); ok {
		t.Error("#4898 is fixed on master by #4900")
	}
	if _, ok := DelayDeadlock(ro, 10, "v1.10.2"); !ok {
		t.Error("#4898 is in v1.10.2")
	}
	if _, ok := RescaledAfterAbort(ro, 10, "v1.10.2"); ok {
		t.Error("an explicit delay scales the aborted canary to 0 for good")
	}

	// #4973: 20 replicas, steps [20, 50]: the stable 5 short scales the
	// aborted canary to 4 (20% of 20).
	ro = dynamicRollout(20, 50)
	if r, ok := RescaledAfterAbort(ro, 20, "v1.10.2"); !ok || r.Short != 5 || r.CanaryPods != 4 || r.Weight != 20 {
		t.Errorf("#4973: %+v %v", r, ok)
	}
	if _, ok := RescaledAfterAbort(ro, 20, "v1.8.2"); ok {
		t.Error("#4973 is not in v1.8.2")
	}
}
