package termination

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"backfire.dev/backfire/internal/classify"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/model/stop"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/rules/podfacts"
)

// BF601: the stop of a database ends in SIGKILL, so every rolling update,
// drain, eviction and scale down is a crash, and the next start a crash
// recovery.
var BF601 = rules.Register(&rules.Rule{
	ID:       "BF601",
	Slug:     "shutdown-ends-in-sigkill",
	Severity: finding.Warning, // error when the recovery that follows loops (BF101, BF105)
	Summary:  "A database's stop ends in SIGKILL: a shell as PID 1 swallows the stop signal, PostgreSQL's SIGTERM waits for every client, or the stop window is shorter than its clean stop. Every rolling update and drain becomes a crash recovery.",
	Kinds:    object.WorkloadKinds,
	Reads:    []string{"ConfigMap", index.WorkloadRefs},
	Check:    &rules.Scan{Run: runBF601},
	Fix: rules.FixFields{
		Sets: []string{"pod.terminationGracePeriodSeconds", "container.lifecycle", "container.command", "container.args"},
		From: []string{"pod.terminationGracePeriodSeconds", "container.lifecycle", "container.command", "container.args", "container.resources"},
	},
	Evidence: []any{BF601Evidence{}},
})

// The causes a finding names, in its evidence.
const (
	causeShell = "pid1-shell"
	causeSmart = "smart-shutdown"
	causeShort = "short-window"
)

// fastStop is the preStop hook the fix gives PostgreSQL: SIGINT to PID 1,
// the postmaster, is a fast shutdown, and the SIGTERM that follows is a
// lesser mode it ignores.
var fastStop = []string{"sh", "-c", "kill -INT 1"}

func runBF601(p *rules.Pass) {
	t := p.PodTemplate()
	if t == nil {
		return
	}
	rate := p.Config().StopWriteMiBPerSecond()
	for _, ct := range t.Containers() {
		c := ct.Container
		v := podfacts.Classify(p, c)
		if !v.DatabaseLike || v.Server.NoCrashRecovery {
			continue // nothing to recover, or nothing stored
		}
		b := bf601{t: t, at: ct.Path(), c: c, v: v}
		b.pid1 = classify.PID1Of(c, v)
		b.signal = classify.StopSignalOf(c)
		b.grace = stop.DefaultGracePeriod
		if g := t.Spec.TerminationGracePeriodSeconds; g != nil {
			b.grace, b.graceSet = int(*g), true
		}
		b.preStop, b.preStopKnown, b.hasPreStop = stop.PreStopSeconds(c)
		b.window, b.windowBefore = stop.Window(b.grace, b.preStop)
		b.clean, b.cleanKnown = classify.CleanStopOf(c, v, rate)
		b.rate = rate
		if b.pid1.Keeps {
			b.causes = append(b.causes, causeShell)
		}
		if v.Server.Name == "PostgreSQL" && b.signal.Signal == "SIGTERM" {
			if fast, known := preStopStopsFast(c, podfacts.Files(p, t, c)); known && !fast {
				b.causes = append(b.causes, causeSmart)
			}
		}
		if b.cleanKnown && b.window < b.clean.Seconds {
			b.causes = append(b.causes, causeShort)
		}
		if len(b.causes) == 0 {
			continue
		}
		b.loop, b.looping = podfacts.RecoveryLoop(p, t, c, v)
		p.Report(b.finding())
	}
}

// preStopStopsFast says whether the preStop hook stops PostgreSQL in a
// fast or immediate shutdown itself: pg_ctl stop (fast by default since
// PostgreSQL 9.5) other than -m smart, SIGINT or SIGQUIT to PID 1, or
// Bitnami's postgresql_stop, which runs pg_ctl stop -m
// $POSTGRESQL_SHUTDOWN_MODE, fast unless the container sets it
// (bitnami/containers libpostgresql.sh; the image's README, "Stopping
// settings"). A hook that runs a script the input does not hold, or an
// httpGet, is not known: known is false, and nothing is assumed.
func preStopStopsFast(c *corev1.Container, files classify.Files) (fast, known bool) {
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil {
		return false, true
	}
	h := c.Lifecycle.PreStop
	if h.Exec == nil {
		return false, h.Sleep != nil // a sleep stops nothing; an httpGet may
	}
	text := " " + strings.Join(h.Exec.Command, " ") + " "
	if fastStopIn(text, c) {
		return true, true
	}
	// A script file the hook runs, by path or as sh -c's command.
	argv := h.Exec.Command
	if len(argv) >= 3 && isShell(argv[0]) && strings.HasPrefix(argv[1], "-") && strings.Contains(argv[1], "c") {
		argv = strings.Fields(argv[2])
	} else if len(argv) >= 2 && isShell(argv[0]) && !strings.HasPrefix(argv[1], "-") {
		argv = argv[1:] // bash /pre-stop.sh
	}
	if len(argv) == 0 || !strings.HasPrefix(argv[0], "/") {
		return false, true // an inline command, read above
	}
	if _, ok, _ := stop.PreStopSeconds(c); ok {
		return false, true // sleep N
	}
	if files == nil {
		return false, false
	}
	f, ok := files(argv[0])
	if !ok {
		return false, false
	}
	return fastStopIn(" "+f.Text+" ", c), true
}

func isShell(p string) bool {
	switch p[strings.LastIndexByte(p, '/')+1:] {
	case "sh", "bash", "ash", "dash":
		return true
	}
	return false
}

// fastStopIn reads a command line or script for a fast shutdown.
func fastStopIn(text string, c *corev1.Container) bool {
	if strings.Contains(text, "pg_ctl") && strings.Contains(text, " stop") {
		return !strings.Contains(text, "-m smart") && !strings.Contains(text, "-ms ") && !strings.Contains(text, "--mode=smart")
	}
	if strings.Contains(text, "postgresql_stop") {
		for _, e := range c.Env {
			if e.Name == "POSTGRESQL_SHUTDOWN_MODE" && e.Value == "smart" {
				return false
			}
		}
		return true
	}
	for _, k := range []string{"kill -INT 1", "kill -s INT 1", "kill -2 1", "kill -SIGINT 1", "kill -QUIT 1", "kill -s QUIT 1", "kill -3 1"} {
		if strings.Contains(text, " "+k+" ") || strings.Contains(text, " "+k+";") || strings.Contains(text, " "+k+"\n") {
			return true
		}
	}
	return false
}

// bf601 is one finding in the making.
type bf601 struct {
	t      *object.PodTemplate
	at     *field.Path
	c      *corev1.Container
	v      classify.Verdict
	pid1   classify.PID1
	signal classify.StopSignal
	causes []string

	grace                    int
	graceSet                 bool
	preStop                  int
	preStopKnown, hasPreStop bool
	window, windowBefore     int
	clean                    classify.CleanStop
	cleanKnown               bool
	rate                     int
	loop                     podfacts.Loop
	looping                  bool
}

func (b *bf601) has(cause string) bool {
	for _, c := range b.causes {
		if c == cause {
			return true
		}
	}
	return false
}

// windowPhrase spells the stop window out: "30 s (terminationGracePeriodSeconds
// 30 by default)", "2 s (terminationGracePeriodSeconds 30 - preStop sleep 30,
// at least 2 s, from Kubernetes 1.28; 30 s up to 1.27)".
func (b *bf601) windowPhrase() string {
	g := fmt.Sprintf("terminationGracePeriodSeconds %d", b.grace)
	if !b.graceSet {
		g += " by default"
	}
	switch {
	case !b.hasPreStop:
		return fmt.Sprintf("%d s (%s)", b.window, g)
	case !b.preStopKnown:
		return fmt.Sprintf("at most %d s (%s, less what the preStop hook takes, from Kubernetes 1.28; %d s up to 1.27)", b.grace, g, b.windowBefore)
	}
	return fmt.Sprintf("%d s (%s - preStop %d s, at least 2 s, from Kubernetes 1.28; %d s up to 1.27, when the preStop did not count)", b.window, g, b.preStop, b.windowBefore)
}

func (b *bf601) finding() rules.Report {
	c, v, s := b.c, b.v, b.v.Server
	win := b.windowPhrase()
	mech := []string{
		fmt.Sprintf("Container %s is %s. Deleting its pod (a rolling update, a drain, an eviction, a scale down) stops it: the kubelet runs the preStop hook, if there is one, has the runtime send the container's stop signal, and SIGKILLs it when the stop window ends, after %s; the kubelet's killContainer and the runtime's StopContainer.",
			c.Name, classification(v), win),
	}
	var why []string
	path := b.at
	if b.has(causeShell) {
		path = b.at.Child(b.pid1.Field).Index(b.pid1.Index)
		mech = append(mech,
			fmt.Sprintf("PID 1 is %s -c, not %s: %s (%s).", b.pid1.Shell, s.Name, b.pid1.Why, b.pid1.Server),
			"PID 1 of a container's namespace receives only the signals it has a handler for, from outside as from inside (pid_namespaces(7)); a shell waiting for its child has none for SIGTERM or SIGINT, so the stop signal is dropped and the server never sees it. At the end of the window the runtime SIGKILLs the shell, and the kernel kills every process of the namespace with it.")
		why = append(why, fmt.Sprintf("PID 1 is a %s that does not exec %s, so the stop signal never reaches it", b.pid1.Shell, s.Name))
	}
	if b.has(causeSmart) {
		if path == b.at {
			path = b.at.Child("image")
		}
		mech = append(mech, fmt.Sprintf("%s's stop signal is SIGTERM: %s. For PostgreSQL SIGTERM is a smart shutdown: it refuses new connections and waits until every session has ended (PostgreSQL, \"Shutting Down the Server\"); an application's connection pool keeps its sessions open, so the server is still waiting when SIGKILL comes.",
			s.Name, b.signal.From))
		why = append(why, "its stop signal is SIGTERM, a smart shutdown that waits for every client")
	}
	if b.has(causeShort) {
		if path == b.at {
			if b.graceSet {
				path = b.t.SpecPath.Child("terminationGracePeriodSeconds")
			} else if b.hasPreStop {
				path = b.at.Child("lifecycle", "preStop")
			}
		}
		line := fmt.Sprintf("To stop cleanly %s needs about %d s: %s (%s, at the write rate assumed, thresholds.stopWriteMiBPerSecond), more than the %d s it has.",
			s.Name, b.clean.Seconds, b.clean.What, b.clean.Formula, b.window)
		if b.hasPreStop && b.preStopKnown && b.windowBefore >= b.clean.Seconds {
			line += fmt.Sprintf(" Up to Kubernetes 1.27 it got %d s, which was enough: the preStop hook started counting against the grace period in 1.28.", b.windowBefore)
		}
		mech = append(mech, line)
		why = append(why, fmt.Sprintf("its clean stop needs about %d s of the %d s it has", b.clean.Seconds, b.window))
	}
	after := "so the next start is a crash recovery: " + s.Name + " " + s.Recovery
	switch s.Name {
	case "PostgreSQL":
		after = "so the next start is a crash recovery: PostgreSQL replays its WAL from the last checkpoint's redo record, and refuses connections (57P03) until it is done"
	case "Redis":
		after = "so the RDB file it was writing is thrown away: the writes since its last completed snapshot are lost, and the next start loads the older snapshot"
	}
	mech = append(mech, "A SIGKILL in the middle of a shutdown leaves the data as a crash does, "+after+".")
	sev := finding.Warning
	tail := "every rolling update and drain becomes a crash recovery"
	if s.Name == "Redis" {
		tail = "every rolling update and drain loses the writes since the last snapshot"
	}
	if b.looping {
		sev = finding.Error
		mech = append(mech, fmt.Sprintf("And that recovery does not finish if it takes longer than %d s: the %s probe of this container kills it at %s = %d s (%s), so any rolling update or drain can start the loop %s describes.",
			b.loop.Seconds, b.loop.Probe, b.loop.Formula, b.loop.Seconds, b.loop.Rule, b.loop.Rule))
		tail += fmt.Sprintf(", which the %s probe kills after %d s (%s): the restart loops", b.loop.Probe, b.loop.Seconds, b.loop.Rule)
	} else {
		mech = append(mech, "Every rolling update, drain and eviction pays that price; a node drain stops each replica in turn.")
	}
	var assumed []string
	if b.pid1.Assumed != "" && b.has(causeShell) {
		assumed = append(assumed, b.pid1.Assumed)
	}
	if b.has(causeShort) {
		assumed = append(assumed, fmt.Sprintf("%s writes at %d MiB/s as it stops (thresholds.stopWriteMiBPerSecond); a faster disk shortens the clean stop, a throttled volume lengthens it.", s.Name, b.rate))
	}
	if b.has(causeSmart) {
		assumed = append(assumed, "a client keeps a connection open when the pod stops, as a connection pool does; with no client connected the smart shutdown finishes at once.")
	}
	ev := BF601Evidence{
		Server:                 s.Name,
		Classification:         v.EvidenceString(),
		Causes:                 b.causes,
		GracePeriodSeconds:     b.grace,
		GraceSet:               b.graceSet,
		WindowSeconds:          b.window,
		WindowBefore128Seconds: b.windowBefore,
		StopSignal:             b.signal.Signal,
		StopSignalFrom:         b.signal.From,
	}
	if b.hasPreStop && b.preStopKnown {
		n := b.preStop
		ev.PreStopSeconds = &n
	}
	if b.has(causeShell) {
		ev.PID1 = b.pid1.Shell + " -c " + b.pid1.Script
	}
	if b.cleanKnown {
		n := b.clean.Seconds
		ev.CleanStopSeconds, ev.CleanStop = &n, b.clean.Formula
	}
	if b.looping {
		n := b.loop.Seconds
		ev.RecoveryLoop, ev.RecoveryLoopSeconds = b.loop.Rule, &n
	}
	return rules.Report{
		At:          b.t.Owner,
		Path:        path,
		Container:   c.Name,
		Severity:    sev,
		Message:     fmt.Sprintf("%s's stop ends in SIGKILL after %d s: %s; %s", s.Name, b.window, strings.Join(why, ", and "), tail),
		Mechanism:   mech,
		Evidence:    ev,
		Assumptions: assumed,
		Fix:         b.fix(),
	}
}

// fix composes what each cause needs into one patch: exec in front of the
// server's command, a preStop hook that starts a fast shutdown, and a
// grace period that covers the clean stop. A cause only a person can
// repair makes the whole fix a manual change.
func (b *bf601) fix() *finding.Fix {
	c, s := b.c, b.v.Server
	pod, fields := map[string]any{}, map[string]any{}
	var desc, manual []string
	if b.has(causeShell) {
		if b.pid1.Exec == "" {
			manual = append(manual, fmt.Sprintf("Restructure the %s -c script so that %s is its last command and runs with exec (or trap TERM and INT and pass them on): %s.", b.pid1.Shell, s.Name, b.pid1.Why))
		} else {
			list := c.Command
			if b.pid1.Field == "args" {
				list = c.Args
			}
			argv := append([]string{}, list...)
			argv[b.pid1.Index] = b.pid1.Exec
			fields[b.pid1.Field] = argv
			desc = append(desc, fmt.Sprintf("Run %s with exec, so that it replaces the shell as PID 1 and gets the stop signal itself: %q.", s.Name, b.pid1.Exec))
		}
	}
	if b.has(causeSmart) {
		if b.hasPreStop {
			manual = append(manual, "Make the preStop hook start a fast shutdown first (kill -INT 1, SIGINT to the postmaster, or pg_ctl stop -m fast): the stop signal SIGTERM is a smart shutdown that waits for every client.")
		} else {
			fields["lifecycle"] = map[string]any{"preStop": map[string]any{"exec": map[string]any{"command": fastStop}}}
			desc = append(desc, "Add a preStop hook that sends SIGINT to PID 1, the postmaster: a fast shutdown, which ends the sessions, writes the shutdown checkpoint and exits; the SIGTERM that follows is a milder mode, which PostgreSQL ignores once a fast shutdown is under way. (lifecycle.stopSignal: SIGINT would do the same, but it needs the ContainerStopSignals feature gate, alpha through Kubernetes 1.37.)")
		}
	}
	if b.has(causeShort) {
		pre := 0
		if b.hasPreStop && b.preStopKnown {
			pre = b.preStop
		}
		g := (pre + b.clean.Seconds + 10 + 9) / 10 * 10
		pod["terminationGracePeriodSeconds"] = g
		desc = append(desc, fmt.Sprintf("Give the pod terminationGracePeriodSeconds %d: the preStop's %d s, the clean stop's %d s (%s) and 10 s to spare, rounded up.", g, pre, b.clean.Seconds, b.clean.Formula))
	}
	if len(manual) > 0 {
		return &finding.Fix{Type: finding.ManualChange, Description: strings.Join(append(manual, desc...), " ")}
	}
	return &finding.Fix{
		Description: strings.Join(desc, " "),
		Type:        finding.StrategicMergePatch,
		Patch:       fix.PodPatch(b.t, pod, c.Name, fields),
	}
}
