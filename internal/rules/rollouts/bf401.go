package rollouts

import (
	"backfire.dev/backfire/internal/exactjson"
	"fmt"
	"slices"
	"strings"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/model/rollout"
	"backfire.dev/backfire/internal/rules"
)

// BF401: a rollback within rollbackWindow jumps to the last setWeight while
// the canary has only its step-0 pods.
var BF401 = rules.Register(&rules.Rule{
	ID:       "BF401",
	Slug:     "rollback-window-weight-jump",
	Severity: finding.Error,
	Summary:  "A rollback within rollbackWindow sends the last setWeight's share of traffic to the few pods the canary got at step 0.",
	Kinds:    rolloutKind,
	Reads:    []string{index.Autoscalers},
	Check:    &rules.Scan{Run: runBF401},
	Fix:      rules.FixFields{Sets: []string{"spec.strategy.canary.steps"}, From: []string{"spec.strategy.canary", "spec.replicas"}, FromDocument: true},
	Evidence: []any{BF401Evidence{}},
})

func runBF401(p *rules.Pass) {
	ro, c := canaryOf(p)
	if c == nil || c.TrafficRouting == nil ||
		ro.Spec.RollbackWindow == nil || ro.Spec.RollbackWindow.Revisions <= 0 {
		return
	}
	ctl := controllerOf(p)
	if !rollout.RollbackWindowWeightJump.Contains(ctl.version) {
		return
	}
	threshold := p.Config().RollbackWeight()
	w, at := rollout.Backtrack(ro)
	maxWeight := rollout.MaxTrafficWeight(ro)
	if maxWeight <= 0 || at < 0 || !atLeastPercent(w, maxWeight, threshold) {
		return
	}
	rr := replicasOf(p.Index, p.Object)
	if rr.max <= 0 {
		return // scaled to zero: no traffic to move
	}
	bands := rollout.JumpBands(ro, rr.min, rr.max, ctl.version)
	short := shortBands(bands)
	if len(short) == 0 {
		return // the step-0 canary already has the pods the weight needs
	}
	l := rollout.SourceLines(ctl.version)
	p.Report(rules.Report{
		Path:        field.NewPath("spec", "strategy", "canary", "steps").Index(at).Child("setWeight"),
		Message:     "a rollback within the window sends " + runningPhrase(ro, rr, ctl.version) + jumpPhrase(short, rr),
		Mechanism:   bf401Mechanism(ro, rr, bands, ctl, l),
		Evidence:    bf401Evidence(ro, rr, bands, at, ctl),
		Assumptions: bf401Assumptions(ro, rr, ctl),
		Fix:         bf401Fix(p, ro, rr, threshold, ctl),
	})
}

// atLeastPercent reports weight/maxWeight >= threshold%.
func atLeastPercent(weight, maxWeight int32, threshold int) bool {
	return int64(weight)*100 >= int64(threshold)*int64(maxWeight)
}

func shortBands(bands []rollout.Band) []rollout.Band {
	var out []rollout.Band
	for _, b := range bands {
		if b.Short {
			out = append(out, b)
		}
	}
	return out
}

func span(from, to int32) string {
	if from == to {
		return fmt.Sprint(from)
	}
	return fmt.Sprintf("%d to %d", from, to)
}

// runningPhrase leads with the replica count running when the object was
// captured (status.replicas of a live object or a dump of one): the seed's
// incident had 20 running within KEDA's 8..360.
func runningPhrase(ro *v1alpha1.Rollout, rr replicaRange, version string) string {
	if !rr.scaled() || rr.running <= 0 {
		return ""
	}
	j := rollout.RollbackJump(ro, rr.running, version)
	if j.CanaryPods >= j.Needed {
		return ""
	}
	need := fmt.Sprintf("sized for %d", j.Needed)
	if j.Weight < j.MaxWeight {
		need = fmt.Sprintf("a share that needs %d", j.Needed)
	}
	return fmt.Sprintf("%s of traffic to %s %s (%s short) at the %d replicas running now (status.replicas); over the autoscaler's range, ",
		pct(j.Weight, j.MaxWeight), plural(j.CanaryPods, "pod", "pods"), need, times(j.Needed, j.CanaryPods), rr.running)
}

// jumpPhrase says where the weight lands: "100% of traffic to 2 pods sized
// for 20 (10x short)", or band by band over an autoscaler's range.
func jumpPhrase(short []rollout.Band, rr replicaRange) string {
	j := short[0].Worst
	full := j.Weight >= j.MaxWeight
	share := pct(j.Weight, j.MaxWeight)
	if !rr.scaled() {
		if full {
			return fmt.Sprintf("%s of traffic to %s sized for %d (%s short)",
				share, plural(j.CanaryPods, "pod", "pods"), j.Replicas, times(j.Needed, j.CanaryPods))
		}
		return fmt.Sprintf("%s of traffic to %s, a share that needs %d of the %d replicas (%s short)",
			share, plural(j.CanaryPods, "pod", "pods"), j.Needed, j.Replicas, times(j.Needed, j.CanaryPods))
	}
	word := "at"
	if full {
		word = "sized for"
	}
	shown := short
	if len(short) > 3 {
		shown = []rollout.Band{short[0], short[1], short[len(short)-1]}
	}
	var parts []string
	for i, b := range shown {
		if i == 0 {
			parts = append(parts, fmt.Sprintf("%s %s %s replicas (up to %s short)",
				plural(b.CanaryPods, "pod", "pods"), word, span(b.From, b.To), times(b.Worst.Needed, b.CanaryPods)))
			continue
		}
		if i == 2 && len(short) > 3 {
			parts = append(parts, "...")
		}
		parts = append(parts, fmt.Sprintf("%d %s %s", b.CanaryPods, word, span(b.From, b.To)))
	}
	return fmt.Sprintf("%s of traffic to %s; %s scales the Rollout from %d to %d",
		share, strings.Join(parts, ", "), rr.scaledBy, rr.min, rr.max)
}

// stepZero explains the canary's size at step 0, for replica count n (N
// when n < 0); "" when step 0 gives it no pods.
func stepZero(ro *v1alpha1.Rollout, n int32, ver string) string {
	c := ro.Spec.Strategy.Canary
	maxWeight := rollout.MaxTrafficWeight(ro)
	if scs := c.Steps[0].SetCanaryScale; scs != nil && scs.Replicas != nil {
		return fmt.Sprintf("steps[0].setCanaryScale.replicas %d", *scs.Replicas)
	}
	w := rollout.SetWeightAt(ro, 0)
	what := fmt.Sprintf("steps[0].setWeight %d", w)
	if scs := c.Steps[0].SetCanaryScale; scs != nil && scs.Weight != nil {
		w, what = *scs.Weight, fmt.Sprintf("steps[0].setCanaryScale.weight %d", *scs.Weight)
	}
	if w == 0 {
		return ""
	}
	term := fmt.Sprintf("ceil(%s x %s)", pct(w, maxWeight), replicasTerm(n))
	if mp := c.MinPodsPerReplicaSet; mp != nil {
		term = fmt.Sprintf("max(%s, minPodsPerReplicaSet %d)", term, *mp)
		if rollout.MinPodsCappedAtReplicas.Contains(ver) && n > 0 && *mp > n {
			term += fmt.Sprintf(" with the floor capped at %d replicas", n)
		}
	}
	return what + ": " + term
}

func replicasTerm(n int32) string {
	if n < 0 {
		return "N"
	}
	return fmt.Sprint(n)
}

func bf401Mechanism(ro *v1alpha1.Rollout, rr replicaRange, bands []rollout.Band, ctl controller, l rollout.Lines) []string {
	c := ro.Spec.Strategy.Canary
	w, at := rollout.Backtrack(ro)
	maxWeight := rollout.MaxTrafficWeight(ro)
	first, last := bands[0].Worst, bands[len(bands)-1].Worst
	var sizing, landing, desired string
	switch {
	case stepZero(ro, -1, ctl.version) == "":
		sizing = "where no setWeight gives it any pods, until the index jumps and every pod starts at once"
		landing = "the first pod to become available"
		desired = "N"
		if !rr.scaled() {
			desired = fmt.Sprint(first.Replicas)
		}
	case rr.scaled():
		sizing = fmt.Sprintf("%s pods for N replicas: %d at %d, %d at %d",
			stepZero(ro, -1, ctl.version), first.StepZeroPods, rr.min, last.StepZeroPods, rr.max)
		landing = "typically its step-0 pods, at least 1"
		desired = "N"
	default:
		sizing = fmt.Sprintf("%s = %s", stepZero(ro, first.Replicas, ctl.version), plural(first.StepZeroPods, "pod", "pods"))
		landing = fmt.Sprintf("typically its %s from step 0, at least 1", plural(first.CanaryPods, "pod", "pods"))
		desired = fmt.Sprint(first.Replicas)
	}
	active := ""
	if rollout.SkipStepsWhenActive.Contains(ctl.version) {
		active = fmt.Sprintf("; :%d when the target still has replicas", l.StepToEndActive)
	}
	lines := []string{
		fmt.Sprintf("A rollback is a new update: the ReplicaSet rolled back to becomes the canary and is sized for step 0, %s.", sizing),
		fmt.Sprintf("Within the window (rollbackWindow.revisions %d) the step index is then thrown to the end of the %d steps, by the line promote --full uses (canary.go:%d%s).",
			ro.Spec.RollbackWindow.Revisions, len(c.Steps), l.StepToEnd, active),
		fmt.Sprintf("reconcileTrafficRouting has a branch for promote --full (trafficrouting.go:%d, which freezes the weight) but none for the window: it falls to :%d, and as the canary is short of its desired %s pods, :%d walks back from the last step and takes steps[%d].setWeight %d.",
			l.PromoteFull, l.StepBranch, desired, l.Walk, at, w),
		fmt.Sprintf("Traffic routing is reconciled before ReplicaSets are scaled, so %s lands on what the canary has available then: %s (:%d holds weight 0 only while none is available).",
			pct(w, maxWeight), landing, l.ZeroAvailable),
	}
	if rollout.StableCapacityGate.Contains(ctl.version) {
		need := pct(maxWeight-w, maxWeight) + " of the replicas"
		if w >= maxWeight {
			need = "no pods"
		}
		lines = append(lines, fmt.Sprintf("The capacity gate (:%d) checks only the stable ReplicaSet, which needs %s at weight %d: it passes, and the canary's pods are never counted.",
			l.Gate, need, w))
	} else {
		lines = append(lines, fmt.Sprintf("%s checks no capacity before writing the weight (the stable-only gate arrived in %s).", ctl.version, rollout.StableCapacityGate.Since))
	}
	if c.DynamicStableScale {
		// The real controller's trace of seed-000-remedy-dynamic-stable-scale
		// (v1.8.2, v1.9.0, v1.10.2): weight 100, canary asked for 20, stable for 0.
		left := "scaled down to " + pct(maxWeight-w, maxWeight) + " of the replicas"
		if w >= maxWeight {
			left = "scaled to 0"
		}
		lines = append(lines, fmt.Sprintf("dynamicStableScale does not stop the jump, it removes the way back: the stable ReplicaSet is sized for the share the weight leaves it, so at weight %d it is %s while the canary still has its first pods, and when those fail there is no stable left to send the traffic to.",
			w, left))
	}
	lines = append(lines, fmt.Sprintf("Applies to Argo Rollouts %s; computed for %s, line numbers from the %s source. Not while the Rollout is aborted: the abort branch (:%d) comes first.",
		rollout.RollbackWindowWeightJump, ctl.version, l.Release, l.AbortBranch))
	return lines
}

func bf401Evidence(ro *v1alpha1.Rollout, rr replicaRange, bands []rollout.Band, at int, ctl controller) BF401Evidence {
	c := ro.Spec.Strategy.Canary
	w, _ := rollout.Backtrack(ro)
	ev := BF401Evidence{
		BacktrackWeight:         w,
		BacktrackStep:           at,
		MaxTrafficWeight:        rollout.MaxTrafficWeight(ro),
		RollbackWindowRevisions: ro.Spec.RollbackWindow.Revisions,
		MinPodsPerReplicaSet:    c.MinPodsPerReplicaSet,
		FirstStepWeight:         c.Steps[0].SetWeight,
		RolloutsVersion:         ctl.version,
		AppliesTo:               rollout.RollbackWindowWeightJump.String(),
	}
	if !rr.scaled() {
		j := bands[0].Worst
		set := rr.set
		ev.Replicas, ev.ReplicasSet = &j.Replicas, &set
		ev.CanaryPods, ev.NeededPods = &j.CanaryPods, &j.Needed
		return ev
	}
	for _, b := range bands {
		ev.Bands = append(ev.Bands, BF401Band{b.From, b.To, b.CanaryPods, b.Short})
	}
	lo, hi := rr.min, rr.max
	atMin, atMax := bands[0].CanaryPods, bands[len(bands)-1].CanaryPods
	ev.ReplicasMin, ev.ReplicasMax, ev.ScaledBy = &lo, &hi, rr.scaledBy
	// One JSON type per key: the range's canary counts have keys of their
	// own rather than turning canaryPods into an object.
	ev.CanaryPodsAtMin, ev.CanaryPodsAtMax = &atMin, &atMax
	if rr.running > 0 {
		j := rollout.RollbackJump(ro, rr.running, ctl.version)
		ev.Running = &BF401Running{Replicas: rr.running, CanaryPods: j.CanaryPods, NeededPods: j.Needed}
	}
	return ev
}

func bf401Assumptions(ro *v1alpha1.Rollout, rr replicaRange, ctl controller) []string {
	var as []string
	switch {
	case rr.scaled():
		as = append(as, fmt.Sprintf("replicas come from %s (%d to %d), so every count in that range was computed; the exposure at the count running when you roll back is the band that contains it", rr.scaledBy, rr.min, rr.max))
	case !rr.set:
		as = append(as, "spec.replicas is unset and no HPA or KEDA ScaledObject targets the Rollout: 1 replica, the default")
	}
	as = append(as, "the ReplicaSet rolled back to has been scaled to zero, as it is once the old stable's scaleDownDelaySeconds (30 s by default) has passed; if it still has its pods, the weight lands on them")
	if tr := ro.Spec.Strategy.Canary.TrafficRouting; tr.Istio != nil && tr.Istio.DestinationRule != nil {
		as = append(as, "with Istio DestinationRule subsets the subset hash switch waits until the canary ReplicaSet is fully available (v1.8.0 to v1.8.2, v1.9.0 and later): that holds the weight back only if the step-0 pods are not all available when it lands")
	}
	return ctl.assumptions(as...)
}

// bf401Fix drops the setWeight steps at the end whose weight is at or
// above the threshold, so that the walk back finds a low weight. Steps is a
// list without a merge key: a strategic merge patch replaces it whole, so
// the patch carries every kept step as written.
func bf401Fix(p *rules.Pass, ro *v1alpha1.Rollout, rr replicaRange, threshold int, ctl controller) *finding.Fix {
	const alternative = " Or remove rollbackWindow and make the analysis tell canary from stable (BF402), so that a rollback no longer needs to skip it."
	steps := ro.Spec.Strategy.Canary.Steps
	raw := rawSteps(p.Object.Doc.JSON)
	maxWeight := rollout.MaxTrafficWeight(ro)
	var dropped []int
	for i := len(steps) - 1; i >= 0; i-- {
		if w := steps[i].SetWeight; w != nil {
			if !atLeastPercent(*w, maxWeight, threshold) {
				break
			}
			dropped = append(dropped, i)
		}
	}
	if len(raw) != len(steps) || !keepsAWeight(steps, dropped) {
		return &finding.Fix{
			Type: finding.ManualChange,
			Description: fmt.Sprintf("Every setWeight here is at or above %d%%: dropping them would remove the canary ramp. Remove rollbackWindow and make the analysis tell canary from stable (BF402), or add a low setWeight (below %d%%) and make it the last one.",
				threshold, threshold),
		}
	}
	var keptRaw []any
	var keptSteps []v1alpha1.CanaryStep
	for i := range steps {
		if !slices.Contains(dropped, i) {
			keptRaw, keptSteps = append(keptRaw, raw[i]), append(keptSteps, steps[i])
		}
	}
	after := ro.DeepCopy()
	after.Spec.Strategy.Canary.Steps = keptSteps
	var names []string
	for k := len(dropped) - 1; k >= 0; k-- {
		names = append(names, fmt.Sprintf("setWeight %d (steps[%d])", *steps[dropped[k]].SetWeight, dropped[k]))
	}
	held := ""
	if last := dropped[0]; last != len(steps)-1 || len(dropped) > 1 {
		// Steps after a dropped weight now run at the weight before it.
		w, _ := rollout.Backtrack(after)
		held = fmt.Sprintf(" The pauses and analyses that followed the dropped weights then run at setWeight %d.", w)
	}
	return &finding.Fix{
		Type: finding.StrategicMergePatch,
		Description: fmt.Sprintf("Drop %s from the end of the steps: %s. The controller still sends 100%% to the canary at the end, once it is fully available, and sizes it for all replicas without that step.%s",
			strings.Join(names, " and "), afterPhrase(after, rr, ctl), held) + bf401Trade(ro, after, rr, ctl) + alternative,
		Patch: fix.At("spec.strategy.canary", map[string]any{"steps": keptRaw}),
	}
}

// bf401Trade says what dropping the weights trades, in the Rollout's own
// numbers: the version rolled back from keeps the rest of the traffic until
// the canary is complete, where as written the canary takes the jump's
// share at once. Which loses more requests depends on how broken that
// version is, which the manifest cannot say (docs/rules/BF401.md has the
// simulated numbers for seed 000).
func bf401Trade(before, after *v1alpha1.Rollout, rr replicaRange, ctl controller) string {
	maxWeight := rollout.MaxTrafficWeight(before)
	jump, _ := rollout.Backtrack(before)
	w, _ := rollout.Backtrack(after)
	all := fmt.Sprintf("all %d pods", rr.max)
	if rr.scaled() {
		all = fmt.Sprintf("all its replicas (%d to %d as %s scales it)", rr.min, rr.max, rr.scaledBy)
	}
	first := "Ready pod"
	if j := rollout.RollbackJump(before, max(rr.max, 1), ctl.version); j.CanaryPods > 1 {
		first = fmt.Sprintf("%d Ready pods", j.CanaryPods)
	}
	return fmt.Sprintf(" What it trades: until the canary has %s available, the version rolled back from keeps %s of the requests, where as written the canary takes %s on its first %s; "+
		"if that version fails most of its requests, the jump as written can lose fewer. backfire simulate rollout --compare weighs both with your error rate, start-up times and load.",
		all, pct(maxWeight-w, maxWeight), pct(jump, maxWeight), first)
}

// keepsAWeight reports whether a setWeight remains once dropped are gone.
func keepsAWeight(steps []v1alpha1.CanaryStep, dropped []int) bool {
	for i, s := range steps {
		if s.SetWeight != nil && !slices.Contains(dropped, i) {
			return true
		}
	}
	return false
}

// afterPhrase says where the walk back lands once the fix is applied.
func afterPhrase(ro *v1alpha1.Rollout, rr replicaRange, ctl controller) string {
	w, at := rollout.Backtrack(ro)
	if at < 0 {
		return "the walk back then finds no setWeight and keeps the weight at 0 until the canary is fully available"
	}
	lead := fmt.Sprintf("the walk back then finds setWeight %d (steps[%d] after the change)", w, at)
	if w == 0 {
		return lead + ", so the weight stays at 0 until the canary is fully available"
	}
	lo, hi := rollout.RollbackJump(ro, max(rr.min, 1), ctl.version), rollout.RollbackJump(ro, max(rr.max, 1), ctl.version)
	if !rr.scaled() {
		return fmt.Sprintf("%s: %s of traffic to %s, a share that needs %s", lead, pct(w, hi.MaxWeight),
			plural(hi.CanaryPods, "pod", "pods"), plural(hi.Needed, "pod", "pods"))
	}
	pods := plural(hi.CanaryPods, "pod", "pods")
	if lo.CanaryPods != hi.CanaryPods {
		pods = fmt.Sprintf("%d to %d pods", lo.CanaryPods, hi.CanaryPods)
	}
	return fmt.Sprintf("%s: %s of traffic to %s, a share that needs %d at %d replicas and %d at %d",
		lead, pct(w, hi.MaxWeight), pods, lo.Needed, lo.Replicas, hi.Needed, hi.Replicas)
}

// rawSteps returns spec.strategy.canary.steps as written, so that the fix
// keeps each step's fields exactly.
func rawSteps(doc []byte) []any {
	var o struct {
		Spec struct {
			Strategy struct {
				Canary struct {
					Steps []any `json:"steps"`
				} `json:"canary"`
			} `json:"strategy"`
		} `json:"spec"`
	}
	if err := exactjson.Unmarshal(doc, &o); err != nil {
		return nil
	}
	return o.Spec.Strategy.Canary.Steps
}
