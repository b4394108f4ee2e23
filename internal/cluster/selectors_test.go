package cluster

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"backfire.dev/backfire/internal/cluster/clustertest"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/scan"
	"backfire.dev/backfire/internal/testutil"
)

// The rules that read what selects pods (disruption budgets, network
// policies, DestinationRules, headless Services) and what a sync applies
// find on live objects what they find in the files: one positive fixture
// of each, moved into a namespace of its own, applied to the API server,
// read back and scanned.
func TestLiveScanSeesWhatTheSelectorRulesRead(t *testing.T) {
	env := clustertest.Shared(t)
	ns := env.FreshNamespace(t, "selects")
	root := testutil.RepoRoot(t)
	fixtures := map[string]string{
		"BF302": "disruption/testdata/BF302/positive/helm-stable-rabbitmq-headless.yaml",
		"BF303": "disruption/testdata/BF303/positive/gardener-dns-overlapping-budgets.yaml",
		"BF304": "network/testdata/BF304/positive/kubernetes-docs-networkpolicy.yaml",
		"BF701": "network/testdata/BF701/positive/istio-docs-circuit-breaking-httpbin.yaml",
		"BF801": "controllers/testdata/BF801/positive/rollout-tutorial-hpa.yaml",
		"BF802": "controllers/testdata/BF802/positive/bitnami-matomo-archive.yaml",
		"BF902": "supply/testdata/BF902/positive/minikube-registry-addon-handbook-pod.yaml",
	}
	dir := t.TempDir()
	for _, rule := range slices.Sorted(maps.Keys(fixtures)) {
		objs := moved(t, filepath.Join(root, "internal", "rules", filepath.FromSlash(fixtures[rule])), ns)
		var docs []string
		for _, u := range objs {
			env.Create(t, u)
			b, err := yaml.Marshal(u.Object)
			if err != nil {
				t.Fatal(err)
			}
			docs = append(docs, string(b))
		}
		if err := os.WriteFile(filepath.Join(dir, rule+".yaml"), []byte(strings.Join(docs, "---\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	live := read(t, Options{Config: env.Config, Namespace: ns})
	if len(live.Errors) > 0 {
		t.Fatalf("errors %v", live.Errors)
	}
	fromCluster := scanFiles(t, scan.Options{Extra: live.Files})
	fromFiles := scanFiles(t, scan.Options{Paths: []string{dir}})
	of := func(res *scan.Result) map[string]finding.Finding {
		out := map[string]finding.Finding{}
		for _, f := range res.Findings {
			if _, ok := fixtures[f.Rule]; ok && f.Object.Namespace == ns {
				out[key(f)] = f
			}
		}
		return out
	}
	want, got := of(fromFiles), of(fromCluster)
	for rule := range fixtures {
		if !slices.ContainsFunc(slices.Collect(maps.Values(got)), func(f finding.Finding) bool { return f.Rule == rule }) {
			t.Errorf("the live scan finds no %s (of %s)", rule, fixtures[rule])
		}
	}
	for k, f := range want {
		g, ok := got[k]
		switch {
		case !ok:
			t.Errorf("the live scan misses %s", k)
		case f.Rule == "BF902" && strings.Contains(f.Message, "no imagePullPolicy"):
			// The fixture leaves the policy out and the API server
			// writes the default in: the live finding names it.
			if !strings.Contains(g.Message, "with imagePullPolicy Always") {
				t.Errorf("%s: the live message does not name the defaulted policy: %s", k, g.Message)
			}
		case g.Message != f.Message:
			t.Errorf("%s: message differs\n file: %s\n live: %s", k, f.Message, g.Message)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("the live scan adds %s", k)
		}
	}
}

// moved reads a fixture's objects into namespace ns. A workload applied
// with kubectl apply carries its manifest in the last-applied annotation:
// the live scan's BF801 reads it there, so the Rollout gets it too.
func moved(t *testing.T, path, ns string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f := load.Parse(path, data)
	if len(f.Errors) > 0 {
		t.Fatalf("%s: %v", path, f.Errors)
	}
	var out []*unstructured.Unstructured
	for _, d := range f.Documents {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(d.JSON); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		switch u.GetKind() {
		case "Namespace", "PersistentVolumeClaim":
			continue
		}
		u.SetNamespace(ns)
		if u.GetAPIVersion() == "policy/v1beta1" {
			// Kubernetes 1.25 stopped serving it; the fields are the same.
			u.SetAPIVersion("policy/v1")
		}
		if u.GetKind() == "Rollout" {
			applied, err := json.Marshal(u.Object)
			if err != nil {
				t.Fatal(err)
			}
			a := u.GetAnnotations()
			if a == nil {
				a = map[string]string{}
			}
			a["kubectl.kubernetes.io/last-applied-configuration"] = string(applied)
			u.SetAnnotations(a)
		}
		out = append(out, u)
	}
	return out
}
