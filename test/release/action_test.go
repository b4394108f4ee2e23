package release

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"backfire.dev/backfire/internal/testutil"
)

// release is a directory served as a GitHub release's download URL.
type release struct {
	dir, version string
	wantOutput   string // what the binary's `version` starts with
}

// releaseToInstall is the snapshot when hack/test-release.sh built one,
// else a release this test makes: an archive named as .goreleaser.yaml
// names it, holding a stand-in binary, and its checksums.txt.
func releaseToInstall(t *testing.T) release {
	t.Helper()
	if os.Getenv("BACKFIRE_DIST") != "" {
		s := distOrSkip(t)
		return release{dir: s.dir, version: "v" + s.version, wantOutput: "backfire v" + s.version + " (commit "}
	}
	dir := t.TempDir()
	const version = "v9.8.7"
	name := fmt.Sprintf("backfire_%s_%s_%s.tar.gz", strings.TrimPrefix(version, "v"), runtime.GOOS, runtime.GOARCH)
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	tw := tar.NewWriter(zw)
	for _, e := range []struct {
		name, body string
		mode       int64
	}{
		{"LICENSE", "licence\n", 0o644},
		{"backfire", "#!/bin/sh\necho 'backfire " + version + " (stand-in)'\n", 0o755},
	} {
		if err := tw.WriteHeader(&tar.Header{Name: e.name, Mode: e.mode, Size: int64(len(e.body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(e.body))
	}
	tw.Close()
	zw.Close()
	f.Close()
	sum := sha256File(t, filepath.Join(dir, name))
	other := sha256.Sum256([]byte("another archive"))
	checksums := sum + "  " + name + "\n" + hex.EncodeToString(other[:]) + "  backfire_9.8.7_windows_arm64.zip\n"
	if err := os.WriteFile(filepath.Join(dir, "checksums.txt"), []byte(checksums), 0o644); err != nil {
		t.Fatal(err)
	}
	return release{dir: dir, version: version, wantOutput: "backfire " + version + " (stand-in)"}
}

// runnerName is what GitHub's runner sets RUNNER_OS and RUNNER_ARCH to.
func runnerName() (string, string) {
	os := map[string]string{"linux": "Linux", "darwin": "macOS", "windows": "Windows"}[runtime.GOOS]
	arch := map[string]string{"amd64": "X64", "arm64": "ARM64"}[runtime.GOARCH]
	return os, arch
}

// install runs the Action's install script as its step runs it and returns
// its outputs, its log and whether it succeeded.
func install(t *testing.T, env ...string) (map[string]string, string, bool) {
	t.Helper()
	tmp := t.TempDir()
	output := filepath.Join(tmp, "github-output")
	if err := os.WriteFile(output, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	osName, arch := runnerName()
	cmd := exec.Command("bash", filepath.Join(testutil.RepoRoot(t), "action", "install.sh"))
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "RUNNER_OS=" + osName, "RUNNER_ARCH=" + arch,
		"RUNNER_TEMP=" + tmp, "GITHUB_OUTPUT=" + output, "BACKFIRE_REPOSITORY=backfire-dev/backfire"}, env...)
	log, err := cmd.CombinedOutput()
	data, rerr := os.ReadFile(output)
	if rerr != nil {
		t.Fatal(rerr)
	}
	outputs := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			outputs[k] = v
		}
	}
	return outputs, string(log), err == nil
}

// On a release tag the Action downloads that release's archive for the
// runner, checks it against checksums.txt and runs the binary it holds;
// a tampered archive or a checksums.txt that does not list it installs
// nothing; any other ref builds from source without asking the network.
func TestActionDownloadsTheReleaseBinaryAndChecksIt(t *testing.T) {
	rel := releaseToInstall(t)
	var requests atomic.Int32
	tampered := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		name := strings.TrimPrefix(r.URL.Path, "/download/"+rel.version+"/")
		data, err := os.ReadFile(filepath.Join(rel.dir, filepath.Base(name)))
		if err != nil || name == r.URL.Path {
			http.NotFound(w, r)
			return
		}
		if tampered[name] {
			data = append(data, 0)
		}
		w.Write(data)
	}))
	defer srv.Close()
	url := "BACKFIRE_RELEASE_URL=" + srv.URL + "/download/" + rel.version

	out, log, ok := install(t, "BACKFIRE_VERSION="+rel.version, url)
	if !ok || out["from"] != "release" || out["path"] == "" {
		t.Fatalf("release %s: outputs %v\n%s", rel.version, out, log)
	}
	if !strings.Contains(log, "checked against checksums.txt") {
		t.Errorf("the log does not say the checksum was checked:\n%s", log)
	}
	got, err := exec.Command(out["path"], "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(got), rel.wantOutput) {
		t.Errorf("installed binary's version: %v\n%s\nwant it to start with %q", err, got, rel.wantOutput)
	}

	osName, arch := runnerName()
	archive := fmt.Sprintf("backfire_%s_%s_%s.tar.gz", strings.TrimPrefix(rel.version, "v"), runtime.GOOS, runtime.GOARCH)
	tampered[archive] = true
	out, log, ok = install(t, "BACKFIRE_VERSION="+rel.version, url)
	if ok || out["path"] != "" || !strings.Contains(log, "SHA-256") || !strings.Contains(log, "not installed") {
		t.Errorf("tampered archive: ok %v, outputs %v\n%s", ok, out, log)
	}
	delete(tampered, archive)

	// A version whose checksums.txt does not list the runner's archive.
	out, log, ok = install(t, "BACKFIRE_VERSION="+rel.version, "RUNNER_ARCH=X86", url)
	if ok || out["path"] != "" || !strings.Contains(log, "X86") {
		t.Errorf("32-bit runner (%s): ok %v, outputs %v\n%s", osName+"/"+arch, ok, out, log)
	}

	before := requests.Load()
	for _, ref := range []string{"main", "0123456789abcdef0123456789abcdef01234567", "", "v1.2", "refs/tags/v1.2.3"} {
		out, log, ok := install(t, "BACKFIRE_VERSION="+ref, url)
		if !ok || out["from"] != "source" || out["path"] != "" {
			t.Errorf("ref %q: ok %v, outputs %v\n%s", ref, ok, out, log)
		}
	}
	if n := requests.Load() - before; n != 0 {
		t.Errorf("%d downloads for refs that are not release tags", n)
	}
}

// action.yml runs the install script with the ref the workflow pinned,
// builds from source only when the script says so, and scans with
// whichever binary it got.
func TestActionInstallsBeforeItBuilds(t *testing.T) {
	var action struct {
		Inputs map[string]struct{ Default string }
		Runs   struct {
			Steps []struct {
				ID, Name, Run, Uses, If string
				Env                     map[string]string
			}
		}
	}
	data, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &action); err != nil {
		t.Fatal(err)
	}
	if _, ok := action.Inputs["version"]; !ok {
		t.Error("no version input")
	}
	steps := action.Runs.Steps
	if len(steps) < 4 || steps[0].ID != "install" || !strings.Contains(steps[0].Run, "action/install.sh") {
		t.Fatalf("the first step does not run action/install.sh: %+v", steps[0])
	}
	// Read in env: inside a composite action's run, github.action_ref is
	// empty (actions/runner#2473).
	if v := steps[0].Env["BACKFIRE_VERSION"]; !strings.Contains(v, "inputs.version") || !strings.Contains(v, "github.action_ref") {
		t.Errorf("install step's BACKFIRE_VERSION is %q", v)
	}
	sourceOnly := "steps.install.outputs.from == 'source'"
	for _, s := range steps[1:] {
		builds := strings.HasPrefix(s.Uses, "actions/setup-go@") || strings.Contains(s.Run, "go build")
		if builds && s.If != sourceOnly {
			t.Errorf("step %q builds but runs if %q, want %q", s.Name, s.If, sourceOnly)
		}
		if strings.Contains(s.Run, "scan --format") && s.Env["BACKFIRE"] != "${{ steps.install.outputs.path || steps.build.outputs.path }}" {
			t.Errorf("scan step %q runs %q", s.Name, s.Env["BACKFIRE"])
		}
	}
}
