// Package rollout models the Argo Rollouts controller: the versions backfire
// knows, and (with the twin) its replica and weight arithmetic.
package rollout

import (
	"fmt"

	"golang.org/x/mod/semver"
)

const (
	// DefaultVersion is the newest controller release the Argo rules model.
	DefaultVersion = "v1.10.2"
	// OldestVersion is the oldest release the rules reason about.
	OldestVersion = "v1.4.0"
	// TypesVersion is the release whose API types backfire decodes with.
	TypesVersion = "v1.9.0"
	// ModelledRange is shown by `backfire version`.
	ModelledRange = OldestVersion + " through " + DefaultVersion
	// Master is argoproj/argo-rollouts master at 9f8d111d8 (2026-08-17),
	// the newest commit the twin is checked against, as a version: it
	// sorts after every release and before the next minor, as master does.
	// "--rollouts-version master" names it.
	Master = "v1.11.0-0.20260817162111-9f8d111d8f8e"
	// MasterName is how findings and reports name Master.
	MasterName = "master 9f8d111d8"
)

// VersionName is v as a person reads it: Master by its commit.
func VersionName(v string) string {
	if v == Master {
		return MasterName
	}
	return v
}

// ParseVersion normalises "1.8.2" or "v1.8.2" and checks it; "master"
// is Master.
func ParseVersion(s string) (string, error) {
	switch s {
	case "":
		return DefaultVersion, nil
	case "master":
		return Master, nil
	}
	if s[0] != 'v' {
		s = "v" + s
	}
	if !semver.IsValid(s) {
		return "", fmt.Errorf("invalid Argo Rollouts version %q (want vX.Y.Z or master)", s)
	}
	return semver.Canonical(s), nil
}

// AtLeast reports whether version v is at or after min.
func AtLeast(v, min string) bool { return semver.Compare(v, min) >= 0 }
