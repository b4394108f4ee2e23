package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/cluster/clustertest"
)

// shopRollout is a small Rollout with a rollback window of 2 revisions:
// four replicas, steps [25, pause 1m, 100].
const shopRollout = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: shop
spec:
  replicas: 4
  selector:
    matchLabels: {app: shop}
  rollbackWindow: {revisions: %d}
  template:
    metadata:
      labels: {app: shop}
    spec:
      containers:
      - name: app
        image: registry.example/app:v3
        readinessProbe:
          httpGet: {path: /ready, port: 8080}
          periodSeconds: 5
  strategy:
    canary:
      canaryService: shop-canary
      stableService: shop-stable
      trafficRouting:
        nginx: {stableIngress: shop}
      steps:
      - setWeight: 25
      - pause: {duration: 1m}
      - setWeight: 100
`

// promotedTo is the status the controller leaves on a Rollout fully
// promoted to hash.
func promotedTo(hash string) map[string]any {
	return map[string]any{
		"currentPodHash": hash, "stableRS": hash, "currentStepIndex": 3,
		"replicas": 4, "updatedReplicas": 4, "availableReplicas": 4, "readyReplicas": 4,
		"canary": map[string]any{"weights": map[string]any{
			"canary": map[string]any{"weight": 0, "podTemplateHash": hash, "serviceName": "shop-canary"},
			"stable": map[string]any{"weight": 100, "podTemplateHash": hash, "serviceName": "shop-stable"}}},
		"conditions": []any{
			map[string]any{"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable", "message": "done", "lastUpdateTime": "2026-08-21T09:00:00Z", "lastTransitionTime": "2026-08-21T09:00:00Z"},
			map[string]any{"type": "Healthy", "status": "True", "reason": "RolloutHealthy", "message": "healthy", "lastUpdateTime": "2026-08-21T09:00:00Z", "lastTransitionTime": "2026-08-21T09:00:00Z"},
		},
	}
}

type simDoc struct {
	Notes    []string `json:"notes"`
	Canary   string   `json:"canaryRevision"`
	Broken   string   `json:"brokenRevision"`
	Timeline []struct {
		T           float64 `json:"t"`
		StepIndex   *int    `json:"stepIndex"`
		Weight      int     `json:"weight"`
		CanaryReady int     `json:"canaryReady"`
	} `json:"timeline"`
	Totals struct {
		Outcome string `json:"outcome"`
	} `json:"totals"`
}

// TestSimulateRolloutCluster plays kubectl argo rollouts undo from the
// state a real API server holds: creation timestamps it stamped (to the
// second), ReplicaSets scaled to zero and an Experiment's, a target that
// revisionHistoryLimit deleted.
func TestSimulateRolloutCluster(t *testing.T) {
	env := clustertest.Shared(t)
	t.Cleanup(clustertest.StopShared)
	kc := kubeconfig(t, env.Config, env.Config)
	run := func(t *testing.T, ns string, extra ...string) simDoc {
		t.Helper()
		args := append([]string{"simulate", "rollout", "--cluster", "--kubeconfig", kc, "-n", ns, "shop",
			"--pod-capacity", "15", "--rps", "40", "--pod-start", "20s..30s", "--seconds", "150", "--format", "json"}, extra...)
		out, stderr, code := execute(t, "", args...)
		if code != exitClean {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var doc simDoc
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		return doc
	}
	note := func(t *testing.T, doc simDoc, want ...string) {
		t.Helper()
		all := strings.Join(doc.Notes, "\n")
		for _, w := range want {
			if !strings.Contains(all, w) {
				t.Errorf("notes lack %q:\n%s", w, all)
			}
		}
	}
	jumped := func(doc simDoc) bool {
		for _, r := range doc.Timeline {
			if r.Weight == 100 && r.CanaryReady < 4 {
				return true
			}
		}
		return false
	}
	ranSteps := func(doc simDoc) bool {
		for _, r := range doc.Timeline {
			if r.Weight == 25 {
				return true
			}
		}
		return false
	}
	history := func(t *testing.T, window int, revs ...clustertest.Revision) string {
		ns := env.FreshNamespace(t, "undo")
		env.RolloutHistory(t, ns, []byte(fmt.Sprintf(shopRollout, window)), revs, promotedTo(revs[len(revs)-1].Hash))
		return ns
	}

	t.Run("within the window, the weight jumps", func(t *testing.T) {
		ns := history(t, 2,
			clustertest.Revision{Number: 1, Hash: "aaa"},
			clustertest.Revision{Number: 2, Hash: "bbb"},
			clustertest.Revision{Number: 3, Hash: "ccc", Replicas: 4, Ready: 4})
		doc := run(t, ns)
		note(t, doc, "rollback window 2: 0 ReplicaSet(s) created between revision 2 (bbb) and the stable revision 3 (ccc)", "within the window")
		if doc.Canary != "bbb" || doc.Broken != "ccc" || !jumped(doc) {
			t.Errorf("undo to %s from %s: jumped %v", doc.Canary, doc.Broken, jumped(doc))
		}
		// Further back: revision 2, scaled to zero, counts; the
		// Experiment's ReplicaSet does not.
		doc = run(t, ns, "--to-revision", "1")
		note(t, doc, "1 ReplicaSet(s) created between revision 1 (aaa) and the stable revision 3 (ccc) (revision 2 (bbb), scaled to zero or not)", "within the window")
		if !jumped(doc) {
			t.Error("--to-revision 1 within the window of 2 did not jump")
		}
	})

	t.Run("an Experiment's ReplicaSet is not a revision", func(t *testing.T) {
		ns := history(t, 1,
			clustertest.Revision{Number: 1, Hash: "aaa"},
			clustertest.Revision{Number: 2, Hash: "exp", Experiment: true},
			clustertest.Revision{Number: 3, Hash: "ccc", Replicas: 4, Ready: 4})
		doc := run(t, ns, "--to-revision", "1")
		note(t, doc, "0 ReplicaSet(s) created between revision 1 (aaa)", "not counted, an Experiment's: revision 2 (exp)", "within the window")
		if !jumped(doc) {
			t.Error("the Experiment's ReplicaSet was counted: no jump")
		}
	})

	t.Run("the target and the stable in the same second: the gate fails", func(t *testing.T) {
		ns := history(t, 2,
			clustertest.Revision{Number: 1, Hash: "aaa"},
			clustertest.Revision{Number: 2, Hash: "bbb"},
			clustertest.Revision{Number: 3, Hash: "ccc", Replicas: 4, Ready: 4, SameSecondAsBefore: true})
		doc := run(t, ns)
		note(t, doc, "revision 2 (bbb) and the stable revision 3 (ccc) were created in the same second: Before is false both ways")
		if jumped(doc) || !ranSteps(doc) {
			t.Errorf("the undo should run the steps: jumped %v, weight 25 seen %v", jumped(doc), ranSteps(doc))
		}
	})

	t.Run("a ReplicaSet in the same second as the target: the window widens", func(t *testing.T) {
		ns := history(t, 1,
			clustertest.Revision{Number: 1, Hash: "aaa"},
			clustertest.Revision{Number: 2, Hash: "bbb", SameSecondAsBefore: true},
			clustertest.Revision{Number: 3, Hash: "ccc", Replicas: 4, Ready: 4})
		doc := run(t, ns, "--to-revision", "1")
		note(t, doc, "0 ReplicaSet(s) created between revision 1 (aaa)", "not counted, created in the same second as one of them (Before is false): revision 2 (bbb)", "within the window")
		if !jumped(doc) {
			t.Error("revision 2 was counted: no jump")
		}
	})

	t.Run("a target revisionHistoryLimit deleted comes back as a new ReplicaSet", func(t *testing.T) {
		ns := history(t, 2,
			clustertest.Revision{Number: 3, Hash: "ccc"},
			clustertest.Revision{Number: 4, Hash: "ddd", Replicas: 4, Ready: 4})
		doc := run(t, ns, "--to-revision", "2")
		note(t, doc, "revision 2 has no ReplicaSet any more (revisionHistoryLimit 10 keeps only the newest old ones)", "is created by the undo, after the stable")
		if doc.Canary != "revision-2" || jumped(doc) || !ranSteps(doc) {
			t.Errorf("undo to %s: jumped %v, ran the steps %v", doc.Canary, jumped(doc), ranSteps(doc))
		}
	})
}
