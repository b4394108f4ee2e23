package network_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/kustomize"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/rules/network"
	"backfire.dev/backfire/internal/ruletest"
	"backfire.dev/backfire/internal/scan"
	"backfire.dev/backfire/internal/testutil"
)

// GoogleCloudPlatform/microservices-demo, pinned verbatim: its network
// policies component holds a deny-all (Ingress and Egress, no rule) beside
// one policy per app with egress: [{}], and the workloads are in a sibling
// directory (release/), which plain files of the component do not see.
// Read so, the deny-all selects no workload the rule can see, and the
// per-app policies open all egress, DNS included, to the pods they select:
// info, saying so, not "every name lookup times out". Read in one stream
// with the workloads, every app has its own policy: no finding.
func TestDenyAllBesidePerAppPolicies(t *testing.T) {
	root := testutil.Corpus(t, "microservices-demo")
	component := filepath.Join(root, "kustomize", "components", "network-policies")
	for _, paths := range [][]string{{component}, {root}} {
		res, err := scan.Run(scan.Options{Paths: paths, Catalog: []*rules.Rule{network.BF304}, Kustomize: kustomize.New()})
		if err != nil || len(res.Errors) > 0 {
			t.Fatalf("%v: %v %v", paths, err, res.Errors)
		}
		fs := ruletest.Of(res, "BF304")
		if len(fs) != 1 || fs[0].Severity != finding.Info || fs[0].Object.Name != "deny-all" || len(fs[0].Assumptions) < 2 {
			t.Fatalf("%v: %+v, want one info on deny-all that says it sees no workload", paths, fs)
		}
	}

	var stream bytes.Buffer
	files, _ := filepath.Glob(filepath.Join(component, "network-policy-*.yaml"))
	files = append(files, filepath.Join(root, "release", "kubernetes-manifests.yaml"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		stream.Write(b)
		stream.WriteString("\n---\n")
	}
	res := ruletest.Scan(t, []*rules.Rule{network.BF304}, stream.Bytes(), "-")
	if len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	if fs := ruletest.Of(res, "BF304"); len(fs) != 0 {
		t.Errorf("with the workloads: %+v, want none (each app's policy allows all egress)", fs)
	}
}
