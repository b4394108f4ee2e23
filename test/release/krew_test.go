package release

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// toolsOrFail returns the directory hack/test-release.sh installed krew and
// validate-krew-manifest into.
func toolsOrFail(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("BACKFIRE_TOOLS")
	if dir == "" {
		t.Fatal("BACKFIRE_TOOLS (krew and validate-krew-manifest) is set by hack/test-release.sh")
	}
	return dir
}

type krewManifest struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string
	Metadata   struct{ Name string }
	Spec       struct {
		Version   string
		Platforms []struct {
			Bin, URI, Sha256 string
			Selector         struct {
				MatchLabels map[string]string `yaml:"matchLabels"`
			}
		}
	}
}

// The krew manifest the release writes passes krew's own validator: first
// as written (structure, selectors: -skip-install), then installed for
// real by `kubectl krew install --manifest`, from a local server holding
// the snapshot's archives at the manifest's URIs' paths. The installed
// plugin runs as kubectl runs a plugin: by its name kubectl-backfire.
func TestKrewManifestPassesKrewsValidator(t *testing.T) {
	s := distOrSkip(t)
	tools := toolsOrFail(t)
	src := filepath.Join(s.dir, "krew", "backfire.yaml")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var m krewManifest
	if err := yaml.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if m.Metadata.Name != "backfire" || m.Spec.Version != "v"+s.version || len(m.Spec.Platforms) == 0 {
		t.Fatalf("manifest %+v", m)
	}
	for _, p := range m.Spec.Platforms {
		name := p.URI[strings.LastIndex(p.URI, "/")+1:]
		if !strings.HasPrefix(p.URI, "https://github.com/backfire-dev/backfire/releases/download/") || s.checksums[name] != p.Sha256 {
			t.Errorf("platform %v: uri %s, sha256 %s; checksums.txt says %s", p.Selector.MatchLabels, p.URI, p.Sha256, s.checksums[name])
		}
	}
	validate := func(manifest string, args ...string) string {
		t.Helper()
		cmd := exec.Command(filepath.Join(tools, "validate-krew-manifest"), append([]string{"-manifest", manifest}, args...)...)
		cmd.Env = append(os.Environ(), "PATH="+kubectlShim(t, tools)+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("validate-krew-manifest %s %v: %v\n%s", manifest, args, err, out)
		}
		return string(out)
	}
	validate(src, "-skip-install")

	// The same manifest, its URIs moved to a local server with the same paths.
	srv := httptest.NewServer(http.StripPrefix("/backfire-dev/backfire/releases/download/v0.0.0/", http.FileServer(http.Dir(s.dir))))
	defer srv.Close()
	local := filepath.Join(t.TempDir(), "backfire.yaml")
	moved := strings.ReplaceAll(string(data), "https://github.com/backfire-dev/backfire/releases/download/", srv.URL+"/backfire-dev/backfire/releases/download/")
	if !strings.Contains(moved, "/v0.0.0/") {
		t.Fatalf("the snapshot's URIs name no tag v0.0.0:\n%s", data)
	}
	if err := os.WriteFile(local, []byte(moved), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := validate(local); !strings.Contains(out, "spec.platforms installed fine") {
		t.Errorf("validate-krew-manifest did not install:\n%s", out)
	}

	// Installed by krew, run by its plugin name.
	root := t.TempDir()
	cmd := exec.Command(filepath.Join(tools, "krew"), "install", "--manifest", local)
	cmd.Env = append(os.Environ(), "KREW_ROOT="+root)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("krew install: %v\n%s", err, out)
	}
	out, err := exec.Command(filepath.Join(root, "bin", "kubectl-backfire"), "--help").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "kubectl backfire [command]") {
		t.Errorf("kubectl-backfire --help: %v\n%s", err, out)
	}
}

// kubectlShim is a kubectl that only runs its plugin krew, as kubectl does
// for "kubectl krew ..." (validate-krew-manifest installs through it); it
// returns the directory that holds it.
func kubectlShim(t *testing.T, tools string) string {
	t.Helper()
	dir := t.TempDir()
	script := "#!/bin/sh\n[ \"$1\" = krew ] || { echo \"kubectl shim: only 'kubectl krew' is here\" >&2; exit 1; }\nshift\nexec " +
		filepath.Join(tools, "krew") + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "kubectl"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
