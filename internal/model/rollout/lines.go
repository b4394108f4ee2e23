package rollout

import "fmt"

// Lines are the controller source lines a finding cites, from one release's
// source. Only the releases below were read line by line; a finding for
// another release cites the nearest one and names it.
type Lines struct {
	// Release is the source the numbers come from.
	Release string

	// rollout/canary.go: the step index thrown to the end.
	StepToEndActive int // rollback within the window to a ReplicaSet with replicas (v1.6+)
	StepToEnd       int // PromoteFull || isRollbackWithinWindow

	// rollout/trafficrouting.go, reconcileTrafficRouting's weight chain.
	AbortBranch   int // pauseContext.IsAborted(): weight 0, chain ends
	ZeroAvailable int // canary has 0 available pods: weight 0
	PromoteFull   int // promote --full freezes the weight
	StepBranch    int // "index != nil": everything else
	Walk          int // !atDesiredReplicaCount: walk back from index-1
	Gate          int // checkReplicasAvailable(stableRS, max-weight)

	// rollout/analysis.go: analysis skipped and cancelled.
	AnalysisSkip string

	// rollout/sync.go, isRollbackWithinWindow: the first gate, "is the
	// ReplicaSet rolled back to older than the stable?".
	WindowGate int
}

var sourceLines = []Lines{
	{Release: "v1.8.2", StepToEndActive: 379, StepToEnd: 390,
		AbortBranch: 199, ZeroAvailable: 217, PromoteFull: 229, StepBranch: 243, Walk: 245, Gate: 266,
		AnalysisSkip: "analysis.go:77-78", WindowGate: 908},
	{Release: "v1.9.0", StepToEndActive: 368, StepToEnd: 379,
		AbortBranch: 204, ZeroAvailable: 222, PromoteFull: 234, StepBranch: 248, Walk: 250, Gate: 273,
		AnalysisSkip: "analysis.go:77-78", WindowGate: 910},
	{Release: "v1.10.2", StepToEndActive: 368, StepToEnd: 378,
		AbortBranch: 204, ZeroAvailable: 222, PromoteFull: 234, StepBranch: 248, Walk: 250, Gate: 273,
		AnalysisSkip: "isFastRollback, analysis.go:75-78", WindowGate: 971},
}

// SourceLines returns the line numbers to cite for release v: those of the
// newest release read that is not newer than v, or of the oldest one read.
func SourceLines(v string) Lines {
	l := sourceLines[0]
	for _, s := range sourceLines {
		if AtLeast(v, minorOf(s.Release)) {
			l = s
		}
	}
	return l
}

// minorOf turns "v1.9.0" into "v1.9.0" and "v1.10.2" into "v1.10.0": a
// release's numbers stand for its whole minor line.
func minorOf(release string) string {
	var major, minor, patch int
	if _, err := fmt.Sscanf(release, "v%d.%d.%d", &major, &minor, &patch); err != nil {
		return release
	}
	return fmt.Sprintf("v%d.%d.0", major, minor)
}
