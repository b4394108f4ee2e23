package rollouts

import (
	"fmt"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/model/rollout"
	"backfire.dev/backfire/internal/rules"
)

// defaultRevisionHistoryLimit is the controller's default when
// spec.revisionHistoryLimit is unset.
const defaultRevisionHistoryLimit = 10

// BF403: the revision history deletes the ReplicaSets the rollback window
// admits, and a rollback to one of them is no longer within the window.
var BF403 = rules.Register(&rules.Rule{
	ID:       "BF403",
	Slug:     "rollback-window-history-mismatch",
	Severity: finding.Warning,
	Summary:  "revisionHistoryLimit below rollbackWindow.revisions deletes the ReplicaSets the window admits, so a rollback to them runs every step and analysis again.",
	Kinds:    rolloutKind,
	Check:    &rules.Scan{Run: runBF403},
	Fix:      rules.FixFields{Sets: []string{"spec.revisionHistoryLimit"}, From: []string{"spec.strategy.canary.rollbackWindow", "spec.revisionHistoryLimit"}},
	Evidence: []any{BF403Evidence{}},
})

func runBF403(p *rules.Pass) {
	ro, ok := p.Object.Typed.(*v1alpha1.Rollout)
	if !ok || ro.Spec.RollbackWindow == nil || ro.Spec.RollbackWindow.Revisions <= 0 {
		return
	}
	ctl := controllerOf(p)
	if !rollout.RollbackWindow.Contains(ctl.version) {
		return
	}
	revisions := ro.Spec.RollbackWindow.Revisions
	limit, set := int32(defaultRevisionHistoryLimit), ro.Spec.RevisionHistoryLimit != nil
	if set {
		limit = *ro.Spec.RevisionHistoryLimit
	}
	if limit >= revisions {
		return
	}
	path := field.NewPath("spec", "rollbackWindow", "revisions")
	limitText := fmt.Sprintf("revisionHistoryLimit (unset: %d, the default)", limit)
	if set {
		path = field.NewPath("spec", "revisionHistoryLimit")
		limitText = fmt.Sprintf("revisionHistoryLimit %d", limit)
	}
	kept := fmt.Sprintf("keeps only the %d newest old ReplicaSets", limit)
	switch limit {
	case 0:
		kept = "keeps no old ReplicaSet"
	case 1:
		kept = "keeps only the newest old ReplicaSet"
	}
	again, rerun := "runs every step and analysis again", "it starts over at step 0 and runs every pause and analysis again (BF402 says what a revision-blind analysis then does)"
	if ro.Spec.Strategy.Canary == nil {
		again, rerun = "goes through the whole blue-green update again", "it is a whole blue-green update again, with its pre-promotion analysis and pause"
	}
	l := rollout.SourceLines(ctl.version)
	p.Report(rules.Report{
		Path: path,
		Message: fmt.Sprintf("%s keeps fewer old ReplicaSets than rollbackWindow.revisions %d admits: a rollback to %s finds its ReplicaSet deleted and %s",
			limitText, revisions, revisionRange(limit+1, revisions, "or"), again),
		Mechanism: []string{
			fmt.Sprintf("The window counts the ReplicaSet objects created between the target and the current stable (scaled-to-zero ones too, Experiment ones excluded): revisions %d admits %s.", revisions, revisionRange(1, revisions, "to")),
			fmt.Sprintf("revisionHistoryLimit %d %s besides the stable and the update in progress (reconcileRevisionHistoryLimit, sync.go:429): once scaled to zero, %s deleted.",
				limit, kept, revisionRange(limit+1, revisions, "and")+isAre(revisions-limit)),
			fmt.Sprintf("Rolling back to a deleted revision makes the controller create its ReplicaSet anew, with creationTimestamp now, so the window's first gate, target older than stable (sync.go:%d), fails.", l.WindowGate),
			fmt.Sprintf("That rollback is outside the window: %s, instead of the fast path the window promised.", rerun),
			fmt.Sprintf("Applies to Argo Rollouts %s (rollbackWindow arrived in v1.4.0); computed for %s, line numbers from the %s source.", rollout.RollbackWindow.Since+" through "+rollout.DefaultVersion, ctl.version, l.Release),
		},
		Evidence: BF403Evidence{
			RollbackWindowRevisions:  revisions,
			RevisionHistoryLimit:     limit,
			RevisionHistoryLimitSet:  set,
			RevisionsLostFromWindow:  revisions - limit,
			RolloutsVersion:          ctl.version,
			AppliesTo:                rollout.RollbackWindow.Since + " through " + rollout.DefaultVersion,
			SuggestedHistoryLimitMin: revisions + 1,
		},
		Assumptions: ctl.assumptions(),
		Fix: &finding.Fix{
			Type: finding.StrategicMergePatch,
			Description: fmt.Sprintf("Raise revisionHistoryLimit to %d: it keeps stable-1 to stable-%d, every target the window admits, with one to spare.",
				revisions+1, revisions+1),
			Patch: fix.At("spec", map[string]any{"revisionHistoryLimit": revisions + 1}),
		},
	})
}

// revisionRange names stable-from..stable-to: "stable-3", "stable-1 and
// stable-2", "stable-11 to stable-14".
func revisionRange(from, to int32, conj string) string {
	switch {
	case from == to:
		return fmt.Sprintf("stable-%d", from)
	case to == from+1 && conj != "to":
		return fmt.Sprintf("stable-%d %s stable-%d", from, conj, to)
	}
	return fmt.Sprintf("stable-%d to stable-%d", from, to)
}

func isAre(n int32) string {
	if n == 1 {
		return " is"
	}
	return " are"
}
