package resources

import (
	"fmt"
	"math"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	"backfire.dev/backfire/internal/classify"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/model/cgroup"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/rules/podfacts"
)

// BF202: a cpu limit on a container whose latency is the product.
var BF202 = rules.Register(&rules.Rule{
	ID:       "BF202",
	Slug:     "cpu-limit-on-latency-critical",
	Severity: finding.Info, // warning on a database
	Summary:  "A cpu limit on a database, or below 1 CPU on a multi-worker server, stalls every thread for the rest of each 100 ms period.",
	Kinds:    object.WorkloadKinds,
	Reads:    []string{index.WorkloadRefs},
	Check:    &rules.Scan{Run: runBF202},
	Fix:      rules.FixFields{Sets: []string{"container.resources.limits.cpu", "container.resources.requests.cpu"}, From: []string{"container.resources"}},
	Evidence: []any{BF202Evidence{}},
})

func runBF202(p *rules.Pass) {
	t := p.PodTemplate()
	if t == nil {
		return
	}
	qos := cgroup.QOSClass(t.Spec)
	for _, ct := range t.Containers() {
		c := ct.Container
		limit := cgroup.MilliCPU(c.Resources.Limits)
		if limit <= 0 {
			continue
		}
		v := podfacts.Classify(p, c)
		wk := classify.WorkersOf(c)
		switch {
		case v.DatabaseLike:
			p.Report(bf202Finding(t, ct, qos, limit, v, classify.Workers{}))
		case wk.N > 1 && limit < 1000:
			p.Report(bf202Finding(t, ct, qos, limit, v, wk))
		}
	}
}

func bf202Finding(t *object.PodTemplate, ct object.Container, qos corev1.PodQOSClass, limit int64, v classify.Verdict, wk classify.Workers) rules.Report {
	c := ct.Container
	quota := cgroup.Quota(limit)
	period := cgroup.QuotaPeriod
	lim := cgroup.FormatMilliCPU(limit)
	request := cgroup.MilliCPU(cgroup.EffectiveRequests(c.Resources))
	_, requestSet := c.Resources.Requests[corev1.ResourceCPU]
	tps := timedProbes(c, t.Spec.TerminationGracePeriodSeconds)

	ev := BF202Evidence{
		CPULimitMilli:       limit,
		CPURequestMilli:     request,
		CPURequestDefaulted: !requestSet,
		QuotaMs:             ms(quota),
		PeriodMs:            ms(period),
		QOSClass:            string(qos),
	}
	var msg string
	var mech []string
	sev := finding.Info
	if v.DatabaseLike {
		sev = finding.Warning
		ev.Classification = fmt.Sprintf("database-like %s (%s)", v.Server.Name, v.EvidenceString())
		msg = fmt.Sprintf("cpu limit %s on %s container %s: a CFS quota of %s of CPU per %s period; once its processes have spent it, every one of them stalls until the period ends, probe answers included",
			lim, v.Server.Name, c.Name, msStr(quota), msStr(period))
		mech = []string{
			fmt.Sprintf("limits.cpu %s sets a CFS quota of %s of CPU time per %s period (cpu.max \"%d %d\") for all of the container's processes and threads together.",
				lim, msStr(quota), msStr(period), quota.Microseconds(), period.Microseconds()),
			fmt.Sprintf("As soon as its processes run on more than %s at once (background work such as a checkpoint or compaction beside busy queries), the quota is spent before the period ends and every process stalls until the next one, however idle the node's other cores are.",
				cores(limit)),
		}
	} else {
		perWorker := quota / time.Duration(wk.N)
		stall := period - perWorker
		workers, perWorkerMs, stallMs := wk.N, ms(perWorker), ms(stall)
		ev.Workers, ev.WorkersSource, ev.WorkerServer = &workers, wk.Source, wk.Server
		ev.CPUPerWorkerMs, ev.StallMs = &perWorkerMs, &stallMs
		who := fmt.Sprintf("%d workers", wk.N)
		if wk.Server != "" {
			who = fmt.Sprintf("%d %s workers", wk.N, wk.Server)
		}
		msg = fmt.Sprintf("cpu limit %s on container %s, shared by %s (%s): %s of CPU per %s period, spent in %s when all %d are busy, then every worker stalls for %s",
			lim, c.Name, who, wk.Source, msStr(quota), msStr(period), msStr(perWorker), wk.N, msStr(stall))
		mech = []string{
			fmt.Sprintf("limits.cpu %s sets a CFS quota of %s of CPU time per %s period (cpu.max \"%d %d\"), shared by the %s and every thread of the container.",
				lim, msStr(quota), msStr(period), quota.Microseconds(), period.Microseconds(), who),
			fmt.Sprintf("With all %d workers busy on free cores, the %s are spent after %s / %d = %s of wall time; every worker then stalls for the remaining %s of the period, however idle the node is.",
				wk.N, msStr(quota), msStr(quota), wk.N, msStr(perWorker), msStr(stall)),
			fmt.Sprintf("While all are busy, each worker runs %s of every %s: a request takes about %sx its CPU time.",
				msStr(perWorker), msStr(period), oneDecimal(float64(period)/float64(perWorker))),
		}
	}
	if len(tps) > 0 {
		mech = append(mech, fmt.Sprintf("A probe or request that arrives during a stall waits for the next period, and one that needs more CPU than the quota waits once per period: probe answers and query latency can jump past %s.", timeouts(tps)))
	} else {
		mech = append(mech, "A request that arrives during a stall waits for the next period, and one that needs more CPU than the quota waits once per period.")
	}
	mech = append(mech, "This deliberately disagrees with linters that demand a cpu limit on every container: under contention the cpu request (cpu.weight) already divides the CPU, so the limit bites only when cores are idle, and then it adds stalls to exactly the latency that the probes and clients measure.")

	var assumptions []string
	if qos == corev1.PodQOSGuaranteed && request%1000 == 0 {
		assumptions = append(assumptions, fmt.Sprintf("the kubelet's default CPU manager policy (none); under the static policy this Guaranteed container with an integer cpu request (%s) gets exclusive cores and, from Kubernetes 1.33, no CFS quota", cgroup.FormatMilliCPU(request)))
	}

	resources := map[string]any{"limits": map[string]any{"cpu": nil}}
	keep := fmt.Sprintf("keep the cpu request (%s)", cgroup.FormatMilliCPU(request))
	if !requestSet {
		resources["requests"] = map[string]any{"cpu": lim}
		keep = fmt.Sprintf("write the cpu request out as %s (unset, it defaulted to the limit and would vanish with it)", lim)
	}
	w := cgroup.WeightsOf(request)
	desc := fmt.Sprintf("Remove the cpu limit of container %s and %s: it keeps cpu.weight %d (%d under the linear formula) under contention.", c.Name, keep, w.Runtime, w.Linear)
	if qos == corev1.PodQOSGuaranteed {
		desc += fmt.Sprintf(" The pod leaves the Guaranteed QoS class: oom_score_adj goes from %d to 1000 - 1000 x memory request / node memory (at least 3).", cgroup.GuaranteedOOMScoreAdj)
	}
	return rules.Report{
		At:          t.Owner,
		Path:        ct.Path().Child("resources", "limits", "cpu"),
		Container:   c.Name,
		Severity:    sev,
		Message:     msg,
		Mechanism:   mech,
		Evidence:    ev,
		Assumptions: assumptions,
		Fix: &finding.Fix{
			Description: desc,
			Type:        finding.StrategicMergePatch,
			Patch:       fix.ContainerPatch(t, c.Name, map[string]any{"resources": resources}),
		},
	}
}

// ms is a duration in milliseconds for evidence: 22.5.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// msStr renders a duration in milliseconds: "90 ms", "22.5 ms".
func msStr(d time.Duration) string { return strconv.FormatFloat(ms(d), 'f', -1, 64) + " ms" }

// cores renders a cpu amount in cores: "2 cores", "0.5 cores", "1 core".
func cores(milli int64) string {
	s := strconv.FormatFloat(float64(milli)/1000, 'f', -1, 64)
	if milli == 1000 {
		return s + " core"
	}
	return s + " cores"
}

// oneDecimal renders x rounded to one decimal: "4.4", "8".
func oneDecimal(x float64) string {
	return strconv.FormatFloat(math.Round(x*10)/10, 'f', -1, 64)
}
