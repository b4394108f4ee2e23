package rolloutsim

import (
	"testing"
	"time"

	"backfire.dev/backfire/internal/model/rollout"
)

// TestAbortWithDynamicStableScale plays the abort scenario on BF404's
// fixtures, per release, and requires where the weight and the two
// ReplicaSets end as the real controller's traces have them
// (internal/model/rollout/twin/testdata/controller/traces): #4841 parks the
// weight from v1.9.0 on master too; #4898 from v1.9.0 to v1.10.2, not on
// master (#4900); v1.8.2 finishes both.
func TestAbortWithDynamicStableScale(t *testing.T) {
	type end struct{ weight, canary, stable int32 }
	for _, c := range []struct {
		file, name string
		at         time.Duration
		want       map[string]end
	}{
		{"../../rules/rollouts/testdata/BF404/positive/min-pods-parks-weight.yaml", "payments", 3 * time.Minute, map[string]end{
			"v1.8.2": {0, 0, 10}, "v1.9.0": {5, 3, 10}, "v1.10.2": {5, 3, 10}, rollout.Master: {5, 3, 10},
		}},
		{"../../rules/rollouts/testdata/BF404/positive/explicit-abort-delay.yaml", "search", 8 * time.Minute, map[string]end{
			"v1.8.2": {0, 0, 10}, "v1.9.0": {20, 5, 8}, "v1.10.2": {20, 5, 8}, rollout.Master: {0, 0, 10},
		}},
	} {
		m, err := FromObjects(load(t, c.file), c.name)
		if err != nil {
			t.Fatal(err)
		}
		for version, want := range c.want {
			r, err := Run(Input{Rollout: m.Rollout, Replicas: m.Replicas, Version: version, Scenario: Abort, Probe: m.Probe,
				RPS: 100, PodCapacity: 50, PodStart: [2]time.Duration{20 * time.Second, 30 * time.Second},
				ActionAt: c.at, Duration: c.at + 5*time.Minute, Seed: 1})
			if err != nil {
				t.Fatalf("%s %s: %v", c.name, version, err)
			}
			last := r.Timeline[len(r.Timeline)-1]
			if got := (end{last.Weight, last.CanaryDesired, last.StableDesired}); got != want || r.Totals.Outcome != "aborted" {
				t.Errorf("%s %s: %s, ends at weight %d, canary %d, stable %d; want aborted at %d, %d, %d",
					c.name, version, r.Totals.Outcome, got.weight, got.canary, got.stable, want.weight, want.canary, want.stable)
			}
		}
	}
}
