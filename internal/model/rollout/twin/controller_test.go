package twin

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"backfire.dev/backfire/internal/model/rollout"
)

// The scenario matrix and the traces below are shared with the real
// controller: test/controller/twin_trace_test.go reads the same
// scenarios.json inside the Argo Rollouts module and writes the traces
// (hack/test-controller.sh; BACKFIRE_RECORD=1 refreshes the copies kept in
// testdata, which this test always replays).

type scenario struct {
	Name                 string                `json:"name"`
	Replicas             int32                 `json:"replicas"`
	Steps                []v1alpha1.CanaryStep `json:"steps"`
	MinPodsPerReplicaSet *int32                `json:"minPodsPerReplicaSet,omitempty"`
	RollbackWindow       int32                 `json:"rollbackWindow,omitempty"`
	Revisions            []struct {
		Name        string `json:"name"`
		Spec        int32  `json:"spec"`
		Available   int32  `json:"available"`
		Stuck       int32  `json:"stuck,omitempty"`
		CreatedAt   *int   `json:"createdAt,omitempty"`
		ScaleDownIn *int   `json:"scaleDownIn,omitempty"`
	} `json:"revisions"`
	Target          string `json:"target"`
	Rounds          int    `json:"rounds"`
	PodsPerRound    int32  `json:"podsPerRound"`
	SecondsPerRound int    `json:"secondsPerRound"`
	Actions         []struct {
		Round    int    `json:"round"`
		Do       string `json:"do"`
		Revision string `json:"revision,omitempty"`
		Replicas int32  `json:"replicas,omitempty"`
	} `json:"actions,omitempty"`
	Set []struct {
		Round     int    `json:"round"`
		Revision  string `json:"revision"`
		Available int32  `json:"available"`
	} `json:"set,omitempty"`
	Analysis                   bool   `json:"analysis,omitempty"`
	DynamicStableScale         bool   `json:"dynamicStableScale,omitempty"`
	AbortScaleDownDelaySeconds *int32 `json:"abortScaleDownDelaySeconds,omitempty"`
}

// round is one reconcile's decisions, as the controller's trace has them.
type round struct {
	Round         int    `json:"round"`
	Weight        *int32 `json:"weight"`
	CanaryDesired int32  `json:"canaryDesired"`
	StableDesired int32  `json:"stableDesired"`
	StepIndex     *int32 `json:"stepIndex"`
	StableRS      string `json:"stableRS"`
	CanaryService string `json:"canaryService"`
	Aborted       bool   `json:"aborted"`
	Error         string `json:"error,omitempty"`
	Progressing   string `json:"progressing,omitempty"`
	Paused        string `json:"paused,omitempty"`
}

type trace struct {
	Scenario string  `json:"scenario"`
	Rounds   []round `json:"rounds"`
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// replay runs a scenario through the twin the way the controller test runs
// it through the controller: the same Rollout, ReplicaSets and clock, and
// the same ReplicaSet controller between reconciles.
func replay(t *testing.T, sc scenario, version string) []round {
	ro := &v1alpha1.Rollout{}
	ro.Name = "foo"
	one, zero := intstr.FromInt(1), intstr.FromInt(0)
	ro.Spec.Strategy.Canary = &v1alpha1.CanaryStrategy{
		Steps: sc.Steps, MinPodsPerReplicaSet: sc.MinPodsPerReplicaSet,
		TrafficRouting: &v1alpha1.RolloutTrafficRouting{},
		CanaryService:  "canary", StableService: "stable",
		MaxSurge: &one, MaxUnavailable: &zero,
		DynamicStableScale: sc.DynamicStableScale, AbortScaleDownDelaySeconds: sc.AbortScaleDownDelaySeconds,
	}
	if sc.RollbackWindow > 0 {
		ro.Spec.RollbackWindow = &v1alpha1.RollbackWindowSpec{Revisions: sc.RollbackWindow}
	}
	if sc.Analysis {
		ro.Spec.Strategy.Canary.Analysis = &v1alpha1.RolloutAnalysisBackground{
			RolloutAnalysis: v1alpha1.RolloutAnalysis{Templates: []v1alpha1.AnalysisTemplateRef{{TemplateName: "error-rate"}}},
		}
	}
	c, err := NewController(ro, sc.Replicas, version)
	if err != nil {
		t.Fatal(err)
	}
	cl := &Cluster{Template: sc.Target}
	n := len(sc.Revisions)
	for i, rev := range sc.Revisions {
		rs := &ReplicaSet{
			Revision: rev.Name, Created: time.Duration(i-n) * time.Minute,
			Replicas: rev.Spec, Pods: rev.Spec, Available: rev.Available,
		}
		if rev.CreatedAt != nil {
			rs.Created = time.Duration(*rev.CreatedAt) * time.Second
		}
		if rev.ScaleDownIn != nil {
			at := time.Duration(*rev.ScaleDownIn) * time.Second
			rs.ScaleDownAt = &at
		}
		cl.ReplicaSets = append(cl.ReplicaSets, rs)
	}
	last := sc.Revisions[n-1]
	stable := last.Name
	// As the controller's fixture writes it (updateCanaryRolloutStatus):
	// every count is the stable's available pods.
	cl.Status = Promoted(stable, int32(len(sc.Steps)), Counts{Replicas: last.Available, Updated: last.Available, Available: last.Available})
	cl.CanarySelector, cl.StableSelector = stable, stable

	var out []round
	now := time.Duration(0)
	for i := 1; i <= sc.Rounds; i++ {
		for _, a := range sc.Actions {
			if a.Round == i {
				switch a.Do {
				case "abort":
					cl.Status.Abort = true
				case "promoteFull":
					cl.Status.PromoteFull = true
				case "setTemplate":
					cl.Template = a.Revision
				case "setReplicas":
					// An autoscaler or kubectl scale: spec.replicas only.
					c.Replicas = a.Replicas
				case "failAnalysis":
					if ar := cl.Status.Background; ar != nil && ar.Phase == AnalysisRunning {
						ar.Phase = AnalysisFailed
					}
				default:
					t.Fatalf("%s: unknown action %q", sc.Name, a.Do)
				}
			}
		}
		for _, set := range sc.Set {
			if set.Round == i {
				cl.ReplicaSet(set.Revision).Available = set.Available
			}
		}
		d := c.Reconcile(cl, now)
		r := round{Round: i, Weight: d.Weight, StepIndex: cl.Status.StepIndex,
			StableRS: cl.Status.StableRevision, CanaryService: cl.CanarySelector, Aborted: cl.Status.Abort,
			Progressing: cl.Status.Conditions.Progressing, Paused: cl.Status.Conditions.Paused}
		if d.Panic != "" {
			r.Error = "panic: " + d.Panic
		}
		if rs := cl.ReplicaSet(cl.Template); rs != nil {
			r.CanaryDesired = rs.Replicas
		}
		if rs := cl.ReplicaSet(cl.Status.StableRevision); rs != nil {
			r.StableDesired = rs.Replicas
		}
		if r.StepIndex != nil {
			v := *r.StepIndex
			r.StepIndex = &v
		}
		out = append(out, r)
		now += time.Duration(sc.SecondsPerRound) * time.Second
		for _, rs := range cl.ReplicaSets {
			rs.Pods = rs.Replicas
			up := rs.Replicas
			for _, rev := range sc.Revisions {
				if rev.Name == rs.Revision {
					up = max(0, up-rev.Stuck)
				}
			}
			switch {
			case rs.Available > up:
				rs.Available = up
			case rs.Available < up:
				rs.Available = min(up, rs.Available+sc.PodsPerRound)
			}
		}
	}
	return out
}

func show(p *int32) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

func (r round) String() string {
	s := fmt.Sprintf("weight %s canary %d stable %d index %s stableRS %s canarySvc %s aborted %v progressing %s paused %s",
		show(r.Weight), r.CanaryDesired, r.StableDesired, show(r.StepIndex), r.StableRS, r.CanaryService, r.Aborted, r.Progressing, r.Paused)
	if r.Error != "" {
		s += " error " + r.Error
	}
	return s
}

// same compares what the differential test requires to agree: the weight
// written, the desired canary and stable replicas and the step index, plus
// the stable revision, the canary Service and the abort flag, and, for the
// releases that read them back (v1.10.0 and later), the Progressing
// condition's reason and the Paused condition. An error the controller
// returned is compared only as "there was a panic".
func same(a, b round, version string) bool {
	conditions := !EarlyReturnOnWrite.Contains(version) || (a.Progressing == b.Progressing && a.Paused == b.Paused)
	return show(a.Weight) == show(b.Weight) && a.CanaryDesired == b.CanaryDesired &&
		a.StableDesired == b.StableDesired && show(a.StepIndex) == show(b.StepIndex) &&
		a.StableRS == b.StableRS && a.CanaryService == b.CanaryService && a.Aborted == b.Aborted &&
		strings.HasPrefix(a.Error, "panic") == strings.HasPrefix(b.Error, "panic") && conditions
}

// releases are the controller releases the twin is checked against, and
// master at rollout.Master (traces/master.json).
var releases = []string{"v1.8.2", "v1.9.0", "v1.10.2", "master"}

func compareTraces(t *testing.T, dir string, versions []string) {
	var scenarios []scenario
	readJSON(t, "testdata/controller/scenarios.json", &scenarios)
	if len(versions) == 0 {
		t.Fatalf("no controller traces in %s", dir)
	}
	for _, version := range versions {
		var traces []trace
		readJSON(t, filepath.Join(dir, version+".json"), &traces)
		if len(traces) != len(scenarios) {
			t.Fatalf("%s: %d traces for %d scenarios", version, len(traces), len(scenarios))
		}
		modelled, err := rollout.ParseVersion(version)
		if err != nil {
			t.Fatal(err)
		}
		for i, sc := range scenarios {
			t.Run(version+"/"+sc.Name, func(t *testing.T) {
				want := traces[i]
				if want.Scenario != sc.Name {
					t.Fatalf("trace %d is %q, want %q", i, want.Scenario, sc.Name)
				}
				got := replay(t, sc, modelled)
				if len(got) != len(want.Rounds) {
					t.Fatalf("%d rounds, controller %d", len(got), len(want.Rounds))
				}
				for k := range got {
					if !same(got[k], want.Rounds[k], modelled) {
						t.Errorf("round %d:\n  twin       %v\n  controller %v", k+1, got[k], want.Rounds[k])
					}
				}
			})
		}
	}
}

// TestTwinMatchesRecordedController replays the matrix against the traces
// the real controller wrote, as kept in testdata.
func TestTwinMatchesRecordedController(t *testing.T) {
	compareTraces(t, "testdata/controller/traces", releases)
}

// TestTwinMatchesController replays it against traces just written by
// hack/test-controller.sh.
func TestTwinMatchesController(t *testing.T) {
	dir := os.Getenv("BACKFIRE_CONTROLLER_TRACES")
	if dir == "" {
		t.Skip("set by hack/test-controller.sh after running the real controller")
	}
	// The script may run a subset of the releases (BACKFIRE_CONTROLLER_RELEASES).
	var versions []string
	for _, v := range releases {
		if _, err := os.Stat(filepath.Join(dir, v+".json")); err == nil {
			versions = append(versions, v)
		}
	}
	compareTraces(t, dir, versions)
}
