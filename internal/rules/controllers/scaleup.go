package controllers

import (
	"fmt"
	"math"
	"strings"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
)

// The horizontal pod autoscaler's clock and default scale-up rule
// (k8s.io/kubernetes pkg/controller/podautoscaler/config/v1alpha1
// defaults.go: HorizontalPodAutoscalerSyncPeriod 15 s;
// pkg/apis/autoscaling/v2/defaults.go: scale up by 4 pods or 100 % per
// 15 s, whichever is more, with no stabilization window).
const (
	hpaSyncSeconds   = 15
	maxRecoverySyncs = 1000
)

var defaultScaleUp = autoscalingv2.HPAScalingRules{
	SelectPolicy: ptrTo(autoscalingv2.MaxChangePolicySelect),
	Policies: []autoscalingv2.HPAScalingPolicy{
		{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
		{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
	},
}

func ptrTo[T any](v T) *T { return &v }

// scaleUpRules returns the HPA's scale-up rules, its spec.behavior filled
// in with the defaults the API server applies, and how to say them.
func scaleUpRules(hpa *autoscalingv2.HorizontalPodAutoscaler) (autoscalingv2.HPAScalingRules, string) {
	if hpa == nil || hpa.Spec.Behavior == nil || hpa.Spec.Behavior.ScaleUp == nil {
		return defaultScaleUp, "the default scale-up rule, max(4 pods, 100 %) per 15 s"
	}
	r := *hpa.Spec.Behavior.ScaleUp
	if len(r.Policies) == 0 {
		r.Policies = defaultScaleUp.Policies
	}
	if r.SelectPolicy == nil {
		r.SelectPolicy = defaultScaleUp.SelectPolicy
	}
	var ps []string
	for _, p := range r.Policies {
		unit := " pods"
		if p.Type == autoscalingv2.PercentScalingPolicy {
			unit = " %"
		}
		ps = append(ps, fmt.Sprintf("%d%s per %d s", p.Value, unit, p.PeriodSeconds))
	}
	return r, fmt.Sprintf("the HPA's behavior.scaleUp, %s of %s", strings.ToLower(string(*r.SelectPolicy)), strings.Join(ps, ", "))
}

// recovery plays the HPA scaling a workload back up from the count a sync
// set (from) to the count the load needs (to), one sync every 15 s, each
// limited as calculateScaleUpLimitWithScalingRules limits it
// (pkg/controller/podautoscaler/horizontal.go): every policy proposes the
// count at the start of its period plus its allowance, and the select
// policy picks the largest (Max) or smallest (Min). It returns the syncs
// passes through after each sync (to last), and false when the rules never
// get there (Disabled).
func recovery(from, to int32, r autoscalingv2.HPAScalingRules) ([]int32, bool) {
	if from >= to {
		return nil, true
	}
	if *r.SelectPolicy == autoscalingv2.DisabledPolicySelect {
		return nil, false
	}
	var path []int32
	type event struct {
		at    int
		added int32
	}
	var events []event
	cur := from
	for sync := 1; sync <= maxRecoverySyncs; sync++ {
		now := sync * hpaSyncSeconds
		limit := int32(math.MinInt32)
		if *r.SelectPolicy == autoscalingv2.MinChangePolicySelect {
			limit = math.MaxInt32
		}
		for _, p := range r.Policies {
			added := int32(0)
			for _, e := range events {
				if e.at > now-int(p.PeriodSeconds) {
					added += e.added
				}
			}
			start := cur - added
			var proposed int32
			if p.Type == autoscalingv2.PodsScalingPolicy {
				proposed = start + p.Value
			} else {
				proposed = int32(math.Ceil(float64(start) * (1 + float64(p.Value)/100)))
			}
			if *r.SelectPolicy == autoscalingv2.MinChangePolicySelect {
				limit = min(limit, proposed)
			} else {
				limit = max(limit, proposed)
			}
		}
		next := min(to, limit)
		if next > cur {
			events = append(events, event{now, next - cur})
			cur = next
		}
		path = append(path, cur)
		if cur >= to {
			return path, true
		}
	}
	return nil, false
}
