package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/result"
)

// JSON writes the result as one JSON document (schema backfire/v1), the
// bytes json.Encoder would write for jsonDocument with a two-space indent.
// It streams: findings are encoded one at a time into a reused buffer, so
// a report of thousands of findings never exists whole in memory.
func JSON(w io.Writer, r *result.Result, opts JSONOptions) error {
	d := jsonDocument(r, opts)
	s := &jsonStream{w: bufio.NewWriterSize(w, 64<<10)}
	s.enc = json.NewEncoder(&s.buf)
	s.enc.SetEscapeHTML(false)

	s.raw("{\n")
	s.field("schema", d.Schema, false)
	if r.Spill != nil {
		streamSpill(s, r.Spill)
	} else {
		streamFindings(s, r.Findings)
	}
	streamArray(s, "errors", r.Errors, false)
	s.field("summary", d.Summary, len(d.Suppressed) == 0)
	if len(d.Suppressed) > 0 {
		streamArray(s, "suppressed", d.Suppressed, true)
	}
	s.raw("}\n")
	if s.err != nil {
		return s.err
	}
	return s.w.Flush()
}

// jsonStream writes a document's parts; the first error stops it.
type jsonStream struct {
	w   *bufio.Writer
	buf bytes.Buffer
	enc *json.Encoder
	err error
}

func (s *jsonStream) raw(text string) {
	if s.err == nil {
		_, s.err = s.w.WriteString(text)
	}
}

// value writes v indented as it would be at depth (in two-space units),
// without the encoder's trailing newline.
func (s *jsonStream) value(v any, depth int) {
	if s.err != nil {
		return
	}
	s.buf.Reset()
	s.enc.SetIndent(indent(depth), "  ")
	if s.err = s.enc.Encode(v); s.err != nil {
		return
	}
	_, s.err = s.w.Write(bytes.TrimSuffix(s.buf.Bytes(), []byte("\n")))
}

// field writes one member of the top-level object.
func (s *jsonStream) field(name string, v any, last bool) {
	s.raw("  " + quote(name) + ": ")
	s.value(v, 1)
	s.end(last)
}

func (s *jsonStream) end(last bool) {
	if last {
		s.raw("\n")
	} else {
		s.raw(",\n")
	}
}

// streamArray writes a top-level member that is a list, one item at a
// time; an empty or nil list is written as [] (the schema wants a list).
func streamArray[T any](s *jsonStream, name string, items []T, last bool) {
	s.raw("  " + quote(name) + ": ")
	if len(items) == 0 {
		s.raw("[]")
		s.end(last)
		return
	}
	s.raw("[\n")
	for i := range items {
		s.raw(indent(2))
		s.value(&items[i], 2)
		s.end(i == len(items)-1)
	}
	s.raw("  ]")
	s.end(last)
}

// streamFindings writes the findings list as streamArray would, with the
// spill's encoder: it writes the same bytes as the json.Encoder, faster.
func streamFindings(s *jsonStream, fs []finding.Finding) {
	s.raw("  " + quote("findings") + ": ")
	if len(fs) == 0 {
		s.raw("[]")
		s.end(false)
		return
	}
	s.raw("[\n")
	enc := result.NewFindingEncoder(&s.buf)
	for i := range fs {
		s.raw(indent(2))
		if s.err == nil {
			s.buf.Reset()
			if s.err = enc.Encode(&fs[i]); s.err == nil {
				_, s.err = s.w.Write(s.buf.Bytes())
			}
		}
		s.end(i == len(fs)-1)
	}
	s.raw("  ]")
	s.end(false)
}

// streamSpill writes the findings list from a spill, whose findings are
// already encoded as streamArray would write them.
func streamSpill(s *jsonStream, sp *result.Spill) {
	s.raw("  " + quote("findings") + ": ")
	if sp.Len() == 0 {
		s.raw("[]")
		s.end(false)
		return
	}
	s.raw("[\n")
	i := 0
	err := sp.Each(func(b []byte) error {
		s.raw(indent(2))
		if s.err == nil {
			_, s.err = s.w.Write(b)
		}
		i++
		s.end(i == sp.Len())
		return s.err
	})
	if s.err == nil {
		s.err = err
	}
	s.raw("  ]")
	s.end(false)
}

func indent(depth int) string {
	const spaces = "                "
	if 2*depth <= len(spaces) {
		return spaces[:2*depth]
	}
	return string(bytes.Repeat([]byte(" "), 2*depth))
}

func quote(name string) string {
	b, _ := json.Marshal(name)
	return string(b)
}
