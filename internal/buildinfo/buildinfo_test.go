package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"
)

// A plain go build in a git work tree is described by the toolchain's own
// stamps; the release's -X flags win over them.
func TestBuildOfReadsTheToolchainStampsUnlessTheReleaseSetThem(t *testing.T) {
	info := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
		{Key: "vcs.time", Value: "2026-11-20T10:00:00Z"},
		{Key: "vcs.modified", Value: "true"},
	}}
	b := Of(info, true)
	if got, want := b.String(), "backfire dev (commit 0123456789abcdef0123456789abcdef01234567, modified, built 2026-11-20T10:00:00Z), "+b.Go; got != want {
		t.Errorf("plain build: %q, want %q", got, want)
	}
	// go run stamps nothing: the version says so instead of a bare "dev".
	if got := Of(&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true).String(); !strings.HasPrefix(got, "backfire dev (no commit recorded: go run, ") {
		t.Errorf("go run: %q", got)
	}
	version, commit, date = "v0.2.0", "fedcba9876543210fedcba9876543210fedcba98", "2026-11-25T08:30:00Z"
	t.Cleanup(func() { version, commit, date = "", "", "" })
	b = Of(info, true)
	if got, want := b.String(), "backfire v0.2.0 (commit fedcba9876543210fedcba9876543210fedcba98, built 2026-11-25T08:30:00Z), "+b.Go; got != want {
		t.Errorf("release build: %q, want %q", got, want)
	}
	if got := Of(nil, false).Version; got != "v0.2.0" {
		t.Errorf("no build information: version %q", got)
	}
	version = ""
	if got := Of(&debug.BuildInfo{Main: debug.Module{Version: "v0.3.0"}}, true).String(); !strings.HasPrefix(got, "backfire v0.3.0 (commit fedcba98") {
		t.Errorf("go install of a module version: %q", got)
	}
}
