package fixplan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/kustomize"
	"backfire.dev/backfire/internal/testutil"
)

// kubebuilder's config/default sets namePrefix and namespace; Kustomize
// applies its patches before them, so a patch names the Deployment as
// config/manager/manager.yaml does (controller-manager in namespace
// system), as the scaffold's own patches do. A patch that named the built
// name (project-v4-controller-manager in project-v4-system) matched
// nothing: the build failed and nothing was fixed.
func TestKubebuilderOverlayPatchNamesTheSource(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(testutil.Corpus(t, "kubebuilder-project-v4"))); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	o := options(filepath.Join("config", "default"))
	o.Scan.Kustomize = kustomize.New()
	p, err := Plan(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Errors) > 0 || len(p.Fixed) == 0 {
		t.Fatalf("%d fixed, errors %v", len(p.Fixed), p.Errors)
	}
	for _, l := range p.Left {
		t.Errorf("left %s on %s: %s", l.Finding.Rule, l.Finding.Object, l.Reason)
	}
	var patch string
	for _, f := range p.Files {
		if strings.HasPrefix(filepath.Base(f.Path), "backfire-fix-") {
			patch = string(f.New)
		}
	}
	if !strings.Contains(patch, "metadata:\n  name: controller-manager\n  namespace: system\n") {
		t.Errorf("the patch does not name the source Deployment:\n%s", patch)
	}
	if errs := p.Write(); len(errs) > 0 {
		t.Fatal(errs)
	}
	again, err := Plan(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Files) > 0 || len(again.Fixed) > 0 || len(again.Errors) > 0 {
		t.Errorf("a second run: %d files, %d fixed, errors %v", len(again.Files), len(again.Fixed), again.Errors)
	}
}
