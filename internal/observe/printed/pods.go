package printed

import (
	"backfire.dev/backfire/internal/lazyregexp"
	"strconv"
	"strings"
)

// kubectl get pods prints NAME READY STATUS RESTARTS AGE (and with -o wide
// IP NODE NOMINATED NODE READINESS GATES; with -A, NAMESPACE first): see
// k8s.io/kubernetes pkg/printers/internalversion printPod. Since kubectl
// 1.22 RESTARTS carries the age of the last restart: "4 (57s ago)".
var (
	podsHeader = lazyregexp.New(`^\s*(NAMESPACE\s+)?NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\b`)
	podRow     = lazyregexp.New(`^\s*(?:(?P<ns>[a-z0-9][-a-z0-9.]*)\s+)?(?:pods?/)?(?P<name>[a-z0-9][-a-z0-9.]*)\s+(?P<ready>[0-9]+/[0-9]+)\s+(?P<status>[A-Za-z][A-Za-z0-9:/_-]*)\s+(?P<restarts>[0-9]+)(?:\s+\((?P<lastrestart>` + ageRE + `) ago\))?\s+(?P<age>` + ageRE + `)(?:\s.*)?$`)
)

func isPodsHeader(s string) bool { return podsHeader().MatchString(s) }

func (r *reader) podsTable() {
	r.i++
	r.podsRows(nil)
}

// podsRows reads rows until a line that is not one. A pod's rows from
// kubectl get pods -w repeat its name: the last one stands, and each is
// a reading of the restart count at an age of the pod.
func (r *reader) podsRows(_ *table) {
	for r.i < len(r.lines) {
		l := r.lines[r.i]
		if isPodsHeader(l.Text) || blank(l.Text) {
			r.i++
			if isPodsHeader(l.Text) {
				continue
			}
			if r.i < len(r.lines) && !podRow().MatchString(r.lines[r.i].Text) {
				return
			}
			continue
		}
		m := podRow().FindStringSubmatch(l.Text)
		if m == nil {
			return
		}
		g := func(n string) string { return m[podRow().SubexpIndex(n)] }
		row := &Row{Line: l.N, Ready: g("ready"), Status: g("status")}
		row.Restarts, _ = strconv.Atoi(g("restarts"))
		if s := g("lastrestart"); s != "" {
			row.LastRestart = r.age(s)
		}
		row.Age = r.age(g("age"))
		p := r.namedPod(g("name"), g("ns"), l.N)
		if p.Row != nil {
			p.Readings = append(p.Readings, *p.Row)
		}
		p.Row = row
		addForm(&p.Forms, "kubectl get pods")
		r.i++
	}
}

// namedPod returns the pod of that name, creating it.
func (r *reader) namedPod(name, ns string, line int) *Pod {
	for _, p := range r.c.Pods {
		if p.Name == name && (ns == "" || p.Namespace == "" || p.Namespace == ns) {
			if p.Namespace == "" {
				p.Namespace = ns
			}
			return p
		}
	}
	p := &Pod{Name: name, Namespace: ns, Line: line}
	r.c.Pods = append(r.c.Pods, p)
	return p
}

func addForm(forms *[]string, f string) {
	for _, g := range *forms {
		if g == f {
			return
		}
	}
	*forms = append(*forms, f)
}

// initStatus splits "Init:CrashLoopBackOff" and "Init:0/1".
func initStatus(s string) (reason string, init bool) {
	if r, ok := strings.CutPrefix(s, "Init:"); ok {
		return r, true
	}
	return s, false
}
