package load

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
)

// Document is one YAML document of a source, as compact JSON plus the
// position of every key and value in the source.
type Document struct {
	File  string // the name shown to users: a path, "<stdin>", or a chart template
	Index int    // position of the document in its stream (0-based)
	Line  int    // line where the document starts
	// Origin says how the document was produced; the zero Origin is a
	// plain file.
	Origin Origin
	// Trace, when set, follows a field of a generated document back to
	// where it was written. Plain files have none.
	Trace Tracer

	JSON  []byte
	marks []mark // sorted by offset

	APIVersion, Kind string
}

// Position is a place in a source file (1-based line and column).
type Position struct {
	Line, Column int
}

// PositionAt returns the source position of the JSON byte offset off (as
// reported by encoding/json errors), i.e. of the nearest key or value that
// starts at or before it.
func (d *Document) PositionAt(off int64) Position {
	i := sort.Search(len(d.marks), func(i int) bool { return int64(d.marks[i].off) > off }) - 1
	if i < 0 {
		return Position{Line: d.Line, Column: 1}
	}
	return Position{Line: int(d.marks[i].line), Column: int(d.marks[i].col)}
}

func (d *Document) positionOf(off int) (Position, bool) {
	i := sort.Search(len(d.marks), func(i int) bool { return int(d.marks[i].off) >= off })
	if i < len(d.marks) && int(d.marks[i].off) == off {
		return Position{Line: int(d.marks[i].line), Column: int(d.marks[i].col)}, true
	}
	return Position{}, false
}

// Locate returns the position of the field at path, written the way
// k8s.io/apimachinery's field.Path prints it
// ("spec.template.spec.containers[0].livenessProbe"). A field that is named
// by its key points at the key; a list item at the item. When the field is
// absent (a defaulted value), it returns the deepest ancestor that exists and
// exact=false.
func (d *Document) Locate(path string) (pos Position, exact bool) {
	return d.locate(path, nil)
}

// A Locator locates many paths in one document. It remembers where the
// items of each list it walked start, so that the findings of an object
// with thousands of containers are placed in time linear in the
// document: Locate alone walks each list from its start, past every item
// before the one it is asked for.
type Locator struct {
	doc   *Document
	items map[int][]int // a list's offset: the offsets of its items
}

// Locator returns a Locator of d.
func (d *Document) Locator() *Locator {
	return &Locator{doc: d, items: map[int][]int{}}
}

// Locate is Document.Locate.
func (l *Locator) Locate(path string) (pos Position, exact bool) {
	return l.doc.locate(path, l.items)
}

// Doc is the document l locates in.
func (l *Locator) Doc() *Document { return l.doc }

// locate is Locate, with the offsets of lists' items remembered in items
// when it is not nil.
//
// The place is that of the deepest segment found that has one: the
// segments' offsets are kept on the way down and looked up from the
// deepest, which has its place nearly always, instead of looking up
// each segment's on the way.
func (d *Document) locate(path string, items map[int][]int) (pos Position, exact bool) {
	var buf [16]int
	found := buf[:0] // the offsets of the segments found
	exact = true
	off := 0
	for s, i, more := nextSegment(path, 0); more; s, i, more = nextSegment(path, i) {
		var keyOff, valOff int
		var ok bool
		if s.IsIndex {
			if items != nil {
				valOff, ok = cachedElem(d.JSON, off, s.Index, items)
			} else {
				valOff, ok = arrayElem(d.JSON, off, s.Index)
			}
			keyOff = valOff
		} else {
			keyOff, valOff, ok = objectMember(d.JSON, off, s.Key)
		}
		if !ok {
			exact = false
			break
		}
		found = append(found, keyOff)
		off = valOff
	}
	for k := len(found) - 1; k >= 0; k-- {
		if p, ok := d.positionOf(found[k]); ok {
			return p, exact
		}
	}
	if p, ok := d.positionOf(0); ok {
		return p, exact
	}
	return Position{Line: d.Line, Column: 1}, exact
}

// Segment is one step of a field path: a key or a list index.
type Segment struct {
	Key     string
	Index   int
	IsIndex bool
}

// SplitPath parses a field.Path string: "a.b[2].c[some/key]".
func SplitPath(path string) []Segment {
	var segs []Segment
	for s, i, ok := nextSegment(path, 0); ok; s, i, ok = nextSegment(path, i) {
		if segs == nil {
			// Made once at its full size: a segment starts at most at
			// each dot and bracket, and grown from nothing the list was
			// copied a few times for every path.
			segs = make([]Segment, 0, 1+strings.Count(path, ".")+strings.Count(path, "["))
		}
		segs = append(segs, s)
	}
	return segs
}

// nextSegment parses the segment of path that starts at or after i and
// returns it with the offset just past it; ok is false when none is
// left. Walked this way a path needs no list: locate asks it of each of
// a scan's findings.
func nextSegment(path string, i int) (seg Segment, next int, ok bool) {
	for i < len(path) && path[i] == '.' {
		i++
	}
	if i >= len(path) {
		return Segment{}, i, false
	}
	if path[i] == '[' {
		j := strings.IndexByte(path[i:], ']')
		if j < 0 {
			return Segment{Key: path[i+1:]}, len(path), true
		}
		inner := path[i+1 : i+j]
		if mayBeInt(inner) {
			if n, err := strconv.Atoi(inner); err == nil {
				return Segment{Index: n, IsIndex: true}, i + j + 1, true
			}
		}
		return Segment{Key: inner}, i + j + 1, true
	}
	j := i
	for j < len(path) && path[j] != '.' && path[j] != '[' {
		j++
	}
	return Segment{Key: path[i:j]}, j, true
}

// mayBeInt is false for text strconv.Atoi certainly refuses (it must
// start with a sign or a digit): a list item named by its key, whose
// refusal would cost Atoi an error value.
func mayBeInt(s string) bool {
	return s != "" && (s[0] >= '0' && s[0] <= '9' || s[0] == '+' || s[0] == '-')
}

// The JSON walked here is the converter's own output: compact, valid, no
// whitespace. That keeps these scanners a few lines each.

func objectMember(b []byte, off int, key string) (keyOff, valOff int, ok bool) {
	if off >= len(b) || b[off] != '{' {
		return 0, 0, false
	}
	i := off + 1
	for i < len(b) && b[i] != '}' {
		kStart := i
		kEnd := skipValue(b, i)
		i = kEnd + 1 // ':'
		if keyEquals(b[kStart:kEnd], key) {
			return kStart, i, true // before skipping the value, which is the rest of the path
		}
		i = skipValue(b, i)
		if i < len(b) && b[i] == ',' {
			i++
		}
	}
	return 0, 0, false
}

func keyEquals(raw []byte, key string) bool {
	if len(raw) >= 2 && strings.IndexByte(string(raw), '\\') < 0 {
		return string(raw[1:len(raw)-1]) == key
	}
	var s string
	return json.Unmarshal(raw, &s) == nil && s == key
}

func arrayElem(b []byte, off, n int) (int, bool) {
	if off >= len(b) || b[off] != '[' {
		return 0, false
	}
	i := off + 1
	for k := 0; i < len(b) && b[i] != ']'; k++ {
		if k == n {
			return i, true
		}
		i = skipValue(b, i)
		if i < len(b) && b[i] == ',' {
			i++
		}
	}
	return 0, false
}

// cachedElem is arrayElem with the list's item offsets listed once, in
// items, on the first question about the list.
func cachedElem(b []byte, off, n int, items map[int][]int) (int, bool) {
	at, ok := items[off]
	if !ok {
		if off >= len(b) || b[off] != '[' {
			return 0, false
		}
		at = []int{}
		for i := off + 1; i < len(b) && b[i] != ']'; {
			at = append(at, i)
			i = skipValue(b, i)
			if i < len(b) && b[i] == ',' {
				i++
			}
		}
		items[off] = at
	}
	if n < 0 || n >= len(at) {
		return 0, false
	}
	return at[n], true
}

// skipValue returns the offset just past the JSON value starting at i.
func skipValue(b []byte, i int) int {
	end, _ := SkipValue(b, i)
	return end
}

// SkipValue returns the offset just past the JSON value that starts at
// b[i], and false when the text ends inside it. It finds the value's
// extent, not whether it is valid; a literal ends at a space too, so that
// text with spaces between tokens can be walked as well as the
// converter's compact output.
func SkipValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch b[i] {
	case '"':
		for i++; i < len(b); i++ {
			switch b[i] {
			case '\\':
				i++
			case '"':
				return i + 1, true
			}
		}
		return len(b), false
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '{', '[':
				depth++
				i++
			case '}', ']':
				depth--
				i++
				if depth == 0 {
					return i, true
				}
			case '"':
				end, ok := SkipValue(b, i)
				if !ok {
					return end, false
				}
				i = end
			default:
				i++
			}
		}
		return i, false
	default:
		start := i
		for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\n' && b[i] != '\t' && b[i] != '\r' {
			i++
		}
		return i, i > start
	}
}

// ValueAt follows path segments through a decoded JSON value (maps and
// slices as encoding/json makes them).
func ValueAt(v any, segs []Segment) (any, bool) {
	for _, s := range segs {
		switch x := v.(type) {
		case map[string]any:
			if s.IsIndex {
				return nil, false
			}
			var ok bool
			if v, ok = x[s.Key]; !ok {
				return nil, false
			}
		case []any:
			if !s.IsIndex || s.Index < 0 || s.Index >= len(x) {
				return nil, false
			}
			v = x[s.Index]
		default:
			return nil, false
		}
	}
	return v, true
}
