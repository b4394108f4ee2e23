package probes

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"backfire.dev/backfire/internal/classify"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/model/cgroup"
	"backfire.dev/backfire/internal/model/probe"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/rules/podfacts"
)

// BF107: a readiness probe that drops a pod on one answer slower than the
// 1 s default, on a server whose answers wait behind its own workers. It
// is not BF104's pod count: each pod drops on its own slow answer, so the
// share of pods out of rotation is the same at any replica count.
var BF107 = rules.Register(&rules.Rule{
	ID:       "BF107",
	Slug:     "readiness-flaps-under-load",
	Severity: finding.Warning,
	Summary:  "Readiness with a 1 s timeout and failureThreshold 1 on a server whose answers queue behind its workers: pods leave the Service one slow answer at a time, at any replica count.",
	Kinds:    object.WorkloadKinds,
	Reads:    []string{index.WorkloadRefs},
	Check:    &rules.Scan{Run: runBF107},
	Fix:      rules.FixFields{Sets: []string{"container.readinessProbe.failureThreshold", "container.readinessProbe.timeoutSeconds"}},
	Evidence: []any{BF107Evidence{}},
})

// Fix settings, as datacommonsorg/website PR #6624 chose them: a probe
// may wait 5 s for a worker, and a pod leaves after 3 slow answers.
const (
	flapFixTimeout  = 5
	flapFixFailures = 3
)

func runBF107(p *rules.Pass) {
	t := p.PodTemplate()
	if t == nil || podfacts.RunsOnce(p) != "" {
		return
	}
	for _, ct := range t.Containers() {
		c := ct.Container
		rp := c.ReadinessProbe
		if rp == nil || rp.TCPSocket != nil {
			continue // the kernel answers a TCP connect, however busy the workers
		}
		rt := probe.TimingOf(rp, nil)
		if !rt.Failure.Set || rt.Failure.N != 1 || rt.Timeout.N > 1 {
			continue
		}
		wk := classify.WorkersOf(c)
		if !wk.Queues {
			// Async workers answer the probe beside their requests: a
			// cpu quota alone stalls it for less than a period.
			continue
		}
		limit := cgroup.MilliCPU(c.Resources.Limits)
		stretched := wk.N > 1 && limit > 0 && limit < 1000
		p.Report(bf107Finding(t, ct.Path(), c, rt, wk, limit, stretched))
	}
}

func bf107Finding(t *object.PodTemplate, at *field.Path, c *corev1.Container, rt probe.Timing, wk classify.Workers, limit int64, stretched bool) rules.Report {
	rp := c.ReadinessProbe
	timeout := time.Duration(rt.Timeout.N) * time.Second
	who := fmt.Sprintf("%d %s workers", wk.N, wk.Server)
	if wk.N == 1 {
		who = fmt.Sprintf("1 %s worker", wk.Server)
	}
	if wk.Server == "" {
		who = fmt.Sprintf("%d workers", wk.N)
	}
	ev := BF107Evidence{
		TimeoutSeconds:   rt.Timeout.N,
		TimeoutSet:       rt.Timeout.Set,
		FailureThreshold: rt.Failure.N,
		SuccessThreshold: rt.Success.N,
		PeriodSeconds:    rt.Period.N,
		ReturnSeconds:    rt.ReturnAfter(),
		Workers:          wk.N,
		WorkersSource:    wk.Source,
		WorkerServer:     wk.Server,
		WorkersQueue:     wk.Queues,
	}
	mech := []string{
		fmt.Sprintf("failureThreshold: 1 is written out and the timeout is %d s (%s): one answer slower than that removes the pod from its Services' endpoints, and it returns only after successThreshold x periodSeconds = %d x %d = %d s of passing probes.",
			rt.Timeout.N, rt.Timeout.Phrase("timeoutSeconds"), rt.Success.N, rt.Period.N, rt.ReturnAfter()),
	}
	mech = append(mech, fmt.Sprintf("Container %s runs %s (%s; %s): each serves one request at a time, and the kubelet's probe is one more request, so when every worker is busy it waits in the listen backlog until one finishes: any request in flight for longer than %d s makes it miss.",
		c.Name, who, wk.Source, wk.Class, rt.Timeout.N))
	why := fmt.Sprintf("its probe waits behind the requests of its %s", who)
	if stretched {
		quota := cgroup.Quota(limit)
		perWorker := quota / time.Duration(wk.N)
		stretch := float64(cgroup.QuotaPeriod) / float64(perWorker)
		missAt := time.Duration(float64(timeout) / stretch)
		perWorkerMs, stretchX, missMs := ms(perWorker), round1(stretch), ms(missAt)
		ev.CPULimitMilli, ev.CPUPerWorkerMs, ev.Stretch, ev.MissCPUMs = &limit, &perWorkerMs, &stretchX, &missMs
		mech = append(mech, fmt.Sprintf("Its cpu limit %s is a CFS quota of %s per %s period shared by the %s (BF202): with all of them busy each runs %s of every %s, so a request takes %.1fx its CPU time, and a probe queued behind one of more than %s of CPU already misses the %d s timeout.",
			cgroup.FormatMilliCPU(limit), msText(quota), msText(cgroup.QuotaPeriod), who, msText(perWorker), msText(cgroup.QuotaPeriod), stretch, msText(missAt), rt.Timeout.N))
		why += fmt.Sprintf(", stretched %.1fx by a cpu limit of %s", stretch, cgroup.FormatMilliCPU(limit))
	}
	mech = append(mech,
		fmt.Sprintf("The replica count does not dilute it: each pod leaves on its own slow answer, for at least %d s each time, so the share of pods out of rotation is the share of time one pod spends out, at 20 replicas as at 2 (BF104 counts pods; this is the chance of one slow answer). The pods left in rotation take the load of those out, which makes their next answer slower.", rt.ReturnAfter()),
		"Busy pods leave rotation just when the traffic needs them; a load balancer that routes by the pods' readiness sees backends come and go under load (datacommonsorg/website PR #6624: 8 sync gunicorn workers, a queued /healthz over 1 s, flapping, load balancer 502s).",
	)
	return rules.Report{
		At:        t.Owner,
		Path:      at.Child("readinessProbe", "failureThreshold"),
		Container: c.Name,
		Message: fmt.Sprintf("readiness probe %s takes a pod out on its first answer slower than %d s, and %s: under load the pods drop one slow answer at a time, at any replica count",
			probe.Describe(rp), rt.Timeout.N, why),
		Mechanism: mech,
		Evidence:  ev,
		Fix: &finding.Fix{
			Description: fmt.Sprintf("Let a probe wait for a worker and take a pod out only when it stays slow: timeoutSeconds %d, failureThreshold %d (%d x %d = %d s of slow answers in a row). A cpu limit below one CPU is BF202's to remove.",
				max(flapFixTimeout, rt.Timeout.N), flapFixFailures, flapFixFailures, rt.Period.N, flapFixFailures*rt.Period.N),
			Type: finding.StrategicMergePatch,
			Patch: fix.ContainerPatch(t, c.Name, map[string]any{
				"readinessProbe": map[string]any{"timeoutSeconds": max(flapFixTimeout, rt.Timeout.N), "failureThreshold": flapFixFailures},
			}),
		},
	}
}

// ms is a duration in milliseconds, for evidence: 22.5.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// msText renders a duration in milliseconds: "22.5 ms".
func msText(d time.Duration) string { return fmt.Sprintf("%g ms", round1(ms(d))) }

func round1(x float64) float64 { return float64(int64(x*10+0.5)) / 10 }
