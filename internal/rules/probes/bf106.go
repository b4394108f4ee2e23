package probes

import (
	"fmt"
	"strconv"
	"strings"

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

// BF106: the converse of BF101. A readiness probe that passes while the
// server recovers or loads its data marks a pod Ready that answers every
// request with an error, and everything that waits for Ready (the
// Service, a rolling update, a PodDisruptionBudget) moves on.
var BF106 = rules.Register(&rules.Rule{
	ID:       "BF106",
	Slug:     "readiness-passes-during-recovery",
	Severity: finding.Warning,
	Summary:  "A database's readiness probe passes while the server recovers or loads its data: the pod is Ready while it answers errors, and rolling updates and drains move on to the next pod.",
	Kinds:    object.WorkloadKinds,
	Reads:    []string{"ConfigMap", index.Autoscalers, index.WorkloadRefs},
	Check:    &rules.Scan{Run: runBF106},
	Fix:      rules.FixFields{Sets: []string{"container.readinessProbe"}, From: []string{"container.readinessProbe", "container.ports", "container.env"}},
	Evidence: []any{BF106Evidence{}},
})

func runBF106(p *rules.Pass) {
	t := p.PodTemplate()
	if t == nil {
		return
	}
	for _, ct := range t.Containers() {
		c := ct.Container
		rp := c.ReadinessProbe
		if rp == nil {
			continue
		}
		v := podfacts.Classify(p, c)
		if !v.DatabaseLike {
			continue
		}
		q := podfacts.ProbeQuery(p, t, c, rp)
		if !q.PassesDuringRecovery(v) {
			continue
		}
		if rp.TCPSocket != nil && !classify.ServerPortOf(v, classify.ResolvePort(c, rp.TCPSocket.Port)) {
			continue // another port: when it opens is not known
		}
		p.Report(bf106Finding(t, ct.Path(), c, v, q, podsOf(p)))
	}
}

// pods is how many pods may serve behind the object's Services.
type pods struct {
	max int
	how string
}

func podsOf(p *rules.Pass) pods {
	o := p.Object
	switch o.Kind {
	case "Pod":
		return pods{1, "a bare Pod is one pod"}
	case "DaemonSet":
		return pods{2, "a DaemonSet runs one pod per node"}
	}
	rep := p.Index.ReplicasOf(o)
	switch {
	case rep.Set:
		return pods{int(rep.Max), "spec.replicas " + strconv.Itoa(int(rep.Max))}
	case len(rep.ScaledBy) > 0:
		s := rep.ScaledBy[0].Object
		return pods{int(rep.Max), fmt.Sprintf("replicas from %s %s (%d..%d)", s.Kind, s.Name, rep.Min, rep.Max)}
	}
	return pods{1, "spec.replicas unset, default 1"}
}

func bf106Finding(t *object.PodTemplate, at *field.Path, c *corev1.Container, v classify.Verdict, q classify.ProbeQuery, n pods) rules.Report {
	rp := c.ReadinessProbe
	rt := probe.TimingOf(rp, nil)
	s := v.Server
	answer := s.RecoveryAnswer(c.Image)
	mech := []string{
		"Container " + c.Name + " is " + classification(v) + ", and its readiness probe passes while it recovers: " + q.Evidence + ".",
		"Every start after a crash, a rolling update or a drain begins with recovery or loading, during which " + s.Name + " " + answer +
			"; the probe passes all the same, within " + strconv.Itoa(rt.InitialDelay.N+rt.Period.N) + " s of the start (" +
			rt.InitialDelay.Phrase("initialDelaySeconds") + ", " + rt.Period.Phrase("periodSeconds") + "), and the pod is Ready.",
		"A Ready pod is a ready endpoint of its Services (the EndpointSlice controller publishes the pod's Ready condition): clients sent to it get errors for as long as the recovery lasts, instead of another pod, or a refused connection they would retry.",
	}
	sev := finding.Warning
	if n.max > 1 {
		mech = append(mech,
			"Pods: "+n.how+". Everything that waits for Ready moves on while this pod still recovers: a rolling update replaces the next pod as soon as this one is Ready (a StatefulSet with maxUnavailable 1 counts a pod available once Ready for minReadySeconds), and a PodDisruptionBudget counts it as healthy, so a drain evicts the next one too; in the end every pod recovers at once.")
	} else {
		sev = finding.Info
		mech = append(mech,
			"Pods: "+n.how+", so clients fail while it recovers either way; what the probe changes is that the pod reports Ready: kubectl rollout status, helm --wait and a GitOps health check call it healthy while it answers only errors.")
	}
	fx := bf106Fix(t, c, v, rp)
	return rules.Report{
		At:        t.Owner,
		Path:      at.Child("readinessProbe"),
		Container: c.Name,
		Severity:  sev,
		Message:   "readiness probe " + probe.Describe(rp) + " passes while " + s.Name + " recovers (it " + answer + "): the pod is Ready and gets traffic while it can only answer errors",
		Mechanism: mech,
		Evidence: BF106Evidence{
			Handler:        probe.Handler(rp),
			Server:         s.Name,
			Classification: v.EvidenceString(),
			ProbePasses:    q.Evidence,
			Pods:           n.max,
		},
		Assumptions: fx.assumed,
		Fix:         fx.fix,
	}
}

// bf106Fixed is the fix and what it assumes.
type bf106Fixed struct {
	fix     *finding.Fix
	assumed []string
}

// fixReadyTimeout gives a check that now waits for the server's answer
// the time BF101's fix gives a query.
const fixReadyTimeout = fixQueryTimeout

// bf106Fix replaces the readiness handler with a check that needs the
// server to answer: pg_isready (exit 1 while PostgreSQL rejects
// connections), redis-cli ping compared with PONG, the readiness path of a
// server that replays its log. Other servers get a manual change.
func bf106Fix(t *object.PodTemplate, c *corev1.Container, v classify.Verdict, rp *corev1.Probe) bf106Fixed {
	s := v.Server
	port, portWhy := classify.ServerPort(c, v)
	if rp.TCPSocket != nil {
		port, portWhy = classify.ResolvePort(c, rp.TCPSocket.Port), "the port the probe opens"
	}
	old := probe.Handler(rp)
	handler, value, desc, assumed := "", any(nil), "", []string(nil)
	switch s.Name {
	case "PostgreSQL":
		if port == 0 {
			break
		}
		handler = "exec"
		p := strconv.Itoa(int(port))
		value = map[string]any{"command": []any{"pg_isready", "-h", "127.0.0.1", "-p", p}}
		desc = "Make the readiness probe ask PostgreSQL: pg_isready -h 127.0.0.1 -p " + p + " (" + portWhy + "), which exits 1 while it rejects connections in crash recovery and 0 once it accepts them, whatever the credentials (libpq internal_ping)."
	case "Redis":
		cmd, ok := redisPing(c, rp, port)
		if !ok {
			break
		}
		handler = "exec"
		value = map[string]any{"command": []any{"sh", "-c", cmd}}
		desc = "Make the readiness probe require PONG: " + cmd + ". The client prints the -LOADING error and exits 0 while the server loads its dataset; comparing its answer with PONG fails until the data is loaded. Keep the liveness probe as it is: the same check there would kill every load (BF101)."
		if !strings.Contains(cmd, "REDISCLI_AUTH") && !strings.Contains(cmd, " -a ") {
			assumed = append(assumed, "Redis is assumed to need no password for a ping from inside the container (no REDIS_PASSWORD in the container's environment, no -a in the probe): with a password, ping answers NOAUTH, which the old check also passed; set REDISCLI_AUTH in the probe's command.")
		}
	case "ZooKeeper":
		if port == 0 {
			break
		}
		cmd := `echo srvr | timeout 2 nc 127.0.0.1 ` + strconv.Itoa(int(port)) + ` | grep -q "^Mode: "`
		handler = "exec"
		value = map[string]any{"command": []any{"sh", "-c", cmd}}
		desc = "Make the readiness probe ask ZooKeeper whether it serves: " + cmd + ". srvr answers \"This ZooKeeper instance is not currently serving requests\" until the server runs, and its Mode line once it does (zookeeper StatCommand); srvr is the one four-letter command ZooKeeper 3.5.3 and later allow by default (4lw.commands.whitelist)."
	case "Prometheus", "Loki", "Mimir":
		path := "/ready"
		if s.Name == "Prometheus" {
			path = "/-/ready"
		}
		if port == 0 {
			break
		}
		scheme := corev1.URISchemeHTTP
		if rp.HTTPGet != nil && rp.HTTPGet.Scheme != "" {
			scheme = rp.HTTPGet.Scheme
		}
		handler = "httpGet"
		value = map[string]any{"path": path, "port": port, "scheme": string(scheme)}
		desc = fmt.Sprintf("Make the readiness probe ask %s's readiness endpoint: httpGet %s on port %d (%s), which answers 503 until its write-ahead log is replayed.", s.Name, path, port, portWhy)
	}
	if handler == "" {
		return bf106Fixed{fix: &finding.Fix{
			Type: finding.ManualChange,
			Description: fmt.Sprintf("Make the readiness probe check that %s answers a request (a query with its client, or its own health endpoint), not only that it accepts a connection: %s passes while it recovers. Give it timeoutSeconds %d.",
				s.Name, probe.Describe(rp), fixReadyTimeout),
		}}
	}
	fields := map[string]any{handler: value}
	if old != handler {
		fields[old] = nil
		desc += " The patch deletes the " + old + ` handler ("` + old + `": null): a strategic merge patch would otherwise keep both, which the API server rejects.`
	}
	if probe.TimingOf(rp, nil).Timeout.N < fixReadyTimeout {
		fields["timeoutSeconds"] = fixReadyTimeout
		desc += " timeoutSeconds " + strconv.Itoa(fixReadyTimeout) + ": the check now waits for the server's answer, and one slow answer should not take the pod out."
	}
	return bf106Fixed{
		fix: &finding.Fix{
			Description: desc,
			Type:        finding.StrategicMergePatch,
			Patch:       fix.ContainerPatch(t, c.Name, map[string]any{"readinessProbe": fields}),
		},
		assumed: assumed,
	}
}

// redisPing is the shell command of a readiness check that requires
// PONG: the probe's own redis-cli invocation when it is one simple
// command (it may carry -h, -p, -a or a socket), else redis-cli on the
// server's port, authenticated from REDIS_PASSWORD when the container sets
// it.
func redisPing(c *corev1.Container, rp *corev1.Probe, port int32) (string, bool) {
	if rp.Exec != nil {
		argv := rp.Exec.Command
		if len(argv) == 3 && isShell(argv[0]) && argv[1] == "-c" {
			// One simple command: inside "$( )" its expansions work as
			// they did (a command substitution quotes afresh).
			script := strings.TrimSpace(argv[2])
			if strings.ContainsAny(script, ";&|\n#") || !strings.HasSuffix(script, " ping") {
				return "", false
			}
			return `[ "$(` + script + `)" = PONG ]`, true
		}
		if len(argv) > 0 && strings.HasSuffix(argv[0], "-cli") && argv[len(argv)-1] == "ping" {
			for _, a := range argv {
				if strings.ContainsAny(a, ` "'$`+"`") {
					return "", false
				}
			}
			return `[ "$(` + strings.Join(argv, " ") + `)" = PONG ]`, true
		}
		return "", false
	}
	if port == 0 {
		return "", false
	}
	cli := redisCLI(c.Image) + " -p " + strconv.Itoa(int(port)) + " ping"
	for _, e := range c.Env {
		if e.Name == "REDIS_PASSWORD" {
			cli = `REDISCLI_AUTH="$REDIS_PASSWORD" ` + cli
		}
	}
	return `[ "$(` + cli + `)" = PONG ]`, true
}

// redisCLI is the client a Redis-protocol image ships: valkey-cli in a
// Valkey image, keydb-cli in a KeyDB one.
func redisCLI(image string) string {
	switch i := strings.ToLower(image); {
	case strings.Contains(i, "valkey"):
		return "valkey-cli"
	case strings.Contains(i, "keydb"):
		return "keydb-cli"
	}
	return "redis-cli"
}

func isShell(p string) bool {
	switch p[strings.LastIndexByte(p, '/')+1:] {
	case "sh", "bash", "ash", "dash":
		return true
	}
	return false
}
