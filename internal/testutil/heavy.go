package testutil

import (
	"os"
	"testing"
)

// HeavyTests is the environment switch of the tests that need more than Go
// and the repository: a real kube-apiserver and etcd (built once and cached
// by hack/test-assets.sh), or a headless Chromium. hack/test.sh, and so the
// README's test command and CI, sets it to 1; without it `go test ./...`
// skips those tests and stays fast, as kube-linter keeps its e2e tests
// behind a build tag.
const HeavyTests = "BACKFIRE_HEAVY_TESTS"

// Heavy skips the test unless HeavyTests is 1; what says what it needs.
func Heavy(t testing.TB, what string) {
	t.Helper()
	if os.Getenv(HeavyTests) != "1" {
		t.Skipf("needs %s: run with %s=1 (hack/test.sh sets it)", what, HeavyTests)
	}
}
