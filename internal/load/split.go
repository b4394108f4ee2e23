package load

import "bytes"

// Splitting a document further than its "---" markers, without parsing
// it: a stream of JSON values written one after another (NDJSON, or
// `kubectl get -o json` run several times into one file) holds several
// objects, as kubectl reads them (k8s.io/apimachinery
// pkg/util/yaml/decoder.go, NewYAMLOrJSONDecoder, decodes JSON values one
// after another); and the items of a large List are parsed one at a
// time, so that memory follows the largest item, not the whole List
// (the YAML node tree of a document costs about 30 bytes per byte).
//
// The splitters only propose: every piece is parsed on its own, and a
// piece that does not parse sends the document back to the whole-document
// parse.

// span is a piece of a chunk: data[from:to], starting at line and column
// (1-based) of the stream.
type span struct {
	from, to  int
	line, col int
}

// jsonValues splits data into the top-level JSON values written one
// after another in it; ok is false when data is not such a sequence of at
// least two values (anything else between them, or an unterminated
// value). Whitespace between values is allowed; nothing else.
func jsonValues(data []byte, line int) (spans []span, ok bool) {
	s := jsonScanner{data: data, line: line, lineStart: 0}
	for {
		s.space()
		if s.i >= len(data) {
			break
		}
		if c := data[s.i]; c != '{' && c != '[' {
			return nil, false
		}
		sp := span{from: s.i, line: s.line, col: s.i - s.lineStart + 1}
		if !s.value() {
			return nil, false
		}
		sp.to = s.i
		spans = append(spans, sp)
	}
	return spans, len(spans) > 1
}

// jsonList finds the items of a JSON object's top-level "items" array:
// the item spans, and where the array itself is (so that the rest of the
// object can be parsed without it). ok is false when data is not one JSON
// object with such an array of at least one item.
func jsonList(data []byte, line int) (items []span, arrFrom, arrTo int, ok bool) {
	s := jsonScanner{data: data, line: line}
	s.space()
	if s.i >= len(data) || data[s.i] != '{' {
		return nil, 0, 0, false
	}
	s.i++
	found := false
	for {
		s.space()
		if s.i < len(data) && data[s.i] == '}' {
			s.i++
			break
		}
		if s.i >= len(data) || data[s.i] != '"' {
			return nil, 0, 0, false
		}
		kFrom := s.i
		if !s.str() {
			return nil, 0, 0, false
		}
		key := data[kFrom:s.i]
		s.space()
		if s.i >= len(data) || data[s.i] != ':' {
			return nil, 0, 0, false
		}
		s.i++
		s.space()
		if string(key) == `"items"` && s.i < len(data) && data[s.i] == '[' {
			if found {
				return nil, 0, 0, false // twice: let the parser say so
			}
			found = true
			arrFrom = s.i
			s.i++
			for {
				s.space()
				if s.i < len(data) && data[s.i] == ']' {
					s.i++
					break
				}
				sp := span{from: s.i, line: s.line, col: s.i - s.lineStart + 1}
				if !s.value() {
					return nil, 0, 0, false
				}
				sp.to = s.i
				items = append(items, sp)
				s.space()
				if s.i < len(data) && data[s.i] == ',' {
					s.i++
				}
			}
			arrTo = s.i
		} else if !s.value() {
			return nil, 0, 0, false
		}
		s.space()
		if s.i < len(data) && data[s.i] == ',' {
			s.i++
		}
	}
	s.space()
	if s.i != len(data) || !found || len(items) == 0 {
		return nil, 0, 0, false
	}
	return items, arrFrom, arrTo, true
}

// jsonScanner walks JSON text, counting lines. It checks only what
// finding the ends of values needs; the parser judges the rest.
type jsonScanner struct {
	data      []byte
	i         int
	line      int
	lineStart int // offset of the current line's first byte
}

func (s *jsonScanner) space() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case '\n':
			s.line++
			s.lineStart = s.i + 1
		case ' ', '\t', '\r':
		default:
			return
		}
		s.i++
	}
}

// str skips a string; false when it is not terminated on its line (JSON
// strings hold no raw newline).
func (s *jsonScanner) str() bool {
	s.i++ // the opening quote
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case '\\':
			s.i += 2
			continue
		case '"':
			s.i++
			return true
		case '\n':
			return false
		}
		s.i++
	}
	return false
}

// value skips one value: a string, an object or array (nested), or a
// scalar up to the next delimiter.
func (s *jsonScanner) value() bool {
	if s.i >= len(s.data) {
		return false
	}
	switch s.data[s.i] {
	case '"':
		return s.str()
	case '{', '[':
		depth := 0
		for s.i < len(s.data) {
			switch c := s.data[s.i]; c {
			case '"':
				if !s.str() {
					return false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.i++
					return true
				}
			case '\n':
				s.line++
				s.lineStart = s.i + 1
			}
			s.i++
		}
		return false
	}
	from := s.i
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return s.i > from
		}
		s.i++
	}
	return s.i > from
}

// yamlList finds the items of a block-style List as kubectl writes it
// (`kubectl get -o yaml`): a top-level "items:" key at column 0 followed
// by a block sequence, each item starting with "- " at the sequence's
// column. The items are returned with their "- " indicator, the rest of
// the document (the lines before and after the sequence) as skeleton.
// ok is false for anything the line scanner cannot follow with
// certainty: anchors and aliases (an item could use another's anchor),
// flow collections over several lines, tabs in indentation. Quoted
// scalars over several lines and block scalars are followed.
func yamlList(data []byte, line int) (items []span, seqFrom, seqTo int, ok bool) {
	var t lineTracker
	state := 0 // 0 before "items:", 1 in the sequence, 2 after it
	col := -1  // the sequence's column
	cur := -1  // index in items of the item being read
	lineNo := line
	for i := 0; i < len(data); {
		end := bytes.IndexByte(data[i:], '\n')
		next := len(data)
		if end >= 0 {
			next = i + end + 1
		}
		l := data[i:next]
		structural := !t.inside()
		ind, blank := indentation(l)
		if structural && !blank && t.inBlockScalar(ind) {
			structural = false
		}
		if structural && !blank && l[ind] != '#' {
			switch state {
			case 0:
				if ind == 0 && isItemsKey(l) {
					state = 1
					seqFrom = next
				}
			case 1:
				if ind > col && col >= 0 {
					break // inside the current item
				}
				switch {
				case isDash(l[ind:]) && (col < 0 || ind == col):
					if col < 0 {
						col = ind
					}
					if cur >= 0 {
						items[cur].to = i
					}
					items = append(items, span{from: i, line: lineNo, col: 1})
					cur = len(items) - 1
				case col < 0:
					return nil, 0, 0, false // "items:" with no block sequence
				default:
					items[cur].to = i
					cur = -1
					seqTo = i
					state = 2
				}
			}
		}
		if !t.scan(l, blank, ind) {
			return nil, 0, 0, false
		}
		lineNo++
		i = next
	}
	if t.inside() {
		return nil, 0, 0, false
	}
	if state == 1 {
		if cur < 0 {
			return nil, 0, 0, false
		}
		items[cur].to = len(data)
		seqTo = len(data)
	}
	if state == 0 || len(items) == 0 {
		return nil, 0, 0, false
	}
	return items, seqFrom, seqTo, true
}

func indentation(l []byte) (int, bool) {
	for i, c := range l {
		switch c {
		case ' ':
		case '\n', '\r':
			return i, true
		default:
			return i, false
		}
	}
	return len(l), true
}

func isItemsKey(l []byte) bool {
	rest, ok := bytes.CutPrefix(l, []byte("items:"))
	if !ok {
		return false
	}
	rest = bytes.TrimLeft(rest, " \t")
	return len(rest) == 0 || rest[0] == '\n' || rest[0] == '\r' || rest[0] == '#'
}

func isDash(l []byte) bool {
	return len(l) > 0 && l[0] == '-' && (len(l) == 1 || l[1] == ' ' || l[1] == '\n' || l[1] == '\r')
}

// lineTracker follows, line by line, whether a line starts inside a
// quoted scalar or a block scalar, so that only structural lines are
// taken for item boundaries.
type lineTracker struct {
	quote byte // the open quote of a scalar that goes on, or 0
	// block is the indentation a block scalar's lines must exceed, -1
	// when none is open.
	block   int
	started bool
}

func (t *lineTracker) inside() bool { return t.quote != 0 }

// inBlockScalar reports whether a non-blank line of indentation ind is
// part of an open block scalar, and closes it when not.
func (t *lineTracker) inBlockScalar(ind int) bool {
	if !t.started {
		t.started, t.block = true, -1
	}
	if t.block >= 0 && ind > t.block {
		return true
	}
	t.block = -1
	return false
}

// scan reads one line's tokens; false when the line holds something the
// tracker does not follow.
func (t *lineTracker) scan(l []byte, blank bool, ind int) bool {
	if !t.started {
		t.started, t.block = true, -1
	}
	if blank {
		return true
	}
	if t.quote == 0 && t.block >= 0 && ind > t.block {
		return true // a block scalar's line
	}
	i := 0
	if t.quote != 0 {
		if i = t.closeQuote(l, 0); i < 0 {
			return true // the scalar goes on
		}
	} else {
		i = ind
		if bytes.IndexByte(l[:ind], '\t') >= 0 {
			return false
		}
	}
	// node is the column of the node being written, for a block scalar's
	// indentation: a key's column, or a dash's.
	node := ind
	start := t.quote == 0 // at a token's start
	t.quote = 0
	for i < len(l) {
		c := l[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			i++
			continue
		case start && c == '#':
			return true
		case start && (c == '-' || c == '?') && (i+1 == len(l) || l[i+1] == ' ' || l[i+1] == '\n' || l[i+1] == '\r'):
			node = i
			i++
			continue
		case start && (c == '&' || c == '*'):
			return false
		case start && (c == '"' || c == '\''):
			t.quote = c
			if i = t.closeQuote(l, i+1); i < 0 {
				return true
			}
			t.quote = 0
			start = false
			continue
		case start && (c == '|' || c == '>'):
			t.block = node
			return true
		case start && (c == '[' || c == '{'):
			end, ok := flowEnd(l, i)
			if !ok {
				return false
			}
			i, start = end, false
			continue
		case start && c == '!':
			for i < len(l) && l[i] != ' ' && l[i] != '\n' {
				i++
			}
			continue
		case c == ':' && (i+1 == len(l) || l[i+1] == ' ' || l[i+1] == '\n' || l[i+1] == '\r'):
			i++
			start = true
			continue
		case !start && c == '#' && i > 0 && (l[i-1] == ' ' || l[i-1] == '\t'):
			return true
		}
		if start {
			node, start = i, false
			if c == '"' || c == '\'' {
				continue
			}
		}
		i++
	}
	return true
}

// closeQuote returns the offset just past the quote t.quote closes in l
// from i, or -1 when the scalar goes on to the next line.
func (t *lineTracker) closeQuote(l []byte, i int) int {
	for i < len(l) {
		c := l[i]
		switch {
		case t.quote == '"' && c == '\\':
			i += 2
			continue
		case c == t.quote && t.quote == '\'' && i+1 < len(l) && l[i+1] == '\'':
			i += 2
			continue
		case c == t.quote:
			return i + 1
		}
		i++
	}
	return -1
}

// flowEnd returns the offset past a flow collection that opens at i and
// closes on the same line.
func flowEnd(l []byte, i int) (int, bool) {
	depth := 0
	for i < len(l) {
		switch c := l[i]; c {
		case '[', '{':
			depth++
		case ']', '}':
			depth--
			if depth == 0 {
				return i + 1, true
			}
		case '"', '\'':
			t := lineTracker{quote: c}
			if i = t.closeQuote(l, i+1); i < 0 {
				return 0, false
			}
			continue
		case '&', '*':
			if i > 0 && (l[i-1] == ' ' || l[i-1] == '[' || l[i-1] == '{' || l[i-1] == ',') {
				return 0, false
			}
		case '#':
			if i > 0 && l[i-1] == ' ' {
				return 0, false
			}
		}
		i++
	}
	return 0, false
}
