package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/jsonenc"
	"backfire.dev/backfire/internal/object"
)

// FindingEncoder encodes findings exactly as the JSON report writes them in
// its findings list: the bytes of encoding/json's Encoder with HTML
// escaping off and SetIndent("    ", "  "), without the trailing newline.
// It writes the fields itself instead of going through reflection and a
// second indenting pass, which cost a large share of a big scan. Evidence
// values of other types than the plain ones rules use (BF401's bands, a
// struct, a type with its own MarshalJSON) still go through encoding/json
// and are indented into place afterwards.
type FindingEncoder struct {
	w    *bytes.Buffer
	buf  []byte
	keys []string
	// tmp and enc write the evidence values left to encoding/json.
	tmp bytes.Buffer
	enc *json.Encoder
	// patches holds the fixes' patches as written at a finding's depth:
	// findings repeat them (the 10k corpus's 6,447 fixes have 16
	// patches), and checking and indenting each again cost more than the
	// rest of the finding.
	patches      map[string][]byte
	patchesBytes int
	patchesDepth int // the depth the patches in patches start at
}

// patchMemoBytes bounds what patches holds; past it, it starts again.
const patchMemoBytes = 256 << 10

// NewFindingEncoder appends encoded findings to w.
func NewFindingEncoder(w *bytes.Buffer) *FindingEncoder {
	return &FindingEncoder{w: w}
}

// Encode appends f. On an error (a value encoding/json refuses too: a NaN,
// an invalid patch) nothing is appended.
func (e *FindingEncoder) Encode(f *finding.Finding) error {
	b, err := e.finding(e.buf[:0], f)
	if err != nil {
		return err
	}
	e.w.Write(b)
	e.buf = b
	return nil
}

// maxNesting is encoding/json's limit on nested objects and arrays, which
// its indenting pass enforces on the whole finding.
const maxNesting = 10000

// fastNesting is how deep evidence is written here; deeper values (or a
// map that holds itself) are left to encoding/json, which finds cycles.
const fastNesting = 64

// The lines of the findings list start at depth two of the report.
const spaces = "\n                                                                "

// newline starts a line at depth (the finding's own braces are at 0).
func newline(b []byte, depth int) []byte {
	n := 4 + 2*depth
	if n < len(spaces) {
		return append(b, spaces[:1+n]...)
	}
	b = append(b, spaces...)
	for n -= len(spaces) - 1; n > 0; n -= len(spaces) - 1 {
		b = append(b, spaces[1:1+min(n, len(spaces)-1)]...)
	}
	return b
}

// key starts a member of an object whose members are at depth.
func key(b []byte, depth int, name string, first bool) []byte {
	if !first {
		b = append(b, ',')
	}
	b = newline(b, depth)
	b = jsonenc.AppendString(b, name, false)
	return append(b, ':', ' ')
}

func (e *FindingEncoder) finding(b []byte, f *finding.Finding) ([]byte, error) {
	b = append(b, '{')
	b = key(b, 1, "rule", true)
	b = jsonenc.AppendString(b, f.Rule, false)
	b = key(b, 1, "slug", false)
	b = jsonenc.AppendString(b, f.Slug, false)
	// Severity's MarshalJSON is the quoted name.
	b = key(b, 1, "severity", false)
	b = jsonenc.AppendString(b, f.Severity.String(), false)
	b = key(b, 1, "object", false)
	b = ref(b, &f.Object, 1)
	if f.Container != "" {
		b = key(b, 1, "container", false)
		b = jsonenc.AppendString(b, f.Container, false)
	}
	b = key(b, 1, "file", false)
	b = jsonenc.AppendString(b, f.File, false)
	b = key(b, 1, "line", false)
	b = strconv.AppendInt(b, int64(f.Line), 10)
	b = key(b, 1, "column", false)
	b = strconv.AppendInt(b, int64(f.Column), 10)
	if f.Path != "" {
		b = key(b, 1, "path", false)
		b = jsonenc.AppendString(b, f.Path, false)
	}
	b = key(b, 1, "message", false)
	b = jsonenc.AppendString(b, f.Message, false)
	// No omitempty: a nil list is null.
	b = key(b, 1, "mechanism", false)
	b = stringList(b, f.Mechanism, 1)
	var err error
	if len(f.Evidence) > 0 {
		b = key(b, 1, "evidence", false)
		if b, err = e.object(b, f.Evidence, 1); err != nil {
			return b, err
		}
	}
	if len(f.Assumptions) > 0 {
		b = key(b, 1, "assumptions", false)
		b = stringList(b, f.Assumptions, 1)
	}
	if f.Fix != nil {
		b = key(b, 1, "fix", false)
		if b, err = e.fix(b, f.Fix, 1); err != nil {
			return b, err
		}
	}
	if f.Origin != "" {
		b = key(b, 1, "origin", false)
		b = jsonenc.AppendString(b, f.Origin, false)
	}
	if f.ValuesSource != "" {
		b = key(b, 1, "valuesSource", false)
		b = jsonenc.AppendString(b, f.ValuesSource, false)
	}
	if f.Fingerprint != "" {
		b = key(b, 1, "fingerprint", false)
		b = jsonenc.AppendString(b, f.Fingerprint, false)
	}
	b = newline(b, 0)
	return append(b, '}'), nil
}

// ref writes an object.Ref whose braces are at depth.
func ref(b []byte, r *object.Ref, depth int) []byte {
	b = append(b, '{')
	b = key(b, depth+1, "apiVersion", true)
	b = jsonenc.AppendString(b, r.APIVersion, false)
	b = key(b, depth+1, "kind", false)
	b = jsonenc.AppendString(b, r.Kind, false)
	if r.Namespace != "" {
		b = key(b, depth+1, "namespace", false)
		b = jsonenc.AppendString(b, r.Namespace, false)
	}
	b = key(b, depth+1, "name", false)
	b = jsonenc.AppendString(b, r.Name, false)
	b = newline(b, depth)
	return append(b, '}')
}

func (e *FindingEncoder) fix(b []byte, x *finding.Fix, depth int) ([]byte, error) {
	b = append(b, '{')
	b = key(b, depth+1, "description", true)
	b = jsonenc.AppendString(b, x.Description, false)
	b = key(b, depth+1, "type", false)
	b = jsonenc.AppendString(b, x.Type, false)
	if len(x.Patch) > 0 {
		b = key(b, depth+1, "patch", false)
		var err error
		if b, err = e.patch(b, x.Patch, depth+1); err != nil {
			return b, err
		}
	}
	if x.Target != nil {
		b = key(b, depth+1, "target", false)
		b = ref(b, x.Target, depth+1)
	}
	if len(x.Placeholders) > 0 {
		b = key(b, depth+1, "placeholders", false)
		b = stringList(b, x.Placeholders, depth+1)
	}
	b = newline(b, depth)
	return append(b, '}'), nil
}

// patch writes a fix's patch that starts at depth, as encoding/json
// writes a RawMessage: checked and compacted (indent drops the spaces).
func (e *FindingEncoder) patch(b []byte, patch []byte, depth int) ([]byte, error) {
	if depth == e.patchesDepth {
		if done, ok := e.patches[string(patch)]; ok {
			return append(b, done...), nil
		}
	}
	if !json.Valid(patch) {
		return b, errors.New("json: error calling MarshalJSON for type json.RawMessage: invalid JSON")
	}
	start := len(b)
	b, err := indent(b, patch, depth)
	if err != nil {
		return b, err
	}
	if e.patches == nil || depth != e.patchesDepth || e.patchesBytes+len(patch)+len(b)-start > patchMemoBytes {
		e.patches, e.patchesBytes, e.patchesDepth = make(map[string][]byte), 0, depth
	}
	e.patches[string(patch)] = slices.Clone(b[start:])
	e.patchesBytes += len(patch) + len(b) - start
	return b, nil
}

// stringList writes a list whose brackets are at depth.
func stringList(b []byte, list []string, depth int) []byte {
	if list == nil {
		return append(b, "null"...)
	}
	if len(list) == 0 {
		return append(b, '[', ']')
	}
	b = append(b, '[')
	for i, s := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = newline(b, depth+1)
		b = jsonenc.AppendString(b, s, false)
	}
	b = newline(b, depth)
	return append(b, ']')
}

// object writes a map, keys sorted as encoding/json sorts them.
func (e *FindingEncoder) object(b []byte, m map[string]any, depth int) ([]byte, error) {
	if m == nil {
		return append(b, "null"...), nil
	}
	if len(m) == 0 {
		return append(b, '{', '}'), nil
	}
	// The keys of nested maps go after these in e.keys.
	start := len(e.keys)
	for k := range m {
		e.keys = append(e.keys, k)
	}
	keys := e.keys[start:]
	slices.Sort(keys)
	b = append(b, '{')
	var err error
	for i, k := range keys {
		b = key(b, depth+1, k, i == 0)
		if b, err = e.value(b, m[k], depth+1); err != nil {
			break
		}
	}
	clear(e.keys[start:])
	e.keys = e.keys[:start]
	if err != nil {
		return b, err
	}
	b = newline(b, depth)
	return append(b, '}'), nil
}

// value writes an evidence value that starts at depth: the types evidence
// holds directly, anything else through encoding/json.
func (e *FindingEncoder) value(b []byte, v any, depth int) ([]byte, error) {
	if depth > fastNesting {
		return e.fallback(b, v, depth)
	}
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return jsonenc.AppendString(b, x, false), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int8:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int16:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int32:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case uint:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint8:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint16:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint32:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint64:
		return strconv.AppendUint(b, x, 10), nil
	case uintptr:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case float64:
		return jsonenc.AppendFloat(b, x, 64)
	case float32:
		return jsonenc.AppendFloat(b, float64(x), 32)
	case []string:
		return stringList(b, x, depth), nil
	case []any:
		if x == nil {
			return append(b, "null"...), nil
		}
		if len(x) == 0 {
			return append(b, '[', ']'), nil
		}
		b = append(b, '[')
		var err error
		for i, item := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = newline(b, depth+1)
			if b, err = e.value(b, item, depth+1); err != nil {
				return b, err
			}
		}
		b = newline(b, depth)
		return append(b, ']'), nil
	case map[string]any:
		return e.object(b, x, depth)
	}
	return e.fallback(b, v, depth)
}

// fallback writes v as encoding/json does (compact, HTML escaping off) and
// indents it into place.
func (e *FindingEncoder) fallback(b []byte, v any, depth int) ([]byte, error) {
	if e.enc == nil {
		e.enc = json.NewEncoder(&e.tmp)
		e.enc.SetEscapeHTML(false)
	}
	e.tmp.Reset()
	if err := e.enc.Encode(v); err != nil {
		return b, err
	}
	return indent(b, bytes.TrimSuffix(e.tmp.Bytes(), []byte("\n")), depth)
}

// indent appends valid JSON starting at depth as encoding/json's Indent
// would: spaces between tokens dropped, a line per member or item, empty
// objects and lists kept as {} and [], and the same limit on nesting.
func indent(b, src []byte, depth int) ([]byte, error) {
	for i := 0; i < len(src); i++ {
		switch c := src[i]; c {
		case '"':
			// A string is copied as it is, up to its closing quote.
			j := i + 1
			for src[j] != '"' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			b = append(b, src[i:j+1]...)
			i = j
		case '{', '[':
			if depth+1 > maxNesting {
				return b, errTooDeep
			}
			b = append(b, c)
			j := i + 1
			for j < len(src) && isSpace(src[j]) {
				j++
			}
			if j < len(src) && (src[j] == '}' || src[j] == ']') {
				b = append(b, src[j])
				i = j
				continue
			}
			depth++
			b = newline(b, depth)
		case '}', ']':
			depth--
			b = newline(b, depth)
			b = append(b, c)
		case ',':
			b = append(b, c)
			b = newline(b, depth)
		case ':':
			b = append(b, ':', ' ')
		case ' ', '\t', '\n', '\r':
			// between tokens: dropped, as encoding/json compacts
		default:
			b = append(b, c)
		}
	}
	return b, nil
}

var errTooDeep = errors.New("json: exceeded max depth")

// isSpace is what JSON allows between tokens.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
