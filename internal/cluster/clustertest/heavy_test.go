package clustertest

import (
	"testing"

	"backfire.dev/backfire/internal/testutil"
)

// Without the heavy-test switch, neither way to get a control plane starts
// one or builds its binaries: a plain go test ./... stays Go-only. The
// assets point at an empty directory, so a missing guard fails here at
// once instead of building kube-apiserver and etcd.
func TestControlPlanesSkipWithoutTheSwitch(t *testing.T) {
	t.Setenv(testutil.HeavyTests, "")
	t.Setenv("KUBEBUILDER_ASSETS", t.TempDir())
	for name, start := range map[string]func(t *testing.T){
		"Shared":       func(t *testing.T) { Shared(t) },
		"WithWebhooks": func(t *testing.T) { WithWebhooks(t, nil) },
	} {
		var skipped bool
		t.Run(name, func(t *testing.T) {
			defer func() { skipped = t.Skipped() }()
			start(t)
		})
		if !skipped {
			t.Errorf("%s did not skip without %s=1", name, testutil.HeavyTests)
		}
	}
}
