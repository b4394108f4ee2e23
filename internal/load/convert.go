package load

import (
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"backfire.dev/backfire/internal/jsonenc"
)

// converter turns one YAML node tree into compact JSON, recording where in the
// source every key and value started. Typed decoding then runs on the JSON
// (the Kubernetes types carry json tags only), and the marks let a JSON
// offset or a field path be turned back into a line and column.
//
// It follows the YAML 1.1 habits of sigs.k8s.io/yaml where they matter for
// manifests (merge keys, non-string keys stringified, 0-prefixed octal) and
// refuses what JSON cannot hold (NaN, infinities).
type converter struct {
	buf    []byte
	marks  []mark
	budget int // nodes that may still be emitted; guards alias expansion
	depth  int
}

// mark records that the JSON text at off came from the source at line:col.
type mark struct {
	off       int32
	line, col int32
}

// maxDepth bounds nesting; real manifests stay far below it.
const maxDepth = 1000

type convertError struct {
	line, col int
	msg       string
}

func (e *convertError) Error() string { return e.msg }

func errAt(n *yaml.Node, format string, args ...any) *convertError {
	return &convertError{line: n.Line, col: n.Column, msg: fmt.Sprintf(format, args...)}
}

// aliasBudget is how many nodes a document may emit: its own nodes plus a
// generous allowance for aliases. A "billion laughs" document exceeds it long
// before it costs real memory.
func aliasBudget(nodes int) int { return 10*nodes + 100_000 }

func countNodes(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	c := 1
	for _, k := range n.Content {
		c += countNodes(k)
	}
	return c
}

func (c *converter) mark(n *yaml.Node) {
	c.marks = append(c.marks, mark{off: int32(len(c.buf)), line: int32(n.Line), col: int32(n.Column)})
}

func (c *converter) value(n *yaml.Node) error {
	c.budget--
	if c.budget < 0 {
		return errAt(n, "document expands to too many nodes (excessive aliasing)")
	}
	c.depth++
	defer func() { c.depth-- }()
	if c.depth > maxDepth {
		return errAt(n, "document nested more than %d levels deep", maxDepth)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			c.buf = append(c.buf, "null"...)
			return nil
		}
		return c.value(n.Content[0])
	case yaml.AliasNode:
		// The position stays that of the alias: that is where the user wrote it.
		return c.value(n.Alias)
	case yaml.MappingNode:
		return c.mapping(n)
	case yaml.SequenceNode:
		c.mark(n)
		c.buf = append(c.buf, '[')
		for i, item := range n.Content {
			if i > 0 {
				c.buf = append(c.buf, ',')
			}
			if err := c.value(item); err != nil {
				return err
			}
		}
		c.buf = append(c.buf, ']')
		return nil
	case yaml.ScalarNode:
		c.mark(n)
		return c.scalar(n)
	}
	return errAt(n, "unsupported YAML node")
}

// mapping emits an object. Merge keys ("<<") are expanded after the
// explicit keys, which override them, as YAML 1.1 specifies. A key given
// twice is an error: Kubernetes' own decoder refuses it.
func (c *converter) mapping(n *yaml.Node) error {
	c.mark(n)
	c.buf = append(c.buf, '{')
	keys := keySet{}
	if len(n.Content) > 2*keySetLinear {
		keys.m = make(map[string]bool, len(n.Content)/2)
	} else if len(n.Content) > 2 {
		keys.list = make([]string, 0, len(n.Content)/2)
	}
	hasMerge := false
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			hasMerge = true
			continue
		}
		ks, err := keyString(deref(k))
		if err != nil {
			return err
		}
		if keys.has(ks) {
			return errAt(k, "key %q already defined at line %d", ks, keyLine(n, ks))
		}
		if err := c.member(keys.n, k, ks, v); err != nil {
			return err
		}
		keys.add(ks)
	}
	if hasMerge {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!merge" {
				continue
			}
			srcs := []*yaml.Node{v}
			if deref(v).Kind == yaml.SequenceNode {
				srcs = deref(v).Content
			}
			for _, src := range srcs {
				m := deref(src)
				if m.Kind != yaml.MappingNode {
					return errAt(src, "merge key value is not a mapping")
				}
				for j := 0; j+1 < len(m.Content); j += 2 {
					ks, err := keyString(deref(m.Content[j]))
					if err != nil {
						return err
					}
					if keys.has(ks) {
						continue // explicit keys and earlier merge sources win
					}
					if err := c.member(keys.n, k, ks, m.Content[j+1]); err != nil {
						return err
					}
					keys.add(ks)
				}
			}
		}
	}
	c.buf = append(c.buf, '}')
	return nil
}

func (c *converter) member(i int, k *yaml.Node, key string, v *yaml.Node) error {
	if i > 0 {
		c.buf = append(c.buf, ',')
	}
	c.mark(k)
	c.buf = appendString(c.buf, key)
	c.buf = append(c.buf, ':')
	return c.value(v)
}

// keySet holds a mapping's keys. Most mappings in manifests have a handful
// of keys, where a linear search beats allocating a map; large ones (a
// ConfigMap's data) get a map.
type keySet struct {
	list []string
	m    map[string]bool
	n    int
}

const keySetLinear = 32

func (s *keySet) has(k string) bool {
	if s.m != nil {
		return s.m[k]
	}
	for _, x := range s.list {
		if x == k {
			return true
		}
	}
	return false
}

func (s *keySet) add(k string) {
	s.n++
	if s.m != nil {
		s.m[k] = true
		return
	}
	s.list = append(s.list, k)
}

// checkKeys refuses a key given twice in any mapping of n but skip, as
// the converter does: it is for the part of a List that is not converted
// (the List around its items). kubectl reads a second "items" or "kind"
// as the one that counts (sigs.k8s.io/yaml YAMLToJSON: yaml.v2's
// non-strict decoding keeps the last value of a key), and the API server
// refuses it when validation is strict: a List read either way would be
// a guess. Aliases are not followed: what they name is checked where it
// is written. Merge keys may repeat (the converter merges each).
func checkKeys(n, skip *yaml.Node) *convertError {
	if n == nil || n == skip {
		return nil
	}
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for _, c := range n.Content {
			if err := checkKeys(c, skip); err != nil {
				return err
			}
		}
	case yaml.MappingNode:
		keys := make(map[string]bool, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!merge" {
				if ks, err := keyString(deref(k)); err == nil {
					if keys[ks] {
						return errAt(k, "key %q already defined at line %d", ks, keyLine(n, ks))
					}
					keys[ks] = true
				}
			}
			if err := checkKeys(v, skip); err != nil {
				return err
			}
		}
	}
	return nil
}

func keyLine(n *yaml.Node, key string) int {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i].Line
		}
	}
	return n.Line
}

func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// keyString stringifies a mapping key the way sigs.k8s.io/yaml does.
func keyString(k *yaml.Node) (string, error) {
	if k.Kind != yaml.ScalarNode {
		if k.Kind == yaml.MappingNode && k.Style&yaml.FlowStyle != 0 {
			// The usual cause: an unquoted template placeholder, {{x}}.
			return "", errAt(k, "mapping key is itself a mapping (an unquoted {{...}} placeholder is a YAML flow mapping: quote it); Kubernetes cannot decode this either")
		}
		return "", errAt(k, "mapping key is not a scalar; Kubernetes cannot decode this")
	}
	if k.ShortTag() == "!!null" {
		return "null", nil
	}
	return k.Value, nil
}

func (c *converter) scalar(n *yaml.Node) error {
	switch n.ShortTag() {
	case "!!null":
		c.buf = append(c.buf, "null"...)
	case "!!bool":
		if strings.EqualFold(n.Value, "true") {
			c.buf = append(c.buf, "true"...)
		} else {
			c.buf = append(c.buf, "false"...)
		}
	case "!!int":
		s := strings.ReplaceAll(n.Value, "_", "")
		if strings.HasPrefix(s, "0o") || strings.HasPrefix(s, "+0o") || strings.HasPrefix(s, "-0o") {
			s = strings.Replace(s, "0o", "0", 1)
		}
		if i, err := strconv.ParseInt(s, 0, 64); err == nil {
			c.buf = strconv.AppendInt(c.buf, i, 10)
		} else if u, err := strconv.ParseUint(s, 0, 64); err == nil {
			c.buf = strconv.AppendUint(c.buf, u, 10)
		} else {
			return errAt(n, "integer %q out of range", n.Value)
		}
	case "!!float":
		f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			if v := strings.ToLower(n.Value); strings.Contains(v, "inf") || strings.Contains(v, "nan") {
				return errAt(n, "%s cannot be represented in JSON", n.Value)
			}
			return errAt(n, "invalid number %q", n.Value)
		}
		c.buf = strconv.AppendFloat(c.buf, f, 'g', -1, 64)
	case "!!binary":
		if _, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(n.Value), "")); err != nil {
			return errAt(n, "invalid !!binary value")
		}
		c.buf = appendString(c.buf, strings.Join(strings.Fields(n.Value), ""))
	default: // !!str, !!timestamp and custom tags are strings
		c.buf = appendString(c.buf, n.Value)
	}
	return nil
}

// appendString writes s as a JSON string, as the report writes its strings
// (invalid UTF-8 never reaches here: the loader refuses it at its line).
func appendString(b []byte, s string) []byte { return jsonenc.AppendString(b, s, false) }
