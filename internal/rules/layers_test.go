package rules

import (
	"go/build"
	"strings"
	"testing"
)

// The engine knows no domain: what a container is (classify), what a pod
// did (observe) and the arithmetic of the models belong to the packages
// the rules use, never to the one that runs them.
func TestEngineImportsNoDomain(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		for _, domain := range []string{"/internal/classify", "/internal/observe", "/internal/recoverylog", "/internal/model/", "/internal/rules/"} {
			if strings.Contains(imp, domain) {
				t.Errorf("package rules imports %s", imp)
			}
		}
	}
}
