package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"backfire.dev/backfire/internal/model/rollout"
)

// Set at build time by the release (.goreleaser.yaml):
//
//	-ldflags "-X main.version=v0.1.0 -X main.commit=<sha> -X main.date=<RFC 3339>"
//
// A plain go build leaves them empty and the Go toolchain's own build
// information (the module version, the VCS revision and time it stamps
// into binaries built in a git work tree) fills them.
var version, commit, date string

// build is what `backfire version` prints about the binary.
type build struct {
	Version, Commit, Date string
	// Modified: built from a work tree with uncommitted changes.
	Modified bool
	Go       string
}

func buildOf(info *debug.BuildInfo, ok bool) build {
	b := build{Version: version, Commit: commit, Date: date, Go: runtime.Version()}
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

func currentBuild() build { return buildOf(debug.ReadBuildInfo()) }

func versionString() string { return currentBuild().Version }

func (b build) String() string {
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

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and date of the build, and the Argo Rollouts controller versions the rules model",
		Long: `Print the version, commit and date of the build, and the Argo Rollouts controller
versions the rules model.

A release sets all three. A go build or go install from a git clone records the
commit, its date and whether the work tree had changes (the Go toolchain's VCS
stamp); go install of a module version records that version. go run records
nothing, and says so.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), currentBuild())
			fmt.Fprintf(cmd.OutOrStdout(), "Argo Rollouts controller modelled: %s (default --rollouts-version %s); API types from %s\n",
				rollout.ModelledRange, rollout.DefaultVersion, rollout.TypesVersion)
			return nil
		},
	}
}
