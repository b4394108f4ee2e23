package kustomize

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/source"
)

// A field an overlay's patch set is edited in the patch, not in the base
// nor in the overlay directory. The patches of every kustomization a build
// reaches are read with positions, and a field of a built object is traced
// to the last patch that targets the object and writes that field with
// the value it has in the build.
//
// Kustomize applies a kustomization's patches after building its
// resources, so an overlay's patches come after its bases'; within one
// kustomization `patches` come first, then the deprecated
// `patchesJson6902` and `patchesStrategicMerge`, which FixKustomization
// (api/types/kustomization.go) appends to `patches` in that order.

// patch is one patch of a kustomization.
type patch struct {
	// file is where the user edits the patch: its own file, or the
	// kustomization that holds it inline.
	file string
	// line and column shift positions in the patch text to positions in
	// file (0 for a patch file).
	line, column int
	target       *selector // nil: a strategic merge patch names its object
	smp          []*yaml.Node
	ops          []jsonOp
}

type selector struct {
	Kind      string `yaml:"kind"`
	Name      string `yaml:"name"`
	Namespace string `yaml:"namespace"`
}

// jsonOp is one operation of a JSON 6902 patch that writes a value.
type jsonOp struct {
	path  []string // the JSON pointer's tokens
	key   *yaml.Node
	value *yaml.Node
}

// kustomizationPatches lists the patches of dir's kustomization and of the
// local kustomizations it builds on, the last applied first.
func kustomizationPatches(dir string) []patch {
	var out []patch
	seen := map[string]bool{}
	var visit func(dir string)
	visit = func(dir string) {
		abs, _ := filepath.Abs(dir)
		if seen[abs] {
			return
		}
		seen[abs] = true
		kfile := kustomizationFile(dir)
		data, err := source.ReadRegular(kfile, maxFile)
		if err != nil {
			return
		}
		var root yaml.Node
		if yaml.Unmarshal(data, &root) != nil || len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
			return
		}
		k := root.Content[0]
		var own []patch
		for _, n := range items(mapValue(k, "patches")) {
			own = append(own, readPatch(dir, kfile, data, n)...)
		}
		for _, n := range items(mapValue(k, "patchesJson6902")) {
			own = append(own, readPatch(dir, kfile, data, n)...)
		}
		for _, n := range items(mapValue(k, "patchesStrategicMerge")) {
			if n.Kind != yaml.ScalarNode {
				continue
			}
			if p := filepath.Join(dir, n.Value); isFile(p) {
				own = append(own, readPatchFile(p, nil)...)
			} else {
				own = append(own, inlinePatch(kfile, data, n, nil)...)
			}
		}
		slices.Reverse(own)
		out = append(out, own...)
		for _, key := range []string{"components", "resources", "bases"} {
			for _, n := range items(mapValue(k, key)) {
				sub := filepath.Join(dir, n.Value)
				if n.Kind == yaml.ScalarNode && kustomizationFile(sub) != sub {
					visit(sub)
				}
			}
		}
	}
	visit(dir)
	return out
}

// readPatch reads one entry of patches or patchesJson6902: a path or an
// inline patch, and its target.
func readPatch(dir, kfile string, data []byte, n *yaml.Node) []patch {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	var target *selector
	if t := mapValue(n, "target"); t != nil {
		target = &selector{}
		if t.Decode(target) != nil {
			return nil
		}
	}
	if p := mapValue(n, "path"); p != nil {
		return readPatchFile(filepath.Join(dir, p.Value), target)
	}
	if p := mapValue(n, "patch"); p != nil {
		return inlinePatch(kfile, data, p, target)
	}
	return nil
}

func readPatchFile(file string, target *selector) []patch {
	data, err := source.ReadRegular(file, maxFile)
	if err != nil {
		return nil
	}
	return parsePatch(patch{file: file, target: target}, data)
}

// inlinePatch reads a patch written in the kustomization. In a block
// scalar (patch: |) its text starts on the next line, indented.
func inlinePatch(kfile string, data []byte, n *yaml.Node, target *selector) []patch {
	if n.Kind != yaml.ScalarNode {
		return nil
	}
	p := patch{file: kfile, target: target, line: n.Line - 1, column: n.Column - 1}
	if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		p.line = n.Line
		lines := strings.Split(string(data), "\n")
		for i := n.Line; i < len(lines); i++ {
			if l := strings.TrimRight(lines[i], " \t\r"); l != "" {
				p.column = len(l) - len(strings.TrimLeft(l, " "))
				break
			}
		}
	}
	return parsePatch(p, []byte(n.Value))
}

// parsePatch reads a patch's documents: a list is a JSON 6902 patch, as
// kustomize decides, anything else strategic merge patches.
func parsePatch(p patch, text []byte) []patch {
	dec := yaml.NewDecoder(bytes.NewReader(text))
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			if !errors.Is(err, io.EOF) {
				return nil
			}
			break
		}
		if len(doc.Content) == 0 {
			continue
		}
		switch top := doc.Content[0]; top.Kind {
		case yaml.SequenceNode:
			for _, op := range top.Content {
				if o, ok := readOp(op); ok {
					p.ops = append(p.ops, o)
				}
			}
		case yaml.MappingNode:
			p.smp = append(p.smp, top)
		}
	}
	if len(p.smp) == 0 && len(p.ops) == 0 {
		return nil
	}
	return []patch{p}
}

func readOp(n *yaml.Node) (jsonOp, bool) {
	if n.Kind != yaml.MappingNode {
		return jsonOp{}, false
	}
	op, path := mapValue(n, "op"), mapValue(n, "path")
	if op == nil || path == nil || op.Value != "add" && op.Value != "replace" {
		return jsonOp{}, false
	}
	key, value := mapEntry(n, "value")
	if value == nil {
		return jsonOp{}, false
	}
	var tokens []string
	for _, t := range strings.Split(strings.TrimPrefix(path.Value, "/"), "/") {
		tokens = append(tokens, strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~"))
	}
	return jsonOp{path: tokens, key: key, value: value}, true
}

// patchTrace finds the patch that set the field at path of a built
// object: kind and name (as built, and as written in its resource file)
// select the patches that target it.
func patchTrace(patches []patch, built *load.Document, origName, path string) load.Trace {
	var b any
	if json.Unmarshal(built.JSON, &b) != nil {
		return load.Trace{}
	}
	// A defaulted field hangs from the deepest part of path the object has.
	segs := load.SplitPath(path)
	for len(segs) > 0 {
		if _, ok := load.ValueAt(b, segs); ok {
			break
		}
		segs = segs[:len(segs)-1]
	}
	if len(segs) == 0 {
		return load.Trace{}
	}
	name, ns := identity(built)
	for _, p := range patches {
		if p.target != nil && !p.target.matches(built.Kind, name, origName, ns) {
			continue
		}
		for _, op := range p.ops {
			if n := op.find(b, segs); n != nil {
				return p.at(n)
			}
		}
		for _, doc := range p.smp {
			if p.target == nil && !namesObject(doc, built.Kind, name, origName) {
				continue
			}
			if n := smpFind(doc, b, segs); n != nil {
				return p.at(n)
			}
		}
	}
	return load.Trace{}
}

func (p patch) at(n *yaml.Node) load.Trace {
	col := n.Column
	if p.column > 0 {
		col += p.column
	}
	return load.Trace{File: p.file, Line: n.Line + p.line, Column: col}
}

// matches is kustomize's target selection by kind, name (a regular
// expression, anchored) and namespace; label and annotation selectors are
// not checked here: the value check that follows guards against a patch
// of another object.
func (s *selector) matches(kind, name, origName, ns string) bool {
	if s.Kind != "" && s.Kind != kind {
		return false
	}
	if s.Namespace != "" && ns != "" && s.Namespace != ns {
		return false
	}
	if s.Name == "" {
		return true
	}
	re, err := regexp.Compile("^(?:" + s.Name + ")$")
	if err != nil {
		return s.Name == name || s.Name == origName
	}
	return re.MatchString(name) || re.MatchString(origName)
}

// namesObject reports whether a strategic merge patch is for the object:
// same kind, and the name it was written with or was built with.
func namesObject(doc *yaml.Node, kind, name, origName string) bool {
	k := mapValue(doc, "kind")
	var n *yaml.Node
	if md := mapValue(doc, "metadata"); md != nil {
		n = mapValue(md, "name")
	}
	if k == nil || n == nil || k.Value != kind {
		return false
	}
	return n.Value == name || n.Value == origName || origName == "" && strings.Contains(name, n.Value)
}

// find returns the node of an operation that wrote the field at segs with
// the value it has in built: the op's value key when the op wrote the
// field itself, the node inside its value when it wrote an ancestor.
func (op jsonOp) find(built any, segs []load.Segment) *yaml.Node {
	if len(op.path) > len(segs) {
		return nil
	}
	for i, t := range op.path {
		s := segs[i]
		if s.IsIndex {
			if t != strconv.Itoa(s.Index) && !(t == "-" && isLast(built, segs[:i], s.Index)) {
				return nil
			}
		} else if t != s.Key {
			return nil
		}
	}
	n, key := op.value, op.key
	for _, s := range segs[len(op.path):] {
		n, key = child(n, s)
		if n == nil {
			return nil
		}
	}
	want, _ := load.ValueAt(built, segs)
	if !sameValue(n, want) {
		return nil
	}
	return key
}

func isLast(built any, segs []load.Segment, i int) bool {
	l, ok := load.ValueAt(built, segs)
	list, isList := l.([]any)
	return ok && isList && i == len(list)-1
}

// child steps into a mapping key or a list item; it returns the value and
// the node a position names (the key, or the item).
func child(n *yaml.Node, s load.Segment) (value, at *yaml.Node) {
	n = deref(n)
	if s.IsIndex {
		if n.Kind != yaml.SequenceNode || s.Index < 0 || s.Index >= len(n.Content) {
			return nil, nil
		}
		return n.Content[s.Index], n.Content[s.Index]
	}
	if n.Kind != yaml.MappingNode {
		return nil, nil
	}
	k, v := mapEntry(n, s.Key)
	return v, k
}

// mergeKeys identify list items in a strategic merge patch: containers,
// env, volumes, ports by name; volumeMounts by mountPath; ports without
// a name by containerPort.
var mergeKeys = []string{"name", "mountPath", "containerPort", "port", "ip"}

// smpFind walks a strategic merge patch along segs, matching list items
// by their merge key as the merge does, and returns the patch node of the
// field when the patch writes it (or writes part of it) with the values
// it has in built.
func smpFind(doc *yaml.Node, built any, segs []load.Segment) *yaml.Node {
	n, at := doc, doc
	for i, s := range segs {
		if !s.IsIndex {
			n, at = child(n, s)
			if n == nil {
				return nil
			}
			continue
		}
		item, _ := load.ValueAt(built, segs[:i+1])
		n = deref(n)
		if n.Kind != yaml.SequenceNode {
			return nil
		}
		m, ok := item.(map[string]any)
		if !ok {
			// A list of scalars is replaced whole: same place, same value.
			n, at = child(n, s)
			if n == nil {
				return nil
			}
			continue
		}
		var found *yaml.Node
		for _, key := range mergeKeys {
			v, ok := m[key]
			if !ok {
				continue
			}
			for _, c := range n.Content {
				if kv := mapValue(deref(c), key); kv != nil && sameValue(kv, v) {
					found = c
					break
				}
			}
			break
		}
		if found == nil {
			return nil
		}
		n, at = found, found
	}
	want, _ := load.ValueAt(built, segs)
	if !agrees(n, want) {
		return nil
	}
	return at
}

// agrees reports whether what a strategic merge patch writes at n is what
// the built object has: every key it sets, recursively; lists of maps item
// by item by merge key; anything else equal.
func agrees(n *yaml.Node, built any) bool {
	n = deref(n)
	switch n.Kind {
	case yaml.MappingNode:
		m, ok := built.(map[string]any)
		if !ok {
			return false
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			if strings.HasPrefix(k, "$") {
				continue // a directive ($patch, $setElementOrder), not a field
			}
			v := deref(n.Content[i+1])
			if v.Tag == "!!null" {
				if _, ok := m[k]; ok {
					return false // deleted by the patch, yet built
				}
				continue
			}
			if !agrees(v, m[k]) {
				return false
			}
		}
		return true
	case yaml.SequenceNode:
		list, ok := built.([]any)
		if !ok {
			return false
		}
		if len(n.Content) > 0 && deref(n.Content[0]).Kind == yaml.MappingNode {
			for _, c := range n.Content {
				if !slices.ContainsFunc(list, func(b any) bool { return agrees(c, b) }) {
					return false
				}
			}
			return true
		}
	}
	return sameValue(n, built)
}

// sameValue compares a YAML node with a value of the built object's JSON.
func sameValue(n *yaml.Node, want any) bool {
	var v any
	if n.Decode(&v) != nil {
		return false
	}
	a, err := json.Marshal(v)
	if err != nil {
		return false
	}
	var got any
	if json.Unmarshal(a, &got) != nil {
		return false
	}
	return reflect.DeepEqual(got, want)
}

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func mapEntry(n *yaml.Node, key string) (k, v *yaml.Node) {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i], n.Content[i+1]
		}
	}
	return nil, nil
}

func mapValue(n *yaml.Node, key string) *yaml.Node {
	_, v := mapEntry(n, key)
	return v
}

func items(n *yaml.Node) []*yaml.Node {
	n = deref(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	return n.Content
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
