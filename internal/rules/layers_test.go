package rules

import (
	"go/build"
	"io/fs"
	"path/filepath"
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

// The rules sit below what runs them: no package under internal/rules (the
// engine, the families, their helpers) imports a driver, a reporter or the
// catalog. Test helpers that need those (internal/ruletest) live outside
// this tree, so the arrows all point down.
func TestRulesImportNothingAbove(t *testing.T) {
	above := []string{"/internal/scan", "/internal/fixcompose", "/internal/fixplan", "/internal/diagnose",
		"/internal/report", "/internal/result", "/internal/webhook", "/internal/simulate", "/internal/catalog", "/internal/ruletest", "/cmd/"}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if d.Name() == "testdata" {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(path, 0)
		if err != nil {
			return nil // no Go files
		}
		for _, imp := range pkg.Imports {
			for _, a := range above {
				if strings.HasSuffix(imp, a) || strings.Contains(imp, a+"/") {
					t.Errorf("internal/rules/%s imports %s, which is above the rules", filepath.ToSlash(path), imp)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
