package flagger_test

import (
	"testing"
	"time"

	flaggerv1 "github.com/fluxcd/flagger/pkg/apis/flagger/v1beta1"

	"backfire.dev/backfire/internal/catalog"
	model "backfire.dev/backfire/internal/model/flagger"
	"backfire.dev/backfire/internal/ruletest"
	"backfire.dev/backfire/internal/scan"
	"backfire.dev/backfire/internal/simulate/rolloutsim"
)

// BF412 against the twin: simulate rollout's rollback of a Canary (the
// canary breaks at its highest weight; the ticks that wait for its new
// pods hold lower weights longer) leaves the primary some pods when all
// traffic comes back; BF412's figure for the same load must not be milder
// (more pods) than any run's. Not the gitops-istio backend: its HPA scales
// another Deployment, so the twin keeps its canary at one pod, which is
// overloaded long before the canary's highest weight and the primary never
// shrinks (the finding says so; TestCanaryWhoseAutoscalerScalesAnother).
func TestBF412NotMilderThanTheTwin(t *testing.T) {
	for _, c := range []struct{ file, canary string }{
		{"flagger-istio-canary-15s.yaml", "podinfo"},
	} {
		t.Run(c.canary, func(t *testing.T) { notMilder(t, "testdata/BF412/positive/"+c.file, c.canary) })
	}
}

func notMilder(t *testing.T, file, name string) {
	res, err := scan.Run(scan.Options{Paths: []string{file}, Catalog: catalog.Family("flagger"), KeepObjects: true})
	if err != nil {
		t.Fatal(err)
	}
	fs := ruletest.Of(res, "BF412")
	if len(fs) != 1 {
		t.Fatalf("%d BF412 findings, want 1", len(fs))
	}
	ev := fs[0].Evidence
	keeps, ok1 := ev["primaryPodsAtPeak"].(int32)
	full, ok2 := ev["maxReplicas"].(int32)
	if !ok1 || !ok2 || full < 2 {
		t.Fatalf("evidence primaryPodsAtPeak %v, maxReplicas %v", ev["primaryPodsAtPeak"], ev["maxReplicas"])
	}
	share, _ := ev["sizedForPercent"].(int)
	minR, _ := ev["minReplicas"].(int32)
	if model.PrimaryPods(full, minR, full, share) != keeps {
		t.Fatalf("evidence primaryPodsAtPeak %d is not PrimaryPods(%d, %d, %d, %d%%)", keeps, full, minR, full, share)
	}
	m, err := rolloutsim.CanaryFromObjects(res.Objects, name)
	if err != nil {
		t.Fatal(err)
	}
	shrunk := 0
	for _, load := range []int32{full, 2 * full} {
		for _, start := range []time.Duration{5 * time.Second, 20 * time.Second, 40 * time.Second} {
			// BF412's figure at this load: the primary's autoscaler keeps
			// sizedForPercent of it (its max raised to the load, as
			// simulate rollout raises it to --replicas).
			bf412 := model.PrimaryPods(load, minR, max(full, load), share)
			a := *m.Autoscaler
			a.Max = max(a.Max, load)
			tl, err := rolloutsim.RunCanary(rolloutsim.CanaryInput{
				Canary: m.Canary, Version: "v1.44.0", Scenario: rolloutsim.Rollback,
				Replicas: load, CanaryReplicas: m.CanaryReplicas, Autoscaler: &a, Probe: m.Probe,
				Checks: rolloutsim.ChecksOf(m.Canary, nil), ProgressDeadline: m.Deadline,
				RPS: 100, PodCapacity: 200 / float64(load), PodStart: [2]time.Duration{start, start},
				BrokenErrorRate: 0.5, BreakAt: -1, Duration: 20 * time.Minute, Seed: 1,
			})
			if err != nil {
				t.Fatal(err)
			}
			sim := int32(-1)
			for _, row := range tl.Timeline {
				if row.Analysis == string(flaggerv1.CanaryPhaseFailed) {
					sim = row.StableReady // the pods there when the traffic comes back
					break
				}
			}
			if sim < 0 {
				t.Fatalf("load %d, pod start %v: no rollback: outcome %q", load, start, tl.Totals.Outcome)
			}
			if sim < load {
				shrunk++
			}
			if bf412 > sim {
				t.Errorf("load %d pods, pod start %v: BF412 says the primary keeps %d, milder than the simulated %d", load, start, bf412, sim)
			}
			t.Logf("load %d pods, pod start %v: at the rollback BF412 %d, simulated %d", load, start, bf412, sim)
		}
	}
	if shrunk == 0 {
		t.Fatal("no run shrank the primary: the comparison does not exercise the mechanism")
	}
}
