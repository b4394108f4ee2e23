package printed

import (
	"backfire.dev/backfire/internal/lazyregexp"
	"encoding/json"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/observe"
)

// Unnamed stands for a pod or container the capture does not name.
const Unnamed = observe.Unnamed

// anchor is the clock printed ages are placed on (see observe.CaptureTime).
var anchor = observe.CaptureTime

// Observe turns a capture into the pods and events the diagnosis reads.
// Events whose row names no object go to the capture's only pod, or to its
// unnamed one; events about other objects are kept (diagnose counts them).
func (c *Capture) Observe() (pods []*observe.Pod, events []observe.Event, errs []load.Error) {
	// Loose events: attach them to the pods they name, or the one pod.
	named := map[string]*Pod{}
	for _, p := range c.Pods {
		if p.Name != "" {
			named[p.Name] = p
		}
	}
	var loose []Event
	for _, e := range c.Loose {
		switch {
		case e.Kind == "Pod" && e.Name != "":
			p := named[e.Name]
			if p == nil {
				p = &Pod{Name: e.Name, Namespace: e.Namespace, Line: e.Line}
				named[e.Name] = p
				c.Pods = append(c.Pods, p)
			}
			p.Events = append(p.Events, e)
			addForm(&p.Forms, formOf(e))
		case e.Kind != "":
			if ev, err := c.event(e, object.Ref{APIVersion: "v1", Kind: e.Kind, Namespace: e.Namespace, Name: e.Name}); err != nil {
				errs = append(errs, *err)
			} else {
				events = append(events, ev)
			}
		default:
			loose = append(loose, e)
		}
	}
	if len(loose) > 0 {
		target := (*Pod)(nil)
		for _, p := range c.Pods {
			if p.Name == "" {
				target = p
			}
		}
		if target == nil && len(c.Pods) == 1 {
			target = c.Pods[0]
		}
		if target == nil {
			target = &Pod{Line: loose[0].Line}
			c.Pods = append(c.Pods, target)
		}
		target.Events = append(target.Events, loose...)
		for _, e := range loose {
			addForm(&target.Forms, formOf(e))
		}
	}
	c.mergeUnnamed()
	for _, p := range c.Pods {
		op, evs, perrs := c.pod(p)
		errs = append(errs, perrs...)
		if op != nil {
			pods = append(pods, op)
		}
		events = append(events, evs...)
	}
	return pods, events, errs
}

// mergeUnnamed joins the lines that name no pod (container fragments,
// Events rows) to the capture's only named pod when that pod has no
// container block of its own: "kubectl describe pod web | grep Liveness"
// beside kubectl get events rows about pod/web is one pod, not two.
func (c *Capture) mergeUnnamed() {
	var loose, named *Pod
	for _, p := range c.Pods {
		switch {
		case p.Name == "" && loose == nil:
			loose = p
		case p.Name == "":
			return
		case named != nil:
			return
		default:
			named = p
		}
	}
	if loose == nil || named == nil || len(named.Containers) > 0 {
		return
	}
	named.Containers = loose.Containers
	named.Events = append(named.Events, loose.Events...)
	named.EventsNone = named.EventsNone || loose.EventsNone
	for _, f := range loose.Forms {
		addForm(&named.Forms, f)
	}
	if loose.Line > 0 && loose.Line < named.Line {
		named.Line = loose.Line
	}
	c.Pods = slices.DeleteFunc(c.Pods, func(p *Pod) bool { return p == loose })
}

func formOf(e Event) string {
	switch {
	case e.Timeless:
		return "event messages"
	case e.Kind != "":
		return "kubectl get events"
	}
	return "Events table"
}

// pod rebuilds one pod.
func (c *Capture) pod(p *Pod) (*observe.Pod, []observe.Event, []load.Error) {
	var errs []load.Error
	bad := func(f Field, what string) {
		errs = append(errs, load.Error{File: c.Name, Line: f.Line, Message: fmt.Sprintf("%s %q is not a number; not used", what, f.Value)})
	}
	pr := &observe.Printed{Named: p.Name != ""}
	for _, f := range p.Forms {
		pr.AddForm(f)
	}
	name := p.Name
	if name == "" {
		name = Unnamed
	}
	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: p.Namespace}}
	pr.Mark("", p.Line)
	if p.Name != "" {
		pr.Mark("metadata.name", p.Line)
	}
	if p.NamespaceLine > 0 {
		pr.Mark("metadata.namespace", p.NamespaceLine)
	}
	if p.Status.Set() {
		pod.Status.Phase = corev1.PodPhase(p.Status.Value)
		pr.Mark("status.phase", p.Status.Line)
	}
	for _, f := range p.NodeSelectors {
		if k, v, ok := strings.Cut(f.Value, "="); ok {
			if pod.Spec.NodeSelector == nil {
				pod.Spec.NodeSelector = map[string]string{}
			}
			pod.Spec.NodeSelector[k] = v
			pr.Mark("spec.nodeSelector", f.Line)
		}
	}

	containers := p.Containers
	if len(containers) == 0 && (p.Row == nil || len(p.Events) > 0) {
		// Events alone: one container per name the events give, or one
		// unnamed container.
		for _, n := range eventContainers(p.Events) {
			containers = append(containers, &Container{Name: n, Line: p.Line})
		}
		if len(containers) == 0 {
			containers = append(containers, &Container{Line: p.Line})
		}
	}
	if len(containers) == 1 && containers[0].Name == "" {
		if ns := eventContainers(p.Events); len(ns) == 1 {
			containers[0].Name = ns[0]
		}
	}
	complete := len(containers) > 0 && p.Row == nil
	nInit, nMain := 0, 0
	unnamed := 0
	for _, ct := range containers {
		if ct.Name == "" {
			unnamed++
		}
	}
	nUnnamed := 0
	names := make([]string, len(containers))
	for i, ct := range containers {
		complete = complete && ct.Complete && ct.Image.Set()
		cname := ct.Name
		if cname == "" {
			// Several unnamed fragments are several containers, each
			// with its own name, or each finding would count twice.
			cname = Unnamed
			if nUnnamed++; unnamed > 1 {
				cname = fmt.Sprintf("(unnamed %d)", nUnnamed)
			}
		}
		names[i] = cname
		spec := corev1.Container{Name: cname, Image: ct.Image.Value}
		for _, a := range ct.Command {
			spec.Command = append(spec.Command, a.Value)
		}
		for _, a := range ct.Args {
			spec.Args = append(spec.Args, a.Value)
		}
		var sp, stp string
		// A status is listed only for a container that printed one: its
		// path is its index in that list, not in the spec's.
		if ct.Init {
			sp, stp = fmt.Sprintf("spec.initContainers[%d]", nInit), fmt.Sprintf("status.initContainerStatuses[%d]", len(pod.Status.InitContainerStatuses))
			nInit++
		} else {
			sp, stp = fmt.Sprintf("spec.containers[%d]", nMain), fmt.Sprintf("status.containerStatuses[%d]", len(pod.Status.ContainerStatuses))
			nMain++
		}
		pr.Mark(sp, ct.Line)
		if ct.Name != "" {
			pr.Mark(sp+".name", ct.Line)
		}
		if ct.Image.Set() {
			pr.Mark(sp+".image", ct.Image.Line)
		}
		if len(ct.Command) > 0 {
			pr.Mark(sp+".command", ct.Command[0].Line-1)
		}
		for _, k := range []struct {
			pr    *Probe
			field string
			set   func(*corev1.Probe)
		}{
			{ct.Liveness, "livenessProbe", func(x *corev1.Probe) { spec.LivenessProbe = x }},
			{ct.Readiness, "readinessProbe", func(x *corev1.Probe) { spec.ReadinessProbe = x }},
			{ct.Startup, "startupProbe", func(x *corev1.Probe) { spec.StartupProbe = x }},
		} {
			path := sp + "." + k.field
			if k.pr == nil {
				if ct.Complete {
					pr.MarkAbsent(path) // a whole block without it: absent, not cut off
				}
				continue
			}
			k.set(probeOf(k.pr))
			pr.Mark(path, k.pr.Line)
			for _, s := range []struct {
				name string
				v    int
			}{{"initialDelaySeconds", k.pr.Delay}, {"timeoutSeconds", k.pr.Timeout}, {"periodSeconds", k.pr.Period}, {"successThreshold", k.pr.Success}, {"failureThreshold", k.pr.Failure}} {
				if s.v >= 0 {
					pr.Mark(path+"."+s.name, k.pr.Line)
				}
			}
		}
		if ct.Complete {
			pr.Mark(sp+".resources", ct.Line)
		}
		for _, rl := range []struct {
			m    map[string]Field
			name string
			dst  *corev1.ResourceList
		}{{ct.Limits, "limits", &spec.Resources.Limits}, {ct.Requests, "requests", &spec.Resources.Requests}} {
			for k, f := range rl.m {
				q, err := resource.ParseQuantity(f.Value)
				if err != nil {
					errs = append(errs, load.Error{File: c.Name, Line: f.Line, Message: fmt.Sprintf("%s %s %q is not a quantity; not used", rl.name, k, f.Value)})
					continue
				}
				if *rl.dst == nil {
					*rl.dst = corev1.ResourceList{}
				}
				(*rl.dst)[corev1.ResourceName(k)] = q
				pr.Mark(sp+".resources."+rl.name+"."+k, f.Line)
			}
		}
		st := corev1.ContainerStatus{Name: cname}
		hasStatus := false
		pr.Mark(stp, ct.Line)
		if ct.RestartCount.Set() && ct.RestartCount.Value != "" {
			if n, err := strconv.Atoi(ct.RestartCount.Value); err == nil && n >= 0 {
				st.RestartCount = int32(min(n, 1<<30))
				pr.Mark(stp+".restartCount", ct.RestartCount.Line)
				hasStatus = true
			} else {
				bad(ct.RestartCount, "Restart Count")
			}
		}
		if ct.Ready.Set() {
			st.Ready = ct.Ready.Value == "True" || ct.Ready.Value == "true"
			pr.Mark(stp+".ready", ct.Ready.Line)
			hasStatus = true
		}
		for _, s := range []struct {
			in   State
			dst  *corev1.ContainerState
			path string
		}{{ct.State, &st.State, stp + ".state"}, {ct.LastState, &st.LastTerminationState, stp + ".lastState"}} {
			if !s.in.Set() {
				continue
			}
			hasStatus = true
			*s.dst = stateOf(s.in, s.path, pr, bad)
		}
		if ct.Init {
			pod.Spec.InitContainers = append(pod.Spec.InitContainers, spec)
			if hasStatus {
				pod.Status.InitContainerStatuses = append(pod.Status.InitContainerStatuses, st)
			}
		} else {
			pod.Spec.Containers = append(pod.Spec.Containers, spec)
			if hasStatus {
				pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, st)
			}
		}
	}
	if p.Row != nil && len(p.Containers) == 0 {
		rowStatus(pod, p.Row, pr, eventContainers(p.Events))
	}
	pr.Spec = complete && p.QoS.Set()
	pr.Lacks = lacks(p, pr, pod)
	if pr.Spec && (p.QoS.Value == "BestEffort") != bestEffort(pod) {
		// The QoS class kubectl printed disagrees with the limits and
		// requests read: some lines were lost in the paste.
		pr.Spec = false
		pr.Lacks = append(pr.Lacks, fmt.Sprintf("the limits and requests read do not give the printed QoS Class %s: lines are missing, so the static rules do not read this spec", p.QoS.Value))
	}

	var events []observe.Event
	ref := object.Ref{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: pod.Name}
	if p.Name == "" {
		ref.Name = ""
	}
	for _, e := range p.Events {
		if ev, err := c.event(e, ref); err != nil {
			errs = append(errs, *err)
		} else {
			if ev.Container == "" && len(containers) > 1 {
				ev.Container = probeOwner(e.Message, containers, names)
			}
			events = append(events, ev)
		}
	}

	data, err := json.Marshal(pod)
	if err != nil {
		return nil, events, append(errs, load.Error{File: c.Name, Line: p.Line, Message: "pod: " + err.Error()})
	}
	doc := &load.Document{File: c.Name, Line: max(p.Line, 1), JSON: data, APIVersion: "v1", Kind: "Pod",
		Origin: load.Origin{Kind: load.PrintedOutput, Text: "read from " + pr.Form() + " output"},
		Trace: func(_ *load.Document, path string, _ load.Position) load.Trace {
			return load.Trace{File: c.Name, Line: max(pr.Line(path), p.Line, 1), Column: 1}
		}}
	o, derr := object.Decode(doc)
	if derr != nil {
		return nil, events, append(errs, *derr)
	}
	op, _ := observe.PodOf(o)
	op.Printed = pr
	return op, events, errs
}

// probeOwner names the container whose probe an Unhealthy message is
// about when the message names its port ("Liveness probe failed: Get
// \"http://10.1.0.7:8080/healthz\": ..."; prober's "%s probe failed: %s")
// and exactly one container's probe of that kind uses that port.
func probeOwner(msg string, containers []*Container, names []string) string {
	kind, _, ok := strings.Cut(msg, " probe ")
	if !ok {
		return ""
	}
	owner := ""
	for i, ct := range containers {
		pr := map[string]*Probe{"Liveness": ct.Liveness, "Readiness": ct.Readiness, "Startup": ct.Startup}[kind]
		if pr == nil || (pr.Handler != "http-get" && pr.Handler != "tcp-socket") {
			continue
		}
		port := probePort().FindStringSubmatch(pr.Target)
		if port == nil || !regexp.MustCompile(`:`+port[1]+`\b`).MatchString(msg) {
			continue
		}
		if owner != "" {
			return ""
		}
		owner = names[i]
	}
	return owner
}

// probePort is the port of a printed http-get URL or tcp-socket target.
var probePort = lazyregexp.New(`:([0-9]+)(?:/|$|\s)`)

// rowStatus gives a pod read only from its kubectl get pods row one status,
// the pod's: the row sums the restarts of all its containers and shows the
// reason of one.
//
// A row whose READY says the pod has one container is that container's
// status; the events' container name (Killing "Container web failed
// liveness probe") then names it, so that the events about it still
// count (k8s.io/kubernetes pkg/printers/internalversion printPod: READY
// is ready/total of the spec's containers).
func rowStatus(pod *corev1.Pod, row *Row, pr *observe.Printed, named []string) {
	reason, init := initStatus(row.Status)
	name := Unnamed
	if _, total, _ := strings.Cut(row.Ready, "/"); total == "1" && !init {
		if len(named) == 1 {
			name = named[0]
		}
	} else {
		pr.PodLevel = true
	}
	st := corev1.ContainerStatus{Name: name, RestartCount: int32(min(row.Restarts, 1<<30))}
	if n, total, ok := strings.Cut(row.Ready, "/"); ok && n == total && n != "0" {
		st.Ready = true
	}
	path := "status.containerStatuses[0]"
	if init {
		path = "status.initContainerStatuses[0]"
	}
	pr.Mark(path+".restartCount", row.Line)
	pr.Mark(path+".ready", row.Line)
	switch reason {
	case "Running":
		st.State.Running = &corev1.ContainerStateRunning{}
		pr.Mark(path+".state.running", row.Line)
	case "OOMKilled", "Error", "Completed", "ContainerCannotRun", "DeadlineExceeded", "StartError":
		st.State.Terminated = &corev1.ContainerStateTerminated{Reason: reason}
		pr.Mark(path+".state.terminated.reason", row.Line)
	default:
		if strings.HasPrefix(reason, "ExitCode:") || strings.HasPrefix(reason, "Signal:") {
			t := &corev1.ContainerStateTerminated{}
			if n, err := strconv.Atoi(strings.TrimPrefix(reason, "ExitCode:")); err == nil {
				t.ExitCode = int32(n)
				pr.Mark(path+".state.terminated.exitCode", row.Line)
			}
			st.State.Terminated = t
			break
		}
		if reason != "" && reason != "Pending" && reason != "Terminating" && reason != "Unknown" && !strings.Contains(reason, "/") {
			st.State.Waiting = &corev1.ContainerStateWaiting{Reason: reason}
			pr.Mark(path+".state.waiting.reason", row.Line)
		}
	}
	pod.Spec.Containers = []corev1.Container{{Name: name}}
	if init {
		pod.Spec.InitContainers, pod.Spec.Containers = pod.Spec.Containers, nil
		pod.Status.InitContainerStatuses = []corev1.ContainerStatus{st}
	} else {
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{st}
	}
	pod.Status.Phase = corev1.PodPhase(row.Status)
}

func stateOf(s State, path string, pr *observe.Printed, bad func(Field, string)) corev1.ContainerState {
	var out corev1.ContainerState
	at := func(f Field) metav1.Time {
		if t, ok := timestamp(f.Value); ok {
			return metav1.NewTime(t)
		}
		return metav1.Time{}
	}
	kind := s.Kind.Value
	switch {
	case kind == "Running" || kind == "Terminated" || kind == "Waiting":
	case s.ExitCode.Set() || terminatedReasons[kind]:
		// A hand-written "State: Error" with an exit code under it.
		if !s.Reason.Set() {
			s.Reason = Field{Value: kind, Line: s.Kind.Line}
		}
		kind = "Terminated"
	case kind != "" && !s.Reason.Set():
		s.Reason = Field{Value: kind, Line: s.Kind.Line} // "State: CrashLoopBackOff"
	}
	switch kind {
	case "Running":
		out.Running = &corev1.ContainerStateRunning{StartedAt: at(s.Started)}
		pr.Mark(path+".running", s.Kind.Line)
		if s.Started.Set() {
			pr.Mark(path+".running.startedAt", s.Started.Line)
		}
	case "Terminated":
		t := &corev1.ContainerStateTerminated{Reason: s.Reason.Value, Message: s.Message.Value, StartedAt: at(s.Started), FinishedAt: at(s.Finished)}
		pr.Mark(path+".terminated", s.Kind.Line)
		if s.ExitCode.Set() && s.ExitCode.Value != "" { // "Exit Code:" and nothing: the paste was cut there
			if n, err := strconv.Atoi(s.ExitCode.Value); err == nil {
				t.ExitCode = int32(n)
				pr.Mark(path+".terminated.exitCode", s.ExitCode.Line)
			} else {
				bad(s.ExitCode, "Exit Code")
			}
		}
		if s.Signal.Set() {
			if n, err := strconv.Atoi(s.Signal.Value); err == nil {
				t.Signal = int32(n)
				pr.Mark(path+".terminated.signal", s.Signal.Line)
			}
		}
		for _, f := range []struct {
			f    Field
			name string
		}{{s.Reason, "reason"}, {s.Started, "startedAt"}, {s.Finished, "finishedAt"}, {s.Message, "message"}} {
			if f.f.Set() {
				pr.Mark(path+".terminated."+f.name, f.f.Line)
			}
		}
		out.Terminated = t
	default: // Waiting (describe prints Waiting for an empty state too)
		out.Waiting = &corev1.ContainerStateWaiting{Reason: s.Reason.Value, Message: s.Message.Value}
		pr.Mark(path+".waiting", s.Kind.Line)
		if s.Reason.Set() {
			pr.Mark(path+".waiting.reason", s.Reason.Line)
		}
	}
	return out
}

// terminatedReasons are the reasons of a terminated container
// (kuberuntime: OOMKilled, Error, Completed, ContainerCannotRun).
var terminatedReasons = map[string]bool{"OOMKilled": true, "Error": true, "Completed": true, "ContainerCannotRun": true, "StartError": true}

// probeOf rebuilds a probe from its printed line. An exec command is
// printed as Go prints a []string ("[sh -c pg_isready -U postgres]"), which
// loses the quoting: a shell's -c script is taken as one argument.
func probeOf(p *Probe) *corev1.Probe {
	out := &corev1.Probe{}
	set := func(dst *int32, v int) {
		if v > 0 {
			*dst = int32(v)
		}
	}
	set(&out.InitialDelaySeconds, p.Delay)
	set(&out.TimeoutSeconds, p.Timeout)
	set(&out.PeriodSeconds, p.Period)
	set(&out.SuccessThreshold, p.Success)
	set(&out.FailureThreshold, p.Failure)
	switch p.Handler {
	case "exec":
		out.Exec = &corev1.ExecAction{Command: execCommand(p.Target)}
	case "http-get":
		// DescribeProbe prints a url.URL: "http://:8080/healthz",
		// "//:8008/ready" without a scheme, a named port as
		// "https://127.0.0.1:https/healthz" (which url.Parse refuses).
		h := &corev1.HTTPGetAction{Path: "/"}
		rest := p.Target
		if scheme, r, ok := strings.Cut(rest, "://"); ok {
			h.Scheme, rest = corev1.URIScheme(strings.ToUpper(scheme)), r
		} else {
			rest = strings.TrimPrefix(rest, "//")
		}
		hostport := rest
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			hostport, h.Path = rest[:i], rest[i:]
		}
		host, port, err := net.SplitHostPort(hostport)
		if err != nil {
			host = hostport
		}
		h.Host, h.Port = host, intstr.Parse(port)
		out.HTTPGet = h
	case "tcp-socket":
		host, port, _ := strings.Cut(p.Target, ":")
		if i := strings.LastIndexByte(p.Target, ':'); i >= 0 {
			host, port = p.Target[:i], p.Target[i+1:]
		}
		out.TCPSocket = &corev1.TCPSocketAction{Host: host, Port: intstr.Parse(port)}
	case "grpc":
		g := &corev1.GRPCAction{}
		if m := grpcTarget().FindStringSubmatch(p.Target); m != nil {
			n, _ := strconv.Atoi(m[1])
			g.Port = int32(n)
			if m[2] != "" {
				svc := m[2]
				g.Service = &svc
			}
		}
		out.GRPC = g
	}
	return out
}

var grpcTarget = lazyregexp.New(`^<pod>:([0-9]+)\s*(\S*)`)

func execCommand(target string) []string {
	s := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(target), "["), "]")
	f := strings.Fields(s)
	if len(f) >= 3 && (strings.HasSuffix(f[0], "sh") || strings.HasSuffix(f[0], "bash")) && strings.HasPrefix(f[1], "-") && strings.Contains(f[1], "c") {
		rest := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(s, f[0]), " "))
		rest = strings.TrimSpace(strings.TrimPrefix(rest, f[1]))
		return []string{f[0], f[1], rest}
	}
	return f
}

// eventContainers lists the containers the events name, in order.
func eventContainers(evs []Event) []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range evs {
		if n := containerOf(e); n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

var (
	fieldPathContainer = lazyregexp.New(`^spec\.(?:initContainers|containers|ephemeralContainers)\{([^}]*)\}$`)
	messageContainer   = []func() *regexp.Regexp{
		lazyregexp.New(`^Container (\S+) failed (?:liveness|startup) probe`),
		lazyregexp.New(`^Killing container with id \w+://([^:]+):`),
		lazyregexp.New(`^(?:Created|Started|Stopping) container (\S+)$`),
	}
)

func containerOf(e Event) string {
	if m := fieldPathContainer().FindStringSubmatch(e.FieldPath); m != nil {
		return m[1]
	}
	for _, re := range messageContainer {
		if m := re().FindStringSubmatch(e.Message); m != nil {
			return m[1]
		}
	}
	return ""
}

// event turns a printed event into the diagnosis's. An event printed with
// a last time before its first (a skewed clock) is an error at its line.
func (c *Capture) event(e Event, ref object.Ref) (observe.Event, *load.Error) {
	out := observe.Event{Reason: e.Reason, Message: e.Message, Type: e.Type, Object: ref, FieldPath: e.FieldPath,
		Container: containerOf(e), Count: max(e.Count, 1), File: c.Name, Line: e.Line, Timeless: e.Timeless}
	switch {
	case e.Timeless:
	case e.LastAge != nil || e.FirstAge != nil:
		last, first := e.LastAge, e.FirstAge
		if last == nil {
			last = first
		}
		if first == nil {
			first = last
		}
		out.Ago = true
		out.FirstAge, out.LastAge = first.Text, last.Text
		out.First, out.Last = anchor.Add(-first.D), anchor.Add(-last.D)
		out.FirstSlack, out.LastSlack = first.Slack, last.Slack
		if out.Last.Before(out.First) {
			out.Last = out.First
		}
	default:
		out.First, out.Last = e.First.UTC(), e.Last.UTC()
		if out.First.IsZero() {
			out.First = out.Last
		}
		if out.Last.IsZero() {
			out.Last = out.First
		}
		if out.First.IsZero() {
			out.Timeless = true
		}
		if out.Last.Before(out.First) {
			return out, &load.Error{File: c.Name, Line: e.Line, Message: fmt.Sprintf("event %s: last seen %s is before first seen %s (clock skew?); not used",
				e.Reason, out.Last.Format(time.RFC3339), out.First.Format(time.RFC3339))}
		}
	}
	return out, nil
}

// bestEffort: no container sets a cpu or memory request or limit.
func bestEffort(pod *corev1.Pod) bool {
	for _, c := range append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
		for _, l := range []corev1.ResourceList{c.Resources.Limits, c.Resources.Requests} {
			if _, ok := l[corev1.ResourceCPU]; ok {
				return false
			}
			if _, ok := l[corev1.ResourceMemory]; ok {
				return false
			}
		}
	}
	return true
}

// lacks says what the capture does not show that the diagnosis uses.
func lacks(p *Pod, pr *observe.Printed, pod *corev1.Pod) []string {
	var out []string
	if !pr.Named {
		out = append(out, "the capture does not name the pod")
	}
	if pr.PodLevel {
		out = append(out, "a kubectl get pods row sums the restarts of all the pod's containers and shows no exit code, probe or event")
		return out
	}
	noProbe, noCount, noLast, restarted := len(pod.Spec.Containers) > 0, true, true, false
	for i := range pod.Spec.Containers {
		sp := fmt.Sprintf("spec.containers[%d]", i)
		if pr.Has(sp+".livenessProbe") || pr.Has(sp+".startupProbe") || pr.Absent(sp+".livenessProbe") {
			noProbe = false
		}
	}
	for _, list := range []struct {
		field string
		n     int
	}{{"containerStatuses", len(pod.Status.ContainerStatuses)}, {"initContainerStatuses", len(pod.Status.InitContainerStatuses)}} {
		for i := range list.n {
			st := fmt.Sprintf("status.%s[%d]", list.field, i)
			if pr.Has(st + ".restartCount") {
				noCount = false
			}
			if list.field == "containerStatuses" && pod.Status.ContainerStatuses[i].RestartCount > 0 ||
				list.field == "initContainerStatuses" && pod.Status.InitContainerStatuses[i].RestartCount > 0 {
				restarted = true
			}
			if pr.Has(st+".lastState") || pr.Has(st+".state.terminated") || pr.Has(st+".state.waiting") {
				noLast = false
			}
		}
	}
	if noProbe {
		out = append(out, "no Liveness or Startup line (kubectl describe pod prints them in the container block)")
	}
	if noCount {
		out = append(out, "no Restart Count")
	}
	if noLast && !noCount && restarted {
		out = append(out, "no Last State (the exit code and reason of the previous run)")
	}
	if len(p.Events) == 0 && !p.EventsNone {
		out = append(out, "no Events rows")
	}
	return out
}
