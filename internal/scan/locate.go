package scan

import (
	"os"
	"regexp"
	"strconv"
	"strings"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/rules"
)

// locate gives a reported finding the place a user edits to change it: the
// field's line and column in its document, and for a rendered or built
// document the template, patch or values file it was written in, where
// that can be told. It runs after the rules, once per finding, so a chart
// is rendered a second time (for values provenance) only here.
func locate(r rules.Reported, files sourceLines) finding.Finding {
	f := r.Finding
	doc := r.At
	f.File = doc.File
	f.Origin = doc.Origin
	pos, _ := doc.Locate(f.Path)
	f.Line, f.Column = pos.Line, pos.Column
	if doc.Trace != nil {
		tr := doc.Trace(doc, f.Path, pos)
		if tr.File != "" {
			f.File, f.Line, f.Column = tr.File, tr.Line, tr.Column
		} else {
			f.OutputLine = true
		}
		f.ValuesSource = tr.Values
		f.ValuesAt = files.valuesAt(tr.Values)
	}
	f.Fingerprint = f.ComputeFingerprint()
	return f
}

// valuesSource reads "values.yaml:1074 database.internal.livenessProbe.timeoutSeconds"
// (or "... livenessProbe (5 keys)").
var valuesSource = regexp.MustCompile(`^(\S+):([0-9]+) ([^ ;]+)`)

// sourceLines reads each values file once for the columns of its keys.
type sourceLines map[string][]string

// valuesAt finds the column of the values key on its line: the provenance
// gives the line; the key's last segment is written on it.
func (s sourceLines) valuesAt(src string) *finding.Place {
	m := valuesSource.FindStringSubmatch(src)
	if m == nil {
		return nil
	}
	line, err := strconv.Atoi(m[2])
	if err != nil || line < 1 {
		return nil
	}
	at := &finding.Place{File: m[1], Line: line, Column: 1}
	lines, ok := s[m[1]]
	if !ok {
		if data, err := os.ReadFile(m[1]); err == nil {
			lines = strings.Split(string(data), "\n")
		}
		s[m[1]] = lines
	}
	key := m[3][strings.LastIndexByte(m[3], '.')+1:]
	if line <= len(lines) {
		text := lines[line-1]
		i := strings.Index(text, key+":")
		if i < 0 {
			i = strings.Index(text, key)
		}
		if i >= 0 {
			at.Column = i + 1
		}
	}
	return at
}
