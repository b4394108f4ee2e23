package probes

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"backfire.dev/backfire/internal/classify"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/model/probe"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/rules/podfacts"
)

// BF105: a database's startup probe that fails while the server recovers
// and gives up before a recovery can finish. The startup probe runs
// exactly while a restarted server recovers, so it is the one that kills
// the recovery, and the next start recovers from scratch.
var BF105 = rules.Register(&rules.Rule{
	ID:       "BF105",
	Slug:     "startup-probe-shorter-than-recovery",
	Severity: finding.Error,
	Summary:  "A database's startup probe fails while it recovers and kills it before a crash recovery can finish: every start after a crash recovers from scratch, forever.",
	Kinds:    object.WorkloadKinds,
	Reads:    []string{"ConfigMap", index.WorkloadRefs},
	Check:    &rules.Scan{Run: runBF105},
	Fix:      rules.FixFields{Sets: []string{"container.startupProbe.failureThreshold"}, From: []string{"container.startupProbe"}},
	Evidence: []any{BF105Evidence{}},
})

func runBF105(p *rules.Pass) {
	t := p.PodTemplate()
	if t == nil {
		return
	}
	budget := p.Config().StartupBudgetSeconds()
	for _, ct := range t.Containers() {
		c := ct.Container
		if c.StartupProbe == nil {
			continue
		}
		v := podfacts.Classify(p, c)
		if !v.DatabaseLike {
			continue
		}
		st := podfacts.Startup(p, t, c)
		if !st.FailsDuringRecovery || st.Budget >= budget {
			continue // it hands over during recovery (BF101's case), or it waits long enough
		}
		if longest := blockingBudget(probe.TimingOf(c.StartupProbe, nil)); longest >= budget {
			continue // a check that may block for its timeout is not shown to give up early
		}
		q := podfacts.ProbeQuery(p, t, c, c.StartupProbe)
		p.Report(bf105Finding(t, ct.Path(), c, v, q, budget))
	}
}

func bf105Finding(t *object.PodTemplate, at *field.Path, c *corev1.Container, v classify.Verdict, q classify.ProbeQuery, threshold int) rules.Report {
	sp := c.StartupProbe
	st := probe.TimingOf(sp, t.Spec.TerminationGracePeriodSeconds)
	s := v.Server
	run := st.StartupBudget()
	formula := st.NeverHealthyKillFormula()
	fails, queries := "fails", "fails while it recovers"
	if q.Assumed {
		fails, queries = "is assumed to fail", "is assumed to fail while it recovers"
	}
	interrupted := ""
	if s.Interrupted != "" {
		interrupted = " (" + s.Interrupted + ")"
	}
	mech := []string{
		fmt.Sprintf("Container %s is %s, and its startupProbe %s: %s.", c.Name, classification(v), queries, q.Evidence),
		fmt.Sprintf("The kubelet runs the startup probe from the container's start until it first passes, and nothing else until then: after a crash (an OOM kill, a node failure, a liveness kill, a SIGKILL at the end of the grace period) that is the whole crash recovery, during which %s %s.",
			s.Name, s.RecoveryAnswer(c.Image)),
		fmt.Sprintf("It allows D + F x P = %s = %d s (%s, %s, %s), then kills the container (\"failed startup probe\"; SIGKILL at most %d s after SIGTERM).",
			formula, run, st.InitialDelay.Phrase("initialDelaySeconds"), st.Failure.Phrase("failureThreshold"), st.Period.Phrase("periodSeconds"), st.Grace.N),
		fmt.Sprintf("The next container recovers again from scratch%s, and its startup probe counts from zero: a crash recovery longer than %d s never completes.", interrupted, run),
		backoffLine(run),
		fmt.Sprintf("How long a recovery takes grows with what the server must replay or load (the log written since its last checkpoint; a Redis dataset), which the manifest does not fix: %d s is less than the %d s backfire allows a recovery (thresholds.startupBudgetSeconds, the budget BF101's fix gives a startup probe).", run, threshold),
	}
	if st.Failure.N == 1 {
		mech[2] = fmt.Sprintf("It allows D + F x P = %s = %d s (%s, failureThreshold 1: the first failed check after the delay kills), then kills the container (\"failed startup probe\"; SIGKILL at most %d s after SIGTERM).",
			formula, run, st.InitialDelay.Phrase("initialDelaySeconds"), st.Grace.N)
	}
	var assumed []string
	switch {
	case q.Assumption != "":
		assumed = append(assumed, q.Assumption)
	case q.Assumed:
		assumed = append(assumed, fmt.Sprintf("%s is assumed to need %s to answer; if it only checks that the process runs, suppress this finding with the annotation backfire.dev/ignore: BF105.",
			probe.Describe(sp), s.Name))
	}
	path := at.Child("startupProbe")
	if st.Failure.Set {
		path = path.Child("failureThreshold")
	}
	return rules.Report{
		At:        t.Owner,
		Path:      path,
		Container: c.Name,
		Message: fmt.Sprintf("startup probe %s %s while %s recovers and kills the container %d s after it starts (%s): a crash recovery longer than %d s is killed and starts over, forever",
			probe.Describe(sp), fails, s.Name, run, formula, run),
		Mechanism: mech,
		Evidence: BF105Evidence{
			StartupBudgetSeconds: run,
			InitialDelaySeconds:  st.InitialDelay.N,
			PeriodSeconds:        st.Period.N,
			FailureThreshold:     st.Failure.N,
			TimeoutSeconds:       st.Timeout.N,
			GracePeriodSeconds:   st.Grace.N,
			ThresholdSeconds:     threshold,
			Server:               s.Name,
			Classification:       v.EvidenceString(),
			ProbeFails:           q.Evidence,
		},
		Assumptions: assumed,
		Fix:         bf105Fix(t, c, st, threshold),
	}
}

// blockingBudget is how long a startup probe whose every check waits out
// its timeout lets a container live: the kubelet's probe worker runs one
// check at a time, so F checks of T seconds each take F x max(P, T) after
// the delay. D + F x P counts checks that fail at once (a closed port, a
// refused login); a check longer than its period (a bootstrap script with a
// 12-hour timeout) may keep waiting while the server recovers.
func blockingBudget(t probe.Timing) int {
	return t.InitialDelay.N + t.Failure.N*max(t.Period.N, t.Timeout.N)
}

// bf105Fix keeps the check and its period and raises failureThreshold
// until D + F x P covers the threshold: a healthy start still hands over
// to the liveness probe at its first passing check.
func bf105Fix(t *object.PodTemplate, c *corev1.Container, st probe.Timing, threshold int) *finding.Fix {
	f := st.FailuresToCover(threshold)
	return &finding.Fix{
		Description: fmt.Sprintf("Keep the startup check and give it the time a recovery needs: failureThreshold %d, so that D + F x P = %d + %d x %d = %d s covers the %d s threshold (thresholds.startupBudgetSeconds; raise it for a larger log). A healthy start still hands over to the liveness probe at its first passing check, so nothing waits longer.",
			f, st.InitialDelay.N, f, st.Period.N, st.InitialDelay.N+f*st.Period.N, threshold),
		Type:  finding.StrategicMergePatch,
		Patch: fix.ContainerPatch(t, c.Name, map[string]any{"startupProbe": map[string]any{"failureThreshold": f}}),
	}
}
