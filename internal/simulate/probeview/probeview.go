// Package probeview is backfire simulate probe: it reads a workload's
// probes from a manifest, runs the probe simulator on them and on the same
// workload with the rule's fix applied (the strategic merge patch BF101,
// BF105 or BF102 proposes), and reports both.
package probeview

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"backfire.dev/backfire/internal/catalog"
	"backfire.dev/backfire/internal/classify"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/model/probe"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/scan"
	"backfire.dev/backfire/internal/simulate/probesim"
)

// Options are the simulation's inputs besides the manifest.
type Options struct {
	Container string // "" picks the first container with a liveness or startup probe
	Latency   probesim.Latency
	Recovery  float64 // seconds
	Hours     float64
	// AfterCrash starts the simulation in crash recovery
	// (probesim.Config.AfterCrash).
	AfterCrash bool
	// BackoffCap is the node's cap on the restart back-off, seconds
	// (probesim.Config.BackoffCap; 0 is the default, 300).
	BackoffCap int
}

// Run is one configuration's simulation.
type Run struct {
	Label     string // "as written", "with the fix"
	Container string
	Liveness  *probesim.Probe
	Startup   *probesim.Probe
	// Readiness is nil when the container has none; Ready then is zero.
	Readiness *probesim.Probe
	Result    probesim.Timeline
	Ready     probesim.ReadyStats
	// NeverEnds and Budget: the arithmetic's verdict on a recovery of
	// this length (see probesim.NeverEnds).
	NeverEnds bool
	Budget    int
	// AfterCrash: the run started in crash recovery.
	AfterCrash bool
}

// Report is the simulation of a workload as written and with its fix.
type Report struct {
	Object    object.Ref
	File      string
	Container string
	Server    string // "PostgreSQL", "" when not a known server
	Latency   string
	Recovery  float64
	Hours     float64
	// AfterCrash: the first start was a crash recovery too.
	AfterCrash bool
	AsWritten  Run
	// Fixed is nil when no rule proposes a fix for the container.
	Fixed *Run
	Fix   *finding.Finding
	// Assumptions are stated in every output.
	Assumptions []string
}

// Simulate reads the manifest (a file or stdin stream) and simulates the
// first workload with probes (or the named container's).
func Simulate(name string, data []byte, opts Options) (*Report, error) {
	f := load.Parse(name, data)
	res, err := scan.Run(scan.Options{Extra: []load.File{f}, Catalog: catalog.Family("probes")})
	if err != nil {
		return nil, err
	}
	if len(res.Errors) > 0 {
		return nil, res.Errors[0]
	}
	for _, o := range res.Objects {
		t := o.PodTemplate()
		if t == nil {
			continue
		}
		for i := range t.Spec.Containers {
			c := &t.Spec.Containers[i]
			if opts.Container != "" && c.Name != opts.Container || opts.Container == "" && c.LivenessProbe == nil && c.StartupProbe == nil {
				continue
			}
			return simulate(o, t, c, res.Findings, opts)
		}
	}
	if opts.Container != "" {
		return nil, fmt.Errorf("%s: no workload has a container named %q", name, opts.Container)
	}
	return nil, fmt.Errorf("%s: no workload with a liveness or startup probe", name)
}

func simulate(o *object.Object, t *object.PodTemplate, c *corev1.Container, fs []finding.Finding, opts Options) (*Report, error) {
	v := classify.Container(o.Kind, c)
	rep := &Report{Object: o.Ref, File: o.Doc.File, Container: c.Name, Latency: opts.Latency.String(), Recovery: opts.Recovery, Hours: opts.Hours, AfterCrash: opts.AfterCrash,
		Assumptions: []string{
			fmt.Sprintf("the server exits %d s after SIGTERM (at most the grace period) and a restarted container runs %d s after the kubelet restarts it", probesim.ShutdownSeconds, probesim.StartSeconds),
			"a kill is a crash: every start after a kill recovers for the full recovery time, from scratch",
			"exec, httpGet and grpc probes take the latency given; the kernel answers a tcpSocket probe at once, whatever the latency",
		}}
	if v.Server != nil {
		rep.Server = v.Server.Name
	}
	if _, ok := opts.Latency.(*probesim.Quantiles); ok {
		rep.Assumptions = append(rep.Assumptions, "latencies are drawn independently for each probe from the quantiles (log-interpolated; half the lowest quantile at the bottom, twice the highest at the top), with a fixed seed")
	}
	rep.AsWritten = play("as written", o.Kind, c, t.Spec.TerminationGracePeriodSeconds, v, opts)
	if f := fixFor(fs, o.Ref, c.Name, rep.AsWritten.Result.Kills); f != nil {
		fixed, err := applyFix(o, f, c.Name)
		if err != nil {
			return nil, fmt.Errorf("%s fix for %s: %w", f.Rule, o.Ref, err)
		}
		run := play("with the "+f.Rule+" fix", o.Kind, fixed.c, fixed.t.Spec.TerminationGracePeriodSeconds, v, opts)
		rep.Fixed, rep.Fix = &run, f
	}
	return rep, nil
}

// fixFor picks the fix to compare: the one for the probe that kills in
// the run as written (BF105's raises the startup budget, BF101's makes
// liveness pass during recovery), else BF101's, BF105's, then BF102's,
// which only widens the timeout.
func fixFor(fs []finding.Finding, obj object.Ref, container string, kills []probesim.Kill) *finding.Finding {
	byRule := map[string]*finding.Finding{}
	for i := range fs {
		f := &fs[i]
		if f.Container == container && f.Object == obj && f.Fix != nil && f.Fix.Type == finding.StrategicMergePatch && byRule[f.Rule] == nil {
			byRule[f.Rule] = f
		}
	}
	order := []string{"BF101", "BF105", "BF102"}
	if len(kills) > 0 && kills[len(kills)-1].Probe == "startup" {
		order = []string{"BF105", "BF101", "BF102"}
	}
	for _, id := range order {
		if f := byRule[id]; f != nil {
			return f
		}
	}
	return nil
}

func play(label, kind string, c *corev1.Container, grace *int64, v classify.Verdict, opts Options) Run {
	r := Run{Label: label, Container: c.Name, AfterCrash: opts.AfterCrash,
		Liveness:  simProbe("liveness", kind, c, c.LivenessProbe, grace, v),
		Startup:   simProbe("startup", kind, c, c.StartupProbe, grace, v),
		Readiness: simProbe("readiness", kind, c, c.ReadinessProbe, grace, v)}
	cfg := probesim.Config{Liveness: r.Liveness, Startup: r.Startup, Readiness: r.Readiness, Recovery: opts.Recovery, AfterCrash: opts.AfterCrash, Latency: opts.Latency, Duration: opts.Hours * 3600, BackoffCap: opts.BackoffCap}
	r.Result = probesim.Run(cfg)
	r.NeverEnds, r.Budget = probesim.NeverEnds(cfg)
	if r.Readiness != nil {
		r.Ready = r.Result.ReadyStats()
	}
	return r
}

func simProbe(name, kind string, c *corev1.Container, p *corev1.Probe, grace *int64, v classify.Verdict) *probesim.Probe {
	if p == nil {
		return nil
	}
	q := classify.Probe(kind, c, p, v)
	fails := q.Queries || p.TCPSocket != nil && v.Server != nil && v.Server.PortClosedDuringRecovery
	// Every handler but tcpSocket waits for the program's answer, so the
	// latency given applies to it; the kernel answers a tcpSocket probe.
	return &probesim.Probe{Name: name, Timing: probe.TimingOf(p, grace), Query: p.TCPSocket == nil, FailsDuringRecovery: fails, Handler: probe.Describe(p)}
}

type fixedContainer struct {
	t *object.PodTemplate
	c *corev1.Container
}

// applyFix applies a finding's strategic merge patch to the object it
// targets, with the shared applier (fix.Apply), and returns the patched container.
func applyFix(o *object.Object, f *finding.Finding, container string) (*fixedContainer, error) {
	target := o
	if f.Fix.Target != nil && *f.Fix.Target != o.Ref {
		return nil, fmt.Errorf("the fix targets %s, not in this simulation", f.Fix.Target)
	}
	out, err := fix.Apply(target.Doc.JSON, f.Fix.Patch, target.Typed)
	if err != nil {
		return nil, err
	}
	patched := load.Parse(o.Doc.File, out)
	if len(patched.Documents) != 1 {
		return nil, fmt.Errorf("the patched object does not parse: %v", patched.Errors)
	}
	po, lerr := object.Decode(patched.Documents[0])
	if lerr != nil {
		return nil, lerr
	}
	t := po.PodTemplate()
	if t == nil {
		return nil, fmt.Errorf("the patched object has no pod template")
	}
	for i := range t.Spec.Containers {
		if t.Spec.Containers[i].Name == container {
			return &fixedContainer{t: t, c: &t.Spec.Containers[i]}, nil
		}
	}
	return nil, fmt.Errorf("container %s is gone after the patch", container)
}

// Describe is one probe as kubectl describe pod prints it:
// "exec [/docker-healthcheck.sh] delay=300s timeout=1s period=10s #failure=3".
func Describe(p *probesim.Probe) string {
	if p == nil {
		return "none"
	}
	s := fmt.Sprintf("%s delay=%ds timeout=%ds period=%ds", p.Handler, p.InitialDelay.N, p.Timeout.N, p.Period.N)
	if p.Success.N != 1 { // only readiness may say otherwise
		s += fmt.Sprintf(" #success=%d", p.Success.N)
	}
	return s + fmt.Sprintf(" #failure=%d", p.Failure.N)
}

// DuringRecovery says what the probe does while the server recovers.
func DuringRecovery(p *probesim.Probe) string {
	switch {
	case p == nil:
		return "-"
	case p.FailsDuringRecovery:
		return "fails"
	}
	return "passes"
}
