package printed

import (
	"backfire.dev/backfire/internal/lazyregexp"
	"regexp"
	"strconv"
	"strings"
)

// The Events tables kubectl has printed, as row patterns. Sources (see
// docs/diagnose.md): k8s.io/kubectl pkg/describe DescribeEvents ("Type
// Reason Age From Message" since kubectl 1.8, kubernetes/kubernetes#51748;
// before it "FirstSeen LastSeen Count From SubObjectPath Type Reason
// Message", and in kubectl 1.0 and 1.1 no Type column and, in 1.0, RFC 1123
// times); the server-side event table of kubectl get events
// (pkg/printers/internalversion printEvent: "LAST SEEN TYPE REASON OBJECT
// MESSAGE", and -o wide); the client-side one before it ("LASTSEEN
// FIRSTSEEN COUNT NAME KIND SUBOBJECT TYPE REASON SOURCE MESSAGE"); and
// kubectl events (pkg/cmd/events, kubernetes/kubernetes#99557).
const (
	tType   = `(?P<type>Normal|Warning)`
	tReason = `(?P<reason>[A-Za-z][A-Za-z0-9_-]*)`
	tSeries = `(?P<last>` + ageRE + `)(?:\s+\(x(?P<count>[0-9]+)\s+over\s+(?P<first>` + ageRE + `)\))?`
	tTime   = `(?:` + ageRE + `|` + timestampRE + `)`
	tFrom   = `(?P<from>[^\s,{]+(?:,\s*[^\s,]+)?)`
	tSource = `(?P<from>\{[^}]*\}|[^\s,{]+(?:,\s*[^\s,]+)?)`
	tSub    = `(?P<sub>spec\.[A-Za-z]+\{[^}]*\}|implicitly required container \S+|spec\.[A-Za-z0-9.\[\]]+)`
	tMsg    = `(?P<msg>.*?)\s*$`
)

type layout struct {
	name string // "Events table" (describe) or "kubectl get events"
	re   func() *regexp.Regexp
}

var (
	describeNew   = &layout{"Events table", lazyregexp.New(`^\s*` + tType + `\s+` + tReason + `\s+` + tSeries + `\s+` + tFrom + `(?:\s+` + tMsg + `|\s*$)`)}
	describeOld   = &layout{"Events table", lazyregexp.New(`^\s*(?P<firstt>` + tTime + `)\s+(?P<lastt>` + tTime + `)\s+(?P<count>[0-9]+)\s+` + tSource + `\s+(?:` + tSub + `\s+)?` + tType + `\s+` + tReason + `(?:\s+` + tMsg + `|\s*$)`)}
	describeOlder = &layout{"Events table", lazyregexp.New(`^\s*(?P<firstt>` + tTime + `)\s+(?P<lastt>` + tTime + `)\s+(?P<count>[0-9]+)\s+` + tSource + `\s+(?:` + tSub + `\s+)?` + tReason + `(?:\s+` + tMsg + `|\s*$)`)}
	getEvents     = &layout{"kubectl get events", lazyregexp.New(`^\s*(?:(?P<ns>[a-z0-9][-a-z0-9.]*)\s+)?` + tSeries + `\s+` + tType + `\s+` + tReason + `\s+(?P<obj>[A-Za-z.]+/\S+|[A-Z][A-Za-z]+)(?:\s+` + tMsg + `|\s*$)`)}
	getEventsOld  = &layout{"kubectl get events", lazyregexp.New(`^\s*(?:(?P<ns>[a-z0-9][-a-z0-9.]*)\s+)?(?P<lastt>` + ageRE + `)\s+(?P<firstt>` + ageRE + `)\s+(?P<count>[0-9]+)\s+(?P<name>\S+)\s+(?P<kind>[A-Z][A-Za-z]+)\s+(?:` + tSub + `\s+)?` + tType + `\s+` + tReason + `\s+` + tSource + `(?:\s+` + tMsg + `|\s*$)`)}
	// Headless rows are tried in this order.
	rowLayouts = []*layout{describeNew, getEvents, getEventsOld, describeOld, describeOlder}
)

var (
	hDescribeNew = lazyregexp.New(`^\s*Type\s+Reason\s+Age\s+From\s+Message\s*$`)
	hDescribeOld = lazyregexp.New(`^\s*FirstSeen\s+LastSeen\s+Count\s+From\s+Sub[Oo]bjectPath\s+(Type\s+)?Reason\s+Message\s*$`)
	hGetEvents   = lazyregexp.New(`^\s*(NAMESPACE\s+)?(LAST SEEN|LASTSEEN|FIRSTSEEN|FIRST SEEN)\s+.*\bREASON\b.*\bMESSAGE\b`)
	seriesCell   = lazyregexp.New(`^` + tSeries + `$`)
	headerCell   = lazyregexp.New(`\S+(?: \S+)*`)
	objectColumn = lazyregexp.New(`(^|\s)OBJECT(\s|$)`)
	separator    = lazyregexp.New(`^\s*[-─]+([ \t]+[-─]+)*\s*$`)
	elision      = lazyregexp.New(`^\s*(<snip>|<SNIP>|\.\.\.|…|\[\.\.\.\]|<truncated>)\s*$`)
)

// table is an Events table being read: its layout, and for a header the
// start of each column (to cut rows no pattern reads, such as -o wide).
type table struct {
	layout   *layout
	headless bool
	columns  []column
	order    []*layout // layouts to try, in order
}

type column struct {
	name  string
	start int
}

// eventsHeader recognises an Events table header at the current line.
func (r *reader) eventsHeader() *table {
	if r.i >= len(r.lines) {
		return nil
	}
	s := r.lines[r.i].Text
	switch {
	case hDescribeNew().MatchString(s):
		return &table{layout: describeNew, order: []*layout{describeNew}}
	case hDescribeOld().MatchString(s):
		return &table{layout: describeOld, order: []*layout{describeOld, describeOlder}, columns: columns(s)}
	case hGetEvents().MatchString(s):
		t := &table{layout: getEvents, order: []*layout{getEvents}, columns: columns(s)}
		object := objectColumn().MatchString(s)
		if strings.Contains(s, "FIRST") && strings.Contains(s, "COUNT") && strings.Index(s, "LAST") < strings.Index(s, "TYPE") && !object {
			t.layout, t.order = getEventsOld, []*layout{getEventsOld}
		}
		if object && strings.Contains(s, "SUBOBJECT") && strings.Index(s, "MESSAGE") < strings.Index(s, "FIRST") {
			t.order = nil // -o wide: cut by columns
		}
		return t
	}
	return nil
}

// columns finds the start of each header cell (cells are two or more
// spaces apart; "LAST SEEN" is one cell).
func columns(h string) []column {
	var out []column
	for _, m := range headerCell().FindAllStringIndex(h, -1) {
		out = append(out, column{name: strings.ToUpper(strings.ReplaceAll(h[m[0]:m[1]], " ", "")), start: m[0]})
	}
	return out
}

// rowLayout returns the layout a headless row is in, or nil.
func (r *reader) rowLayout(s string) *layout {
	for _, l := range rowLayouts {
		if l.re().MatchString(s) {
			return l
		}
	}
	return nil
}

// eventsTable reads a table (with or without its header) into the pod the
// capture is about, or the loose events.
func (r *reader) eventsTable(t *table) {
	evs := r.rows(t)
	r.c.Loose = append(r.c.Loose, evs...)
}

// rows reads the rows of a table from the current line (its header, when
// it has one), with their continuation lines.
func (r *reader) rows(t *table) []Event {
	if !t.headless {
		r.i++
	}
	if t.order == nil && t.headless {
		t.order = rowLayouts
	}
	var out []Event
	cont := false
	for r.i < len(r.lines) {
		l := r.lines[r.i]
		switch {
		case separator().MatchString(l.Text):
			r.i++
			continue
		case elision().MatchString(l.Text):
			r.c.Skipped++
			r.i++
			cont = false
			continue
		case blank(l.Text):
			r.i++
			cont = false
			if r.i < len(r.lines) && r.parseRow(t, r.lines[r.i]) == nil {
				return out
			}
			continue
		case r.describeStart() || isPodsHeader(l.Text) || prompt(l.Text) || r.eventsHeader() != nil:
			return out
		}
		if e := r.parseRow(t, l); e != nil {
			out = append(out, *e)
			cont = true
			r.i++
			continue
		}
		if cont && len(out) > 0 && out[len(out)-1].Wrapped < 40 {
			e := &out[len(out)-1]
			e.Message += "\n" + strings.TrimRight(l.Text, " \t")
			e.Wrapped++
			r.i++
			continue
		}
		return out
	}
	return out
}

// parseRow reads one row, or returns nil.
func (r *reader) parseRow(t *table, l Line) *Event {
	order := t.order
	if t.headless {
		order = rowLayouts
	}
	for _, lay := range order {
		if m := lay.re().FindStringSubmatch(l.Text); m != nil {
			return r.event(lay, m, l)
		}
	}
	if len(t.columns) > 1 && !strings.Contains(l.Text, "\t") {
		return r.cut(t, l)
	}
	return nil
}

func (r *reader) event(lay *layout, m []string, l Line) *Event {
	g := func(name string) string {
		if i := lay.re().SubexpIndex(name); i > 0 {
			return m[i]
		}
		return ""
	}
	e := &Event{Line: l.N, Type: g("type"), Reason: g("reason"), From: g("from"), Namespace: g("ns"), Count: 1}
	e.Message = g("msg")
	if n, err := strconv.Atoi(g("count")); err == nil && n > 0 {
		e.Count = n
	}
	if lay == getEvents || lay == getEventsOld {
		e.Kind, e.Name = objectOf(g("obj"))
		if g("name") != "" {
			e.Kind, e.Name = g("kind"), g("name")
		}
	}
	e.FieldPath = g("sub")
	switch {
	case g("last") != "":
		e.LastAge = r.age(g("last"))
		e.FirstAge = e.LastAge
		if g("first") != "" {
			e.FirstAge = r.age(g("first"))
		}
	default:
		e.FirstAge, e.First = r.when(g("firstt"))
		e.LastAge, e.Last = r.when(g("lastt"))
	}
	tidy(e)
	return e
}

// cut reads a row by the header's columns.
func (r *reader) cut(t *table, l Line) *Event {
	cell := func(name string) string {
		for i, c := range t.columns {
			if c.name != name {
				continue
			}
			if c.start >= len(l.Text) {
				return ""
			}
			end := len(l.Text)
			if i+1 < len(t.columns) && t.columns[i+1].start < end {
				end = t.columns[i+1].start
			}
			return strings.TrimSpace(l.Text[c.start:end])
		}
		return ""
	}
	typ := cell("TYPE")
	if typ != "Normal" && typ != "Warning" {
		return nil
	}
	e := &Event{Line: l.N, Type: typ, Reason: cell("REASON"), Message: cell("MESSAGE"), From: cell("SOURCE"), FieldPath: cell("SUBOBJECT"), Namespace: cell("NAMESPACE"), Count: 1}
	e.Kind, e.Name = objectOf(cell("OBJECT"))
	if e.Name == "" && cell("NAME") != "" && cell("KIND") != "" {
		e.Kind, e.Name = cell("KIND"), cell("NAME")
	}
	if n, err := strconv.Atoi(cell("COUNT")); err == nil && n > 0 {
		e.Count = n
	}
	last, first := cell("LASTSEEN"), cell("FIRSTSEEN")
	if m := seriesCell().FindStringSubmatch(last); m != nil {
		last = m[1]
		if m[2] != "" {
			e.Count, _ = strconv.Atoi(m[2])
			first = m[3]
		}
	}
	e.LastAge = r.age(last)
	e.FirstAge = e.LastAge
	if first != "" {
		e.FirstAge = r.age(first)
	}
	tidy(e)
	return e
}

func objectOf(s string) (kind, name string) {
	if i := strings.IndexByte(s, '/'); i > 0 {
		k := s[:i]
		switch strings.ToLower(k) {
		case "pod", "pods":
			k = "Pod"
		}
		return k, s[i+1:]
	}
	return s, ""
}

func (r *reader) age(s string) *Age {
	if a, ok := parseAge(s, r.precise); ok {
		return &a
	}
	return nil
}

// when reads a time column: an age, or an RFC 1123 time.
func (r *reader) when(s string) (*Age, timeT) {
	if a := r.age(s); a != nil {
		return a, timeT{}
	}
	t, _ := timestamp(s)
	return nil, t
}

// tidy reads what the message carries: the kubelet's aggregation prefix,
// kubectl 1.35's field path prefix, and lowercase reasons of kubectl 1.0.
func tidy(e *Event) {
	e.Message = strings.TrimSpace(strings.TrimPrefix(e.Message, "(combined from similar events): "))
	if m := fieldPathPrefix().FindStringSubmatch(e.Message); m != nil && e.FieldPath == "" {
		e.FieldPath, e.Message = m[1], m[2]
	}
	if e.Reason != "" && e.Reason[0] >= 'a' && e.Reason[0] <= 'z' {
		e.Reason = strings.ToUpper(e.Reason[:1]) + e.Reason[1:]
	}
}

var fieldPathPrefix = lazyregexp.New(`^(spec\.(?:initContainers|containers|ephemeralContainers)\{[^}]*\}): (.*)$`)
