package report

import (
	"testing"

	"backfire.dev/backfire/internal/helm"
	"backfire.dev/backfire/internal/kustomize"
	"backfire.dev/backfire/internal/result"
	"backfire.dev/backfire/internal/scan"
	"backfire.dev/backfire/internal/testutil"
)

// scanRepo scans paths relative to the repository root with the charts and
// overlays rendered, as `backfire scan` does.
func scanRepo(t *testing.T, paths ...string) *result.Result {
	t.Helper()
	t.Chdir(testutil.RepoRoot(t))
	charts, err := helm.New(helm.Options{ReleaseName: helm.DefaultReleaseName, Namespace: helm.DefaultNamespace, KubeVersion: helm.DefaultKubeVersion})
	if err != nil {
		t.Fatal(err)
	}
	res, err := scan.Run(scan.Options{Paths: paths, Charts: charts, Kustomize: kustomize.New()})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The three kinds of input the corpus holds: plain files, a Helm chart and
// a Kustomize overlay.
var corpusPaths = []string{
	"examples",
	"testdata/corpus/harbor-helm",
	"testdata/corpus/rollouts-demo/examples/istio-subset",
}
