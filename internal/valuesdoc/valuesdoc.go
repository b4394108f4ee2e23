// Package valuesdoc reads what a chart's values.yaml says about a key in
// its comments: the range of values it documents beside the key (Harbor's
// "# The timeout used in livenessProbe; 1 to 5 seconds" above
// livenessProbe.timeoutSeconds). A default at the documented lower bound
// was never chosen for a workload (seed 003 §07), and a fix written to the
// key stays inside the range.
package valuesdoc

import (
	"backfire.dev/backfire/internal/lazyregexp"
	"strconv"
	"strings"
)

// Range is a range of values a comment documents for a key.
type Range struct {
	Low, High float64
	// Line is the line of the comment (1-based), Text the comment.
	Line int
	Text string
}

// rangeText matches "1 to 5", "1-5", "1 – 5", "between 1 and 5", and the
// unit after it.
var rangeText = lazyregexp.New(`(?i)(?:between\s+)?\b(\d+(?:\.\d+)?)\s*(?:to|-|–|and)\s*(\d+(?:\.\d+)?)\b\s*([a-z]*)`)

// otherUnits are units a key counted in seconds or in a number of times
// is not written in: a range in them is not the key's.
var otherUnits = map[string]bool{"ms": true, "millisecond": true, "milliseconds": true, "m": true, "min": true, "mins": true, "minute": true, "minutes": true, "h": true, "hour": true, "hours": true, "d": true, "day": true, "days": true, "mi": true, "gi": true, "mb": true, "gb": true}

// Find returns the range documented for the dotted key whose last segment
// is written on line (1-based) of lines: in the comments directly above
// the key or after it on its line, or above its parent's line when the
// comment names the key (its first word, "timeout" for timeoutSeconds)
// or the parent holds only this key.
func Find(lines []string, line int, key string) (Range, bool) {
	if line < 1 || line > len(lines) {
		return Range{}, false
	}
	leaf := key[strings.LastIndexByte(key, '.')+1:]
	if r, ok := inComments(lines, line, ""); ok {
		return r, true
	}
	// The parent: the nearest line above with less indentation.
	ind := indent(lines[line-1])
	for p := line - 1; p >= 1; p-- {
		t := strings.TrimSpace(lines[p-1])
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if indent(lines[p-1]) >= ind {
			continue
		}
		return inComments(lines, p, stem(leaf))
	}
	return Range{}, false
}

// inComments looks for a range in the comment lines right above line and
// in its line comment; with word set, the comment must name it.
func inComments(lines []string, line int, word string) (Range, bool) {
	try := func(n int, text string) (Range, bool) {
		if word != "" && !strings.Contains(strings.ToLower(text), word) {
			return Range{}, false
		}
		m := rangeText().FindStringSubmatch(text)
		if m == nil {
			return Range{}, false
		}
		lo, err1 := strconv.ParseFloat(m[1], 64)
		hi, err2 := strconv.ParseFloat(m[2], 64)
		if err1 != nil || err2 != nil || lo >= hi || otherUnits[strings.ToLower(m[3])] {
			return Range{}, false
		}
		return Range{Low: lo, High: hi, Line: n, Text: strings.TrimSpace(text)}, true
	}
	if i := strings.Index(lines[line-1], " #"); i >= 0 {
		if r, ok := try(line, strings.TrimSpace(lines[line-1][i+2:])); ok {
			return r, true
		}
	}
	for n := line - 1; n >= 1; n-- {
		t := strings.TrimSpace(lines[n-1])
		if !strings.HasPrefix(t, "#") {
			break
		}
		if r, ok := try(n, strings.TrimSpace(strings.TrimLeft(t, "#"))); ok {
			return r, true
		}
	}
	return Range{}, false
}

// stem is the first word of a camelCase key: "timeout" of timeoutSeconds.
func stem(key string) string {
	for i, r := range key {
		if i > 0 && r >= 'A' && r <= 'Z' {
			return strings.ToLower(key[:i])
		}
	}
	return strings.ToLower(key)
}

func indent(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }
