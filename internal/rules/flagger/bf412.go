package flagger

import (
	"fmt"

	flaggerv1 "github.com/fluxcd/flagger/pkg/apis/flagger/v1beta1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/model/analysis"
	model "backfire.dev/backfire/internal/model/flagger"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/rules"
)

// BF412: a Flagger rollback moves all traffic to the primary in one step
// (fluxcd/flagger#869, open), after the primary's autoscaler sized it for
// the share the canary left it.
var BF412 = rules.Register(&rules.Rule{
	ID:       "BF412",
	Slug:     "flagger-rollback-to-shrunk-primary",
	Severity: finding.Warning,
	Summary:  "A Flagger rollback sends all traffic to the primary at once, after its autoscaler sized it for the share the canary left it.",
	Kinds:    canaryKind,
	Reads:    []string{"HorizontalPodAutoscaler", "ScaledObject"},
	Evidence: []any{BF412Evidence{}},
	Check:    &rules.Scan{Run: runBF412},
})

// defaultScaleDownWindow is the HPA's scale-down stabilization when its
// behavior sets none: 300 s (Kubernetes docs, "Horizontal Pod
// Autoscaling", Stabilization window; autoscaling/v2 HPAScalingRules).
const defaultScaleDownWindow = 300

// scaler is the primary's autoscaler as Flagger makes it: a copy of the
// target's (min, max, behavior), with primaryScalerReplicas over min and
// max (reconcilePrimaryHpaV2, pkg/canary/hpa_reconciler.go:55-77).
type scaler struct {
	kindName string
	min, max int32
	window   int32
	found    bool
	note     string
	// scales is the workload the target's HPA names when it is not the
	// Canary's target: Flagger's copy targets the primary all the same.
	scales string
}

func primaryScaler(p *rules.Pass, cd *flaggerv1.Canary) scaler {
	ref := cd.Spec.AutoscalerRef
	s := scaler{kindName: ref.Kind + " " + ref.Name, min: 1, window: defaultScaleDownWindow}
	switch ref.Kind {
	case "ScaledObject":
		if o := p.Index.Get("ScaledObject", p.Object.Namespace, ref.Name); o != nil {
			if so, ok := o.Typed.(*object.ScaledObject); ok {
				s.found = true
				s.min, s.max = object.KEDADefaultMinReplicas, object.KEDADefaultMaxReplicas
				if so.Spec.MinReplicaCount != nil {
					s.min = *so.Spec.MinReplicaCount
				}
				if so.Spec.MaxReplicaCount != nil {
					s.max = *so.Spec.MaxReplicaCount
				}
				s.note = "KEDA's HPA is assumed to keep the default 300 s scale-down window (advanced.horizontalPodAutoscalerConfig is not read)"
			}
		}
	default:
		if o := p.Index.Get("HorizontalPodAutoscaler", p.Object.Namespace, ref.Name); o != nil {
			if h, ok := o.Typed.(*autoscalingv2.HorizontalPodAutoscaler); ok {
				s.found = true
				if h.Spec.MinReplicas != nil {
					s.min = *h.Spec.MinReplicas
				}
				s.max = h.Spec.MaxReplicas
				if ref := h.Spec.ScaleTargetRef; ref.Name != cd.Spec.TargetRef.Name {
					s.scales = ref.Kind + " " + ref.Name
				}
				if b := h.Spec.Behavior; b != nil && b.ScaleDown != nil && b.ScaleDown.StabilizationWindowSeconds != nil {
					s.window = *b.ScaleDown.StabilizationWindowSeconds
				}
			}
		}
	}
	if r := ref.PrimaryScalerReplicas; r != nil {
		if r.MinReplicas != nil {
			s.min = *r.MinReplicas
		}
		if r.MaxReplicas != nil {
			s.max = *r.MaxReplicas
		}
	}
	return s
}

func confirmPromotion(cd *flaggerv1.Canary) string {
	for _, w := range cd.GetAnalysis().Webhooks {
		if w.Type == flaggerv1.ConfirmPromotionHook {
			return w.Name
		}
	}
	return ""
}

func runBF412(p *rules.Pass) {
	cd := canaryOf(p)
	if cd == nil || cd.SkipAnalysis() || cd.Spec.AutoscalerRef == nil {
		return
	}
	s := primaryScaler(p, cd)
	r := model.RampOf(cd)
	if !r.Shifts || r.Strategy != flaggerv1.DeploymentStrategyCanary || r.MaxWeight == 0 {
		return // the canary takes no share of the primary's traffic
	}
	threshold := p.Config().RollbackWeight()
	if r.MaxWeight < threshold {
		return
	}
	if s.found && s.min >= s.max {
		return // the primary cannot shrink
	}
	ws := r.Weights(cd)
	gate := confirmPromotion(cd)
	// The worst case is the highest weight: ticks that wait for the
	// primary or the canary hold it without counting a check, so a window
	// longer than the checks' time at it does not protect the primary.
	report(p, cd, r, s, ws, gate, threshold)
}

func weightPath(cd *flaggerv1.Canary) *field.Path {
	a := cd.GetAnalysis()
	p := field.NewPath("spec", analysisField(cd))
	switch {
	case len(a.StepWeights) > 0 && a.StepWeight == 0:
		return p.Child("stepWeights").Index(len(a.StepWeights) - 1)
	case a.MaxWeight > 0:
		return p.Child("maxWeight")
	}
	return p.Child("stepWeight")
}

// weightName names the field weightPath points at.
func weightName(cd *flaggerv1.Canary) string {
	if a := cd.GetAnalysis(); len(a.StepWeights) > 0 && a.StepWeight == 0 {
		return "the last stepWeights entry"
	}
	return "maxWeight"
}

func report(p *rules.Pass, cd *flaggerv1.Canary, r model.Ramp, s scaler, ws []int, gate string, threshold int) {
	primary := cd.Spec.TargetRef.Name + "-primary"
	w := r.MaxWeight
	share := 100 - min(w, 99)
	factor := 100.0 / float64(share)
	held := r.HeldAtMax()
	window := float64(s.window)
	wait := max(0, window-held)
	var holds string
	switch {
	case gate != "":
		wait = 0
		holds = fmt.Sprintf("the confirm-promotion webhook %s holds the canary at weight %d for as long as it answers no, while the checks run", gate, w)
	case wait == 0:
		holds = fmt.Sprintf("the checks alone can hold weight %d for (threshold %d + 1) x interval %s = %s before a rollback (the tick that reaches it, %d failed checks, then the rollback; scheduler.go:429-438), no shorter than the window",
			w, r.Threshold, analysis.Seconds(r.Interval), analysis.Seconds(held), r.Threshold)
	default:
		holds = fmt.Sprintf("the checks alone hold weight %d for (threshold %d + 1) x interval %s = %s (scheduler.go:429-438), which would leave the canary at %d%% one window before the rollback; ticks that wait hold %d%% the other %s: a tick whose primary or canary is not ready (a pod starting, or failing its readiness probe) returns without a check and without a step (scheduler.go:294-309, :353-361), and a wait turns into a rollback only once the Deployment has exceeded its progress deadline or stayed below its minimum available for progressDeadlineSeconds (deployment_ready.go:74-110)",
			w, r.Threshold, analysis.Seconds(r.Interval), analysis.Seconds(held), r.WeightBefore(ws, window), w, analysis.Seconds(wait))
	}
	floor := int(float64(s.min)*100/float64(share) + 0.999)
	scalerText := s.kindName
	rangeText := "its range is not in the input"
	sev := finding.Warning
	var as []string
	peak := ""
	var keeps int32
	if s.found {
		rangeText = fmt.Sprintf("minReplicas %d, maxReplicas %d", s.min, s.max)
		keeps = model.PrimaryPods(s.max, s.min, s.max, share)
		peak = fmt.Sprintf(" At a load that needs all %d pods (maxReplicas) for all traffic, the autoscaler keeps %d for %d%% (ceil(%d x %d/100), at least minReplicas): %d pods short when the traffic comes back.",
			s.max, keeps, share, s.max, share, s.max-keeps)
	} else {
		sev = finding.Info
		as = append(as, fmt.Sprintf("%s is not in the input read with this Canary (its Helm chart or Kustomize build; for plain files, its directory and those above and below it, not sibling directories): assumed to let the primary shrink (minReplicas below maxReplicas) with the default %d s scale-down window", s.kindName, defaultScaleDownWindow))
	}
	if s.note != "" {
		as = append(as, s.note)
	}
	scalesText := ""
	if s.scales != "" {
		scalesText = fmt.Sprintf(" %s itself scales %s, not %s: the copy keeps its range, metrics and behavior and targets %s all the same (hpa_reconciler.go:56-68), while the canary %s keeps the replicas ScaleFromZero gives it (deployment_controller.go:166-210), whatever its share: at loads those pods cannot carry at %d%%, the canary is overloaded on the way there.", scalerText, s.scales, cd.Spec.TargetRef.Name, primary, cd.Spec.TargetRef.Name, w)
	}
	mech := []string{
		fmt.Sprintf("Flagger makes the primary's autoscaler a copy of %s (%s, its metrics and behavior; hpa_reconciler.go:55-77), so %s scales with the traffic it serves.%s", scalerText, rangeText, primary, scalesText),
		fmt.Sprintf("During the analysis the canary takes up to %d%% of the traffic (maxWeight, scheduler.go:41-51): %s serves %d%%, and its autoscaler scales it down once the lower load has lasted its %d s scale-down stabilization window: %s, so it can be sized for %d%% of the traffic.", w, primary, share, s.window, holds, share),
		fmt.Sprintf("A rollback routes all traffic back to the primary in one step, whatever its size: SetRoutes(primary %d, canary 0), then the canary scaled to zero (rollback, scheduler.go:957-980); Flagger has no rollback step weight (fluxcd/flagger#869, open).", 100),
		fmt.Sprintf("Each primary pod then takes 100/%d = %.1fx the load it was sized for, while the broken canary's pods are deleted, until the autoscaler sees the load, scales up and the new pods are ready.%s", share, factor, peak),
		fmt.Sprintf("minReplicas %d bounds the shrink: the primary is sized for its %d%% share at loads that need %d pods or more for all traffic (%d x 100/%d), less between %d and %d, and not at all at loads %s carry.", s.min, share, floor, s.min, share, s.min, floor, podsText(s.min)),
	}
	p.Report(rules.Report{
		Path:     weightPath(cd),
		Severity: sev,
		Message: fmt.Sprintf("a rollback sends 100%% of traffic at once to %s, which its autoscaler can have sized for %d%% (the canary held %d%% for its %d s window): up to %.1fx the load per pod, from loads that need %d pods for all traffic (minReplicas %d x 100/%d)",
			primary, share, w, s.window, factor, floor, s.min, share),
		Mechanism:   mech,
		Assumptions: as,
		Evidence: BF412Evidence{
			MaxWeight:                  w,
			SizedForPercent:            share,
			LoadFactor:                 factor,
			HeldAtMaxSeconds:           held,
			WaitSeconds:                wait,
			ConfirmPromotionWebhook:    gate,
			StabilizationWindowSeconds: s.window,
			Autoscaler:                 s.kindName,
			MinReplicas:                s.min,
			MaxReplicas:                s.max,
			AutoscalerInInput:          s.found,
			PodsAtFullTraffic:          floor,
			PrimaryPodsAtPeak:          keeps,
		},
		Fix: &finding.Fix{
			Type: finding.ManualChange,
			Description: fmt.Sprintf("Keep %s sized for all traffic until the analysis ends: set spec.autoscalerRef.primaryScalerReplicas.minReplicas to the replicas all traffic needs at peak, or lower %s below %d. A longer behavior.scaleDown.stabilizationWindowSeconds on %s (Flagger copies behavior to the primary's autoscaler) covers the %.0f s the checks take from the canary reaching %d%% to the latest rollback, not the ticks that wait.",
				primary, weightName(cd), threshold, scalerText, r.SinceWeight(ws, threshold), threshold),
		},
	})
}

// podsText is "1 pod" or "N pods".
func podsText(n int32) string {
	if n == 1 {
		return "1 pod"
	}
	return fmt.Sprintf("%d pods", n)
}
