// Package jsonenc writes JSON as encoding/json writes it, without
// reflection, for what a scan writes most: the findings of the report and
// the spill (package result), and the fixes' patches (package fix). Tests
// hold both to encoding/json, on real findings and patches and fuzzed.
package jsonenc

import (
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"unicode/utf8"
)

const hex = "0123456789abcdef"

// AppendString appends s as encoding/json writes a string: quotes,
// backslashes and control characters escaped, invalid UTF-8 as U+FFFD,
// and U+2028 and U+2029 escaped for JavaScript. With html, <, > and & are
// escaped too, as json.Marshal does; without, they are written as an
// Encoder with SetEscapeHTML(false) writes them.
//
// Most of what a scan writes needs no escape at all, so the bytes are
// tested eight at a time and copied in runs; a byte at a time through a
// compound test was a large flat share of a big scan.
func AppendString(b []byte, s string, html bool) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; ; {
		i = safeRun(s, i, html)
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// safeRun returns the index of the first byte at or after i that is not
// written as it is (an escaped ASCII byte or the start of a multi-byte
// sequence), or len(s).
func safeRun(s string, i int, html bool) int {
	for ; i+8 <= len(s); i += 8 {
		w := s[i : i+8] // one bounds check, one load
		x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		m := x&highBits | below(x, 0x20) | equal(x, '"') | equal(x, '\\')
		if html {
			m |= equal(x, '<') | equal(x, '>') | equal(x, '&')
		}
		if m != 0 {
			// The lowest flag is exact: borrows only run upwards, past a
			// byte that is flagged rightly.
			return i + bits.TrailingZeros64(m)/8
		}
	}
	safe := &safeSet
	if html {
		safe = &htmlSafeSet
	}
	for i < len(s) && safe[s[i]] {
		i++
	}
	return i
}

const (
	lowBits  = 0x0101010101010101
	highBits = 0x8080808080808080
)

// below flags (in its high bit) a byte of x less than n, for n <= 0x80:
// the first such byte exactly, later ones maybe not.
func below(x uint64, n byte) uint64 { return (x - lowBits*uint64(n)) &^ x & highBits }

// equal flags a byte of x equal to c, the first exactly, as below does.
func equal(x uint64, c byte) uint64 { return below(x^(lowBits*uint64(c)), 1) }

// safeSet and htmlSafeSet hold the bytes written as they are, without and
// with HTML escaping: ASCII but for control characters, quote and
// backslash (and <, > and &).
var safeSet, htmlSafeSet = func() (plain, html [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		plain[c] = c != '"' && c != '\\'
		html[c] = plain[c] && c != '<' && c != '>' && c != '&'
	}
	return plain, html
}()

// AppendFloat appends f as encoding/json writes a float of bits bits: like %g, with the
// exponent cutoffs of ES6 and no padding of the exponent.
func AppendFloat(b []byte, f float64, bits int) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, fmt.Errorf("json: unsupported value: %s", strconv.FormatFloat(f, 'g', -1, bits))
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		// e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

// Marshal is json.Marshal (compact, map keys sorted, HTML escaped) for the
// values patches are made of: maps with string keys, lists, strings,
// numbers, booleans and nil. A value of any other type, at any depth,
// sends the whole value to encoding/json.
func Marshal(v any) ([]byte, error) {
	b, ok, err := appendValue(make([]byte, 0, 128), v, 0)
	if !ok {
		return json.Marshal(v)
	}
	return b, err
}

// Append is Marshal appending to b, for a writer that builds a document
// around values without a map for each level.
func Append(b []byte, v any) ([]byte, error) {
	out, ok, err := appendValue(b, v, 0)
	if !ok {
		enc, err := json.Marshal(v)
		return append(b, enc...), err
	}
	return out, err
}

// maxDepth is where Marshal leaves a value to encoding/json, which finds
// the cycles a map or a list can hold.
const maxDepth = 100

// appendValue appends v compact, false where v holds a type it leaves to
// encoding/json.
func appendValue(b []byte, v any, depth int) ([]byte, bool, error) {
	if depth > maxDepth {
		return b, false, nil
	}
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true, nil
	case string:
		return AppendString(b, x, true), true, nil
	case bool:
		return strconv.AppendBool(b, x), true, nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), true, nil
	case int32:
		return strconv.AppendInt(b, int64(x), 10), true, nil
	case int64:
		return strconv.AppendInt(b, x, 10), true, nil
	case float64:
		b, err := AppendFloat(b, x, 64)
		return b, true, err
	case []any:
		if x == nil {
			return append(b, "null"...), true, nil
		}
		b = append(b, '[')
		for i, item := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			var err error
			if b, ok, err = appendValue(b, item, depth+1); !ok || err != nil {
				return b, ok, err
			}
		}
		return append(b, ']'), true, nil
	case map[string]any:
		return appendMap(b, x, depth)
	case map[string]string:
		return appendMap(b, x, depth)
	}
	return b, false, nil
}

// appendMap appends a map as json.Marshal does: null when nil, keys sorted.
func appendMap[V any](b []byte, m map[string]V, depth int) ([]byte, bool, error) {
	if m == nil {
		return append(b, "null"...), true, nil
	}
	// The keys are sorted in place on the stack: patches' maps are small,
	// and a list made and grown for each cost more than writing them.
	var stack [16]string
	keys := stack[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendString(b, k, true)
		b = append(b, ':')
		var ok bool
		var err error
		if b, ok, err = appendValue(b, m[k], depth+1); !ok || err != nil {
			return b, ok, err
		}
	}
	return append(b, '}'), true, nil
}
