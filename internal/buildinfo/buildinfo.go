// Package buildinfo says which build of backfire is running, in one place
// below the commands: the version, commit and date a release sets with
// -ldflags -X, or what the Go toolchain stamped (the module version of a
// go install, the VCS revision and time of a go build in a clone).
package buildinfo

import (
	"runtime"
	"runtime/debug"
)

// Set at build time by the release (.goreleaser.yaml):
//
//	-ldflags "-X backfire.dev/backfire/internal/buildinfo.version=v0.1.0
//	          -X backfire.dev/backfire/internal/buildinfo.commit=<sha>
//	          -X backfire.dev/backfire/internal/buildinfo.date=<RFC 3339>"
//
// A plain go build leaves them empty and the Go toolchain's own build
// information (the module version, the VCS revision and time it stamps
// into binaries built in a git work tree) fills them.
var version, commit, date string

// Build is what `backfire version` prints about the binary.
type Build struct {
	Version, Commit, Date string
	// Modified: built from a work tree with uncommitted changes.
	Modified bool
	Go       string
}

// Of describes a build from the toolchain's information (ok false: none)
// and the release's -X flags, which win.
func Of(info *debug.BuildInfo, ok bool) Build {
	b := Build{Version: version, Commit: commit, Date: date, Go: runtime.Version()}
	if !ok {
		info = &debug.BuildInfo{}
	}
	if b.Version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		b.Version = info.Main.Version
	}
	if b.Version == "" {
		b.Version = "dev"
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			if b.Commit == "" {
				b.Commit = s.Value
			}
		case "vcs.time":
			if b.Date == "" {
				b.Date = s.Value
			}
		case "vcs.modified":
			b.Modified = s.Value == "true" && commit == ""
		}
	}
	return b
}

// Current describes the running binary.
func Current() Build { return Of(debug.ReadBuildInfo()) }

// Version is the running binary's version, as reports name their tool.
func Version() string { return Current().Version }

// String is the line `backfire version` prints first.
func (b Build) String() string {
	s := "backfire " + b.Version
	if b.Commit == "" && b.Version == "dev" {
		// go run never stamps the build, and -buildvcs=false (in GOFLAGS)
		// stops go build and go install from doing it.
		s += " (no commit recorded: go run, or a build with -buildvcs=false; go build or go install in a clone records it)"
	}
	if b.Commit != "" {
		s += " (commit " + b.Commit
		if b.Modified {
			s += ", modified"
		}
		if b.Date != "" {
			s += ", built " + b.Date
		}
		s += ")"
	}
	return s + ", " + b.Go
}
