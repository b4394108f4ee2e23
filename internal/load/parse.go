// Package load turns YAML and JSON streams into documents that remember the
// source position of every field. It knows nothing about Kubernetes kinds
// beyond apiVersion, kind and List.
package load

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"

	"backfire.dev/backfire/internal/exactjson"
)

// Error is an input problem at a place in a file. It never stops a scan: the
// rest of the input is still read.
type Error struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Message string `json:"message"`
}

func (e Error) Error() string {
	switch {
	case e.Line > 0 && e.Column > 0:
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Message)
	case e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Message)
}

// File is what one stream yielded.
type File struct {
	Name      string
	Documents []*Document
	Errors    []Error
	// Skipped counts documents that are not Kubernetes objects (no apiVersion
	// or kind: values files, CI workflows, dashboards).
	Skipped int
	// Empty is true when the stream held no document at all (nothing but
	// blank lines, comments and document markers).
	Empty bool

	// each, when set, receives each document instead of Documents, with
	// the number of bytes of the stream read up to the end of it.
	each func(d *Document, read int)
	// read is that number for the chunk being converted.
	read int
	// first is the line of the stream's first byte; 0 means 1.
	first int
}

// Stream parses data like Parse but hands each document to each as soon
// as it is converted, in order, instead of keeping it: a scan holds one
// document at a time however large the file. read is how many bytes of
// data the parser is done with: the caller may release them. The File it
// returns has no Documents.
func Stream(name string, data []byte, each func(d *Document, read int)) File {
	f := File{Name: name, each: each}
	f.parse(data)
	f.each = nil
	return f
}

// Parse splits data into YAML documents and converts each one. A broken
// document costs only itself: the stream is split at document markers first,
// so the documents after it are still read.
func Parse(name string, data []byte) File {
	f := File{Name: name}
	f.parse(data)
	return f
}

// ParseFrom parses data like Parse, with data's first line counted as
// line first: a piece of a larger output (one object of a Kustomize
// build) keeps the lines of the whole.
func ParseFrom(name string, data []byte, first int) File {
	f := File{Name: name, first: first}
	f.parse(data)
	return f
}

func (f *File) parse(data []byte) {
	if bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
		f.Errors = append(f.Errors, Error{File: f.Name, Message: "binary file (contains NUL bytes); not a YAML or JSON manifest"})
		return
	}
	whole := data
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	index := 0
	f.Empty = true
	for _, ch := range splitDocuments(data) {
		// Chunks are slices of data: where one starts in whole follows
		// from the capacities.
		ch.off = cap(whole) - cap(ch.data)
		if f.first > 1 {
			ch.line += f.first - 1
		}
		for _, piece := range splitJSONStream(ch) {
			f.read = piece.off + len(piece.data)
			if f.parseChunk(piece, index) {
				index++
			}
		}
	}
	if len(f.Errors) > 0 {
		f.Empty = false
	}
}

// splitJSONStream splits a chunk that holds JSON values one after another
// into one chunk per value; any other chunk is returned as it is.
func splitJSONStream(ch chunk) []chunk {
	i := 0
	for i < len(ch.data) && (ch.data[i] == ' ' || ch.data[i] == '\t' || ch.data[i] == '\r' || ch.data[i] == '\n') {
		i++
	}
	if i == len(ch.data) || (ch.data[i] != '{' && ch.data[i] != '[') {
		return []chunk{ch}
	}
	spans, ok := jsonValues(ch.data, ch.line)
	if !ok {
		return []chunk{ch}
	}
	pieces := make([]chunk, 0, len(spans))
	for _, sp := range spans {
		d := ch.data[sp.from:sp.to:sp.to]
		if !json.Valid(d) {
			return []chunk{ch} // not JSON after all: the parser says what it is
		}
		pieces = append(pieces, chunk{data: d, line: sp.line, col: sp.col, off: ch.off + sp.from})
	}
	return pieces
}

// ParseDocuments converts documents that a producer has already split, each
// with lines counted from its own first line: a rendered Helm template, as
// `helm template` prints each document under its own "# Source:" header.
// A document's Index is its place in docs.
func ParseDocuments(name string, docs [][]byte) File {
	f := File{Name: name, Empty: true}
	for i, d := range docs {
		if bytes.IndexByte(d[:min(len(d), 8000)], 0) >= 0 {
			f.Errors = append(f.Errors, Error{File: name, Message: "binary data (contains NUL bytes); not a YAML or JSON manifest"})
			continue
		}
		f.parseChunk(chunk{data: d, line: 1}, i)
	}
	if len(f.Errors) > 0 {
		f.Empty = false
	}
	return f
}

// parseChunk converts one document; it reports whether the chunk counts
// as a document (an error does, a chunk of only comments does not).
func (f *File) parseChunk(ch chunk, index int) bool {
	if !utf8.Valid(ch.data) {
		line := ch.line + bytes.Count(ch.data[:firstInvalidUTF8(ch.data)], []byte("\n"))
		f.Errors = append(f.Errors, Error{File: f.Name, Line: line, Message: "invalid UTF-8"})
		return true
	}
	if f.parseList(ch, index) {
		return true
	}
	if ch.col <= 1 && !blockOff {
		if d, ok := parseBlock(ch.data, max(ch.line, 1)); ok {
			f.Empty = false
			if d.apiVersion == "" || d.kind == "" {
				f.Skipped++
				return true
			}
			f.emit(&Document{
				File: f.Name, Index: index, Line: d.line,
				JSON: d.json, marks: d.marks,
				APIVersion: d.apiVersion, Kind: d.kind,
			})
			return true
		}
	}
	root, err := decodeOne(ch.data)
	if err != nil {
		f.Errors = append(f.Errors, yamlError(f.Name, ch.line, err))
		return true
	}
	if root.Kind == 0 || (root.Kind == yaml.DocumentNode && (len(root.Content) == 0 || isNull(root.Content[0]))) {
		return false // only comments or an empty document
	}
	f.Empty = false
	shift(&root, ch.line-1, max(ch.col-1, 0))
	f.addDocument(&root, index, 0)
	return true
}

// blockOff turns the block parser off, for the tests that compare it with
// yaml.v3.
var blockOff bool

// decodeOne parses the one YAML document of data. yaml.Unmarshal stops
// after the first node and ignores whatever follows it ("{...} garbage",
// a second JSON object): here that is an error, as it is for kubectl.
func decodeOne(data []byte) (yaml.Node, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil {
		if err == io.EOF {
			return yaml.Node{}, nil
		}
		return yaml.Node{}, err
	}
	var more yaml.Node
	if err := dec.Decode(&more); err != io.EOF {
		if err == nil {
			err = errors.New("yaml: more than one document without a \"---\" between them")
		}
		return yaml.Node{}, err
	}
	return root, nil
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

// addDocument converts a parsed document, or the items of a List from
// the skip-th on.
func (f *File) addDocument(root *yaml.Node, index, skip int) {
	top := root
	if top.Kind == yaml.DocumentNode {
		top = top.Content[0]
	}
	apiVersion, kind, terr := typeOf(top)
	if terr != nil {
		f.Errors = append(f.Errors, Error{File: f.Name, Line: terr.line, Column: terr.col, Message: terr.msg})
		return
	}
	if apiVersion == "" || kind == "" {
		f.Skipped++
		return
	}
	nodes := countNodes(top)
	budget := aliasBudget(nodes)
	if items := field(top, "items"); strings.HasSuffix(kind, "List") && items != nil && deref(items).Kind == yaml.SequenceNode {
		// The List itself is never converted, only its items: its keys
		// are checked here, or a second "items" or "kind" would go
		// unseen (see checkKeys).
		if err := checkKeys(top, items); err != nil {
			f.Errors = append(f.Errors, Error{File: f.Name, Line: err.line, Column: err.col, Message: err.msg})
			return
		}
		for _, item := range deref(items).Content[min(skip, len(deref(items).Content)):] {
			f.addItem(deref(item), index, &budget)
		}
		return
	}
	f.convert(top, index, apiVersion, kind, &budget, nodes)
}

// addItem converts one item of a List; an item that is not an object is
// skipped.
func (f *File) addItem(item *yaml.Node, index int, budget *int) {
	iv, ik, terr := typeOf(item)
	if terr != nil {
		f.Errors = append(f.Errors, Error{File: f.Name, Line: terr.line, Column: terr.col, Message: terr.msg})
		return
	}
	if iv == "" || ik == "" {
		f.Skipped++
		return
	}
	f.convert(item, index, iv, ik, budget, countNodes(item))
}

// parseList converts a List whose items can be found without parsing the
// whole document (see yamlList and jsonList) one item at a time: the
// skeleton (the List without its items) is parsed first, to see that it
// is a List, then each item on its own. It reports false, having done
// nothing, when the document is not such a List. Should an item not
// parse on its own (the line scanner was wrong about it), the whole
// document is parsed and its items from that one on are converted.
func (f *File) parseList(ch chunk, index int) bool {
	items, skeleton, isJSON, ok := listItems(ch)
	if !ok {
		return false
	}
	skel, err := decodeOne(skeleton)
	if err != nil || skel.Kind != yaml.DocumentNode || len(skel.Content) == 0 {
		return false
	}
	top := skel.Content[0]
	apiVersion, kind, terr := typeOf(top)
	if terr == nil && (apiVersion == "" || !strings.HasSuffix(kind, "List")) {
		return false
	}
	if terr != nil || checkKeys(top, nil) != nil {
		// A key given twice, or a type key in another case: the whole
		// parse says where, in the lines of the stream (the skeleton's
		// lines after the items are not).
		f.Empty = false
		f.parseWhole(ch, index, 0)
		return true
	}
	f.Empty = false
	done := 0
	for _, it := range items {
		data := ch.data[it.from:it.to:it.to]
		if !isJSON {
			// The item without its "- ", in place: its lines and
			// columns stay those of the stream.
			data = bytes.Clone(data)
			data[it.col-1] = ' '
		}
		root, err := decodeOne(data)
		if err != nil {
			f.parseWhole(ch, index, done)
			return true
		}
		f.read = ch.off + it.to
		done++
		if root.Kind != yaml.DocumentNode || len(root.Content) == 0 {
			f.Skipped++
			continue
		}
		col := 0
		if isJSON {
			col = it.col - 1
		}
		shift(&root, it.line-1, col)
		budget := aliasBudget(countNodes(&root))
		f.addItem(root.Content[0], index, &budget)
	}
	f.read = ch.off + len(ch.data)
	return true
}

// parseWhole converts a List document parsed whole, from its skip-th item.
func (f *File) parseWhole(ch chunk, index, skip int) {
	root, err := decodeOne(ch.data)
	if err != nil {
		f.Errors = append(f.Errors, yamlError(f.Name, ch.line, err))
		return
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 {
		return
	}
	shift(&root, ch.line-1, max(ch.col-1, 0))
	f.addDocument(&root, index, skip)
}

// listItems finds a List's items in a chunk: for JSON (valid as a whole),
// the elements of the top-level "items" array; for YAML, the entries of a
// block sequence under a top-level "items:" (see yamlList). skeleton is
// the document without them. The items' columns are those of the stream
// for YAML (col is the column of the "- " to blank out); for JSON, col is
// the column of the item's first byte.
func listItems(ch chunk) (items []span, skeleton []byte, isJSON, ok bool) {
	d := ch.data
	i := 0
	for i < len(d) && (d[i] == ' ' || d[i] == '\t' || d[i] == '\r' || d[i] == '\n') {
		i++
	}
	if i < len(d) && d[i] == '{' {
		if !bytes.Contains(d, []byte(`"items"`)) || !json.Valid(d) {
			return nil, nil, false, false
		}
		items, from, to, ok := jsonList(d, ch.line)
		if !ok {
			return nil, nil, false, false
		}
		if ch.col > 1 {
			for k := range items {
				if items[k].line == ch.line {
					items[k].col += ch.col - 1
				}
			}
		}
		return items, slices.Concat(d[:from], []byte("[]"), d[to:]), true, true
	}
	if !bytes.HasPrefix(d[i:], []byte("items:")) && !bytes.Contains(d, []byte("\nitems:")) {
		return nil, nil, false, false
	}
	items, from, to, ok := yamlList(d, ch.line)
	if !ok {
		return nil, nil, false, false
	}
	for k := range items {
		ind, _ := indentation(d[items[k].from:])
		items[k].col = ind + 1
	}
	return items, slices.Concat(d[:from], d[to:]), false, true
}

// convert emits one document; nodes sizes its buffers (every node is a mark
// and, with a key, about 16 bytes of JSON), which saves most of their growth.
func (f *File) convert(n *yaml.Node, index int, apiVersion, kind string, budget *int, nodes int) {
	c := converter{budget: *budget, buf: make([]byte, 0, 16*nodes), marks: make([]mark, 0, nodes)}
	if err := c.value(n); err != nil {
		e := Error{File: f.Name, Message: err.Error()}
		if ce, ok := err.(*convertError); ok {
			e.Line, e.Column = ce.line, ce.col
		}
		f.Errors = append(f.Errors, e)
		*budget = c.budget
		return
	}
	*budget = c.budget
	f.emit(&Document{
		File: f.Name, Index: index, Line: n.Line,
		JSON: c.buf, marks: c.marks,
		APIVersion: apiVersion, Kind: kind,
	})
}

// emit hands a converted document to each, or keeps it.
func (f *File) emit(d *Document) {
	if f.each != nil {
		f.each(d, f.read)
		return
	}
	f.Documents = append(f.Documents, d)
}

func field(m *yaml.Node, key string) *yaml.Node {
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// typeOf reads a document's apiVersion and kind as the clients that apply
// it do: the keys "apiVersion" and "kind" exactly, and only string values
// (kubectl decodes a manifest into an Unstructured, whose GetKind and
// GetAPIVersion read those map keys and return "" for another type).
// The API server reads the type of a built-in object case-insensitively
// instead (SimpleMetaFactory.Interpret unmarshals with encoding/json, the
// last matching key winning): a document that has a key differing from
// either only in case, and both in some case, is one they may read as two
// different types, and it is refused at that key (docs/inputs.md).
func typeOf(m *yaml.Node) (apiVersion, kind string, err *convertError) {
	if m.Kind != yaml.MappingNode {
		return "", "", nil
	}
	var variant *yaml.Node
	var foldedVersion, foldedKind bool
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if k.Kind != yaml.ScalarNode {
			continue
		}
		switch {
		case k.Value == "apiVersion":
			apiVersion, foldedVersion = typeValue(m.Content[i+1]), true
		case k.Value == "kind":
			kind, foldedKind = typeValue(m.Content[i+1]), true
		case strings.EqualFold(k.Value, "apiVersion"):
			foldedVersion = true
			variant = cmp.Or(variant, k)
		case strings.EqualFold(k.Value, "kind"):
			foldedKind = true
			variant = cmp.Or(variant, k)
		}
	}
	if variant != nil && foldedVersion && foldedKind {
		name := "kind"
		if strings.EqualFold(variant.Value, "apiVersion") {
			name = "apiVersion"
		}
		return "", "", errAt(variant, "key %q differs from %q only in case: kubectl reads an object's type from %q, the API server from any case of it; the document is not scanned", variant.Value, name, name)
	}
	return apiVersion, kind, nil
}

// typeValue is a type key's value as it is in the document's JSON, when
// that is a string.
func typeValue(v *yaml.Node) string {
	v = deref(v)
	if v.Kind != yaml.ScalarNode {
		return ""
	}
	switch v.ShortTag() {
	case "!!null", "!!bool", "!!int", "!!float":
		return ""
	case "!!binary":
		return strings.Join(strings.Fields(v.Value), "")
	}
	return v.Value
}

// shift moves a document parsed on its own to where it sits in the
// stream: lines down by lines, and the nodes of its first line right by
// cols (a piece that starts in the middle of a line).
func shift(n *yaml.Node, lines, cols int) {
	if (lines == 0 && cols == 0) || n == nil {
		return
	}
	if n.Line == 1 {
		n.Column += cols
	}
	n.Line += lines
	for _, c := range n.Content {
		shift(c, lines, cols)
	}
}

type chunk struct {
	data []byte
	line int // line of the chunk's first byte
	// col is the column of the chunk's first byte (a JSON value that
	// follows another on its line); 0 or 1 for the start of a line.
	col int
	off int // offset of data in the stream
}

// splitDocuments cuts a stream at lines that start with "---" or "..."
// (document markers may not appear inside a YAML scalar, so this is safe).
// The marker line stays with the document it opens. Chunks are yielded as
// they are found, numbered from 0: a large mapped file is then read from
// disk as it is parsed, and its pages can leave memory behind the parser,
// instead of the whole file being read in before the first document.
func splitDocuments(data []byte) iter.Seq2[int, chunk] {
	return func(yield func(int, chunk) bool) {
		n := 0
		emit := func(c chunk) bool {
			n++
			return yield(n-1, c)
		}
		start, startLine, line := 0, 1, 1
		for i := 0; i < len(data); {
			end := bytes.IndexByte(data[i:], '\n')
			next := len(data)
			if end >= 0 {
				next = i + end + 1
			}
			l := data[i:next]
			if isMarker(l, "---") && i > start {
				if !emit(chunk{data: data[start:i], line: startLine}) {
					return
				}
				start, startLine = i, line
			} else if isMarker(l, "...") {
				if !emit(chunk{data: data[start:i], line: startLine}) {
					return
				}
				start, startLine = next, line+1
			}
			i = next
			line++
		}
		if start < len(data) {
			emit(chunk{data: data[start:], line: startLine})
		}
	}
}

func isMarker(l []byte, m string) bool {
	if !bytes.HasPrefix(l, []byte(m)) {
		return false
	}
	return len(l) == 3 || l[3] == ' ' || l[3] == '\t' || l[3] == '\n' || l[3] == '\r'
}

func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(b)
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// isParserError tells yaml.v3's parser errors from its scanner errors by
// their messages (go.yaml.in/yaml/v3 parserc.go).
func isParserError(msg string) bool {
	msg = strings.TrimPrefix(msg, ": ")
	for _, p := range []string{"did not find expected", "found incompatible YAML document", "found duplicate", "found undefined tag handle"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// yamlError rewrites a yaml.v3 error so that its line counts from the start
// of the file, not of the document.
func yamlError(file string, chunkLine int, err error) Error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := chunkLine
	if m := yamlLine.FindStringSubmatchIndex(msg); m != nil {
		n, _ := strconv.Atoi(msg[m[2]:m[3]])
		if isParserError(msg[m[1]:]) {
			n++ // yaml.v3 reports parser (not scanner) errors with 0-based lines
		}
		line = chunkLine + n - 1
		msg = strings.TrimSpace(strings.TrimPrefix(msg[:m[0]]+msg[m[1]:], ":"))
		msg = strings.TrimPrefix(strings.TrimSpace(msg), ": ")
	}
	return Error{File: file, Line: line, Message: "invalid YAML: " + msg}
}

// ParseJSON converts one JSON object that a program wrote (the object of
// an admission request) as Parse would, but without positions: every
// field is at line 1. Parsing it as YAML, for positions nobody reads,
// would cost about 30 bytes of memory per byte (a 3 MB object, 90 MB).
func ParseJSON(name string, data []byte) File {
	f := File{Name: name}
	var buf bytes.Buffer
	buf.Grow(len(data))
	if err := json.Compact(&buf, data); err != nil {
		f.Errors = append(f.Errors, Error{File: name, Line: 1, Message: "invalid JSON: " + err.Error()})
		return f
	}
	var head struct {
		APIVersion any `json:"apiVersion"`
		Kind       any `json:"kind"`
	}
	// Exact keys, as typeOf reads them: the API server has decoded the
	// object already, into a type (whose JSON has no key in another case)
	// or into an Unstructured (a custom resource, typed by its exact keys).
	if exactjson.Unmarshal(buf.Bytes(), &head) != nil {
		f.Skipped++ // not an object
		return f
	}
	apiVersion, _ := head.APIVersion.(string)
	kind, _ := head.Kind.(string)
	if apiVersion == "" || kind == "" {
		f.Skipped++
		return f
	}
	f.Documents = append(f.Documents, &Document{File: name, Line: 1, JSON: buf.Bytes(), APIVersion: apiVersion, Kind: kind})
	return f
}
