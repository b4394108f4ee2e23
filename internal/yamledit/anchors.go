package yamledit

import (
	"fmt"

	yaml "go.yaml.in/yaml/v3"

	"backfire.dev/backfire/internal/fix"
)

// YAML anchors and aliases: one node written once (`livenessProbe:
// &probe`) and used again (`readinessProbe: *probe`, or merged with
// `<<: *probe`). An edit of the anchored node changes every use, so the
// anchor is edited only when every use gets the same change; otherwise
// each use that changes is written out in full (expanded) with its
// change, and, when the anchored node itself changes, the uses that do
// not change are expanded with what they held. A mapping that merges an
// anchor (`<<`) is expanded when a change reaches a key the merge gives
// it. Edit then checks the whole result (see verify): every use holds
// what the patch makes of it.

// use is one place an anchored node is used again.
type use struct {
	alias *yaml.Node // the alias node (*probe)
	// key is the mapping key whose value is the alias, or, for a merge,
	// the key whose value is the mapping that merges it; nil for a list
	// item.
	key   *yaml.Node
	merge bool
}

// anchors maps each anchored node of a document to its uses.
type anchors struct {
	uses map[*yaml.Node][]use
	// changes holds the part of the patch that reaches each anchored
	// node and each alias: set means the node changes.
	changes map[*yaml.Node]any
	// expanded are the uses already written out in full.
	expanded map[*yaml.Node]bool
}

func findAnchors(doc *yaml.Node) *anchors {
	a := &anchors{uses: map[*yaml.Node][]use{}, changes: map[*yaml.Node]any{}, expanded: map[*yaml.Node]bool{}}
	var walk func(n, key *yaml.Node)
	walk = func(n, key *yaml.Node) {
		switch n.Kind {
		case yaml.AliasNode:
			if n.Alias != nil {
				a.uses[n.Alias] = append(a.uses[n.Alias], use{alias: n, key: key})
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if isMerge(k) {
					for _, al := range mergedAliases(v) {
						a.uses[al.Alias] = append(a.uses[al.Alias], use{alias: al, key: key, merge: true})
					}
					continue
				}
				walk(v, k)
			}
		default:
			for _, c := range n.Content {
				walk(c, nil)
			}
		}
	}
	walk(doc, nil)
	return a
}

func isMerge(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Value == "<<" && (k.Tag == "!!merge" || k.Tag == "")
}

// mergedAliases are the aliases a merge key's value names: *a or [*a, *b].
func mergedAliases(v *yaml.Node) []*yaml.Node {
	switch v.Kind {
	case yaml.AliasNode:
		if v.Alias != nil {
			return []*yaml.Node{v}
		}
	case yaml.SequenceNode:
		var out []*yaml.Node
		for _, c := range v.Content {
			if c.Kind == yaml.AliasNode && c.Alias != nil {
				out = append(out, c)
			}
		}
		return out
	}
	return nil
}

// survey records which anchored nodes and aliases the patch v reaches
// under node n, walking as the editor does.
func (a *anchors) survey(n *yaml.Node, v any) {
	if n == nil {
		return
	}
	if n.Kind == yaml.AliasNode || (n.Anchor != "" && len(a.uses[n]) > 0) || len(mergedKeys(n)) > 0 {
		a.changes[n] = v
	}
	if n.Kind == yaml.AliasNode {
		return // written out in full where it changes
	}
	switch x := v.(type) {
	case map[string]any:
		if n.Kind != yaml.MappingNode {
			return
		}
		for k, c := range x {
			if _, val := pair(n, k); val != nil {
				a.survey(val, c)
			}
		}
	case []any:
		if n.Kind != yaml.SequenceNode || !fix.NamedList(x) {
			return
		}
		for _, it := range x {
			name, _ := fix.ItemName(it)
			for _, c := range n.Content {
				if _, nv := pair(c, "name"); nv != nil && nv.Value == name {
					a.survey(c, withoutName(it))
				}
			}
		}
	}
}

func withoutName(it any) map[string]any {
	out := map[string]any{}
	for k, v := range it.(map[string]any) {
		if k != "name" {
			out[k] = v
		}
	}
	return out
}

// shared reports whether every use of the anchored node def, and def
// itself, gets one and the same change: then def is edited once.
func (a *anchors) shared(def *yaml.Node) bool {
	want, ok := a.changes[def]
	if !ok {
		return false
	}
	for _, u := range a.uses[def] {
		if u.merge {
			return false
		}
		got, ok := a.changes[u.alias]
		if !ok || !equal(got, want) {
			return false
		}
	}
	return true
}

// decoded is a node's value with aliases and merges resolved, numbers as
// JSON reads them.
func decoded(n *yaml.Node) (any, error) {
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, err
	}
	return normalize(v), nil
}

// mergedKeys lists the keys a mapping gets from its merge keys and does
// not set itself.
func mergedKeys(m *yaml.Node) map[string]bool {
	out := map[string]bool{}
	if m.Kind != yaml.MappingNode {
		return out
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if !isMerge(m.Content[i]) {
			continue
		}
		for _, al := range mergedAliases(m.Content[i+1]) {
			if al.Alias.Kind != yaml.MappingNode {
				continue
			}
			for j := 0; j+1 < len(al.Alias.Content); j += 2 {
				out[al.Alias.Content[j].Value] = true
			}
		}
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		delete(out, m.Content[i].Value)
	}
	return out
}

// touchesMerged reports whether patch reaches a key that mapping m gets
// only from a merge.
func touchesMerged(m *yaml.Node, patch map[string]any) bool {
	mk := mergedKeys(m)
	for k := range patch {
		if mk[k] {
			return true
		}
	}
	return false
}

// within reports whether node n is inside the subtree of root.
func within(root, n *yaml.Node) bool {
	if root == n {
		return true
	}
	for _, c := range root.Content {
		if within(c, n) {
			return true
		}
	}
	return false
}

// anchoredIn lists the anchored nodes defined in the subtree of n.
func anchoredIn(n *yaml.Node, out *[]*yaml.Node) {
	if n.Anchor != "" {
		*out = append(*out, n)
	}
	if n.Kind == yaml.AliasNode {
		return
	}
	for _, c := range n.Content {
		anchoredIn(c, out)
	}
}

// throughAnchors makes the change v of the entry key: val when val is an
// alias, an anchored node used elsewhere, or a mapping that merges an
// anchor. It reports whether the entry is done.
func (e *editor) throughAnchors(key, val *yaml.Node, v any, path string) (bool, error) {
	a := e.anchors
	switch {
	case a.expanded[val]:
		return true, nil // written out in full already, with its change
	case val.Kind == yaml.AliasNode:
		if a.shared(val.Alias) {
			return true, nil // the anchor itself is edited
		}
		return true, e.expand(key, val, v, path)
	case val.Anchor != "" && len(a.uses[val]) > 0 && !a.shared(val):
		// The anchored node changes: the uses that do not (or not the
		// same way) keep what they held.
		for _, u := range a.uses[val] {
			if err := e.expandUse(u); err != nil {
				return true, err
			}
		}
	}
	if m, ok := v.(map[string]any); ok && val.Kind == yaml.MappingNode && touchesMerged(val, m) {
		return true, e.expand(key, val, v, path)
	}
	return false, nil
}

// expand writes the entry key out in full: its value with aliases and
// merges resolved, with the change v made.
func (e *editor) expand(key, val *yaml.Node, v any, path string) error {
	old, err := decoded(val)
	if err != nil {
		return err
	}
	e.anchors.expanded[val] = true
	return e.replace(key, merged(old, v, e.keepNulls), path)
}

// expandUse writes one use of an anchor out in full, with the change the
// patch makes there, if any, so that it does not follow the anchor.
func (e *editor) expandUse(u use) error {
	a := e.anchors
	if u.key == nil {
		return fmt.Errorf("line %d: a list item is the alias *%s of a node the fix changes; edit it by hand", u.alias.Line, u.alias.Value)
	}
	val := e.valueOf[u.key]
	if val == nil || a.expanded[val] {
		return nil
	}
	change, changes := a.changes[val]
	if !changes {
		change = map[string]any{}
	}
	return e.expand(u.key, val, change, "")
}

// expandOutside writes out in full the uses, outside the entry key, of
// the anchors defined in its value, which an edit is about to rewrite or
// delete.
func (e *editor) expandOutside(key *yaml.Node) error {
	if e.anchors == nil {
		return nil
	}
	val := e.valueOf[key]
	if val == nil {
		return nil
	}
	var defs []*yaml.Node
	anchoredIn(val, &defs)
	for _, d := range defs {
		for _, u := range e.anchors.uses[d] {
			if within(val, u.alias) {
				continue
			}
			if err := e.expandUse(u); err != nil {
				return err
			}
		}
	}
	return nil
}
