package yamledit

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	yaml "go.yaml.in/yaml/v3"

	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/load"
)

// verify checks an edit by its result: the new stream, read again, must
// hold what the patch makes of the object at pos (every use of an anchor
// included), and every other document as it was. An edit the text editor
// got wrong (an alias it did not follow) is refused, never written.
// A values file (lastWins) is read as Helm reads it: a repeated key's last
// occurrence is the one in effect; anywhere else a repeated key is an error.
func verify(old, new []byte, pos load.Position, patch map[string]any, keepNulls, lastWins bool) error {
	before, at, err := documents(old, pos, lastWins)
	if err != nil {
		return err
	}
	after, _, err := documents(new, pos, lastWins)
	if err != nil {
		return fmt.Errorf("the edited file does not parse: %v", err)
	}
	if len(before) != len(after) {
		return fmt.Errorf("the edit changes the number of documents in the file")
	}
	for i := range before {
		want := before[i].value
		if i == at.doc {
			want = setAt(want, at.path, merged(getAt(want, at.path), patch, keepNulls))
		}
		if !equal(want, after[i].value) {
			return fmt.Errorf("line %d: the edit does not make what the patch makes of the object (an anchor, alias or merge key the editor cannot follow); edit it by hand", pos.Line)
		}
	}
	return nil
}

type document struct {
	value any
}

// place is where the object at pos is: its document, and the keys and
// indexes from the document's root down to it.
type place struct {
	doc  int
	path []any
}

// documents decodes every document of a stream, and finds the mapping at
// pos. With lastWins, the earlier occurrences of a repeated key are
// dropped before decoding, as Helm's reader does (see docs/fix.md).
func documents(data []byte, pos load.Position, lastWins bool) ([]document, place, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []document
	at := place{doc: -1}
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, at, err
		}
		if lastWins {
			dropOverridden(&doc)
		}
		v, err := decoded(&doc)
		if err != nil {
			return nil, at, err
		}
		if at.doc < 0 {
			if p, ok := pathTo(&doc, pos, nil); ok {
				at = place{doc: len(out), path: p}
			}
		}
		out = append(out, document{v})
	}
	if at.doc < 0 {
		return nil, at, fmt.Errorf("line %d: the object is not in the file", pos.Line)
	}
	return out, at, nil
}

// dropOverridden removes, in every mapping of the tree, the entries whose
// key is repeated later in the same mapping: the last occurrence is the
// one in effect. Values are cleaned before their entry may go, so that an
// anchor defined in a dropped entry and used elsewhere decodes as well.
// Merge keys (<<) are left: each merge applies.
func dropOverridden(n *yaml.Node) {
	if n.Kind == yaml.AliasNode {
		return
	}
	for _, c := range n.Content {
		dropOverridden(c)
	}
	if n.Kind != yaml.MappingNode {
		return
	}
	var kept []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		if len(laterOccurrences(n, i)) > 0 {
			continue
		}
		kept = append(kept, n.Content[i], n.Content[i+1])
	}
	n.Content = kept
}

// laterOccurrences lists the keys after index i of mapping m that repeat
// the key at i (the same kind and text, as yaml.v3 compares them).
func laterOccurrences(m *yaml.Node, i int) []*yaml.Node {
	k := m.Content[i]
	if isMerge(k) {
		return nil
	}
	var out []*yaml.Node
	for j := i + 2; j+1 < len(m.Content); j += 2 {
		if c := m.Content[j]; c.Kind == k.Kind && c.Value == k.Value {
			out = append(out, c)
		}
	}
	return out
}

// pathTo finds the mapping at pos under n, as keys and indexes.
func pathTo(n *yaml.Node, pos load.Position, path []any) ([]any, bool) {
	if n.Kind == yaml.MappingNode && n.Line == pos.Line && n.Column == pos.Column {
		return path, true
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) > 0 {
			return pathTo(n.Content[0], pos, path)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if p, ok := pathTo(n.Content[i+1], pos, append(path, n.Content[i].Value)); ok {
				return p, true
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			if p, ok := pathTo(c, pos, append(path, i)); ok {
				return p, true
			}
		}
	}
	return nil, false
}

func getAt(v any, path []any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func setAt(v any, path []any, val any) any {
	if len(path) == 0 {
		return val
	}
	switch k := path[0].(type) {
	case string:
		m, _ := v.(map[string]any)
		out := map[string]any{}
		for mk, mv := range m {
			out[mk] = mv
		}
		out[k] = setAt(m[k], path[1:], val)
		return out
	case int:
		l, _ := v.([]any)
		out := append([]any(nil), l...)
		if k < len(out) {
			out[k] = setAt(out[k], path[1:], val)
		}
		return out
	}
	return v
}

// merged is what Edit makes of value v with patch p: maps merge key by
// key, lists of named items item by item, other values are replaced;
// null deletes a key (or, in a patch file, is written), and a mapping
// left empty by deletions goes with its key.
func merged(v, p any, keepNulls bool) any {
	switch x := p.(type) {
	case map[string]any:
		vm, ok := v.(map[string]any)
		if !ok {
			if keepNulls {
				return x
			}
			return strip(x)
		}
		out := make(map[string]any, len(vm))
		for k, c := range vm {
			out[k] = c
		}
		for k, pv := range x {
			cur, exists := out[k]
			switch {
			case pv == nil && keepNulls:
				out[k] = nil
			case pv == nil:
				delete(out, k)
			case !exists:
				if keepNulls {
					out[k] = pv
				} else if hasLeaf(pv) {
					out[k] = strip(pv)
				}
			default:
				m := merged(cur, pv, keepNulls)
				if mm, ok := m.(map[string]any); ok && len(mm) == 0 && !keepNulls {
					if cm, ok := cur.(map[string]any); ok && len(cm) > 0 {
						delete(out, k)
						continue
					}
				}
				out[k] = m
			}
		}
		return out
	case []any:
		vl, ok := v.([]any)
		if !ok || !fix.NamedList(x) || !fix.NamedList(vl) {
			if keepNulls {
				return x
			}
			return strip(x)
		}
		out := append([]any(nil), vl...)
		for _, it := range x {
			name, _ := fix.ItemName(it)
			found := false
			for i, c := range out {
				if cn, _ := fix.ItemName(c); cn == name {
					out[i] = merged(c, it, keepNulls)
					found = true
				}
			}
			if !found {
				out = append(out, it)
			}
		}
		return out
	}
	return p
}
