package printed

import (
	"backfire.dev/backfire/internal/lazyregexp"
	"bytes"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxLines bounds the lines read of one stream: a capture is a paste, and
// the rest of a larger stream is counted as skipped, never held.
const maxLines = 200_000

// reader walks the lines of one stream.
type reader struct {
	lines []Line
	i     int
	c     *Capture
	// precise: the capture's ages have two parts somewhere ("3m2s"): its
	// printer is HumanDuration, whose one-part ages are finer than a unit.
	precise bool
}

// Read reads a stream of kubectl's printed output. It never fails: what it
// cannot read is counted in Skipped (prose, other tables) or listed in
// Unread (lines that look like kubectl output but do not parse).
func Read(name string, data []byte) *Capture {
	r := &reader{c: &Capture{Name: name}, lines: split(data)}
	if len(r.lines) > maxLines {
		r.c.Skipped += len(r.lines) - maxLines
		r.lines = r.lines[:maxLines]
	}
	r.precise = twoPartAge().Match(data)
	for r.i < len(r.lines) {
		start := r.i
		switch l := r.lines[r.i]; {
		case blank(l.Text) || fence(l.Text):
			r.i++
		case r.describeStart():
			r.describe()
		case isPodsHeader(l.Text):
			r.podsTable()
		case r.eventsHeader() != nil:
			r.eventsTable(r.eventsHeader())
		case r.rowLayout(l.Text) != nil:
			r.eventsTable(&table{layout: r.rowLayout(l.Text), headless: true})
		case podRow().MatchString(l.Text):
			r.podsRows(nil)
		case r.containersSection():
			init := strings.HasPrefix(strings.TrimSpace(l.Text), "Init")
			base := indent(l.Text)
			r.i++
			r.containers(r.loosePod(), base, init)
		case containerKey(l.Text) != "" || exitCodeLine(l.Text):
			r.fragment()
		case messageEvent(l.Text) != nil:
			r.messages()
		case inlineEvent(l.Text) != nil:
			// An event message quoted in a sentence of prose.
			e := inlineEvent(l.Text)
			e.Line = l.N
			r.c.Loose = append(r.c.Loose, *e)
			r.i++
		default:
			r.c.Skipped++
			r.i++
		}
		if r.i == start { // every branch consumes a line; never loop
			r.c.Skipped++
			r.i++
		}
	}
	if len(r.c.Pods) == 0 && len(r.c.Loose) == 0 {
		// Nothing printed for people: perhaps a piece of -o yaml.
		if cs := yamlFragments(data); len(cs) > 0 {
			p := &Pod{Line: cs[0].Line, Containers: cs, Forms: []string{"kubectl get pod -o yaml lines"}}
			r.c.Pods = append(r.c.Pods, p)
		}
	}
	return r.c
}

var twoPartAge = lazyregexp.New(`\b[0-9]+[mhdy][0-9]+[smhd]\b`)

// split cuts data into lines, without "\r", markdown quote markers ("> ")
// or invalid UTF-8 (replaced).
func split(data []byte) []Line {
	var out []Line
	n := 0
	for len(data) > 0 {
		n++
		var l []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			l, data = data[:i], data[i+1:]
		} else {
			l, data = data, nil
		}
		s := strings.TrimRight(string(l), "\r")
		if !utf8.ValidString(s) {
			s = strings.ToValidUTF8(s, "\uFFFD")
		}
		if strings.HasPrefix(s, "> ") || s == ">" {
			s = strings.TrimPrefix(strings.TrimPrefix(s, ">"), " ")
		}
		out = append(out, Line{N: n, Text: s})
	}
	return out
}

func blank(s string) bool { return strings.TrimSpace(s) == "" }

func fence(s string) bool { return strings.HasPrefix(strings.TrimSpace(s), "```") }

func indent(s string) int {
	n := 0
	for _, r := range s {
		switch r {
		case ' ':
			n++
		case '\t':
			n += 8 - n%8
		default:
			return n
		}
	}
	return n
}

// keyLine reads "  Key:   value" (tabs or spaces after the colon): key and
// value, trimmed. ok is false when the line has no "Key:" at its start. A
// key is letters, digits, spaces and ()/- and starts with a letter.
func keyLine(s string) (key, value string, ok bool) {
	t := strings.TrimLeft(s, " \t")
	i := strings.IndexByte(t, ':')
	if i <= 0 || i > 64 {
		return "", "", false
	}
	key = t[:i]
	if c := key[0]; !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') || key[len(key)-1] == ' ' {
		return "", "", false
	}
	for j := 0; j < len(key); j++ {
		c := key[j]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == ' ' || c == '(' || c == ')' || c == '/' || c == '-') {
			return "", "", false
		}
	}
	rest := t[i+1:]
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return "", "", false // "http://x" or "a:b", not a key
	}
	return key, strings.Trim(rest, " \t"), true
}

// podKeys are the pod-level keys of kubectl describe pod, old and new
// (k8s.io/kubectl pkg/describe describePod; kubectl 1.0-1.2 also printed
// Image(s) and Replication Controllers).
var podKeys = map[string]bool{
	"Name": true, "Namespace": true, "Priority": true, "Priority Class Name": true, "PriorityClassName": true,
	"Runtime Class Name": true, "Service Account": true, "Node": true, "Start Time": true, "Labels": true,
	"Annotations": true, "Status": true, "Reason": true, "Message": true, "SeccompProfile": true, "IP": true,
	"IPs": true, "Controlled By": true, "Created By": true, "NominatedNodeName": true, "Resources": true,
	"Init Containers": true, "Containers": true, "Ephemeral Containers": true, "Readiness Gates": true,
	"Conditions": true, "Volumes": true, "QoS Class": true, "Node-Selectors": true, "Tolerations": true,
	"Topology Spread Constraints": true, "Events": true, "Image(s)": true, "Replication Controllers": true,
	"Termination Grace Period": true, "Scheduling Group": true,
}

// containerKeys are the keys of a container block
// (describeContainerBasicInfo, describeContainerState,
// describeContainerProbe, describeContainerEnvVars, describeContainerVolumes).
var containerKeys = map[string]bool{
	"Container ID": true, "Image": true, "Image ID": true, "Port": true, "Ports": true, "Host Port": true,
	"Host Ports": true, "Command": true, "Args": true, "State": true, "Last State": true,
	"Ready": true, "Restart Count": true, "Limits": true, "Requests": true,
	"Liveness": true, "Readiness": true, "Startup": true, "Environment": true, "Environment Variables from": true,
	"Mounts": true, "Devices": true, "Restart Policy": true, "Allocated Resources": true, "Resize Policy": true,
	"Volume Mounts": true, "Environment Variables": true,
}

// stateKeys are the lines under State: and Last State: (describeStatus).
var stateKeys = map[string]bool{"Reason": true, "Message": true, "Exit Code": true, "Signal": true, "Started": true, "Finished": true}

// waitingKind: a State that is a waiting container's ("Waiting", or its
// reason written in its place by hand).
func waitingKind(kind string) bool {
	switch kind {
	case "Waiting", "CrashLoopBackOff", "ContainerCreating", "PodInitializing", "ImagePullBackOff", "ErrImagePull", "CreateContainerConfigError", "RunContainerError":
		return true
	}
	return false
}

// exitCodeLine: "Exit Code: 100" pasted without the State line above it.
func exitCodeLine(s string) bool {
	k, v, ok := keyLine(s)
	return ok && k == "Exit Code" && v != ""
}

// containerKey returns the container key a line starts with, or "".
func containerKey(s string) string {
	k, _, ok := keyLine(s)
	if ok && containerKeys[k] {
		return k
	}
	return ""
}

// describeStart reports whether a describe pod block starts here: a
// "Name:" line with a "Namespace:" line among the next three.
func (r *reader) describeStart() bool {
	if !strings.HasPrefix(strings.TrimLeft(r.lines[r.i].Text, " \t"), "Name:") {
		return false
	}
	k, v, ok := keyLine(r.lines[r.i].Text)
	if !ok || k != "Name" || v == "" {
		return false
	}
	for j := r.i + 1; j < len(r.lines) && j <= r.i+3; j++ {
		if k, _, ok := keyLine(r.lines[j].Text); ok && (k == "Namespace" || k == "Image(s)") {
			return true
		}
	}
	return false
}

// describe reads one kubectl describe pod block.
func (r *reader) describe() {
	base := indent(r.lines[r.i].Text)
	_, name, _ := keyLine(r.lines[r.i].Text)
	p := r.namedPod(name, "", r.lines[r.i].N)
	if len(p.Containers) > 0 || p.Status.Set() {
		// The same pod described twice: each block is its own reading.
		p = &Pod{Name: name, Line: r.lines[r.i].N}
		r.c.Pods = append(r.c.Pods, p)
	}
	p.Line = r.lines[r.i].N
	addForm(&p.Forms, "kubectl describe pod")
	r.i++
	for r.i < len(r.lines) {
		l := r.lines[r.i]
		if blank(l.Text) || fence(l.Text) {
			r.i++
			continue
		}
		if r.describeStart() || isPodsHeader(l.Text) || prompt(l.Text) {
			return
		}
		k, v, ok := keyLine(l.Text)
		if !ok || !podKeys[k] || indent(l.Text) > base+1 {
			r.c.Skipped++
			r.i++
			continue
		}
		f := Field{Value: v, Line: l.N}
		r.i++
		switch k {
		case "Namespace":
			p.Namespace = v
			p.NamespaceLine = l.N
		case "Status":
			p.Status = f
		case "Reason":
			p.Reason = f
		case "Message":
			p.Message = f
		case "QoS Class":
			p.QoS = f
		case "Start Time":
			p.StartTime = f
		case "Node":
			p.Node = f
		case "Controlled By", "Created By":
			p.Controller = f
		case "Node-Selectors":
			if v != "" && v != "<none>" {
				p.NodeSelectors = append(p.NodeSelectors, f)
			}
			for r.i < len(r.lines) && indent(r.lines[r.i].Text) > base+1 && !blank(r.lines[r.i].Text) {
				p.NodeSelectors = append(p.NodeSelectors, Field{Value: strings.TrimSpace(r.lines[r.i].Text), Line: r.lines[r.i].N})
				r.i++
			}
		case "Containers", "Init Containers":
			r.containers(p, base, k == "Init Containers")
		case "Events":
			if v == "<none>" {
				p.EventsNone = true
				continue
			}
			if t := r.eventsHeader(); t != nil {
				p.Events = append(p.Events, r.rows(t)...)
			} else if t := r.rowLayout(r.text()); t != nil {
				p.Events = append(p.Events, r.rows(&table{layout: t, headless: true})...)
			}
		default:
			// Labels, Annotations, Conditions, Volumes, Tolerations...:
			// their lines are indented under the key.
			for r.i < len(r.lines) && (indent(r.lines[r.i].Text) > base+1 || blank(r.lines[r.i].Text)) && !r.describeStart() {
				if blank(r.lines[r.i].Text) && r.i+1 < len(r.lines) && indent(r.lines[r.i+1].Text) <= base+1 {
					break
				}
				r.c.Skipped++
				r.i++
			}
		}
	}
}

func (r *reader) text() string {
	if r.i < len(r.lines) {
		return r.lines[r.i].Text
	}
	return ""
}

// containersSection: a "Containers:" line pasted without its pod's header,
// followed by a container's header.
func (r *reader) containersSection() bool {
	k, v, ok := keyLine(r.lines[r.i].Text)
	if !ok || v != "" || (k != "Containers" && k != "Init Containers") || r.i+1 >= len(r.lines) {
		return false
	}
	return containerName().MatchString(r.lines[r.i+1].Text)
}

// prompt is a shell prompt line pasted with the output: "$ kubectl ...".
func prompt(s string) bool {
	t := strings.TrimSpace(s)
	return strings.HasPrefix(t, "$ ") || strings.HasPrefix(t, "# kubectl") || strings.Contains(t, "$ kubectl") || strings.HasPrefix(t, "kubectl ")
}

// containerName matches a container's header line: "  database:".
var containerName = lazyregexp.New(`^\s+([a-z0-9]([-a-z0-9._]*[a-z0-9])?):\s*$`)

// containers reads the blocks under Containers: or Init Containers:.
func (r *reader) containers(p *Pod, base int, init bool) {
	for r.i < len(r.lines) {
		l := r.lines[r.i]
		if blank(l.Text) {
			r.i++
			continue
		}
		if indent(l.Text) <= base {
			return
		}
		m := containerName().FindStringSubmatch(l.Text)
		if m == nil {
			if k, _, ok := keyLine(l.Text); ok && podKeys[k] && !containerKeys[k] {
				return // a pod key whose indentation was lost in the paste
			}
			r.c.Skipped++
			r.i++
			continue
		}
		c := &Container{Name: m[1], Line: l.N, Init: init}
		p.Containers = append(p.Containers, c)
		r.i++
		r.containerBlock(c, indent(l.Text))
	}
}

// containerBlock reads a container's fields until a line that is not one
// of them (or, when header >= 0, is not indented under the header).
func (r *reader) containerBlock(c *Container, header int) {
	var state *State
	for r.i < len(r.lines) {
		l := r.lines[r.i]
		if blank(l.Text) {
			if r.i+1 < len(r.lines) && containerKey(r.lines[r.i+1].Text) != "" {
				r.i++
				continue
			}
			return
		}
		in := indent(l.Text)
		if header >= 0 && in <= header {
			return
		}
		k, v, ok := keyLine(l.Text)
		if ok && state == nil && (k == "Exit Code" || k == "Signal") && !c.LastState.ExitCode.Set() {
			// An exit code without its state (a paste put together by
			// hand): it is a termination's, the last one's unless the
			// block says the container is stopped now.
			if c.State.Kind.Value == "Terminated" && !c.State.ExitCode.Set() {
				state = &c.State
			} else {
				if !c.LastState.Set() {
					c.LastState = State{Kind: Field{Value: "Terminated", Line: l.N}}
				}
				state = &c.LastState
			}
		}
		if ok && state == &c.State && (k == "Exit Code" || k == "Signal") && waitingKind(c.State.Kind.Value) && !c.LastState.Set() {
			// "State: CrashLoopBackOff" then "Exit Code: 100": a
			// waiting container has no exit code; it is the last run's.
			c.LastState = State{Kind: Field{Value: "Terminated", Line: l.N}}
			state = &c.LastState
		}
		switch {
		case ok && state != nil && stateKeys[k] && !containerKeys[k]:
			f := Field{Value: v, Line: l.N}
			switch k {
			case "Reason":
				state.Reason = f
			case "Message":
				state.Message = f
			case "Exit Code":
				state.ExitCode = f
			case "Signal":
				state.Signal = f
			case "Started":
				state.Started = f
			case "Finished":
				state.Finished = f
			}
			r.i++
		case ok && containerKeys[k] && header < 0 && c.has(k):
			// A fragment that repeats a key is the next container's
			// (kubectl describe pod | grep Liveness prints one line per
			// container): the caller starts another.
			return
		case ok && containerKeys[k]:
			state = nil
			r.i++
			r.containerField(c, k, v, l, in, &state)
		case ok && podKeys[k] && header < 0:
			return
		case ok && podKeys[k] && !stateKeys[k]:
			return
		default:
			if header < 0 {
				return
			}
			r.c.Skipped++
			r.i++
		}
	}
}

func (r *reader) containerField(c *Container, k, v string, l Line, in int, state **State) {
	f := Field{Value: v, Line: l.N}
	switch k {
	case "Image":
		c.Image = f
	case "Port", "Ports":
		c.Ports = f
	case "Ready":
		c.Ready = f
	case "Restart Count":
		c.RestartCount = f
	case "State":
		c.State = State{Kind: f}
		*state = &c.State
	case "Last State":
		c.LastState = State{Kind: f}
		*state = &c.LastState
	case "Liveness", "Readiness", "Startup":
		v = r.execContinued(v)
		// A paste wrapped at the terminal's width may continue the
		// settings on the next line: "period=10s #success=1 #failure=3".
		for r.i < len(r.lines) && probeSettingsOnly().MatchString(r.lines[r.i].Text) {
			v += " " + strings.TrimSpace(r.lines[r.i].Text)
			r.i++
		}
		pr := parseProbe(v, l.N)
		switch k {
		case "Liveness":
			c.Liveness = pr
		case "Readiness":
			c.Readiness = pr
		default:
			c.Startup = pr
		}
	case "Limits", "Requests":
		m := map[string]Field{}
		for r.i < len(r.lines) {
			rk, rv, ok := keyLine(r.lines[r.i].Text)
			if !ok || indent(r.lines[r.i].Text) <= in || !resourceName().MatchString(rk) {
				break
			}
			m[rk] = Field{Value: rv, Line: r.lines[r.i].N}
			r.i++
		}
		if k == "Limits" {
			c.Limits = m
		} else {
			c.Requests = m
		}
	case "Command", "Args":
		var args []Field
		for r.i < len(r.lines) && indent(r.lines[r.i].Text) > in && !blank(r.lines[r.i].Text) && containerKey(r.lines[r.i].Text) == "" {
			args = append(args, Field{Value: strings.TrimSpace(r.lines[r.i].Text), Line: r.lines[r.i].N})
			r.i++
		}
		if k == "Command" {
			c.Command = args
		} else {
			c.Args = args
		}
	case "Environment", "Environment Variables from", "Environment Variables", "Mounts", "Volume Mounts", "Devices", "Allocated Resources", "Resize Policy":
		// Printed after the probes by every kubectl that prints probes
		// (kubectl 1.0 printed none): the block is whole up to here.
		c.Complete = true
		for r.i < len(r.lines) && indent(r.lines[r.i].Text) > in && !blank(r.lines[r.i].Text) && containerKey(r.lines[r.i].Text) == "" {
			r.c.Skipped++
			r.i++
		}
	}
}

// execContinued reads the rest of an exec probe whose command holds a
// newline: DescribeProbe prints "exec [%s]" with the command's elements
// joined by spaces (k8s.io/kubectl pkg/describe describeProbe), so a
// script written as a YAML block scalar ("- |") puts its lines, and the
// closing "] delay=60s ... #failure=5", on the lines below (a "]" inside
// the script, as in "[ -f x ]", ends a line but does not start one). Without its
// closing line within a few lines (a paste cut short), the line stands
// as printed.
func (r *reader) execContinued(v string) string {
	if !strings.HasPrefix(v, "exec [") || probeSetting().MatchString(v) {
		return v
	}
	for j := r.i; j < len(r.lines) && j < r.i+maxScriptLines; j++ {
		t := r.lines[j].Text
		if containerKey(t) != "" && indent(t) > 0 {
			return v
		}
		if execEnd().MatchString(t) {
			for ; r.i <= j; r.i++ {
				v += "\n" + strings.TrimRight(r.lines[r.i].Text, " \t")
			}
			return v
		}
	}
	return v
}

// maxScriptLines bounds the lines an exec probe's command may span.
const maxScriptLines = 40

// execEnd is the last line of an exec command printed over several lines:
// "] delay=5s timeout=5s ...", or a lone "]" when the line was cut there.
var execEnd = lazyregexp.New(`\]\s+(?:delay|timeout|period)=-?[0-9]+s?\b|^\s*\]\s*$`)

var resourceName = lazyregexp.New(`^(cpu|memory|ephemeral-storage|storage|pods|hugepages-[0-9A-Za-z]+|[a-z0-9.-]+/[a-z0-9.-]+)$`)

// probeRE reads DescribeProbe's output: the handler, its target, and the
// settings; "#success=1 #failure=3" before kubectl 1.37,
// "successThreshold=1 failureThreshold=3" since.
var (
	probeHandler = lazyregexp.New(`(?s)^(exec|http-get|tcp-socket|grpc|unknown)\b\s*(.*)$`)
	probeSetting = lazyregexp.New(`(?:^|\s)(delay|timeout|period|#success|#failure|successThreshold|failureThreshold)=(-?[0-9]+)s?\b`)
)

var probeSettingsOnly = lazyregexp.New(`^\s+(?:(?:delay|timeout|period|#success|#failure|successThreshold|failureThreshold)=[0-9]+s?\s*)+$`)

func parseProbe(v string, line int) *Probe {
	p := &Probe{Line: line, Text: v, Delay: -1, Timeout: -1, Period: -1, Success: -1, Failure: -1}
	m := probeHandler().FindStringSubmatch(v)
	if m == nil {
		p.Handler = "unknown"
		return p
	}
	p.Handler = m[1]
	rest := m[2]
	if i := probeSetting().FindStringIndex(rest); i != nil {
		p.Target = strings.TrimSpace(rest[:i[0]])
	} else {
		p.Target = strings.TrimSpace(rest)
	}
	for _, s := range probeSetting().FindAllStringSubmatch(rest, -1) {
		n, err := strconv.Atoi(s[2])
		if err != nil || n < 0 || n > 1e7 {
			continue
		}
		switch s[1] {
		case "delay":
			p.Delay = n
		case "timeout":
			p.Timeout = n
		case "period":
			p.Period = n
		case "#success", "successThreshold":
			p.Success = n
		case "#failure", "failureThreshold":
			p.Failure = n
		}
	}
	return p
}

// fragment reads container lines pasted without their pod: a State and
// Last State, a Restart Count, a Liveness line.
//
// Lines of one container split by lines this reader does not know (a
// label in another language, a line of the user's) continue the previous
// fragment unless they repeat a key it has: one container read once, not
// one per piece.
func (r *reader) fragment() {
	p := r.loosePod()
	k, _, _ := keyLine(r.lines[r.i].Text)
	if n := len(p.Containers); n > 0 && p.Containers[n-1].fragment && !p.Containers[n-1].has(k) {
		r.containerBlock(p.Containers[n-1], -1)
		return
	}
	c := &Container{Line: r.lines[r.i].N, fragment: true}
	p.Containers = append(p.Containers, c)
	r.containerBlock(c, -1)
	if len(c.Fields()) == 0 {
		p.Containers = p.Containers[:len(p.Containers)-1]
		return
	}
	addForm(&p.Forms, "container lines")
}

// loosePod is the pod of lines that do not name one: one per capture.
func (r *reader) loosePod() *Pod {
	for _, p := range r.c.Pods {
		if p.Name == "" {
			return p
		}
	}
	p := &Pod{Line: r.lines[r.i].N}
	r.c.Pods = append(r.c.Pods, p)
	return p
}

// has reports whether the block printed key already.
func (c *Container) has(key string) bool {
	switch key {
	case "State", "Last State", "Restart Count", "Image", "Ready", "Liveness", "Readiness", "Startup", "Limits", "Requests":
		return slices.Contains(c.Fields(), key)
	}
	return false
}

// Fields lists what the block printed, by key (for tests).
func (c *Container) Fields() []string {
	var out []string
	add := func(name string, f Field) {
		if f.Set() {
			out = append(out, name)
		}
	}
	add("Image", c.Image)
	add("State", c.State.Kind)
	add("Last State", c.LastState.Kind)
	add("Ready", c.Ready)
	add("Restart Count", c.RestartCount)
	if c.Liveness != nil {
		out = append(out, "Liveness")
	}
	if c.Readiness != nil {
		out = append(out, "Readiness")
	}
	if c.Startup != nil {
		out = append(out, "Startup")
	}
	if c.Limits != nil {
		out = append(out, "Limits")
	}
	if c.Requests != nil {
		out = append(out, "Requests")
	}
	return out
}
