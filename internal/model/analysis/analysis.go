// Package analysis models what an Argo Rollouts AnalysisRun does with a
// Rollout's analysis: which template metrics it runs (template
// resolution), with which argument values (args merge and substitution),
// what each metric's provider sends (per-provider query extraction),
// whether a measurement can fail at all (success and failure conditions),
// and when failed measurements fail the run (failure timing).
//
// Each rule of it follows the controller's source at the release whose
// types backfire decodes (argoproj/argo-rollouts v1.9.0); the function is
// named beside each one.
package analysis

import (
	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Block is one place a canary runs analysis from: the background
// analysis or an analysis step.
type Block struct {
	Path     *field.Path
	Analysis *v1alpha1.RolloutAnalysis
	// Step is the step index the run starts at: startingStep (0 by
	// default) for background analysis, the step's own index otherwise.
	Step       int32
	Background bool
	// StartingStep is set when the background analysis names one.
	StartingStep bool
}

// Blocks lists the analysis blocks of a canary strategy, the background
// analysis first.
func Blocks(c *v1alpha1.CanaryStrategy) []Block {
	var out []Block
	canary := field.NewPath("spec", "strategy", "canary")
	if c.Analysis != nil {
		b := Block{Path: canary.Child("analysis"), Analysis: &c.Analysis.RolloutAnalysis, Background: true}
		if c.Analysis.StartingStep != nil {
			b.Step, b.StartingStep = *c.Analysis.StartingStep, true
		}
		out = append(out, b)
	}
	for i, s := range c.Steps {
		if s.Analysis != nil {
			out = append(out, Block{Path: canary.Child("steps").Index(i).Child("analysis"), Analysis: s.Analysis, Step: int32(i)})
		}
	}
	return out
}
