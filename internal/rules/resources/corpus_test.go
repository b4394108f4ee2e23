package resources_test

import (
	"backfire.dev/backfire/internal/catalog"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/model/cgroup"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/ruletest"
	"backfire.dev/backfire/internal/testutil"
)

// plainYAML lists the manifests under dir, leaving out kustomization
// files: overlays are not rendered yet, so their resources are scanned as
// written.
func plainYAML(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".yaml") && d.Name() != "kustomization.yaml" {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The public Argo Rollouts examples are stateless demo apps: this family
// must stay silent on them. Why, rule by rule:
//   - BF201: most pods there are BestEffort (no resources at all), but
//     none runs a database-like image (argoproj/rollouts-demo, nginx,
//     hashicorp/http-echo, argoproj/load-tester, alpine) and none is a
//     StatefulSet or mounts a claim;
//   - BF202: no container sets a cpu limit (the few resources blocks set
//     requests of 5m cpu and 16-32Mi memory; the helm-blue-green chart's
//     commented-out limits are not rendered);
//   - BF203: off by default, and no memory limit anywhere;
//   - BF301: no nodeSelector or node affinity anywhere.
func TestCorpusArgoRolloutsExamples(t *testing.T) {
	paths := append([]string{testutil.Corpus(t, "argo-rollouts-examples")},
		plainYAML(t, testutil.Corpus(t, "rollouts-demo"))...)
	res := ruletest.Scan(t, catalog.Family("resources"), nil, paths...)
	if len(res.Findings) != 0 {
		for _, f := range res.Findings {
			t.Errorf("unexpected %s on %s: %s", f.Rule, f.Object, f.Message)
		}
	}
	// The silence must come from the rules declining, not from nothing
	// being read: the BestEffort Rollouts are there.
	bestEffort := 0
	for _, o := range res.Objects {
		if t := o.PodTemplate(); t != nil && cgroup.QOSClass(t.Spec) == corev1.PodQOSBestEffort {
			bestEffort++
		}
	}
	if bestEffort < 10 {
		t.Errorf("only %d BestEffort pod templates read from the corpus (of %d objects); the corpus was not scanned", bestEffort, len(res.Objects))
	}
}

// The repository's examples: seed 003's registry database (BestEffort,
// pinned to the control plane), seed 000's front API (4 gunicorn workers
// under a 900m cpu limit), and a healthy web Deployment.
func TestExamples(t *testing.T) {
	res := ruletest.Scan(t, catalog.Family("resources"), nil, filepath.Join(testutil.RepoRoot(t), "examples"))
	if len(res.Errors) > 0 {
		t.Fatalf("examples do not load: %v", res.Errors)
	}
	type key struct{ rule, object, container, path string }
	want := map[key]finding.Severity{
		{"BF201", "StatefulSet registry/registry-database", "database", "spec.template.spec.containers[0].resources"}:                                              finding.Error,
		{"BF301", "StatefulSet registry/registry-database", "database", "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"}: finding.Warning,
		{"BF202", "Rollout order/order-front-api", "api", "spec.template.spec.containers[0].resources.limits.cpu"}:                                                 finding.Info,
	}
	got := map[key]finding.Finding{}
	for _, f := range res.Findings {
		got[key{f.Rule, f.Object.String(), f.Container, f.Path}] = f
	}
	for k, sev := range want {
		f, ok := got[k]
		if !ok {
			t.Errorf("missing %v", k)
			continue
		}
		if f.Severity != sev {
			t.Errorf("%v: severity %s, want %s", k, f.Severity, sev)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected %v: %s", k, got[k].Message)
		}
	}
	for _, f := range res.Findings {
		if strings.Contains(f.Object.Name, "catalog-web") {
			t.Errorf("healthy-web reported: %s %s", f.Rule, f.Message)
		}
		ruletest.CheckFix(t, ruleByID(f.Rule), res, f)
	}

	bf201 := got[key{"BF201", "StatefulSet registry/registry-database", "database", "spec.template.spec.containers[0].resources"}]
	wantEv := map[string]any{"qosClass": "BestEffort", "cpuWeightOld": uint64(1), "cpuWeightNew": uint64(1),
		"neighbourWeightOld": uint64(39), "neighbourWeightNew": uint64(100), "oomScoreAdj": 1000}
	for k, v := range wantEv {
		if bf201.Evidence[k] != v {
			t.Errorf("BF201 evidence %s = %v (%T), want %v", k, bf201.Evidence[k], bf201.Evidence[k], v)
		}
	}
	if c, _ := bf201.Evidence["classification"].(string); !strings.Contains(c, "PostgreSQL") || !strings.Contains(c, "goharbor/harbor-db") {
		t.Errorf("BF201 classification %q does not name the server and its evidence", c)
	}
	if !strings.Contains(bf201.Message, "cpu.weight 1 against 100") || !strings.Contains(strings.Join(bf201.Mechanism, "\n"), "1 s") {
		t.Errorf("BF201 message or mechanism lacks the numbers: %s / %v", bf201.Message, bf201.Mechanism)
	}

	bf202 := got[key{"BF202", "Rollout order/order-front-api", "api", "spec.template.spec.containers[0].resources.limits.cpu"}]
	if bf202.Evidence["workers"] != 4 || bf202.Evidence["cpuLimitMilli"] != int64(900) || bf202.Evidence["quotaMs"] != 90.0 || bf202.Evidence["stallMs"] != 77.5 {
		t.Errorf("BF202 evidence: %v", bf202.Evidence)
	}
	if !strings.Contains(bf202.Message, "--workers 4") || !strings.Contains(strings.Join(bf202.Mechanism, "\n"), "deliberately disagrees") {
		t.Errorf("BF202 message or mechanism: %s / %v", bf202.Message, bf202.Mechanism)
	}
}

func ruleByID(id string) *rules.Rule {
	i := slices.IndexFunc(catalog.Family("resources"), func(r *rules.Rule) bool { return r.ID == id })
	return catalog.Family("resources")[i]
}

// kubernetes/examples ran its Redis as a ReplicationController with a cpu
// limit of 0.1: a workload like a ReplicaSet, so BF202 reports the limit
// on the database (it was silently skipped while RCs were not modelled).
// The pod sets a limit, so it is not BestEffort (no BF201), and the claim-
// less volume does not make it stateful.
func TestCorpusKubernetesExamplesRedisRC(t *testing.T) {
	res := ruletest.Scan(t, catalog.Family("resources"), nil, testutil.Corpus(t, "kubernetes-examples", "staging", "storage", "redis", "redis-controller.yaml"))
	if len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	if len(res.Findings) != 1 {
		t.Fatalf("%d findings, want BF202 only: %v", len(res.Findings), res.Findings)
	}
	f := res.Findings[0]
	if f.Rule != "BF202" || f.Object.Kind != "ReplicationController" || f.Container != "redis" || f.Severity != finding.Warning || f.Line != 22 {
		t.Errorf("got %s %s/%s container %s %s at line %d, want BF202 warning on the redis container at line 22 (limits.cpu)", f.Rule, f.Object.Kind, f.Object.Name, f.Container, f.Severity, f.Line)
	}
}
