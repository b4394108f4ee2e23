package yamledit

import (
	"backfire.dev/backfire/internal/lazyregexp"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// A scalar of a probe written literally in a Helm template
// (`timeoutSeconds: 1` under `livenessProbe:`, with no template action on
// the line) is edited in the template's text, like a literal handler. The
// safe case only:
//
//   - the probe's key is a plain line (`livenessProbe:`) in the item of a
//     container list (`containers:`) whose `name:` is the container's, or
//     is written with a template action; exactly one such probe block is in
//     the template (two, in the two branches of an `if`, are ambiguous);
//   - a field the rendered object has is written once, directly in that
//     block, with no template action on its line, and its value there is
//     the rendered one: only the value's text is replaced, keeping its
//     quoting, its comment and every other byte;
//   - a field the rendered object lacks is added as a sibling line, at the
//     indentation of the block's keys, after the block's last line, and
//     only when the block is literal: every line of it is a key written in
//     plain text (a value may be a template action), and no line is an
//     action alone (`{{ toYaml ... }}`, `{{- if }}`), which could print
//     the same key.
//
// Anything else is refused with the reason and the line; the caller leaves
// the finding.

// ProbeField names one scalar field of a container's probe: timeoutSeconds
// of the livenessProbe of the container database, in the list containers.
type ProbeField struct {
	List, Container, Probe, Key string
}

func (f ProbeField) String() string {
	return f.List + "[" + f.Container + "]." + f.Probe + "." + f.Key
}

// SetLiteralProbeField sets the field f to val in the text of a template.
// old is the field's rendered value, and present says whether the rendered
// object has the field at all. A template that already holds val there is
// returned unchanged: a second run changes nothing.
func SetLiteralProbeField(tmpl []byte, f ProbeField, old any, present bool, val any) ([]byte, error) {
	switch val.(type) {
	case string, float64, int, int64, bool:
	default:
		return nil, fmt.Errorf("%s: only a scalar is edited in a template", f)
	}
	if !fieldKey().MatchString(f.Key) {
		// A line written for it would not be read back as its key, and a
		// second run would write it again.
		return nil, fmt.Errorf("%s: %q is not a key written plainly: not edited", f, f.Key)
	}
	lines := strings.SplitAfter(string(tmpl), "\n")
	var blocks []probeBlock
	for i := range lines {
		if b, ok := probeBlockAt(lines, i, f); ok {
			blocks = append(blocks, b)
		}
	}
	switch {
	case len(blocks) == 0:
		return nil, fmt.Errorf("%s is not written as a plain block in the template (a helper, toYaml or values build it): not edited", f.probe())
	case len(blocks) > 1:
		return nil, fmt.Errorf("%s is written %d times in the template (lines %d and %d): not edited", f.probe(), len(blocks), blocks[0].line+1, blocks[1].line+1)
	}
	b := blocks[0]
	var at []int
	for _, c := range b.children {
		if k, _, ok := keyOfLine(lines[c]); ok && k == f.Key {
			at = append(at, c)
		}
	}
	switch {
	case len(at) > 1:
		return nil, fmt.Errorf("lines %d and %d: %s is written %d times in its block: not edited", at[0]+1, at[1]+1, f, len(at))
	case len(at) == 1:
		return setLine(lines, at[0], f, old, present, val)
	case present && b.action > 0:
		return nil, fmt.Errorf("line %d: a template action builds part of %s, and %s is not written in it: not edited", b.action, f.probe(), f.Key)
	case present:
		return nil, fmt.Errorf("line %d: %s has no %s line, though the rendered object has the field: not edited", b.line+1, f.probe(), f.Key)
	case b.action > 0:
		return nil, fmt.Errorf("line %d: a template action builds part of %s, which could print %s too: not added", b.action, f.probe(), f.Key)
	case len(b.children) == 0:
		return nil, fmt.Errorf("line %d: %s has no keys to add %s beside: not added", b.line+1, f.probe(), f.Key)
	}
	last := lines[b.last]
	eol := lineEnd(last)
	text := strings.Repeat(" ", b.child) + f.Key + ": " + scalar(val)
	if eol == "" {
		// The block ends the file without a line break: the new line
		// starts with the file's own.
		brk := "\n"
		if len(lines) > 1 {
			brk = lineEnd(lines[0])
		}
		text, eol = brk+text, ""
	}
	out := strings.Join(lines[:b.last+1], "") + text + eol + strings.Join(lines[b.last+1:], "")
	return []byte(out), nil
}

func (f ProbeField) probe() string {
	return f.List + "[" + f.Container + "]." + f.Probe
}

// setLine replaces the value written on line i.
func setLine(lines []string, i int, f ProbeField, old any, present bool, val any) ([]byte, error) {
	l := strings.TrimRight(lines[i], "\r\n")
	if strings.Contains(l, "{{") || strings.Contains(l, "}}") {
		return nil, fmt.Errorf("line %d: %s is written with a template action: not edited", i+1, f)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(l), &doc); err != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode || len(doc.Content[0].Content) != 2 {
		return nil, fmt.Errorf("line %d: %s cannot be read as one key and its value: not edited", i+1, f)
	}
	v := doc.Content[0].Content[1]
	if _, rest, _ := keyOfLine(l); v.Kind != yaml.ScalarNode || rest == "" || strings.HasPrefix(rest, "#") {
		return nil, fmt.Errorf("line %d: %s is not a scalar on its line: not edited", i+1, f)
	}
	var lit any
	if err := v.Decode(&lit); err != nil {
		return nil, fmt.Errorf("line %d: %s: %v", i+1, f, err)
	}
	switch {
	case equal(lit, val):
		return []byte(strings.Join(lines, "")), nil // already so
	case !present:
		return nil, fmt.Errorf("line %d: %s is %s in the template and absent from the rendered object: the line did not render it; not edited", i+1, f, show(lit))
	case !equal(lit, old):
		return nil, fmt.Errorf("line %d: %s is %s in the template and %s in the rendered object: the line did not render it; not edited", i+1, f, show(lit), show(old))
	}
	start := columnOffset(l, v.Column)
	n := scalarLen([]byte(l[start:]), v)
	if n < 0 {
		return nil, fmt.Errorf("line %d: %s cannot be edited in place", i+1, f)
	}
	lines[i] = lines[i][:start] + literalText(val, v.Style) + lines[i][start+n:]
	return []byte(strings.Join(lines, "")), nil
}

// literalText writes val in the quoting style of the value it replaces:
// a string keeps its quotes, a number or a boolean is written plain.
func literalText(val any, style yaml.Style) string {
	s, ok := val.(string)
	if !ok {
		return scalarValue(val)
	}
	switch style {
	case yaml.DoubleQuotedStyle:
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(s) // a JSON string is a double-quoted YAML scalar
		return strings.TrimSuffix(b.String(), "\n")
	case yaml.SingleQuotedStyle:
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
	return scalar(val)
}

// columnOffset turns a 1-based column in characters into a byte offset.
func columnOffset(l string, col int) int {
	n := 0
	for off := range l {
		if n == col-1 {
			return off
		}
		n++
	}
	return len(l)
}

// probeBlock is a probe's block in a template's lines.
type probeBlock struct {
	line, indent int // the probe's key line (0-based) and indentation
	child        int // the indentation of the block's keys
	children     []int
	last         int // the block's last line
	action       int // the first line (1-based) of an action in the block, or 0
}

// fieldKey is a key keyLine reads.
var fieldKey = lazyregexp.New(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// keyLine reads a block mapping's key line: "  timeoutSeconds: 1 # c".
var keyLine = lazyregexp.New(`^ *([A-Za-z_][A-Za-z0-9_-]*):(?:[ \t]+(.*))?$`)

// keyOfLine reads the key of a line and what follows it, without the line
// break.
func keyOfLine(l string) (key, rest string, ok bool) {
	m := keyLine().FindStringSubmatch(strings.TrimRight(l, "\r\n"))
	if m == nil {
		return "", "", false
	}
	return m[1], strings.TrimSpace(m[2]), true
}

// control matches a line that is one action printing nothing: control
// flow, a comment, a variable.
var control = lazyregexp.New(`^\{\{-?\s*(if|else|end|with|range|/\*|\$[A-Za-z0-9_]*\s*:?=)[^{]*\}\}$`)

func isAction(t string) bool { return strings.HasPrefix(t, "{{") }

// opens is how many blocks the actions of a line open, less those it
// closes.
func opens(t string) int {
	n := 0
	for _, a := range actionRe().FindAllStringSubmatch(t, -1) {
		words := strings.Fields(a[1])
		if len(words) == 0 {
			continue
		}
		switch words[0] {
		case "if", "with", "range", "define", "block":
			n++
		case "end":
			n--
		}
	}
	return n
}

var actionRe = lazyregexp.New(`\{\{-?\s*(.*?)\s*-?\}\}`)

// probeBlockAt reads the block of f's probe whose key is on line i, when
// it belongs to f's container.
func probeBlockAt(lines []string, i int, f ProbeField) (probeBlock, bool) {
	k, rest, ok := keyOfLine(lines[i])
	if !ok || k != f.Probe || (rest != "" && !strings.HasPrefix(rest, "#")) {
		return probeBlock{}, false
	}
	b := probeBlock{line: i, indent: indentOf(lines[i]), last: i, child: -1}
	if !inContainer(lines, i, b.indent, f) {
		return probeBlock{}, false
	}
	// Action lines count as inside the block when a key of the block
	// follows them; after its last key, only those that print something
	// (a toYaml could print more keys of the probe).
	// A control action (if, with, range, end) that only guards lines
	// deeper than the block's keys (`scheme: HTTPS` under httpGet), opened
	// and closed there, cannot print one of them: it counts only while a
	// key of the block is inside it.
	pending, printing, open := 0, 0, 0
	for j := i + 1; j < len(lines); j++ {
		t := strings.TrimSpace(lines[j])
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if isAction(t) {
			if pending == 0 {
				pending = j + 1
			}
			if printing == 0 && !control().MatchString(t) {
				printing = j + 1
			}
			before := open
			open += opens(t)
			if before > 0 {
				b.last = j // an action that closes or continues one of the block's
			}
			continue
		}
		ind := indentOf(lines[j])
		if ind <= b.indent {
			break
		}
		deeper := b.child >= 0 && ind > b.child
		if b.action == 0 && pending > 0 && (printing > 0 || open != 0 && !deeper) {
			b.action = pending
		}
		if b.action == 0 && open != 0 && !deeper {
			b.action = j + 1 // a key of the block inside an action
		}
		pending, printing = 0, 0
		if b.child < 0 {
			b.child = ind
		}
		switch {
		case ind == b.child:
			if _, _, ok := keyOfLine(lines[j]); ok {
				b.children = append(b.children, j)
			} else if b.action == 0 {
				b.action = j + 1 // a key written with a template action
			}
		case ind < b.child && b.action == 0:
			b.action = j + 1 // not a block this reads
		}
		b.last = j
	}
	if b.action == 0 && printing > 0 {
		b.action = printing
	}
	return b, true
}

// inContainer reports whether the probe key at line i (indentation ind)
// sits in an item of f's container list whose name is f's container, or is
// written with a template action.
func inContainer(lines []string, i, ind int, f ProbeField) bool {
	name, named := "", false
	see := func(l string) {
		if k, rest, ok := keyOfLine(l); ok && k == "name" {
			name, named = rest, true
		}
	}
	// The item's other keys, after the probe.
	for j := i + 1; j < len(lines); j++ {
		t := strings.TrimSpace(lines[j])
		if t == "" || strings.HasPrefix(t, "#") || isAction(t) {
			continue
		}
		ji := indentOf(lines[j])
		if ji < ind {
			break
		}
		if ji == ind {
			see(lines[j])
		}
	}
	// Up to the item's dash, then to the list's key.
	dash := -1
	for j := i - 1; j >= 0 && dash < 0; j-- {
		t := strings.TrimSpace(lines[j])
		if t == "" || strings.HasPrefix(t, "#") || isAction(t) {
			continue
		}
		ji := indentOf(lines[j])
		switch {
		case ji < 0:
			return false
		case ji > ind:
		case ji == ind:
			see(lines[j])
		case strings.HasPrefix(t, "- ") && ji+1+len(t[1:])-len(strings.TrimLeft(t[1:], " ")) == ind:
			see(strings.Repeat(" ", ind) + strings.TrimLeft(t[1:], " "))
			dash = j
		default:
			return false // the probe is not in a list item
		}
	}
	if dash < 0 {
		return false
	}
	di := indentOf(lines[dash])
	list := ""
	for j := dash - 1; j >= 0; j-- {
		t := strings.TrimSpace(lines[j])
		if t == "" || strings.HasPrefix(t, "#") || isAction(t) {
			continue
		}
		ji := indentOf(lines[j])
		if ji > di || (ji == di && strings.HasPrefix(t, "- ")) {
			continue // an earlier item
		}
		if k, rest, ok := keyOfLine(lines[j]); ok && (rest == "" || strings.HasPrefix(rest, "#")) {
			list = k
		}
		break
	}
	if list != f.List || !named {
		return false
	}
	if strings.Contains(name, "{{") {
		return true // the name is computed: the block may be the container's
	}
	var n string
	return yaml.Unmarshal([]byte(name), &n) == nil && n == f.Container
}
