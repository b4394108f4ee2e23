package yamledit

import (
	"bytes"

	"backfire.dev/backfire/internal/load"
)

// editStreamWith edits the one document of the stream that holds pos.
//
// An edit parses, edits and verifies what it is given, and fix makes an
// edit per object, then proves each again: given the whole stream each
// time, fixing a file of many documents took time in the square of its
// length (a rendered file of 100 objects, 3.7 CPU s; one of 1,000 would
// take minutes). An edit changes only the document it is in, and anchors
// and aliases do not cross documents, so the document is edited alone:
// the lines before it are given as empty lines, so that every line number
// (pos, the nodes', the errors') is still the file's, and the bytes around
// it are kept as they are. Where the document cannot be cut out with
// certainty (a directive, which belongs to the document after it), or
// its edit alone fails or changes the padding, the whole stream is edited
// as before, and says why it fails.
func editStreamWith(data []byte, pos load.Position, patch map[string]any, o Options) ([]byte, error) {
	start, end, ok := documentAround(data, pos.Line)
	if !ok || (start == 0 && end == len(data)) {
		return editWhole(data, pos, patch, o)
	}
	before := bytes.Count(data[:start], []byte{'\n'})
	doc := make([]byte, before+end-start)
	for i := range before {
		doc[i] = '\n'
	}
	copy(doc[before:], data[start:end])
	alone := o
	var notes []string
	if o.Notes != nil {
		alone.Notes = &notes
	}
	out, err := editWhole(doc, pos, patch, alone)
	if err != nil || len(out) < before || bytes.Count(out[:before], []byte{'\n'}) != before ||
		bytes.HasSuffix(doc, []byte{'\n'}) != bytes.HasSuffix(out, []byte{'\n'}) {
		return editWhole(data, pos, patch, o)
	}
	if o.Notes != nil {
		*o.Notes = append(*o.Notes, notes...)
	}
	edited := make([]byte, 0, start+len(out)-before+len(data)-end)
	edited = append(edited, data[:start]...)
	edited = append(edited, out[before:]...)
	return append(edited, data[end:]...), nil
}

// documentAround returns the bytes [start, end) of the document that holds
// line (1-based): from its "---" line, or the line after the "..." that
// ended the one before, to the next document's marker. YAML forbids a
// marker at the start of a line inside any scalar, so a marker line is
// one whatever comes before it. ok is false for a stream with a directive
// (a line starting with "%"), which applies to the document after it.
func documentAround(data []byte, line int) (start, end int, ok bool) {
	end = len(data)
	for ln, off := 1, 0; off < len(data); ln++ {
		next := len(data)
		if i := bytes.IndexByte(data[off:], '\n'); i >= 0 {
			next = off + i + 1
		}
		text := data[off:next]
		switch {
		case len(text) > 0 && text[0] == '%':
			return 0, 0, false
		case marker(text, "---"):
			if ln > line {
				return start, off, true
			}
			start = off
		case marker(text, "..."):
			if ln >= line {
				return start, next, true
			}
			start = next
		}
		off = next
	}
	return start, end, true
}

// marker reports whether text, a line, is the document marker m: m alone,
// or followed by a space or a tab.
func marker(text []byte, m string) bool {
	if !bytes.HasPrefix(text, []byte(m)) {
		return false
	}
	if len(text) == len(m) {
		return true
	}
	switch text[len(m)] {
	case ' ', '\t', '\n', '\r':
		return true
	}
	return false
}
