package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFindWalksUpToTheWorkTree(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "repo", "charts", "app")
	if err := os.MkdirAll(filepath.Join(root, "repo", ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(deep, 0o755)
	// A configuration above the work tree belongs to another project.
	os.WriteFile(filepath.Join(root, ".backfire.yaml"), []byte("disable: [BF104]\n"), 0o644)
	if got := Find(deep); got != "" {
		t.Errorf("found %s outside the work tree", got)
	}
	want := filepath.Join(root, "repo", ".backfire.yml")
	os.WriteFile(want, []byte("thresholds: {rollbackWeight: 80}\n"), 0o644)
	if got := Find(deep); got != want {
		t.Errorf("Find = %q, want %q", got, want)
	}
	c, err := Discover(deep)
	if err != nil || c.RollbackWeight() != 80 || c.StartupBudgetSeconds() != 600 || c.Path != want {
		t.Errorf("config %+v, %v", c, err)
	}
}

func TestUnknownFieldsAreErrors(t *testing.T) {
	p := filepath.Join(t.TempDir(), ".backfire.yaml")
	os.WriteFile(p, []byte("disabled: [BF104]\n"), 0o644) // typo: disable
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "disabled") {
		t.Errorf("a misspelt key was accepted: %v", err)
	}
}

func TestDefaults(t *testing.T) {
	var c Config
	if c.RollbackWeight() != 50 || c.StartupBudgetSeconds() != 600 || c.FewReplicas() != 3 {
		t.Errorf("defaults %d %d %d", c.RollbackWeight(), c.StartupBudgetSeconds(), c.FewReplicas())
	}
}
