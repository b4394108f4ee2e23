package fix

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// DecodePatch decodes a patch as json.Unmarshal into a map[string]any
// does, with the same value and the same errors. Patches are small JSON
// objects our own encoder wrote, decoded once or twice per finding to
// compose fixes: they are read here directly, without encoding/json's
// reflection and its validating pass. Anything this reader does not take
// exactly as encoding/json would (an escape, invalid UTF-8, a syntax
// error, a top level that is not an object) is left to encoding/json.
func DecodePatch(b []byte) (map[string]any, error) {
	r := patchReader{b: b}
	r.space()
	if r.i < len(r.b) && r.b[r.i] == '{' {
		if m, ok := r.object(); ok {
			r.space()
			if r.i == len(r.b) {
				return m, nil
			}
		}
	}
	var m map[string]any
	err := json.Unmarshal(b, &m)
	return m, err
}

type patchReader struct {
	b []byte
	i int
}

func (r *patchReader) space() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

func (r *patchReader) value() (any, bool) {
	r.space()
	if r.i >= len(r.b) {
		return nil, false
	}
	switch c := r.b[r.i]; {
	case c == '{':
		m, ok := r.object()
		return m, ok
	case c == '[':
		return r.array()
	case c == '"':
		s, ok := r.str()
		return s, ok
	case c == 't':
		return true, r.literal("true")
	case c == 'f':
		return false, r.literal("false")
	case c == 'n':
		return nil, r.literal("null")
	default:
		return r.number()
	}
}

func (r *patchReader) literal(word string) bool {
	if len(r.b)-r.i < len(word) || string(r.b[r.i:r.i+len(word)]) != word {
		return false
	}
	r.i += len(word)
	return true
}

// object reads {...} at r.i into a new map; a repeated key keeps its last
// value, as encoding/json does.
func (r *patchReader) object() (map[string]any, bool) {
	r.i++ // {
	m := map[string]any{}
	r.space()
	if r.i < len(r.b) && r.b[r.i] == '}' {
		r.i++
		return m, true
	}
	for {
		r.space()
		if r.i >= len(r.b) || r.b[r.i] != '"' {
			return nil, false
		}
		k, ok := r.key()
		if !ok {
			return nil, false
		}
		r.space()
		if r.i >= len(r.b) || r.b[r.i] != ':' {
			return nil, false
		}
		r.i++
		v, ok := r.value()
		if !ok {
			return nil, false
		}
		m[k] = v
		if more, ok := r.sep('}'); !ok {
			return nil, false
		} else if !more {
			return m, true
		}
	}
}

func (r *patchReader) array() ([]any, bool) {
	r.i++ // [
	out := []any{}
	r.space()
	if r.i < len(r.b) && r.b[r.i] == ']' {
		r.i++
		return out, true
	}
	for {
		v, ok := r.value()
		if !ok {
			return nil, false
		}
		out = append(out, v)
		if more, ok := r.sep(']'); !ok {
			return nil, false
		} else if !more {
			return out, true
		}
	}
}

// sep reads what follows a member or an element: a comma (more follow)
// or the closing byte.
func (r *patchReader) sep(closing byte) (more, ok bool) {
	r.space()
	if r.i >= len(r.b) {
		return false, false
	}
	switch r.b[r.i] {
	case ',':
		r.i++
		return true, true
	case closing:
		r.i++
		return false, true
	}
	return false, false
}

// str reads a string without escapes or control characters, of valid
// UTF-8: what encoding/json would read byte for byte.
// key reads an object's key as str does, the keys the rules' patches use
// without a string of their own: each patch spells the same few.
func (r *patchReader) key() (string, bool) {
	start := r.i + 1
	for j := start; j < len(r.b) && j-start <= maxCommonKey; j++ {
		if r.b[j] == '"' {
			if k, ok := commonKeys[string(r.b[start:j])]; ok {
				r.i = j + 1
				return k, true
			}
			break
		}
	}
	return r.str()
}

// commonKeys are the keys of the rules' patches, down to a container's
// probes and resources.
var commonKeys = func() map[string]string {
	m := map[string]string{}
	for _, k := range []string{"spec", "template", "containers", "initContainers", "name",
		"livenessProbe", "readinessProbe", "startupProbe", "exec", "command", "httpGet",
		"tcpSocket", "grpc", "port", "path", "timeoutSeconds", "failureThreshold",
		"successThreshold", "periodSeconds", "initialDelaySeconds", "resources", "limits",
		"requests", "cpu", "memory"} {
		m[k] = k
	}
	return m
}()

// maxCommonKey is the length of the longest of commonKeys.
const maxCommonKey = len("initialDelaySeconds")

func (r *patchReader) str() (string, bool) {
	start := r.i + 1
	for j := start; j < len(r.b); j++ {
		switch c := r.b[j]; {
		case c == '"':
			s := r.b[start:j]
			if !utf8.Valid(s) {
				return "", false
			}
			r.i = j + 1
			return string(s), true
		case c == '\\' || c < 0x20:
			return "", false
		}
	}
	return "", false
}

// number reads a JSON number (-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?)
// as a float64, parsed as encoding/json parses it into an interface.
func (r *patchReader) number() (any, bool) {
	b, start, j := r.b, r.i, r.i
	digits := func() bool {
		k := j
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		return j > k
	}
	if j < len(b) && b[j] == '-' {
		j++
	}
	if j < len(b) && b[j] == '0' {
		j++
	} else if !digits() {
		return nil, false
	}
	if j < len(b) && b[j] == '.' {
		j++
		if !digits() {
			return nil, false
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if !digits() {
			return nil, false
		}
	}
	f, err := strconv.ParseFloat(string(b[start:j]), 64)
	if err != nil {
		return nil, false // out of range: encoding/json's error
	}
	r.i = j
	return f, true
}
