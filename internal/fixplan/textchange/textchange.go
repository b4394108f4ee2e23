// Package textchange splits the files a fix plan changes into hunks and
// gives each fixed finding the hunks its object's fix wrote, as plain
// data a reporter can print (SARIF's fixes) without the fix pipeline.
package textchange

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/pmezard/go-difflib/difflib"

	"backfire.dev/backfire/internal/fixplan"
	"backfire.dev/backfire/internal/result"
)

// ByFinding maps each fixed finding of p (by finding.Instance) to the hunks
// inside the parts of the files its object's fix wrote (fixplan.Span).
// Findings whose hunks cannot be told apart from another object's (a hunk
// that crosses two documents) get none of those.
func ByFinding(p *fixplan.FixPlan) map[string][]result.TextChange {
	hunks := map[string][]hunk{}
	for _, f := range p.Files {
		hunks[f.Path] = hunksOf(f.Path, f.Old, f.New)
	}
	out := map[string][]result.TextChange{}
	for _, f := range p.Fixed {
		var tcs []result.TextChange
		for _, s := range p.Spans[f.Instance()] {
			for _, h := range hunks[s.File] {
				if h.inside(s) {
					tcs = append(tcs, h.change)
				}
			}
		}
		if len(tcs) > 0 {
			out[f.Instance()] = tcs
		}
	}
	return out
}

type hunk struct {
	// from and to are the old lines replaced (1-based, inclusive); an
	// insertion has to == from-1: it goes after line to.
	from, to int
	// newFrom and newTo are the new lines it writes (newTo < newFrom:
	// none).
	newFrom, newTo int
	change         result.TextChange
}

func (h hunk) inside(s fixplan.Span) bool {
	if s.From == 0 {
		if s.Wrote == nil {
			return true
		}
		for _, l := range s.Wrote {
			if l >= h.newFrom && l <= h.newTo {
				return true
			}
		}
		return false
	}
	last := s.To
	if last < 0 {
		last = int(^uint(0) >> 1)
	}
	if h.to < h.from { // an insertion after line h.to
		return (h.to >= s.From && h.to <= last) || (h.to == 0 && s.From == 1)
	}
	return h.from >= s.From && h.to <= last
}

// hunksOf is the line diff of old and new contents of file as text changes
// of old, without context; a file that did not exist (old nil) is one
// insertion of all of new at line 1.
func hunksOf(file string, old, new []byte) []hunk {
	if old == nil {
		return []hunk{{from: 1, to: 0, newFrom: 1, newTo: len(lines(new)), change: result.TextChange{File: file, StartLine: 1, EndLine: 1, EndColumn: 1, Text: string(new), NewFile: true}}}
	}
	a, b := lines(old), lines(new)
	var out []hunk
	for _, op := range difflib.NewMatcher(a, b).GetOpCodes() {
		if op.Tag == 'e' {
			continue
		}
		tc := result.TextChange{File: file, StartLine: op.I1 + 1, EndLine: op.I2 + 1, EndColumn: 1, Text: strings.Join(b[op.J1:op.J2], "")}
		if op.I2 == len(a) && op.I2 > op.I1 && !strings.HasSuffix(a[op.I2-1], "\n") {
			// The last line has no newline: the region ends at its end.
			tc.EndLine, tc.EndColumn = op.I2, len(utf16.Encode([]rune(a[op.I2-1])))+1
		}
		out = append(out, hunk{from: op.I1 + 1, to: op.I2, newFrom: op.J1 + 1, newTo: op.J2, change: tc})
	}
	return out
}

// lines splits data after each newline; the last line keeps its lack of
// one (difflib.SplitLines would add it, and lose that difference).
func lines(data []byte) []string {
	l := strings.SplitAfter(string(data), "\n")
	if n := len(l); n > 0 && l[n-1] == "" {
		return l[:n-1]
	}
	return l
}

// Apply makes the text changes of one file on its contents, as a SARIF
// consumer applies a fix's replacements: each region is resolved against
// the original text (lines 1-based, columns in UTF-16 code units), and
// the regions must not overlap.
func Apply(old []byte, tcs []result.TextChange) ([]byte, error) {
	type edit struct {
		from, to int
		text     string
	}
	var edits []edit
	for _, tc := range tcs {
		from, err := offset(old, tc.StartLine, 1)
		if err != nil {
			return nil, err
		}
		to, err := offset(old, tc.EndLine, tc.EndColumn)
		if err != nil {
			return nil, err
		}
		if to < from {
			return nil, fmt.Errorf("region %d:1-%d:%d ends before it starts", tc.StartLine, tc.EndLine, tc.EndColumn)
		}
		edits = append(edits, edit{from, to, tc.Text})
	}
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].from < edits[j].from })
	var b bytes.Buffer
	at := 0
	for _, e := range edits {
		if e.from < at {
			return nil, fmt.Errorf("overlapping regions at byte %d", e.from)
		}
		b.Write(old[at:e.from])
		b.WriteString(e.text)
		at = e.to
	}
	b.Write(old[at:])
	return b.Bytes(), nil
}

// offset is the byte offset of line:col in data; line may be one past the
// last line when data ends with a newline (column 1 only).
func offset(data []byte, line, col int) (int, error) {
	if line < 1 || col < 1 {
		return 0, fmt.Errorf("position %d:%d: lines and columns start at 1", line, col)
	}
	off := 0
	for l := 1; l < line; l++ {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			return 0, fmt.Errorf("line %d: the text has %d lines", line, l)
		}
		off += i + 1
	}
	end := len(data)
	if i := bytes.IndexByte(data[off:], '\n'); i >= 0 {
		end = off + i
	}
	units := 0
	for _, r := range string(data[off:end]) {
		if units >= col-1 {
			break
		}
		units += utf16.RuneLen(r)
		off += utf8.RuneLen(r)
	}
	if units != col-1 {
		return 0, fmt.Errorf("column %d is past the end of line %d", col, line)
	}
	return off, nil
}
