// Package termination holds the termination rules (BF6xx): how a pod's
// containers stop on a rolling update, a drain, an eviction or a scale
// down, and whether the stop is clean. A database whose stop ends in
// SIGKILL starts again in crash recovery, which the probe rules (BF101,
// BF105) can turn into a loop.
package termination

import (
	"fmt"

	"backfire.dev/backfire/internal/classify"
)

// classification renders a database-like verdict for a finding:
// "PostgreSQL (image bitnami/postgresql, port 5432)".
func classification(v classify.Verdict) string {
	return fmt.Sprintf("%s (%s)", v.Server.Name, v.EvidenceString())
}
