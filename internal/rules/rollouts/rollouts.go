// Package rollouts holds the Argo Rollouts rules (BF4xx): rollbacks that
// cancel themselves, and the rollback window added against that, which
// sends all traffic to the few pods the canary has.
package rollouts

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/model/rollout"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/rules"
)

var rolloutKind = []string{"Rollout"}

// canaryOf returns the Rollout and its canary strategy, or nil.
func canaryOf(p *rules.Pass) (*v1alpha1.Rollout, *v1alpha1.CanaryStrategy) {
	ro, ok := p.Object.Typed.(*v1alpha1.Rollout)
	if !ok || ro.Spec.Strategy.Canary == nil {
		return nil, nil
	}
	return ro, ro.Spec.Strategy.Canary
}

// controller is the Argo Rollouts version a finding is computed for.
type controller struct {
	version string
	// note says what was assumed about the version, if anything.
	note string
}

func controllerOf(p *rules.Pass) controller {
	v, err := rollout.ParseVersion(p.Options.RolloutsVersion)
	if err != nil {
		return controller{version: rollout.DefaultVersion,
			note: fmt.Sprintf("controller version %q is not a version: assumed %s", p.Options.RolloutsVersion, rollout.DefaultVersion)}
	}
	if rollout.Newer(v) {
		return controller{version: v,
			note: fmt.Sprintf("Argo Rollouts %s is newer than the newest modelled release %s: assumed to behave as %s", v, rollout.DefaultVersion, rollout.DefaultVersion)}
	}
	return controller{version: v}
}

func (c controller) assumptions(more ...string) []string {
	var out []string
	if c.note != "" {
		out = append(out, c.note)
	}
	return append(out, more...)
}

// replicaRange is where a Rollout's pod count comes from: spec.replicas,
// its default, or the range of the autoscalers that own it.
type replicaRange struct {
	min, max int32
	// scaledBy names the autoscalers ("KEDA ScaledObject order/front").
	scaledBy string
	// set is true when spec.replicas was written (and no autoscaler owns it).
	set bool
	// running is status.replicas of a captured live object, else 0.
	running int32
}

func (r replicaRange) scaled() bool { return r.scaledBy != "" }

// replicasOf resolves the replica count of a Rollout. An HPA or a KEDA
// ScaledObject may target the Rollout or, with workloadRef, the Deployment
// it runs; either owns the count.
func replicasOf(ix *index.Index, o *object.Object) replicaRange {
	rep := ix.ReplicasOf(o)
	r := replicaRange{min: rep.Min, max: rep.Max, set: rep.Set, running: rep.Running}
	var names []string
	for _, s := range rep.ScaledBy {
		kind := s.Object.Kind
		if kind == "ScaledObject" {
			kind = "KEDA ScaledObject"
		}
		names = append(names, kind+" "+nsName(s.Object))
	}
	r.scaledBy = strings.Join(names, " and ")
	return r
}

func nsName(o *object.Object) string {
	if o.Namespace == "" {
		return o.Name
	}
	return o.Namespace + "/" + o.Name
}

// pct formats a weight as a share of the maximum traffic weight.
func pct(weight, maxWeight int32) string {
	return strconv.FormatFloat(float64(weight)*100/float64(maxWeight), 'f', -1, 64) + "%"
}

// times formats a shortfall ratio: "10x", "3.5x".
func times(need, have int32) string {
	if have <= 0 {
		return "infinitely"
	}
	x := float64(need) / float64(have)
	return strconv.FormatFloat(float64(int(x*10+0.5))/10, 'f', -1, 64) + "x"
}

func plural(n int32, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
