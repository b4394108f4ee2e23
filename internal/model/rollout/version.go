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
)

// ParseVersion normalises "1.8.2" or "v1.8.2" and checks it.
func ParseVersion(s string) (string, error) {
	if s == "" {
		return DefaultVersion, nil
	}
	if s[0] != 'v' {
		s = "v" + s
	}
	if !semver.IsValid(s) {
		return "", fmt.Errorf("invalid Argo Rollouts version %q (want vX.Y.Z)", s)
	}
	return semver.Canonical(s), nil
}

// AtLeast reports whether version v is at or after min.
func AtLeast(v, min string) bool { return semver.Compare(v, min) >= 0 }
