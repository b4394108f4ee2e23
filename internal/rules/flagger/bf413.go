package flagger

import (
	"fmt"
	"strings"

	flaggerv1 "github.com/fluxcd/flagger/pkg/apis/flagger/v1beta1"
	"golang.org/x/mod/semver"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"backfire.dev/backfire/internal/finding"
	model "backfire.dev/backfire/internal/model/flagger"
	"backfire.dev/backfire/internal/rules"
)

// BF413: under Flagger before v1.44.0, a primary that fails to become
// ready during promotion makes Flagger roll back: all traffic to that
// primary, and the canary, the one healthy copy, scaled to zero
// (fluxcd/flagger#1898, fixed by #1931 in v1.44.0).
var BF413 = rules.Register(&rules.Rule{
	ID:       "BF413",
	Slug:     "flagger-promotion-rollback-to-broken-primary",
	Severity: finding.Warning,
	Summary:  "Before Flagger v1.44.0, a primary that fails during promotion takes all traffic and the healthy canary is scaled to zero.",
	Kinds:    canaryKind,
	Reads:    []string{"Deployment"},
	Evidence: []any{BF413Evidence{}},
	Check:    &rules.Scan{Run: runBF413},
})

// fixedIn is the first release that halts a failed promotion instead of
// rolling back (commits 8eaa0408 and e461dd9b, merged in #1931).
const fixedIn = "v1.44.0"

// controllerName is the Flagger Deployment's name in its Helm chart
// (release flagger) and its kustomize base.
const controllerName = "flagger"

// flaggerImages are the repositories Flagger's controller image has been
// published under.
var flaggerImages = []string{"fluxcd/flagger", "weaveworks/flagger", "stefanprodan/flagger"}

// flaggerVersion finds the Flagger controller in the input and its
// version from its image tag.
func flaggerVersion(p *rules.Pass) (version, where string) {
	for _, o := range p.Index.NamedAnywhere("Deployment", controllerName) {
		t := o.PodTemplate()
		if t == nil {
			continue
		}
		for _, c := range t.Spec.Containers {
			repo, tag, ok := strings.Cut(c.Image, ":")
			if i := strings.LastIndex(c.Image, ":"); i > strings.LastIndex(c.Image, "/") {
				repo, tag, ok = c.Image[:i], c.Image[i+1:], true
			}
			if !ok {
				continue
			}
			tag, _, _ = strings.Cut(tag, "@")
			for _, img := range flaggerImages {
				if strings.HasSuffix(repo, img) {
					v := "v" + strings.TrimPrefix(tag, "v")
					if semver.IsValid(v) {
						return semver.Canonical(v), fmt.Sprintf("Deployment %s/%s runs %s", nsOrDefault(o.Namespace), o.Name, c.Image)
					}
				}
			}
		}
	}
	return "", ""
}

func runBF413(p *rules.Pass) {
	cd := canaryOf(p)
	if cd == nil || cd.SkipAnalysis() {
		return // without analysis the primary's readiness is not checked (scheduler.go:295)
	}
	v, where := flaggerVersion(p)
	if v == "" || semver.Compare(v, fixedIn) >= 0 {
		return
	}
	r := model.RampOf(cd)
	if !r.Shifts {
		return // the kubernetes provider routes nothing: the apex Service keeps the primary
	}
	var share, promote string
	switch r.Strategy {
	case flaggerv1.DeploymentStrategyBlueGreen:
		share, promote = "100%", "blue/green routes all traffic to the canary, then copies its spec to the primary (runBlueGreen)"
	case flaggerv1.DeploymentStrategyABTesting:
		share, promote = "every request that matches the A/B conditions", "A/B testing keeps the matching requests on the canary while it copies its spec to the primary (runAB)"
	default:
		share, promote = fmt.Sprintf("%d%%", r.MaxWeight), fmt.Sprintf("the canary keeps its %d%% while Flagger copies its spec to the primary (runCanary)", r.MaxWeight)
	}
	deadline := cd.GetProgressDeadlineSeconds()
	primary := cd.Spec.TargetRef.Name + "-primary"
	p.Report(rules.Report{
		Path: field.NewPath("spec", analysisField(cd)),
		Message: fmt.Sprintf("Flagger %s rolls back a failed promotion: if %s does not become ready within progressDeadlineSeconds %d while the canary serves %s, all traffic goes to the failing primary and the healthy canary is scaled to zero (fixed in %s)",
			v, primary, deadline, share, fixedIn),
		Mechanism: []string{
			fmt.Sprintf("The analysis passed: %s, and the phase is Promoting; every tick Flagger first checks the primary (IsPrimaryReady, scheduler.go:295-304) until its rolling update is done.", promote),
			fmt.Sprintf("A primary that makes no progress is a non-retriable error: ProgressDeadlineExceeded on the Deployment, or Available false (MinimumReplicasUnavailable) for longer than the Canary's progressDeadlineSeconds %d (isDeploymentReady, pkg/canary/deployment_ready.go:74-109).", deadline),
			fmt.Sprintf("Before %s that error calls rollback whatever the phase (scheduler.go:295-303 at v1.43.0): SetRoutes(primary 100, canary 0) and the canary scaled to zero (scheduler.go:940-990 at v1.43.0). The primary now runs the new spec that fails, and the canary that served %s without failing is gone.", fixedIn, share),
			fmt.Sprintf("From %s a failed promotion halts instead (handleFailedPromotion, fluxcd/flagger#1931, commits 8eaa0408 and e461dd9b): the phase is Failed, the canary keeps running and all traffic is routed to it.", fixedIn),
		},
		Assumptions: []string{"the Flagger version is read from " + where},
		Evidence: BF413Evidence{
			FlaggerVersion:          v,
			FixedIn:                 fixedIn,
			Controller:              where,
			CanaryShare:             share,
			Strategy:                r.Strategy,
			ProgressDeadlineSeconds: deadline,
		},
		Fix: &finding.Fix{
			Type:        finding.ManualChange,
			Description: fmt.Sprintf("Upgrade Flagger to %s or later (%s): a primary that fails during promotion then halts the rollout with all traffic on the canary.", fixedIn, where),
		},
	})
}
