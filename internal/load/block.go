package load

import (
	"slices"
	"strings"
	"unicode/utf8"
	"unsafe"

	yaml "go.yaml.in/yaml/v3"
)

// blockParser converts one document written in the block style manifests
// are written in straight to the converter's output (compact JSON and the
// position of every key and value), without building yaml.v3's node tree:
// parsing into that tree is most of what a scan costs.
//
// It knows a subset of YAML: block mappings and sequences, single-line
// plain and quoted scalars, literal and folded block scalars, and flow
// collections of scalars on one line. Anything else (anchors, aliases,
// tags, multi-line plain or quoted scalars, complex keys, tabs outside
// scalars, merge keys, duplicate keys, documents that yaml.v3 would
// refuse) makes it give up, and the document is parsed by yaml.v3 instead.
// Where it does not give up it must produce exactly what converting
// yaml.v3's tree produces, positions included: block_test.go compares the
// two on every document of the test corpora and of the YAML test suite.
//
// Values are emitted through the converter (converter.scalar on a yaml.Node
// made on the stack), so that tags resolve and numbers print exactly as
// they do for yaml.v3's nodes.
type blockParser struct {
	c     converter
	data  []byte
	ascii bool // no byte above 0x7F: a column is a byte offset
	first int  // line number of data's first line

	// The current line: its offset in data and its line number.
	pos, line int

	// keys holds the keys of the open mappings, to refuse duplicates;
	// open[i] is where the i-th open mapping's keys start.
	keys  []string
	depth int

	apiVersion, kind string

	text []byte // a scalar's value being built (escapes, block scalars)
}

// maxBlockDepth is the nesting the block parser follows; deeper documents
// are left to yaml.v3 (and the converter's own limit).
const maxBlockDepth = 100

// blockDocument is one document the block parser converted.
type blockDocument struct {
	json             []byte
	marks            []mark
	line             int // line of the top mapping's first key
	apiVersion, kind string
}

// parseBlock converts data, a document whose first line is line first of
// its stream. ok is false when the document is outside the subset: the
// caller parses it with yaml.v3.
func parseBlock(data []byte, first int) (d blockDocument, ok bool) {
	ascii, ok := blockBytes(data)
	if !ok {
		return d, false
	}
	p := blockParser{
		data: data, ascii: ascii, first: first, line: first,
		c: converter{buf: make([]byte, 0, len(data)), marks: make([]mark, 0, len(data)/12+8)},
	}
	if !p.document() {
		return d, false
	}
	return blockDocument{json: p.c.buf, marks: p.c.marks, line: int(p.c.marks[0].line),
		apiVersion: p.apiVersion, kind: p.kind}, true
}

// blockBytes reports whether data holds only characters the block parser
// handles the way yaml.v3 does, and whether they are all ASCII. yaml.v3
// refuses control characters, counts NEL, LS and PS as line breaks and
// treats a byte order mark specially; a carriage return makes line ends
// two bytes. All of these are left to it.
func blockBytes(data []byte) (ascii, ok bool) {
	ascii = true
	for i := 0; i < len(data); i++ {
		b := data[i]
		switch {
		case b >= 0x20 && b < 0x7f, b == '\n', b == '\t':
		case b < 0x80: // other C0 controls, DEL, '\r'
			return false, false
		default:
			ascii = false
			r, size := utf8.DecodeRune(data[i:])
			if r < 0xa0 || r == 0x2028 || r == 0x2029 || r == 0xfeff || r == 0xfffe || r == 0xffff || r == utf8.RuneError {
				return false, false
			}
			i += size - 1
		}
	}
	return ascii, true
}

// lineEnd is the offset of the '\n' that ends the line holding off, or
// len(data).
func (p *blockParser) lineEnd(off int) int {
	for i := off; i < len(p.data); i++ {
		if p.data[i] == '\n' {
			return i
		}
	}
	return len(p.data)
}

// nextLine moves to the line after the one holding off.
func (p *blockParser) nextLine(off int) {
	p.pos = p.lineEnd(off) + 1
	p.line++
}

// column is the 1-based column of off, in characters as yaml.v3 counts
// them.
func (p *blockParser) column(off int) int {
	start := p.pos
	if p.ascii {
		return off - start + 1
	}
	return utf8.RuneCount(p.data[start:off]) + 1
}

// content moves past blank and comment lines to the next line with
// content and returns its indentation, or -1 at the end of the document.
// ok is false for a tab before the content.
func (p *blockParser) content() (indent int, ok bool) {
	for p.pos < len(p.data) {
		i := p.pos
		for i < len(p.data) && p.data[i] == ' ' {
			i++
		}
		if i == len(p.data) {
			p.pos = i
			break
		}
		switch p.data[i] {
		case '\n':
			p.pos = i + 1
			p.line++
			continue
		case '#':
			p.nextLine(i)
			continue
		case '\t':
			return 0, false
		}
		return i - p.pos, true
	}
	return -1, true
}

// isEntry reports whether off starts a block sequence entry: '-'
// followed by a space or the end of the line.
func (p *blockParser) isEntry(off int) bool {
	if off >= len(p.data) || p.data[off] != '-' {
		return false
	}
	return off+1 == len(p.data) || p.data[off+1] == ' ' || p.data[off+1] == '\n'
}

// blank reports whether off is at a space, the end of the line or the end
// of the document; a tab there is not followed.
func (p *blockParser) blank(off int) bool {
	return off >= len(p.data) || p.data[off] == ' ' || p.data[off] == '\n'
}

// document parses the whole document: an optional "---" line, then one
// block mapping, then nothing but blank and comment lines.
func (p *blockParser) document() bool {
	if len(p.data) >= 3 && p.data[0] == '-' && p.data[1] == '-' && p.data[2] == '-' {
		if !p.restOfLine(3) {
			return false
		}
		p.nextLine(0)
	}
	indent, ok := p.content()
	if !ok || indent < 0 || p.isEntry(p.pos+indent) {
		return false
	}
	if !p.mapping(indent, p.pos+indent) {
		return false
	}
	indent, ok = p.content()
	// A List's items are objects of their own: parseList and
	// addDocument read them.
	return ok && indent < 0 && !strings.HasSuffix(p.kind, "List")
}

// restOfLine reports whether nothing but spaces and a comment follow off
// on its line.
func (p *blockParser) restOfLine(off int) bool {
	i := off
	for i < len(p.data) && p.data[i] == ' ' {
		i++
	}
	if i == len(p.data) || p.data[i] == '\n' {
		return true
	}
	return p.data[i] == '#' && i > off
}

// mark records a node that starts at off on the current line.
func (p *blockParser) mark(off int) {
	p.c.marks = append(p.c.marks, mark{off: int32(len(p.c.buf)), line: int32(p.line), col: int32(p.column(off))})
}

// mapping parses a block mapping whose first key starts at off on the
// current line, indent columns in.
func (p *blockParser) mapping(indent, off int) bool {
	p.depth++
	if p.depth > maxBlockDepth {
		return false
	}
	defer func() { p.depth-- }()
	top := p.depth == 1
	p.mark(off)
	p.c.buf = append(p.c.buf, '{')
	open := len(p.keys)
	defer func() {
		clear(p.keys[open:])
		p.keys = p.keys[:open]
	}()
	for n := 0; ; n++ {
		key, next, ok := p.key(off)
		if !ok {
			return false
		}
		for _, k := range p.keys[open:] {
			if k == key {
				return false // the converter's error, with its line
			}
		}
		p.keys = append(p.keys, key)
		if n > 0 {
			p.c.buf = append(p.c.buf, ',')
		}
		p.mark(off)
		p.c.buf = appendString(p.c.buf, key)
		p.c.buf = append(p.c.buf, ':')
		valueAt := len(p.c.buf)
		v := next
		for v < len(p.data) && p.data[v] == ' ' {
			v++
		}
		var value string
		var scalar bool
		if v == len(p.data) || p.data[v] == '\n' || p.data[v] == '#' {
			// The value is on the lines below, or empty.
			colonLine, colonCol := p.line, p.column(next)
			p.nextLine(v)
			in, ok := p.content()
			if !ok {
				return false
			}
			switch {
			case in > indent:
				if value, scalar, ok = p.block(in, indent); !ok {
					return false
				}
			case in == indent && p.isEntry(p.pos+in):
				// A sequence may sit at its key's indentation.
				if !p.sequence(in, indent) {
					return false
				}
			default:
				p.c.marks = append(p.c.marks, mark{off: int32(len(p.c.buf)), line: int32(colonLine), col: int32(colonCol)})
				p.c.buf = append(p.c.buf, "null"...)
				value, scalar = "", true
			}
		} else {
			if p.data[v] == '\t' {
				return false
			}
			value, scalar, ok = p.inline(v, indent)
			if !ok {
				return false
			}
		}
		if top {
			// What Document.APIVersion and Kind are (see typeOf): a
			// string's value; a key that differs from theirs only in case
			// is refused by the yaml.v3 path.
			isString := scalar && p.c.buf[valueAt] == '"'
			switch {
			case key == "apiVersion":
				if isString {
					p.apiVersion = strings.Clone(value)
				}
			case key == "kind":
				if isString {
					p.kind = strings.Clone(value)
				}
			case strings.EqualFold(key, "apiVersion") || strings.EqualFold(key, "kind"):
				return false
			}
		}
		in, ok := p.content()
		if !ok {
			return false
		}
		if in < indent {
			break
		}
		if in > indent || p.isEntry(p.pos+in) {
			return false
		}
		off = p.pos + in
	}
	p.c.buf = append(p.c.buf, '}')
	return true
}

// block parses the node that starts on the current line, indent columns
// in, below a key or an entry of the collection at parent. It returns the
// node's value when it is a scalar.
func (p *blockParser) block(indent, parent int) (value string, scalar, ok bool) {
	off := p.pos + indent
	if p.isEntry(off) {
		return "", false, p.sequence(indent, parent)
	}
	isKey, ok := p.startsKey(off)
	if !ok {
		return "", false, false
	}
	if isKey {
		return "", false, p.mapping(indent, off)
	}
	return p.inline(off, parent)
}

// sequence parses a block sequence whose first '-' is indent columns into
// the current line.
func (p *blockParser) sequence(indent, parent int) bool {
	p.depth++
	if p.depth > maxBlockDepth {
		return false
	}
	defer func() { p.depth-- }()
	p.mark(p.pos + indent)
	p.c.buf = append(p.c.buf, '[')
	for n := 0; ; n++ {
		if n > 0 {
			p.c.buf = append(p.c.buf, ',')
		}
		dash := p.pos + indent
		v := dash + 1
		for v < len(p.data) && p.data[v] == ' ' {
			v++
		}
		switch {
		case v == len(p.data) || p.data[v] == '\n' || p.data[v] == '#':
			entryLine, entryCol := p.line, p.column(dash)+1
			p.nextLine(v)
			in, ok := p.content()
			if !ok {
				return false
			}
			if in > indent {
				if _, _, ok := p.block(in, indent); !ok {
					return false
				}
			} else {
				p.c.marks = append(p.c.marks, mark{off: int32(len(p.c.buf)), line: int32(entryLine), col: int32(entryCol)})
				p.c.buf = append(p.c.buf, "null"...)
			}
		case p.data[v] == '\t' || p.isEntry(v):
			return false
		default:
			isKey, ok := p.startsKey(v)
			if !ok {
				return false
			}
			if isKey {
				// A mapping in the entry: its keys line up with the first.
				if !p.mapping(v-p.pos, v) {
					return false
				}
			} else if _, _, ok := p.inline(v, indent); !ok {
				return false
			}
		}
		in, ok := p.content()
		if !ok {
			return false
		}
		if in < indent || (in == indent && !p.isEntry(p.pos+in)) {
			break
		}
		if in > indent {
			return false
		}
	}
	p.c.buf = append(p.c.buf, ']')
	return true
}

// startsKey reports whether a mapping key starts at off: a quoted scalar
// followed by ':', or a plain one whose line has ": " before any comment.
func (p *blockParser) startsKey(off int) (isKey, ok bool) {
	switch p.data[off] {
	case '"', '\'':
		end, ok := p.quotedEnd(off)
		if !ok {
			return false, false
		}
		i := end
		for i < len(p.data) && p.data[i] == ' ' {
			i++
		}
		return i < len(p.data) && p.data[i] == ':', true
	}
	for i := off; i < len(p.data); i++ {
		switch p.data[i] {
		case '\n':
			return false, true
		case ':':
			if p.blank(i + 1) {
				return true, true
			}
		case '#':
			if p.data[i-1] == ' ' {
				return false, true
			}
		}
	}
	return false, true
}

// key parses the key at off on the current line and returns it, with the
// offset just past its ':'.
func (p *blockParser) key(off int) (key string, next int, ok bool) {
	switch c := p.data[off]; c {
	case '"', '\'':
		s, end, ok := p.quoted(off)
		if !ok {
			return "", 0, false
		}
		i := end
		for i < len(p.data) && p.data[i] == ' ' {
			i++
		}
		if i >= len(p.data) || p.data[i] != ':' || !p.blank(i+1) || i-off > 1000 {
			return "", 0, false
		}
		return s, i + 1, true
	case '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '%', '@', '`':
		return "", 0, false
	case '-':
		if p.blank(off + 1) {
			return "", 0, false
		}
	}
	for i := off; i < len(p.data); i++ {
		switch p.data[i] {
		case '\n', '\t':
			return "", 0, false
		case ':':
			if !p.blank(i + 1) {
				continue
			}
			if i-off > 1000 {
				return "", 0, false // yaml.v3 limits simple keys to 1024 characters
			}
			end := i
			for p.data[end-1] == ' ' {
				end--
			}
			k := p.str(off, end)
			switch k {
			case "<<":
				return "", 0, false // a merge key: the converter's business
			case "~", "null", "Null", "NULL":
				k = "null"
			}
			return k, i + 1, true
		case '#':
			if p.data[i-1] == ' ' {
				return "", 0, false
			}
		}
	}
	return "", 0, false
}

// str is data[from:to] as a string that shares its memory: for values
// used while the document is parsed, never kept.
func (p *blockParser) str(from, to int) string {
	if from == to {
		return ""
	}
	return unsafe.String(&p.data[from], to-from)
}

// inline parses the value that starts at off on the current line and
// moves past it; parent is the indentation of the collection that holds
// it. It returns the value when it is a scalar.
func (p *blockParser) inline(off, parent int) (value string, scalar, ok bool) {
	switch p.data[off] {
	case '"', '\'':
		s, end, ok := p.quoted(off)
		if !ok || !p.restOfLine(end) {
			return "", false, false
		}
		p.mark(off)
		p.c.buf = appendString(p.c.buf, s)
		p.nextLine(end)
		return s, true, true
	case '|', '>':
		s, ok := p.blockScalar(off, parent)
		return s, ok, ok
	case '[', '{':
		end, ok := p.flow(off)
		if !ok || !p.restOfLine(end) {
			return "", false, false
		}
		p.nextLine(end)
		return "", false, true
	case ',', ']', '}', '#', '&', '*', '!', '%', '@', '`':
		return "", false, false
	case '-', '?', ':':
		if p.blank(off + 1) {
			return "", false, false
		}
	}
	end := off
	for i := off; i < len(p.data) && p.data[i] != '\n'; i++ {
		switch p.data[i] {
		case '\t':
			return "", false, false
		case ':':
			if p.blank(i + 1) {
				return "", false, false // "a: b: c"
			}
		case '#':
			if p.data[i-1] == ' ' {
				goto done
			}
		case ' ':
			continue
		}
		end = i + 1
	}
done:
	s := p.str(off, end)
	if !p.scalar(off, s) {
		return "", false, false
	}
	p.nextLine(off)
	return s, true, true
}

// scalar emits a plain scalar that starts at off on the current line,
// resolved the way yaml.v3 resolves it: only values that start like a
// number, a boolean, a null, ".inf" or "<<" need its resolver at all.
func (p *blockParser) scalar(off int, value string) bool {
	p.mark(off)
	if value != "" && !resolvable[value[0]] {
		p.c.buf = appendString(p.c.buf, value)
		return true
	}
	n := yaml.Node{Kind: yaml.ScalarNode, Value: value, Line: p.line, Column: p.column(off)}
	return p.c.scalar(&n) == nil
}

// resolvable marks the first bytes of the plain scalars yaml.v3's
// resolver may give a tag other than !!str (resolve.go, resolveTable).
var resolvable = func() (t [256]bool) {
	for _, c := range "+-0123456789yYnNtTfFoO~<." {
		t[c] = true
	}
	return t
}()

// quoted parses the single-line quoted scalar at off and returns its value
// and the offset past its closing quote. The value shares the document's
// memory unless it has escapes.
func (p *blockParser) quoted(off int) (s string, end int, ok bool) {
	q := p.data[off]
	i := off + 1
	start := i
	for i < len(p.data) {
		switch c := p.data[i]; {
		case c == '\n':
			return "", 0, false // a multi-line scalar: folded by yaml.v3
		case c == q:
			if q == '\'' && i+1 < len(p.data) && p.data[i+1] == '\'' {
				return p.unquote(off)
			}
			return p.str(start, i), i + 1, true
		case c == '\\' && q == '"':
			return p.unquote(off)
		}
		i++
	}
	return "", 0, false
}

// quotedEnd is the offset past the closing quote of the single-line quoted
// scalar at off.
func (p *blockParser) quotedEnd(off int) (int, bool) {
	_, end, ok := p.quoted(off)
	return end, ok
}

// unquote builds the value of a quoted scalar that has escapes (yaml.v3
// scannerc.go, yaml_parser_scan_flow_scalar).
func (p *blockParser) unquote(off int) (s string, end int, ok bool) {
	q := p.data[off]
	t := p.text[:0]
	for i := off + 1; i < len(p.data); {
		c := p.data[i]
		switch {
		case c == '\n':
			return "", 0, false
		case q == '\'' && c == '\'':
			if i+1 < len(p.data) && p.data[i+1] == '\'' {
				t = append(t, '\'')
				i += 2
				continue
			}
			p.text = t
			return string(t), i + 1, true
		case q == '"' && c == '"':
			p.text = t
			return string(t), i + 1, true
		case q == '"' && c == '\\':
			if i+1 >= len(p.data) {
				return "", 0, false
			}
			size := 0
			switch e := p.data[i+1]; e {
			case '0':
				t = append(t, 0)
			case 'a':
				t = append(t, 7)
			case 'b':
				t = append(t, 8)
			case 't', '\t':
				t = append(t, 9)
			case 'n':
				t = append(t, 10)
			case 'v':
				t = append(t, 11)
			case 'f':
				t = append(t, 12)
			case 'r':
				t = append(t, 13)
			case 'e':
				t = append(t, 0x1b)
			case ' ', '"', '\'', '\\':
				t = append(t, e)
			case 'N':
				t = append(t, "\u0085"...)
			case '_':
				t = append(t, "\u00a0"...)
			case 'L':
				t = append(t, "\u2028"...)
			case 'P':
				t = append(t, "\u2029"...)
			case 'x':
				size = 2
			case 'u':
				size = 4
			case 'U':
				size = 8
			default:
				return "", 0, false // yaml.v3 refuses it
			}
			i += 2
			if size > 0 {
				if i+size > len(p.data) {
					return "", 0, false
				}
				r := 0
				for _, h := range p.data[i : i+size] {
					switch {
					case h >= '0' && h <= '9':
						r = r<<4 + int(h-'0')
					case h >= 'a' && h <= 'f':
						r = r<<4 + int(h-'a'+10)
					case h >= 'A' && h <= 'F':
						r = r<<4 + int(h-'A'+10)
					default:
						return "", 0, false
					}
				}
				if (r >= 0xd800 && r <= 0xdfff) || r > 0x10ffff {
					return "", 0, false
				}
				t = utf8.AppendRune(t, rune(r))
				i += size
			}
		default:
			t = append(t, c)
			i++
		}
	}
	return "", 0, false
}

// blockScalar parses the literal or folded scalar whose indicator is at
// off and moves past it; parent is the indentation of the collection that
// holds it. It follows yaml.v3's scanner (scannerc.go,
// yaml_parser_scan_block_scalar and yaml_parser_scan_block_scalar_breaks)
// for the scalars whose indentation is found from their first line.
func (p *blockParser) blockScalar(off, parent int) (string, bool) {
	literal := p.data[off] == '|'
	chomp := 0
	i := off + 1
	if i < len(p.data) && (p.data[i] == '-' || p.data[i] == '+') {
		chomp = 1
		if p.data[i] == '-' {
			chomp = -1
		}
		i++
	}
	if i < len(p.data) && p.data[i] >= '0' && p.data[i] <= '9' {
		return "", false // an indentation indicator
	}
	if !p.restOfLine(i) {
		return "", false
	}
	line, col := p.line, p.column(off)
	p.nextLine(i)
	// The content's indentation is its first non-empty line's; empty
	// lines before it count as line breaks.
	widest, indent := 0, -1
	for j := p.pos; j < len(p.data); {
		k := j
		for k < len(p.data) && p.data[k] == ' ' {
			k++
		}
		if k < len(p.data) && p.data[k] == '\t' {
			return "", false
		}
		widest = max(widest, k-j)
		if k == len(p.data) {
			break
		}
		if p.data[k] != '\n' {
			indent = k - j
			break
		}
		j = k + 1
	}
	if indent <= parent || widest > indent {
		return "", false // an empty scalar, or one yaml.v3 refuses
	}
	t := p.text[:0]
	breaks, leadingBreak, leadingBlank := 0, false, false
	for p.pos < len(p.data) {
		j := p.pos
		s := 0
		for s < indent && j+s < len(p.data) && p.data[j+s] == ' ' {
			s++
		}
		k := j + s
		if k == len(p.data) {
			p.pos = k
			break
		}
		c := p.data[k]
		if c == '\n' { // an empty line
			p.pos = k + 1
			p.line++
			breaks++
			continue
		}
		if s < indent {
			if c == '\t' {
				return "", false
			}
			break // a line less indented ends the scalar
		}
		trailingBlank := c == ' ' || c == '\t'
		if !literal && leadingBreak && !leadingBlank && !trailingBlank {
			if breaks == 0 {
				t = append(t, ' ')
			}
		} else if leadingBreak {
			t = append(t, '\n')
		}
		leadingBreak = false
		for ; breaks > 0; breaks-- {
			t = append(t, '\n')
		}
		leadingBlank = trailingBlank
		e := p.lineEnd(k)
		t = append(t, p.data[k:e]...)
		if e == len(p.data) {
			p.pos = e
			break
		}
		leadingBreak = true
		p.pos = e + 1
		p.line++
	}
	if chomp != -1 && leadingBreak {
		t = append(t, '\n')
	}
	if chomp == 1 {
		for ; breaks > 0; breaks-- {
			t = append(t, '\n')
		}
	}
	p.text = t
	p.c.marks = append(p.c.marks, mark{off: int32(len(p.c.buf)), line: int32(line), col: int32(col)})
	s := unsafe.String(unsafe.SliceData(t), len(t))
	p.c.buf = appendString(p.c.buf, s)
	return s, true
}

// flow parses the flow node at off, which must end on its line, and
// returns the offset past it.
func (p *blockParser) flow(off int) (int, bool) {
	switch p.data[off] {
	case '[':
		return p.flowSequence(off)
	case '{':
		return p.flowMapping(off)
	}
	return p.flowScalar(off)
}

// flowSequence parses the flow sequence that opens at off.
func (p *blockParser) flowSequence(off int) (int, bool) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxBlockDepth {
		return 0, false
	}
	p.mark(off)
	p.c.buf = append(p.c.buf, '[')
	i := off + 1
	for n := 0; ; n++ {
		i = p.spaces(i)
		if i == len(p.data) {
			return 0, false
		}
		if p.data[i] == ']' {
			break // "[]", or a comma before the end
		}
		if n > 0 {
			p.c.buf = append(p.c.buf, ',')
		}
		var ok bool
		if i, ok = p.flow(i); !ok {
			return 0, false
		}
		if i = p.spaces(i); i < len(p.data) && p.data[i] == ']' {
			break
		}
		if i == len(p.data) || p.data[i] != ',' {
			return 0, false
		}
		i++
	}
	p.c.buf = append(p.c.buf, ']')
	return i + 1, true
}

// flowMapping parses the flow mapping that opens at off. Every key has a
// value after ": " (or after ':' where the key is quoted).
func (p *blockParser) flowMapping(off int) (int, bool) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxBlockDepth {
		return 0, false
	}
	p.mark(off)
	p.c.buf = append(p.c.buf, '{')
	open := len(p.keys)
	defer func() {
		clear(p.keys[open:])
		p.keys = p.keys[:open]
	}()
	i := off + 1
	for n := 0; ; n++ {
		i = p.spaces(i)
		if i == len(p.data) {
			return 0, false
		}
		if p.data[i] == '}' {
			break
		}
		from := i
		var key string
		switch p.data[i] {
		case '"', '\'':
			s, end, ok := p.quoted(i)
			if !ok {
				return 0, false
			}
			if i = p.spaces(end); i == len(p.data) || p.data[i] != ':' {
				return 0, false
			}
			key = s
		default:
			if strings.IndexByte(flowIndicators, p.data[i]) >= 0 || (p.data[i] == '-' && p.blank(i+1)) {
				return 0, false
			}
			j := i
			for ; j < len(p.data) && p.data[j] != ':'; j++ {
				if strings.IndexByte(",[]{}#?\n\t", p.data[j]) >= 0 {
					return 0, false
				}
			}
			if j+1 >= len(p.data) || p.data[j+1] != ' ' {
				return 0, false
			}
			end := j
			for p.data[end-1] == ' ' {
				end--
			}
			key, i = p.str(from, end), j
			switch key {
			case "<<":
				return 0, false
			case "~", "null", "Null", "NULL":
				key = "null"
			}
		}
		if slices.Contains(p.keys[open:], key) {
			return 0, false
		}
		p.keys = append(p.keys, key)
		if n > 0 {
			p.c.buf = append(p.c.buf, ',')
		}
		p.mark(from)
		p.c.buf = appendString(p.c.buf, key)
		p.c.buf = append(p.c.buf, ':')
		if i = p.spaces(i + 1); i == len(p.data) || p.data[i] == ',' || p.data[i] == '}' {
			return 0, false // an empty value
		}
		var ok bool
		if i, ok = p.flow(i); !ok {
			return 0, false
		}
		if i = p.spaces(i); i < len(p.data) && p.data[i] == '}' {
			break
		}
		if i == len(p.data) || p.data[i] != ',' {
			return 0, false
		}
		i++
	}
	p.c.buf = append(p.c.buf, '}')
	return i + 1, true
}

// spaces returns the offset of the first byte at or after off that is not
// a space.
func (p *blockParser) spaces(off int) int {
	for off < len(p.data) && p.data[off] == ' ' {
		off++
	}
	return off
}

// flowIndicators are the characters a plain scalar in a flow collection
// may not start with, as the block parser reads them.
const flowIndicators = ",[]{}#&*!|>%@`?:\"'\n\t"

// flowScalar emits the scalar at off in a flow sequence and returns the
// offset past it. Plain scalars there stop at ',' and ']'; those with a
// character that could start a mapping, a comment or a nested collection
// are left to yaml.v3.
func (p *blockParser) flowScalar(off int) (int, bool) {
	switch c := p.data[off]; c {
	case '"', '\'':
		s, end, ok := p.quoted(off)
		if !ok {
			return 0, false
		}
		p.mark(off)
		p.c.buf = appendString(p.c.buf, s)
		return end, true
	case '-':
		if off+1 == len(p.data) || strings.IndexByte(" ,]}\n", p.data[off+1]) >= 0 {
			return 0, false
		}
	}
	if strings.IndexByte(flowIndicators, p.data[off]) >= 0 {
		return 0, false
	}
	end, j := off, off
	for ; j < len(p.data) && p.data[j] != ',' && p.data[j] != ']' && p.data[j] != '}'; j++ {
		switch p.data[j] {
		case '\n', '\t', '[', '{', ':', '?', '#':
			return 0, false
		case ' ':
			continue
		}
		end = j + 1
	}
	return j, p.scalar(off, p.str(off, end))
}
