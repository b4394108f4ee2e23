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

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), ".backfire.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Every bad key or value is an error at its file, line and column, all of
// them at once.
func TestBadConfigurationNamesFileAndLine(t *testing.T) {
	p := writeConfig(t, "disable: [BF104]\nseverity:\n  BF102: none\n  BF101: fatal\nthresholds:\n  rollbackWeight: 150\n  fewReplicas: two\n  budget: 3\nignore: ['charts/[']\nreport: html\n")
	_, err := Load(p)
	if err == nil {
		t.Fatal("bad configuration accepted")
	}
	for _, want := range []string{
		p + `:3:10: severity of BF102: "none" is not error, warning or info`,
		p + `:4:10: severity of BF101: "fatal" is not error, warning or info`,
		p + `:6:19: threshold rollbackWeight: 150 is over 100`,
		p + `:7:16: threshold fewReplicas: "two" is not a positive whole number`,
		p + `:8:3: unknown threshold "budget"`,
		p + `:9:10: ignore: bad glob "charts/["`,
		p + `:10:1: unknown key "report"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if _, err := Load(writeConfig(t, "disable: BF104\n")); err == nil || !strings.Contains(err.Error(), ":1:10: disable must be a list") {
		t.Errorf("a scalar disable: %v", err)
	}
	if _, err := Load(writeConfig(t, "disable: [BF104\n")); err == nil || !strings.Contains(err.Error(), "line") {
		t.Errorf("broken YAML: %v", err)
	}
}

// Rule IDs are read in any case, and each entry remembers where it was
// written for the errors the catalog raises later (an unknown rule).
func TestSeverityKeysAnyCaseAndPositions(t *testing.T) {
	p := writeConfig(t, "severity:\n  bf102: ERROR\ndisable:\n  - bf999\n")
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := c.SeverityOf("BF102"); !ok || s != "error" {
		t.Errorf("SeverityOf(BF102) = %q, %v", s, ok)
	}
	if got := c.At("disable", "BF999"); got != p+":4:5" {
		t.Errorf("At = %q", got)
	}
	if c, err := Load(writeConfig(t, "")); err != nil || len(c.Disable) != 0 {
		t.Errorf("empty file: %+v %v", c, err)
	}
}

func TestIgnoreGlobs(t *testing.T) {
	dir := t.TempDir()
	c := &Config{Path: filepath.Join(dir, ".backfire.yaml"), Ignore: []string{"vendor", "charts/**/tests/*.yaml", "*.tmp.yaml"}}
	for name, want := range map[string]bool{
		"vendor/a.yaml":                          true,
		"vendor":                                 true,
		"charts/app/tests/x.yaml":                true,
		"charts/app/sub/tests/x.yaml":            true,
		"charts/app/templates/x.yaml":            false,
		"a.tmp.yaml":                             true,
		"deploy/a.tmp.yaml":                      false, // the glob is anchored at the config's directory
		"deploy/vendor.yaml":                     false,
		filepath.Join("..", "outside", "a.yaml"): false,
	} {
		if got := c.Ignored(filepath.Join(dir, name)); got != want {
			t.Errorf("Ignored(%s) = %v, want %v", name, got, want)
		}
	}
}
