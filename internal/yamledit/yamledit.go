package yamledit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"

	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/load"
)

// PlaceholderComment is written beside a value the tool cannot know.
const PlaceholderComment = "# placeholder: size from observed use (backfire fix)"

// Edit applies a composed strategic merge patch to the object whose root
// mapping starts at pos in the YAML stream data, and returns the new
// stream. Only the nodes that change are rewritten: every other byte
// (comments, key order, quoting, indentation, other documents) stays as it
// was. Maps merge key by key, lists of named items (containers) item by
// item, other lists are replaced, and null deletes a key, as a strategic
// merge patch does. Values at the dotted paths in placeholders get a
// PlaceholderComment.
func Edit(data []byte, pos load.Position, patch map[string]any, placeholders []string) ([]byte, error) {
	return editStream(data, pos, patch, placeholders, false)
}

// EditPatch is Edit for a file that is itself a strategic merge patch (a
// Kustomize overlay's): a deletion is written as null, because the patch
// must carry it to the object it is applied to.
func EditPatch(data []byte, pos load.Position, patch map[string]any, placeholders []string) ([]byte, error) {
	return editStream(data, pos, patch, placeholders, true)
}

// Options say how EditWith writes a patch.
type Options struct {
	// Placeholders are the dotted paths of values a human must size; they
	// get PlaceholderComment.
	Placeholders []string
	// Comments are written beside the keys at these dotted paths when the
	// edit writes them (a new key, a changed value without a comment):
	// which finding a values key fixes.
	Comments map[string]string
	// KeepNulls writes a deletion as null, as a strategic merge patch
	// file or a values file that overrides a chart's default must.
	KeepNulls bool
	// Notes, when set, receives what the edit did beyond the patch: a
	// flow mapping rewritten in block style, a repeated key edited at its
	// last occurrence.
	Notes *[]string
	// Values says the file is a Helm values file, read as Helm reads it
	// (sigs.k8s.io/yaml, not strict): a repeated key's last occurrence is
	// the one in effect, so the edit is checked on that reading. Anywhere
	// else a repeated key makes the edit fail, as it fails the scan.
	Values bool
}

// EditWith is Edit with options.
func EditWith(data []byte, pos load.Position, patch map[string]any, o Options) ([]byte, error) {
	return editStreamWith(data, pos, patch, o)
}

func editStream(data []byte, pos load.Position, patch map[string]any, placeholders []string, keepNulls bool) ([]byte, error) {
	return editStreamWith(data, pos, patch, Options{Placeholders: placeholders, KeepNulls: keepNulls})
}

// editWhole parses, edits and verifies the whole stream; editStreamWith
// (document.go) gives it only the document the edit is in.
func editWhole(data []byte, pos load.Position, patch map[string]any, o Options) ([]byte, error) {
	placeholders, keepNulls := o.Placeholders, o.KeepNulls
	doc, root, err := findMapping(data, pos)
	if err != nil {
		return nil, err
	}
	var out []byte
	if isJSON(doc, root) {
		out, err = editJSON(data, doc, root, patch, keepNulls)
	} else {
		var notes []string
		out, notes, err = editYAML(data, doc, root, patch, placeholders, keepNulls, o.Comments)
		if o.Notes != nil {
			*o.Notes = append(*o.Notes, notes...)
		}
	}
	if err != nil {
		return nil, err
	}
	if err := verify(data, out, pos, patch, keepNulls, o.Values); err != nil {
		return nil, err
	}
	return out, nil
}

func editYAML(data []byte, doc, root *yaml.Node, patch map[string]any, placeholders []string, keepNulls bool, comments map[string]string) ([]byte, []string, error) {
	e := &editor{data: data, placeholders: map[string]bool{}, keepNulls: keepNulls, comments: comments}
	for _, p := range placeholders {
		e.placeholders[p] = true
	}
	e.lines = lineStarts(data)
	e.crlf = bytes.Contains(data, []byte("\r\n"))
	e.step, e.seqIndent = style(root)
	e.anchors = findAnchors(doc)
	e.anchors.survey(root, patch)
	e.valueOf = map[*yaml.Node]*yaml.Node{}
	valuesOfKeys(doc, e.valueOf)
	if err := e.mapping(root, patch, ""); err != nil {
		return nil, nil, err
	}
	return e.apply(), e.notes, nil
}

// valuesOfKeys maps each mapping key of the tree to its value.
func valuesOfKeys(n *yaml.Node, out map[*yaml.Node]*yaml.Node) {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			out[n.Content[i]] = n.Content[i+1]
		}
	}
	if n.Kind == yaml.AliasNode {
		return
	}
	for _, c := range n.Content {
		valuesOfKeys(c, out)
	}
}

// findMapping decodes every document of the stream and returns the
// document and the mapping node at pos in it.
func findMapping(data []byte, pos load.Position) (*yaml.Node, *yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("invalid YAML before line %d: %v", pos.Line, err)
		}
		if n := mappingAt(&doc, pos); n != nil {
			return &doc, n, nil
		}
	}
	return nil, nil, fmt.Errorf("line %d: the object is no longer there (the file changed since it was scanned)", pos.Line)
}

func mappingAt(n *yaml.Node, pos load.Position) *yaml.Node {
	if n.Kind == yaml.MappingNode && n.Line == pos.Line && n.Column == pos.Column {
		return n
	}
	for _, c := range n.Content {
		if m := mappingAt(c, pos); m != nil {
			return m
		}
	}
	return nil
}

// style reads the file's indentation: the step of nested mappings, and
// whether list items are indented under their key (2) or not (0).
func style(root *yaml.Node) (step, seqIndent int) {
	step, seqIndent = 2, -1
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind != yaml.MappingNode || n.Style&yaml.FlowStyle != 0 {
			for _, c := range n.Content {
				walk(c)
			}
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if v.Style&yaml.FlowStyle == 0 && v.Line > k.Line && len(v.Content) > 0 {
				switch v.Kind {
				case yaml.MappingNode:
					if d := v.Column - k.Column; d > 0 && step == 2 {
						step = d
					}
				case yaml.SequenceNode:
					if seqIndent < 0 {
						// Column of the item's content, less the "- ".
						seqIndent = max(v.Content[0].Column-2-k.Column, 0)
					}
				}
			}
			walk(v)
		}
	}
	walk(root)
	if seqIndent < 0 {
		seqIndent = 0
	}
	return step, seqIndent
}

type edit struct {
	start, end int
	text       string
}

type editor struct {
	data            []byte
	lines           []int // byte offset where each line starts
	edits           []edit
	step, seqIndent int
	placeholders    map[string]bool
	keepNulls       bool              // Render: a deletion is written as null
	crlf            bool              // the file's lines end with CRLF: new lines do too
	comments        map[string]string // dotted path -> comment for the key
	anchors         *anchors
	valueOf         map[*yaml.Node]*yaml.Node // mapping key -> its value
	notes           []string                  // what was done beyond the patch
}

func lineStarts(b []byte) []int {
	out := []int{0}
	for i, c := range b {
		if c == '\n' {
			out = append(out, i+1)
		}
	}
	return out
}

// offset turns a node's 1-based line and column (in characters) into a
// byte offset.
func (e *editor) offset(line, col int) int {
	off := e.lines[line-1]
	for i := 1; i < col && off < len(e.data); i++ {
		_, n := utf8.DecodeRune(e.data[off:])
		off += n
	}
	return off
}

func (e *editor) lineEnd(off int) int {
	if i := bytes.IndexByte(e.data[off:], '\n'); i >= 0 {
		return off + i
	}
	return len(e.data)
}

func (e *editor) mapping(n *yaml.Node, patch map[string]any, path string) error {
	if n.Style&yaml.FlowStyle != 0 && reshapes(n, patch) {
		return e.flow(n, patch)
	}
	var inserts []string
	// A new probe handler takes the place of the one it replaces.
	var replaced *yaml.Node
	handler := ""
	for _, k := range orderedKeys(patch) {
		v := patch[k]
		p := join(path, k)
		key, val := pair(n, k)
		if key != nil {
			e.noteRepeated(n, key, p)
		}
		switch {
		case v == nil && e.keepNulls:
			if key == nil {
				inserts = append(inserts, k)
			} else if val.ShortTag() != "!!null" {
				if err := e.replace(key, nil, p); err != nil {
					return err
				}
			}
		case v == nil:
			if key != nil {
				// Every occurrence of a repeated key goes: an earlier
				// one left behind would come into effect.
				for _, k := range append(earlierOccurrences(n, key), key) {
					if err := e.delete(k); err != nil {
						return err
					}
				}
				if slices.Contains(probeHandlers, k) && replaced == nil {
					replaced = key
				}
			}
		case key == nil:
			if !hasLeaf(v) && !e.keepNulls {
				continue // only deletions of what is not there
			}
			if slices.Contains(probeHandlers, k) {
				handler = k
				continue
			}
			inserts = append(inserts, k)
		default:
			if err := e.set(key, val, v, p); err != nil {
				return err
			}
		}
	}
	if handler != "" {
		if replaced == nil {
			inserts = append([]string{handler}, inserts...)
		} else {
			start, _, _ := e.entry(replaced)
			var b strings.Builder
			e.entryText(&b, replaced.Column-1, handler, e.strip(patch[handler]), join(path, handler))
			e.edits = append(e.edits, edit{start: start, end: start, text: b.String()})
		}
	}
	if len(inserts) == 0 {
		return nil
	}
	if n.Style&yaml.FlowStyle != 0 {
		return fmt.Errorf("line %d: a flow-style mapping ({...}) cannot take new keys in place; write it in block style", n.Line)
	}
	if len(n.Content) == 0 {
		return fmt.Errorf("line %d: empty mapping", n.Line)
	}
	indent := n.Content[0].Column - 1
	_, end, err := e.entry(n.Content[len(n.Content)-2])
	if err != nil {
		return err
	}
	end = e.pastOwnComments(end, indent)
	var b strings.Builder
	if end == len(e.data) && end > 0 && e.data[end-1] != '\n' {
		b.WriteByte('\n')
	}
	for _, k := range inserts {
		e.entryText(&b, indent, k, e.strip(patch[k]), join(path, k))
	}
	e.edits = append(e.edits, edit{start: end, end: end, text: b.String()})
	return nil
}

// set changes the value of an existing key.
func (e *editor) set(key, val *yaml.Node, v any, path string) error {
	if e.anchors != nil {
		if done, err := e.throughAnchors(key, val, v, path); done || err != nil {
			return err
		}
	}
	switch x := v.(type) {
	case map[string]any:
		if val.Kind == yaml.MappingNode && len(val.Content) > 0 {
			if !e.keepNulls && empties(val, x) {
				// Nothing would be left: the key goes too, rather than
				// stay behind as null.
				return e.delete(key)
			}
			if val.Style&yaml.FlowStyle != 0 && val.Anchor == "" && e.annotates(x, path) {
				return e.block(key, val, x, path)
			}
			return e.mapping(val, x, path)
		}
		if !hasLeaf(x) && !e.keepNulls {
			return nil // only deletions, and nothing there to delete
		}
		return e.replace(key, x, path)
	case []any:
		if val.Kind == yaml.SequenceNode && fix.NamedList(x) && len(val.Content) > 0 {
			return e.namedItems(val, x, path)
		}
		if val.Kind == yaml.SequenceNode && equalNode(val, x) {
			return nil
		}
		if val.Kind == yaml.SequenceNode && val.Style&yaml.FlowStyle == 0 && prefixOf(val, x) {
			return e.dropItems(key, val, len(x))
		}
		if val.Kind == yaml.SequenceNode && val.Style&yaml.FlowStyle == 0 && len(val.Content) > 0 && extends(val, x) {
			return e.appendItems(key, val, x[len(val.Content):], path)
		}
		return e.replace(key, x, path)
	}
	if val.Kind != yaml.ScalarNode {
		return e.replace(key, v, path)
	}
	text := scalar(v)
	if val.Value == scalarValue(v) && val.Tag == nodeTag(v) {
		return nil // already so: a second run changes nothing
	}
	start := e.offset(val.Line, val.Column)
	end, err := e.scalarEnd(val, start)
	if err != nil {
		return err
	}
	if !bytes.Contains(e.data[end:e.lineEnd(end)], []byte("#")) {
		if e.placeholders[path] {
			text += "  " + PlaceholderComment
		} else if c := e.comments[path]; c != "" {
			text += "  # " + c
		}
	}
	e.edits = append(e.edits, edit{start: start, end: end, text: text})
	return nil
}

// scalarEnd finds where the scalar written at start ends: plain and
// quoted scalars on one line.
func (e *editor) scalarEnd(val *yaml.Node, start int) (int, error) {
	if n := scalarLen(e.data[start:e.lineEnd(start)], val); n >= 0 {
		return start + n, nil
	}
	return 0, fmt.Errorf("line %d: a multi-line or block scalar cannot be edited in place", val.Line)
}

// scalarLen is the length of the text of the scalar val at the start of
// rest (the remainder of its line): a plain or a quoted scalar on one
// line. It is -1 for anything else.
func scalarLen(rest []byte, val *yaml.Node) int {
	switch val.Style {
	case 0, yaml.TaggedStyle:
		if bytes.HasPrefix(rest, []byte(val.Value)) {
			return len(val.Value)
		}
	case yaml.DoubleQuotedStyle, yaml.SingleQuotedStyle:
		if len(rest) == 0 {
			return -1
		}
		q := rest[0]
		for i := 1; i < len(rest); i++ {
			if rest[i] == '\\' && q == '"' {
				i++
				continue
			}
			if rest[i] == q {
				if q == '\'' && i+1 < len(rest) && rest[i+1] == '\'' {
					i++
					continue
				}
				return i + 1
			}
		}
	}
	return -1
}

// namedItems merges list items by name.
func (e *editor) namedItems(seq *yaml.Node, items []any, path string) error {
	var missing []any
	for _, it := range items {
		name, _ := fix.ItemName(it)
		var found *yaml.Node
		for _, c := range seq.Content {
			if c.Kind != yaml.MappingNode {
				continue
			}
			if _, nv := pair(c, "name"); nv != nil && nv.Value == name {
				found = c
			}
		}
		if found == nil {
			missing = append(missing, it)
			continue
		}
		patch := map[string]any{}
		for k, v := range it.(map[string]any) {
			if k != "name" {
				patch[k] = v
			}
		}
		if err := e.mapping(found, patch, path+"["+name+"]"); err != nil {
			return err
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("line %d: no item named %v in the list", seq.Line, missing)
	}
	return nil
}

// reshapes reports whether patch deletes or adds a key of mapping n.
func reshapes(n *yaml.Node, patch map[string]any) bool {
	for k, v := range patch {
		_, val := pair(n, k)
		if (v == nil) != (val == nil) && (val != nil || hasLeaf(v)) {
			return true
		}
	}
	return false
}

// flow rewrites a flow-style mapping ({cpu: "1", memory: 2Gi}) whose keys
// change as a whole, in flow style, keeping the order and quoting of the
// keys it keeps.
func (e *editor) flow(n *yaml.Node, patch map[string]any) error {
	start := e.offset(n.Line, n.Column)
	end, ok := flowEnd(e.data, start)
	if !ok {
		return fmt.Errorf("line %d: unterminated flow mapping", n.Line)
	}
	c := deepCopy(n)
	if err := patchNode(c, patch); err != nil {
		return err
	}
	b, err := yaml.Marshal(c)
	if err != nil {
		return err
	}
	e.edits = append(e.edits, edit{start: start, end: end, text: strings.TrimSuffix(string(b), "\n")})
	return nil
}

// annotates reports whether writing patch at path writes a comment (a
// placeholder's, or the one Options.Comments gives a key).
func (e *editor) annotates(patch map[string]any, path string) bool {
	for k, v := range patch {
		p := join(path, k)
		if e.placeholders[p] || e.comments[p] != "" {
			return true
		}
		if m, ok := v.(map[string]any); ok && e.annotates(m, p) {
			return true
		}
	}
	return false
}

// block rewrites key's flow mapping ({...}) merged with patch, in block
// style: a comment cannot go inside a flow mapping ("# ..." runs to the end
// of the line, over the closing brace), and the patch's comments say what
// a value is for. The comments the flow mapping had are kept, each beside
// its key, and a note says what was done.
func (e *editor) block(key, val *yaml.Node, patch map[string]any, path string) error {
	cur, err := decoded(val)
	if err != nil {
		return fmt.Errorf("line %d: %v", val.Line, err)
	}
	next := merged(cur, patch, e.keepNulls)
	if equal(cur, next) {
		return nil // already so: a second run changes nothing
	}
	own := e.comments
	e.comments = map[string]string{}
	for p, c := range own {
		e.comments[p] = c
	}
	flowComments(key, val, path, e.comments)
	err = e.replaceFlow(key, val, next, path)
	e.comments = own
	if err != nil {
		return err
	}
	e.notes = append(e.notes, fmt.Sprintf("line %d: %s was a flow mapping ({...}); rewritten in block style to carry the fix's comments", key.Line, path))
	return nil
}

// replaceFlow is replace for a key whose value is a flow collection,
// which may end on a line indented no deeper than the key ("  }").
func (e *editor) replaceFlow(key, val *yaml.Node, v any, path string) error {
	start, end, err := e.entry(key)
	if err != nil {
		return err
	}
	fend, ok := flowEnd(e.data, e.offset(val.Line, val.Column))
	if !ok {
		return fmt.Errorf("line %d: unterminated flow mapping", val.Line)
	}
	if fend > end {
		if end = e.lineEnd(fend); end < len(e.data) {
			end++ // the newline
		}
	}
	return e.replaceEntry(key, start, end, v, path)
}

// flowComments adds the comments written in a flow mapping to comments,
// by the dotted path of the key they follow, before any comment the edit
// gives that key.
func flowComments(key, val *yaml.Node, path string, comments map[string]string) {
	var own []string
	for _, c := range []string{key.LineComment, val.LineComment, val.HeadComment, val.FootComment} {
		for _, l := range strings.Split(c, "\n") {
			if l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "#")); l != "" {
				own = append(own, l)
			}
		}
	}
	if len(own) > 0 {
		c := strings.Join(own, "; ")
		if comments[path] != "" {
			c += "; " + comments[path]
		}
		comments[path] = c
	}
	if val.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(val.Content); i += 2 {
		k, v := val.Content[i], val.Content[i+1]
		p := join(path, k.Value)
		if v.Kind == yaml.MappingNode {
			flowComments(k, v, p, comments)
			continue
		}
		flowComments(k, &yaml.Node{Kind: v.Kind, LineComment: v.LineComment, HeadComment: v.HeadComment, FootComment: v.FootComment + "\n" + k.HeadComment}, p, comments)
	}
}

// patchNode merges patch into the mapping node n.
func patchNode(n *yaml.Node, patch map[string]any) error {
	for _, k := range orderedKeys(patch) {
		v := patch[k]
		idx := -1
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				idx = i
			}
		}
		switch {
		case v == nil:
			if idx >= 0 {
				n.Content = append(n.Content[:idx], n.Content[idx+2:]...)
			}
		case idx >= 0 && n.Content[idx+1].Kind == yaml.MappingNode:
			if m, ok := v.(map[string]any); ok {
				if err := patchNode(n.Content[idx+1], m); err != nil {
					return err
				}
				continue
			}
			fallthrough
		default:
			var val yaml.Node
			if err := val.Encode(strip(v)); err != nil {
				return err
			}
			val.Style = yaml.FlowStyle
			if idx >= 0 {
				n.Content[idx+1] = &val
			} else if hasLeaf(v) {
				n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, &val)
			}
		}
	}
	return nil
}

func deepCopy(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, ch := range n.Content {
		c.Content[i] = deepCopy(ch)
	}
	return &c
}

// flowEnd returns the offset just past the flow collection at start. A
// comment ("#" after a space, to the end of its line) is skipped: its
// brackets and quotes are prose.
func flowEnd(b []byte, start int) (int, bool) {
	depth := 0
	for i := start; i < len(b); i++ {
		if b[i] == '#' && i > start && (b[i-1] == ' ' || b[i-1] == '\t' || b[i-1] == '\n') {
			for i < len(b) && b[i] != '\n' {
				i++
			}
			continue
		}
		switch b[i] {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1, true
			}
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case '\'':
			for i++; i < len(b) && b[i] != '\''; i++ {
			}
		}
	}
	return 0, false
}

func (e *editor) delete(key *yaml.Node) error {
	start, end, err := e.entry(key)
	if err != nil {
		return err
	}
	if err := e.expandOutside(key); err != nil {
		return err
	}
	e.edits = append(e.edits, edit{start: start, end: end})
	return nil
}

// empties reports whether patch deletes every key of mapping n, directly
// or by emptying it in turn, and adds none.
func empties(n *yaml.Node, patch map[string]any) bool {
	for k, v := range patch {
		if _, child := pair(n, k); child == nil && hasLeaf(v) {
			return false
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		v, ok := patch[n.Content[i].Value]
		if !ok {
			return false
		}
		if v == nil {
			continue
		}
		pm, isMap := v.(map[string]any)
		child := n.Content[i+1]
		if !isMap || child.Kind != yaml.MappingNode || !empties(child, pm) {
			return false
		}
	}
	return true
}

// hasLeaf reports whether v sets any value (not only deletions).
func hasLeaf(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case map[string]any:
		for _, c := range x {
			if hasLeaf(c) {
				return true
			}
		}
		return false
	}
	return true
}

// prefixOf reports whether list is the first items of seq, unchanged.
func prefixOf(seq *yaml.Node, list []any) bool {
	if len(list) >= len(seq.Content) {
		return false
	}
	for i, v := range list {
		if !equalNode(seq.Content[i], v) {
			return false
		}
	}
	return true
}

// extends reports whether list is the items of seq, unchanged, and more.
func extends(seq *yaml.Node, list []any) bool {
	if len(list) <= len(seq.Content) {
		return false
	}
	for i, n := range seq.Content {
		if !equalNode(n, list[i]) {
			return false
		}
	}
	return true
}

// appendItems writes items after the last item of seq, at its indentation.
func (e *editor) appendItems(key, seq *yaml.Node, items []any, path string) error {
	_, end, err := e.entry(key)
	if err != nil {
		return err
	}
	first := seq.Content[0]
	dash := e.lines[first.Line-1]
	indent := bytes.IndexByte(e.data[dash:e.lineEnd(dash)], '-')
	if indent < 0 {
		return fmt.Errorf("line %d: list item shares its line; edit it by hand", first.Line)
	}
	var b strings.Builder
	if end == len(e.data) && end > 0 && e.data[end-1] != '\n' {
		b.WriteByte('\n')
	}
	for _, it := range items {
		e.itemText(&b, indent, e.strip(it), path)
	}
	e.edits = append(e.edits, edit{start: end, end: end, text: b.String()})
	return nil
}

// dropItems deletes the items of seq from index keep on, leaving the
// items before it byte for byte.
func (e *editor) dropItems(key, seq *yaml.Node, keep int) error {
	_, end, err := e.entry(key)
	if err != nil {
		return err
	}
	first := seq.Content[keep]
	start := e.lines[first.Line-1]
	if strings.TrimSpace(string(e.data[start:e.offset(first.Line, first.Column)])) != "-" {
		return fmt.Errorf("line %d: list item shares its line; edit it by hand", first.Line)
	}
	e.edits = append(e.edits, edit{start: start, end: end})
	return nil
}

// replace rewrites a whole entry: its key stays, its value is written anew.
func (e *editor) replace(key *yaml.Node, v any, path string) error {
	start, end, err := e.entry(key)
	if err != nil {
		return err
	}
	return e.replaceEntry(key, start, end, v, path)
}

// replaceEntry writes key: v in block style over the bytes start to end.
func (e *editor) replaceEntry(key *yaml.Node, start, end int, v any, path string) error {
	if err := e.expandOutside(key); err != nil {
		return err
	}
	var b strings.Builder
	e.entryText(&b, key.Column-1, key.Value, e.strip(v), path)
	e.edits = append(e.edits, edit{start: start, end: end, text: b.String()})
	return nil
}

// entry returns the byte span of a key's whole entry in a block mapping:
// from the start of its line to the end of the last line of its value.
func (e *editor) entry(key *yaml.Node) (int, int, error) {
	lineStart := e.lines[key.Line-1]
	keyOff := e.offset(key.Line, key.Column)
	if strings.TrimSpace(string(e.data[lineStart:keyOff])) != "" {
		return 0, 0, fmt.Errorf("line %d: %s shares its line with a list item or flow mapping; edit it by hand", key.Line, key.Value)
	}
	indent := key.Column - 1
	end := e.lineEnd(keyOff)
	for l := key.Line; l < len(e.lines); l++ {
		s := e.lines[l]
		le := e.lineEnd(s)
		line := e.data[s:le]
		trimmed := bytes.TrimLeft(line, " ")
		if len(trimmed) == 0 || trimmed[0] == '#' {
			continue
		}
		ind := len(line) - len(trimmed)
		if ind > indent || (ind == indent && (bytes.HasPrefix(trimmed, []byte("- ")) || bytes.Equal(trimmed, []byte("-")))) {
			end = le
			continue
		}
		break
	}
	if end < len(e.data) {
		end++ // the newline
	}
	return lineStart, end, nil
}

// pastOwnComments moves an insertion point at off, the end of a mapping's
// last entry, past the comment lines right below it that are that entry's
// own commented-out content: list items ("# - ../components/a") or lines
// indented under it. A new key written before them would take them when
// the user uncomments them (a components: list whose entries are all
// commented would gain them under the new key). A blank line ends them:
// what follows belongs to something else.
func (e *editor) pastOwnComments(off, indent int) int {
	for off < len(e.data) {
		le := e.lineEnd(off)
		line := e.data[off:le]
		trimmed := bytes.TrimLeft(line, " ")
		if len(trimmed) == 0 || trimmed[0] != '#' {
			break
		}
		text := bytes.TrimLeft(trimmed[1:], " ")
		item := bytes.HasPrefix(text, []byte("- ")) || bytes.Equal(bytes.TrimRight(text, "\r"), []byte("-"))
		nested := len(trimmed)-len(text) > 2 // "#   key": a line under a commented key
		ind := len(line) - len(trimmed)
		if ind < indent || ind == indent && !item && !nested {
			break
		}
		off = le
		if off < len(e.data) {
			off++ // the newline
		}
	}
	return off
}

// Render writes a new YAML document from a decoded patch, in block style
// with two-space indentation, in the order people write manifests
// (apiVersion, kind, metadata, then name, handler, timings), keeping null
// (a strategic merge patch's deletion) and marking placeholders.
func Render(doc map[string]any, placeholders []string) []byte {
	e := &editor{step: 2, seqIndent: 0, placeholders: map[string]bool{}, keepNulls: true}
	for _, p := range placeholders {
		e.placeholders[p] = true
	}
	var b strings.Builder
	for _, k := range orderedKeys(doc) {
		e.entryText(&b, 0, k, doc[k], k)
	}
	return []byte(b.String())
}

// entryText writes "key: value" at indent, in block style.
func (e *editor) entryText(b *strings.Builder, indent int, key string, v any, path string) {
	pad := strings.Repeat(" ", indent)
	note := ""
	if c := e.comments[path]; c != "" {
		note = "  # " + c
	}
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			fmt.Fprintf(b, "%s%s: {}%s\n", pad, key, note)
			return
		}
		fmt.Fprintf(b, "%s%s:%s\n", pad, key, note)
		for _, k := range orderedKeys(x) {
			e.entryText(b, indent+e.step, k, x[k], join(path, k))
		}
	case []any:
		fmt.Fprintf(b, "%s%s:%s\n", pad, key, note)
		for _, it := range x {
			e.itemText(b, indent+e.seqIndent, it, path)
		}
	default:
		fmt.Fprintf(b, "%s%s: %s", pad, key, scalar(x))
		if e.placeholders[path] {
			b.WriteString("  " + PlaceholderComment)
		} else {
			b.WriteString(note)
		}
		b.WriteByte('\n')
	}
}

func (e *editor) itemText(b *strings.Builder, indent int, v any, path string) {
	pad := strings.Repeat(" ", indent)
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		fmt.Fprintf(b, "%s- %s\n", pad, scalar(v))
		return
	}
	if name, ok := fix.ItemName(m); ok {
		path += "[" + name + "]"
	}
	var inner strings.Builder
	for _, k := range orderedKeys(m) {
		e.entryText(&inner, indent+2, k, m[k], join(path, k))
	}
	s := inner.String()
	b.WriteString(pad + "- " + s[indent+2:])
}

// apply returns the data with the edits made, last first, so that an
// edit never moves the offsets of those still to be made. At one offset a
// deletion goes first; of two insertions, the one planned first (an inner
// mapping's, whose end is reached before its parent's) must end up first,
// so it is inserted last.
func (e *editor) apply() []byte {
	order := make([]int, len(e.edits))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool {
		ea, eb := e.edits[order[a]], e.edits[order[b]]
		if ea.start != eb.start {
			return ea.start > eb.start
		}
		// A deletion at an offset goes before the insertions there.
		if (ea.end > ea.start) != (eb.end > eb.start) {
			return ea.end > ea.start
		}
		return order[a] > order[b]
	})
	out := append([]byte(nil), e.data...)
	for _, i := range order {
		ed := e.edits[i]
		text := ed.text
		if e.crlf {
			text = strings.ReplaceAll(text, "\n", "\r\n")
		}
		out = append(out[:ed.start], append([]byte(text), out[ed.end:]...)...)
	}
	return out
}

// pair finds key in mapping m. A repeated key is found at its last
// occurrence: the one Helm reads in a values file (elsewhere the result
// is refused by verify, as the scan refuses the file).
func pair(m *yaml.Node, key string) (*yaml.Node, *yaml.Node) {
	if m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := len(m.Content) - 2; i >= 0; i -= 2 {
		if m.Content[i].Value == key {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

// earlierOccurrences lists the keys of mapping m before key that repeat
// it.
func earlierOccurrences(m *yaml.Node, key *yaml.Node) []*yaml.Node {
	var out []*yaml.Node
	for i := 0; i+1 < len(m.Content) && m.Content[i] != key; i += 2 {
		if c := m.Content[i]; c.Kind == key.Kind && c.Value == key.Value {
			out = append(out, c)
		}
	}
	return out
}

// noteRepeated says where the change of a repeated key goes: to its last
// occurrence, the one in effect.
func (e *editor) noteRepeated(m, key *yaml.Node, path string) {
	earlier := earlierOccurrences(m, key)
	if len(earlier) == 0 {
		return
	}
	lines := make([]string, len(earlier))
	for i, k := range earlier {
		lines[i] = strconv.Itoa(k.Line)
	}
	e.notes = append(e.notes, fmt.Sprintf("%s is repeated (line %s and line %d): the change goes to line %d, the last, which Helm reads", path, strings.Join(lines, ", line "), key.Line, key.Line))
}

// keyRank orders the keys the tool writes the way people write them.
var keyRank = map[string]int{
	"apiVersion": -3, "kind": -2, "metadata": -1,
	"name": 0, "exec": 1, "httpGet": 1, "tcpSocket": 1, "grpc": 1,
	"initialDelaySeconds": 2, "periodSeconds": 3, "timeoutSeconds": 4,
	"successThreshold": 5, "failureThreshold": 6, "requests": 7, "limits": 8,
}

func orderedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		ri, oki := keyRank[keys[i]]
		rj, okj := keyRank[keys[j]]
		if !oki {
			ri = 100
		}
		if !okj {
			rj = 100
		}
		if ri != rj {
			return ri < rj
		}
		return keys[i] < keys[j]
	})
	return keys
}

// strip drops the null deletions from a value written anew into a
// manifest; a patch file keeps them.
func (e *editor) strip(v any) any {
	if e.keepNulls {
		return v
	}
	return strip(v)
}

// strip drops the null deletions from a value written anew.
func strip(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, c := range x {
			if c != nil {
				out[k] = strip(c)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, c := range x {
			out[i] = strip(c)
		}
		return out
	}
	return v
}

// scalarValue is the value yaml.v3 reads back from scalar(v).
func scalarValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return fmt.Sprint(v)
}

func nodeTag(v any) string {
	switch x := v.(type) {
	case string:
		return "!!str"
	case float64:
		if x == float64(int64(x)) {
			return "!!int"
		}
		return "!!float"
	case bool:
		return "!!bool"
	}
	return ""
}

// scalar writes v as YAML, quoted only where it must be.
func scalar(v any) string {
	if s, ok := v.(string); ok {
		b, _ := yaml.Marshal(s)
		return strings.TrimSuffix(string(b), "\n")
	}
	return scalarValue(v)
}

// equalNode reports whether a YAML node holds the same value as v.
func equalNode(n *yaml.Node, v any) bool {
	var got any
	if err := n.Decode(&got); err != nil {
		return false
	}
	return equal(normalize(got), v)
}

// normalize makes yaml.v3's decoded ints comparable with JSON's float64s.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			x[k] = normalize(c)
		}
	case []any:
		for i, c := range x {
			x[i] = normalize(c)
		}
	case int:
		return float64(x)
	}
	return v
}
