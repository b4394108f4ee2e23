package rolloutsim

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"github.com/argoproj/argo-rollouts/utils/defaults"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"backfire.dev/backfire/internal/model/rollout/twin"
)

// revisionAnnotation numbers a Rollout's ReplicaSets (utils/annotations
// RevisionAnnotation, which this package does not import: it brings a
// logger with it).
const revisionAnnotation = "rollout.argoproj.io/revision"

// Live is a Rollout's real state, read from a cluster, and the undo to
// play from it: what a rollback would do right now.
type Live struct {
	// Cluster is the controller's view before the undo; the run copies it.
	Cluster *twin.Cluster
	// Target is the revision the undo puts back in the template, Current
	// the one rolled back from (its pods answer --broken-error-rate of
	// requests with errors), Stable status.stableRS.
	Target, Current, Stable string
	// Names label revisions (pod-template hashes) with their revision
	// numbers: "6 (5d8f7c9b4)".
	Names map[string]string
	// Starting counts each ReplicaSet's pods that are not Ready now: those
	// of the current revision stay down (as --broken-not-ready), the
	// others start as new pods do.
	Starting map[string]int32
	// Window is the controller's rollback-window count for the undo; Notes
	// say what was read and what it means.
	Window twin.Window
	Notes  []string
}

// FromLive builds the state from the Rollout and its ReplicaSets and
// Services as read at now. toRevision picks the revision to roll back to
// (kubectl argo rollouts undo --to-revision); 0 means the one before the
// newest.
// A target revisionHistoryLimit has deleted comes back as a new
// ReplicaSet, created by the controller at the undo.
func FromLive(ro *v1alpha1.Rollout, rss []*appsv1.ReplicaSet, services map[string]*corev1.Service, now time.Time, toRevision int64, replicas int32, version string) (*Live, error) {
	st := ro.Status
	if ro.Spec.Strategy.Canary == nil {
		return nil, fmt.Errorf("Rollout %s: the twin models the canary strategy only", ro.Name)
	}
	if st.CurrentPodHash == "" {
		return nil, fmt.Errorf("Rollout %s has no status.currentPodHash: the controller has not reconciled it yet", ro.Name)
	}
	lv := &Live{Current: st.CurrentPodHash, Stable: st.StableRS, Names: map[string]string{}, Starting: map[string]int32{}}
	cl := &twin.Cluster{}
	at := func(t time.Time) time.Duration { return t.Sub(now).Truncate(time.Second) }
	revisionOf := map[string]int64{}
	byRevision := map[int64]string{}
	sorted := slices.Clone(rss)
	slices.SortStableFunc(sorted, func(a, b *appsv1.ReplicaSet) int { return a.CreationTimestamp.Compare(b.CreationTimestamp.Time) })
	for _, rs := range sorted {
		hash := rs.Labels[v1alpha1.DefaultRolloutUniqueLabelKey]
		if hash == "" {
			lv.Notes = append(lv.Notes, fmt.Sprintf("ReplicaSet %s has no %s label: left out", rs.Name, v1alpha1.DefaultRolloutUniqueLabelKey))
			continue
		}
		n, _ := strconv.ParseInt(rs.Annotations[revisionAnnotation], 10, 64)
		revisionOf[hash], byRevision[n] = n, hash
		lv.Names[hash] = fmt.Sprintf("%d (%s)", n, hash)
		t := &twin.ReplicaSet{Revision: hash, Created: at(rs.CreationTimestamp.Time), Replicas: defaults.GetReplicasOrDefault(rs.Spec.Replicas),
			Pods: rs.Status.Replicas, Available: rs.Status.AvailableReplicas, Experiment: rs.Annotations[v1alpha1.ExperimentNameAnnotationKey] != ""}
		if d, ok := rs.Annotations[v1alpha1.DefaultReplicaSetScaleDownDeadlineAnnotationKey]; ok {
			if when, err := time.Parse(time.RFC3339, d); err == nil {
				due := at(when)
				t.ScaleDownAt = &due
			}
		}
		lv.Starting[hash] = max(0, rs.Status.Replicas-rs.Status.AvailableReplicas)
		cl.ReplicaSets = append(cl.ReplicaSets, t)
	}
	if cl.ReplicaSet(lv.Current) == nil {
		return nil, fmt.Errorf("Rollout %s: no ReplicaSet of its current revision %s", ro.Name, lv.Current)
	}

	// The undo's target (kubectl argo rollouts undo, rolloutRevision,
	// pkg/kubectl-argo-rollouts/cmd/undo/undo.go v1.10.2 :137-177):
	// --to-revision, or the second newest revision among the ReplicaSets.
	var newest, previous int64 = -1, -1
	for n := range byRevision {
		if n > newest {
			newest, previous = n, newest
		} else if n > previous {
			previous = n
		}
	}
	want := toRevision
	if want == 0 {
		want = previous
	}
	if want == revisionOf[lv.Current] {
		return nil, fmt.Errorf("Rollout %s is at revision %d already: nothing to roll back", ro.Name, want)
	}
	var ok bool
	if lv.Target, ok = byRevision[want]; !ok {
		// Deleted by revisionHistoryLimit: the undo fails ("unable to find
		// specified revision", undo.go :168-170); applying the old
		// manifest again makes a new ReplicaSet, the newest of all, so no
		// rollback window applies.
		if want <= 0 {
			want = revisionOf[lv.Current] - 1
		}
		if want <= 0 {
			return nil, fmt.Errorf("Rollout %s has only revision %d: there is nothing to roll back to", ro.Name, revisionOf[lv.Current])
		}
		lv.Target = fmt.Sprintf("revision-%d", want)
		lv.Names[lv.Target] = fmt.Sprintf("%d (re-created)", want)
		lv.Notes = append(lv.Notes, fmt.Sprintf("revision %d has no ReplicaSet any more (revisionHistoryLimit %d keeps only the newest old ones), so kubectl argo rollouts undo cannot find it: rolling back means applying its manifest again, which creates a new ReplicaSet, newer than the stable",
			want, defaults.GetRevisionHistoryLimitOrDefault(ro)))
	}

	cl.Template = lv.Target
	cl.Status = twin.Status{CurrentRevision: st.CurrentPodHash, StableRevision: st.StableRS, StepIndex: st.CurrentStepIndex,
		Abort: st.Abort, PromoteFull: st.PromoteFull, ControllerPause: st.ControllerPause,
		Counts: twin.Counts{Replicas: st.Replicas, Updated: st.UpdatedReplicas, Available: st.AvailableReplicas}}
	for _, pc := range st.PauseConditions {
		if pc.Reason == v1alpha1.PauseReasonCanaryPauseStep {
			start := at(pc.StartTime.Time)
			cl.Status.PauseStart = &start
		}
	}
	if w := st.Canary.Weights; w != nil {
		cl.Status.Weights = &twin.Weights{Canary: w.Canary.Weight, Stable: w.Stable.Weight, CanaryRevision: w.Canary.PodTemplateHash, StableRevision: w.Stable.PodTemplateHash}
	}
	if ar := st.Canary.CurrentBackgroundAnalysisRunStatus; ar != nil {
		cl.Status.Background = &twin.AnalysisRun{Revision: st.CurrentPodHash, Phase: twin.AnalysisPhase(ar.Status), Message: ar.Message}
	}
	for _, c := range st.Conditions {
		switch c.Type {
		case v1alpha1.RolloutProgressing:
			cl.Status.Conditions.Progressing = c.Reason
		case v1alpha1.RolloutPaused:
			cl.Status.Conditions.Paused = string(c.Status)
		case v1alpha1.RolloutHealthy:
			cl.Status.Conditions.Healthy = string(c.Status)
		}
	}
	cl.StableSelector, cl.CanarySelector = st.StableRS, st.StableRS
	if c := ro.Spec.Strategy.Canary; c != nil {
		if s := services[c.StableService]; s != nil {
			cl.StableSelector = s.Spec.Selector[v1alpha1.DefaultRolloutUniqueLabelKey]
		}
		if s := services[c.CanaryService]; s != nil {
			cl.CanarySelector = s.Spec.Selector[v1alpha1.DefaultRolloutUniqueLabelKey]
		}
	}
	lv.Cluster = cl

	ctl, err := twin.NewController(ro, replicas, version)
	if err != nil {
		return nil, err
	}
	lv.Window = ctl.Window(cl, lv.Target, lv.Stable)
	lv.Notes = append(lv.Notes, lv.windowNote(ro))
	return lv, nil
}

// windowNote says how the controller counts the window for this undo.
func (lv *Live) windowNote(ro *v1alpha1.Rollout) string {
	name := func(rev string) string {
		if n, ok := lv.Names[rev]; ok {
			return "revision " + n
		}
		return rev
	}
	names := func(revs []string) string {
		var out []string
		for _, r := range revs {
			out = append(out, name(r))
		}
		return strings.Join(out, ", ")
	}
	w := lv.Window
	t, s := lv.Cluster.ReplicaSet(lv.Target), lv.Cluster.ReplicaSet(lv.Stable)
	switch {
	case ro.Spec.RollbackWindow == nil || ro.Spec.RollbackWindow.Revisions <= 0:
		return "no rollbackWindow: the undo is an ordinary update through the steps"
	case t == nil:
		return fmt.Sprintf("rollback window %d: %s is created by the undo, after the stable: not a rollback to an older ReplicaSet", w.Revisions, name(lv.Target))
	case s == nil:
		return fmt.Sprintf("rollback window %d: the stable ReplicaSet %s is not there: no window", w.Revisions, lv.Stable)
	case t.Created == s.Created:
		return fmt.Sprintf("rollback window %d: %s and the stable %s were created in the same second: Before is false both ways, so the controller does not see an older ReplicaSet (isRollbackWithinWindow, sync.go v1.10.2 :971): the undo runs the steps",
			w.Revisions, name(lv.Target), name(lv.Stable))
	case !w.Older:
		return fmt.Sprintf("rollback window %d: %s is newer than the stable %s: not a rollback within the window", w.Revisions, name(lv.Target), name(lv.Stable))
	}
	msg := fmt.Sprintf("rollback window %d: %d ReplicaSet(s) created between %s and the stable %s", w.Revisions, len(w.Between), name(lv.Target), name(lv.Stable))
	if len(w.Between) > 0 {
		msg += " (" + names(w.Between) + ", scaled to zero or not)"
	}
	if len(w.SameInstant) > 0 {
		msg += "; not counted, created in the same second as one of them (Before is false): " + names(w.SameInstant)
	}
	if len(w.Experiments) > 0 {
		msg += "; not counted, an Experiment's: " + names(w.Experiments)
	}
	if w.Within {
		return msg + ": within the window, the steps are skipped"
	}
	return msg + ": outside the window, the undo runs the steps"
}
