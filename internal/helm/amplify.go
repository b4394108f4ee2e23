package helm

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"text/template/parse"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
)

// maxIterations bounds the range iterations a template may ask for, nested
// ranges multiplied: a loop costs time even when it writes nothing. Charts
// range over replicas, shards or zones, in the hundreds at most.
const maxIterations = 1 << 22

// amplification is what a template asks for before it runs, read from its
// parse tree: the bytes `repeat` and `seq` write and the iterations `range`
// makes, with counts that are numbers written in the template or values of
// the chart. Helm's engine writes each template into one string and has no
// hook to stop it part way (helm.sh/helm/v3 pkg/engine/engine.go, render:
// a strings.Builder per template), so a `repeat 2000000000 "x"` would take
// gigabytes before the rendered size could be measured. A count computed
// any other way (a variable, a template's argument) is not known here; the
// rendered output is still bounded once rendered (checkSize).
type amplification struct {
	file  string // the engine's key of the template ("chart/templates/x.yaml")
	line  int
	what  string // the call, as written
	bytes float64
	iters float64
}

// amplifiedCall returns the first call in the chart's templates (its
// subcharts' too) whose output exceeds maxBytes or whose ranges exceed
// maxIterations, with the values the templates see.
func amplifiedCall(ch *chart.Chart, vals chartutil.Values, maxBytes int64) *amplification {
	var root map[string]any
	switch v := vals["Values"].(type) {
	case chartutil.Values:
		root = v
	case map[string]any:
		root = v
	}
	return amplifiedIn(ch, root, maxBytes)
}

func amplifiedIn(ch *chart.Chart, values map[string]any, maxBytes int64) *amplification {
	for _, t := range ch.Templates {
		if t == nil || len(t.Data) == 0 {
			continue
		}
		trees, err := parseTemplate(ch.ChartFullPath()+"/"+t.Name, string(t.Data))
		if err != nil {
			continue // the engine reports it, with its line
		}
		for _, tree := range trees {
			w := &amplifyWalk{tree: tree, values: values, maxBytes: float64(maxBytes)}
			w.list(tree.Root, 1, tree.ParseName == tree.Name)
			if w.found != nil {
				return w.found
			}
		}
	}
	for _, d := range ch.Dependencies() {
		sub, _ := values[d.Name()].(map[string]any)
		if a := amplifiedIn(d, sub, maxBytes); a != nil {
			return a
		}
	}
	return nil
}

// parseTemplate parses text as text/template does, without checking that
// the functions exist: the engine knows Helm's and sprig's, this reader
// needs only their names.
func parseTemplate(name, text string) (map[string]*parse.Tree, error) {
	t := parse.New(name)
	t.Mode = parse.SkipFuncCheck | parse.ParseComments
	trees := map[string]*parse.Tree{}
	if _, err := t.Parse(text, "{{", "}}", trees); err != nil {
		return nil, err
	}
	return trees, nil
}

type amplifyWalk struct {
	tree     *parse.Tree
	values   map[string]any
	maxBytes float64
	found    *amplification
}

// list walks the nodes of a template body that runs mult times; rootDot
// is whether `.` is the chart's top-level context there.
func (w *amplifyWalk) list(l *parse.ListNode, mult float64, rootDot bool) {
	if l == nil {
		return
	}
	for _, n := range l.Nodes {
		if w.found != nil {
			return
		}
		switch n := n.(type) {
		case *parse.ActionNode:
			w.pipe(n.Pipe, mult, rootDot)
		case *parse.IfNode:
			w.pipe(n.Pipe, mult, rootDot)
			w.list(n.List, mult, rootDot)
			w.list(n.ElseList, mult, rootDot)
		case *parse.WithNode:
			w.pipe(n.Pipe, mult, rootDot)
			w.list(n.List, mult, false)
			w.list(n.ElseList, mult, rootDot)
		case *parse.RangeNode:
			v := w.pipe(n.Pipe, mult, rootDot)
			iters := 1.0
			if v.known {
				iters = v.iterations()
			}
			total := mult * iters
			if total > maxIterations {
				w.report(n, n.Pipe.String(), 0, total)
				return
			}
			w.list(n.List, total, false)
			w.list(n.ElseList, mult, rootDot)
		}
	}
}

// value is what an expression evaluates to, as far as this reader knows.
type value struct {
	known  bool
	num    float64 // a number, or the length of a list
	list   bool    // a list of num elements (until, untilStep, a values list)
	isText bool    // a string of text bytes
	text   int
}

func (v value) iterations() float64 {
	if v.num < 0 {
		return 0
	}
	return v.num
}

func (w *amplifyWalk) pipe(p *parse.PipeNode, mult float64, rootDot bool) value {
	if p == nil {
		return value{}
	}
	var prev *value
	var v value
	for _, c := range p.Cmds {
		v = w.command(c, prev, mult, rootDot)
		if w.found != nil {
			return value{}
		}
		prev = &v
	}
	return v
}

// command evaluates one command of a pipeline; prev is the value piped in
// as its last argument.
func (w *amplifyWalk) command(c *parse.CommandNode, prev *value, mult float64, rootDot bool) value {
	if len(c.Args) == 0 {
		return value{}
	}
	fn, isFunc := c.Args[0].(*parse.IdentifierNode)
	if !isFunc {
		if len(c.Args) == 1 {
			return w.arg(c.Args[0], mult, rootDot)
		}
		return value{}
	}
	var args []value
	for _, a := range c.Args[1:] {
		args = append(args, w.arg(a, mult, rootDot))
		if w.found != nil {
			return value{}
		}
	}
	if prev != nil {
		args = append(args, *prev)
	}
	num := func(i int) (float64, bool) {
		if i >= 0 && i < len(args) && args[i].known && !args[i].list && !math.IsNaN(args[i].num) {
			return args[i].num, true
		}
		return 0, false
	}
	switch fn.Ident {
	case "int", "int64", "float64", "atoi":
		if n, ok := num(0); ok && len(args) == 1 {
			return value{known: true, num: math.Trunc(n)}
		}
	case "add":
		sum := 0.0
		for i := range args {
			n, ok := num(i)
			if !ok {
				return value{}
			}
			sum += n
		}
		return value{known: true, num: sum}
	case "mul":
		prod := 1.0
		for i := range args {
			n, ok := num(i)
			if !ok {
				return value{}
			}
			prod *= n
		}
		return value{known: true, num: prod}
	case "until":
		if n, ok := num(0); ok {
			return value{known: true, num: n, list: true}
		}
	case "untilStep":
		start, ok1 := num(0)
		stop, ok2 := num(1)
		step, ok3 := num(2)
		if ok1 && ok2 && ok3 && step != 0 {
			return value{known: true, num: math.Max(0, math.Ceil((stop-start)/step)), list: true}
		}
	case "repeat":
		n, ok := num(0)
		if !ok {
			return value{}
		}
		width := 1.0
		if len(args) == 2 && args[1].known && args[1].isText {
			width = float64(args[1].text)
		}
		if b := mult * n * width; b > w.maxBytes {
			w.report(c, c.String(), b, 0)
		}
	case "seq":
		// seq writes its numbers separated by spaces: at least 2 bytes each.
		if n, ok := num(len(args) - 1); ok {
			if b := mult * 2 * n; b > w.maxBytes {
				w.report(c, c.String(), b, 0)
			}
		}
	}
	return value{}
}

func (w *amplifyWalk) arg(a parse.Node, mult float64, rootDot bool) value {
	switch a := a.(type) {
	case *parse.NumberNode:
		switch {
		case a.IsInt:
			return value{known: true, num: float64(a.Int64)}
		case a.IsUint:
			return value{known: true, num: float64(a.Uint64)}
		case a.IsFloat:
			return value{known: true, num: a.Float64}
		}
	case *parse.StringNode:
		return value{known: true, num: math.NaN(), isText: true, text: len(a.Text)}
	case *parse.PipeNode:
		return w.pipe(a, mult, rootDot)
	case *parse.FieldNode:
		if rootDot && len(a.Ident) > 1 && a.Ident[0] == "Values" {
			return w.lookup(a.Ident[1:])
		}
	case *parse.VariableNode:
		if len(a.Ident) > 2 && a.Ident[0] == "$" && a.Ident[1] == "Values" {
			return w.lookup(a.Ident[2:])
		}
	}
	return value{}
}

// lookup reads a number or a list's length from the chart's values.
func (w *amplifyWalk) lookup(path []string) value {
	var cur any = w.values
	for _, k := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return value{}
		}
		cur = m[k]
	}
	switch v := cur.(type) {
	case int:
		return value{known: true, num: float64(v)}
	case int64:
		return value{known: true, num: float64(v)}
	case float64:
		return value{known: true, num: v}
	case string:
		n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			n = math.NaN()
		}
		return value{known: true, num: n, isText: true, text: len(v)}
	case []any:
		return value{known: true, num: float64(len(v)), list: true}
	}
	return value{}
}

func (w *amplifyWalk) report(n parse.Node, what string, bytes, iters float64) {
	// ErrorContext's location is "name:line:column".
	loc, _ := w.tree.ErrorContext(n)
	line := 0
	if i := strings.LastIndexByte(loc, ':'); i > 0 {
		if j := strings.LastIndexByte(loc[:i], ':'); j > 0 {
			line, _ = strconv.Atoi(loc[j+1 : i])
		}
	}
	w.found = &amplification{file: w.tree.ParseName, line: line, what: what, bytes: bytes, iters: iters}
}

// message says what the call asks for, for an error at its line.
func (a *amplification) message() string {
	if a.iters > 0 {
		return fmt.Sprintf("{{ range %s }} runs %.3g times (nested ranges multiplied), more than the %d a scan renders; not rendered", a.what, a.iters, maxIterations)
	}
	return fmt.Sprintf("{{ %s }} writes about %s, more than a scan reads from one input; not rendered (raise --max-file-size)", a.what, bytesize(int64(math.Min(a.bytes, math.MaxInt64/2))))
}
