package yamledit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/load"
)

// A manifest written as JSON (a .json file, kubectl get -o json) stays
// JSON: the document that holds the object is written again as JSON with
// the file's own indentation and line endings, keys in their order, the
// new keys after them. YAML reads JSON, so the object is found and the
// patch applied to the same node tree as for YAML.

// isJSON reports whether the document is written as JSON: its root is a
// flow collection whose keys are double-quoted.
func isJSON(doc, root *yaml.Node) bool {
	if len(doc.Content) == 0 {
		return false
	}
	top := doc.Content[0]
	if top.Style&yaml.FlowStyle == 0 || root.Style&yaml.FlowStyle == 0 {
		return false
	}
	return len(root.Content) == 0 || root.Content[0].Style == yaml.DoubleQuotedStyle
}

func editJSON(data []byte, doc, root *yaml.Node, patch map[string]any, keepNulls bool) ([]byte, error) {
	e := &editor{data: data, lines: lineStarts(data)}
	top := doc.Content[0]
	start := e.offset(top.Line, top.Column)
	end, ok := flowEnd(data, start)
	if !ok {
		return nil, fmt.Errorf("line %d: unterminated JSON", top.Line)
	}
	path, _ := pathTo(top, load.Position{Line: root.Line, Column: root.Column}, nil)
	c := deepCopy(top)
	target := c
	for _, p := range path {
		switch k := p.(type) {
		case string:
			_, target = pair(target, k)
		case int:
			target = target.Content[k]
		}
		if target == nil {
			return nil, fmt.Errorf("line %d: the object is not in the document", root.Line)
		}
	}
	if err := patchJSON(target, patch, keepNulls); err != nil {
		return nil, err
	}
	text := string(data[start:end])
	j := jsonStyle{indent: detectIndent(text), eol: "\n"}
	if strings.Contains(text, "\r\n") {
		j.eol = "\r\n"
	}
	if j.indent == "" {
		j.colon, j.comma = ":", ","
		if strings.Contains(text, "\": ") {
			j.colon = ": "
		}
		if strings.Contains(text, ", ") {
			j.comma = ", "
		}
	}
	// A nested object the file writes on one line stays on one line.
	j.oneLine = map[*yaml.Node]string{}
	var mark func(n *yaml.Node)
	mark = func(n *yaml.Node) {
		if (n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode) && n.Line > 0 && n != c {
			off := e.offset(n.Line, n.Column)
			if end, ok := flowEnd(data, off); ok && !bytes.ContainsRune(data[off:end], '\n') {
				j.oneLine[n] = string(data[off:end])
			}
		}
		for _, k := range n.Content {
			mark(k)
		}
	}
	mark(c)
	var b strings.Builder
	j.emit(&b, c, 0)
	out := append([]byte(nil), data[:start]...)
	out = append(out, b.String()...)
	return append(out, data[end:]...), nil
}

// detectIndent is the indentation of the first nested line of a JSON
// text: "" when the text is on one line.
func detectIndent(text string) string {
	i := strings.IndexByte(text, '\n')
	if i < 0 {
		return ""
	}
	line := text[i+1:]
	n := 0
	for n < len(line) && (line[n] == ' ' || line[n] == '\t') {
		n++
	}
	if n == 0 {
		return "  "
	}
	return line[:n]
}

// patchJSON applies a patch to a node tree as Edit does: maps merge, named
// items by name, null deletes, anything else is replaced.
func patchJSON(n *yaml.Node, patch map[string]any, keepNulls bool) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: not a JSON object", n.Line)
	}
	for _, k := range orderedKeys(patch) {
		v := patch[k]
		idx := -1
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				idx = i
			}
		}
		switch {
		case v == nil && !keepNulls:
			if idx >= 0 {
				n.Content = append(n.Content[:idx], n.Content[idx+2:]...)
			}
		case idx < 0:
			if hasLeaf(v) || keepNulls {
				n.Content = append(n.Content, jsonKey(k), toNode(v, keepNulls))
			}
		default:
			cur := n.Content[idx+1]
			switch x := v.(type) {
			case map[string]any:
				if cur.Kind == yaml.MappingNode {
					had := len(cur.Content) > 0
					if err := patchJSON(cur, x, keepNulls); err != nil {
						return err
					}
					if had && len(cur.Content) == 0 && !keepNulls {
						n.Content = append(n.Content[:idx], n.Content[idx+2:]...)
					}
					continue
				}
			case []any:
				if cur.Kind == yaml.SequenceNode && fix.NamedList(x) {
					if err := patchItems(cur, x, keepNulls); err != nil {
						return err
					}
					continue
				}
			}
			n.Content[idx+1] = toNode(v, keepNulls)
		}
	}
	return nil
}

func patchItems(seq *yaml.Node, items []any, keepNulls bool) error {
	for _, it := range items {
		name, _ := fix.ItemName(it)
		var found *yaml.Node
		for _, c := range seq.Content {
			if _, nv := pair(c, "name"); nv != nil && nv.Value == name {
				found = c
			}
		}
		if found == nil {
			seq.Content = append(seq.Content, toNode(it, keepNulls))
			continue
		}
		if err := patchJSON(found, withoutName(it), keepNulls); err != nil {
			return err
		}
	}
	return nil
}

func jsonKey(k string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k, Style: yaml.DoubleQuotedStyle}
}

// toNode turns a patch value into nodes, keys in the order people write
// them.
func toNode(v any, keepNulls bool) *yaml.Node {
	switch x := v.(type) {
	case map[string]any:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: yaml.FlowStyle}
		for _, k := range orderedKeys(x) {
			if x[k] == nil && !keepNulls {
				continue
			}
			n.Content = append(n.Content, jsonKey(k), toNode(x[k], keepNulls))
		}
		return n
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
		for _, it := range x {
			n.Content = append(n.Content, toNode(it, keepNulls))
		}
		return n
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
	case string:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: x, Style: yaml.DoubleQuotedStyle}
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: nodeTag(v), Value: scalarValue(v)}
}

// jsonStyle is how a file writes JSON.
type jsonStyle struct {
	indent, eol  string // indent "" writes one line
	colon, comma string // separators of a one-line text
	// oneLine holds the text of the objects and lists the file writes on
	// one line.
	oneLine map[*yaml.Node]string
}

func (j jsonStyle) emit(b *strings.Builder, n *yaml.Node, level int) {
	if text, ok := j.oneLine[n]; ok && j.indent != "" {
		one := jsonStyle{colon: ":", comma: ","}
		if strings.Contains(text, "\": ") {
			one.colon = ": "
		}
		if strings.Contains(text, ", ") {
			one.comma = ", "
		}
		one.emit(b, n, 0)
		return
	}
	pad := func(l int) string { return strings.Repeat(j.indent, l) }
	switch n.Kind {
	case yaml.MappingNode, yaml.SequenceNode:
		open, close, step := "{", "}", 2
		if n.Kind == yaml.SequenceNode {
			open, close, step = "[", "]", 1
		}
		if len(n.Content) == 0 {
			b.WriteString(open + close)
			return
		}
		b.WriteString(open)
		for i := 0; i < len(n.Content); i += step {
			if i > 0 && j.indent != "" {
				b.WriteString(",")
			} else if i > 0 {
				b.WriteString(j.comma)
			}
			if j.indent != "" {
				b.WriteString(j.eol + pad(level+1))
			}
			if step == 2 {
				b.WriteString(jsonString(n.Content[i].Value))
				if j.indent != "" {
					b.WriteString(": ")
				} else {
					b.WriteString(j.colon)
				}
				j.emit(b, n.Content[i+1], level+1)
			} else {
				j.emit(b, n.Content[i], level+1)
			}
		}
		if j.indent != "" {
			b.WriteString(j.eol + pad(level))
		}
		b.WriteString(close)
	default:
		switch {
		case n.Tag == "!!str" || n.Style == yaml.DoubleQuotedStyle || n.Style == yaml.SingleQuotedStyle:
			b.WriteString(jsonString(n.Value))
		case n.Tag == "!!null":
			b.WriteString("null")
		default:
			b.WriteString(n.Value)
		}
	}
}

func jsonString(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(buf.String(), "\n")
}
