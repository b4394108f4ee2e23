// Package flagger holds the rules about Flagger's Canary (flagger.app,
// BF41x): an analysis that cannot tell the canary from the primary, and a
// rollback that moves all traffic at once to a primary the autoscaler
// sized for less.
package flagger

import (
	flaggerv1 "github.com/fluxcd/flagger/pkg/apis/flagger/v1beta1"

	"backfire.dev/backfire/internal/rules"
)

var canaryKind = []string{"Canary"}

// canaryOf returns the Canary of the pass, or nil.
func canaryOf(p *rules.Pass) *flaggerv1.Canary {
	cd, _ := p.Object.Typed.(*flaggerv1.Canary)
	return cd
}

// analysisField is the path of the analysis the Canary writes: analysis,
// or the deprecated canaryAnalysis (GetAnalysis).
func analysisField(cd *flaggerv1.Canary) string {
	//lint:ignore SA1019 a Canary may still write canaryAnalysis, which GetAnalysis reads
	if cd.Spec.Analysis == nil && cd.Spec.CanaryAnalysis != nil {
		return "canaryAnalysis"
	}
	return "analysis"
}
