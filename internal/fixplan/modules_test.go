package fixplan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/helm"
	"backfire.dev/backfire/internal/testutil"
)

// A template that names sixteen modules' resources maps before the
// top-level one it prints the database's resources from (with
// .Values.resources, toYaml .): the reference nearest the line that
// writes resources: is tried first, so the top-level map is reached
// (before, the sixteen filled the eight candidates and it was left).
func TestNearestTemplateRefRanksFirst(t *testing.T) {
	src := filepath.Join(testutil.RepoRoot(t), "internal", "fixplan", "testdata", "modules")
	chart := filepath.Join(t.TempDir(), "modules")
	if err := os.CopyFS(chart, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	o := options(chart)
	o.Helm = &helm.Options{}
	p, err := Plan(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range p.Left {
		t.Errorf("left %s: %s", l.Finding.Rule, l.Reason)
	}
	if len(p.Routes) != 1 || strings.Join(p.Routes[0].Keys, ",") != "resources" || len(p.Fixed) != 1 {
		t.Errorf("routes %+v, want the top-level resources map", p.Routes)
	}
}
