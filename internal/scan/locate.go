package scan

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/valuesdoc"
)

// locate gives a reported finding the place a user edits to change it: the
// field's line and column in its document, and for a rendered or built
// document the template, patch or values file it was written in, where
// that can be told. It runs after the rules, once per finding, so a chart
// is rendered a second time (for values provenance) only here.
func locate(r rules.Reported, files sourceLines, locs locators) finding.Finding {
	f := r.Finding
	doc := r.At
	f.File = doc.File
	f.Stream = doc.File
	f.Origin = doc.Origin.String()
	pos, _ := locs.of(doc).Locate(f.Path)
	f.Line, f.Column = pos.Line, pos.Column
	if doc.Trace != nil {
		tr := doc.Trace(doc, f.Path, pos)
		if tr.File != "" {
			f.File, f.Line, f.Column = tr.File, tr.Line, tr.Column
		} else {
			f.OutputLine = true
		}
		if tr.Values != nil {
			f.ValuesSource = tr.Values.Text
			if at, ok := tr.Values.At(); ok {
				f.ValuesAt = files.place(at)
			}
			if ref, ok := tr.Values.Key(); ok {
				if step := files.lowerBound(ref, doc, f.Path); step != "" {
					f.Mechanism = append(f.Mechanism, step)
				}
			}
		}
	}
	f.Fingerprint = f.ComputeFingerprint()
	return f
}

// locators keeps one load.Locator per document while the findings of an
// object are placed: an object's findings are about its containers, and
// each placed from the top would walk the containers before its own.
type locators map[*load.Document]*load.Locator

func (l locators) of(d *load.Document) *load.Locator {
	loc, ok := l[d]
	if !ok {
		loc = d.Locator()
		l[d] = loc
	}
	return loc
}

// sourceLines reads each values file once for the columns of its keys.
type sourceLines map[string][]string

// lines returns a values file's lines, read once.
func (s sourceLines) lines(file string) []string {
	lines, ok := s[file]
	if !ok {
		if data, err := os.ReadFile(file); err == nil {
			lines = strings.Split(string(data), "\n")
		}
		s[file] = lines
	}
	return lines
}

// lowerBound says, when the values file documents a range for the key
// that set the field and the field holds its lower bound, that the chart
// ships the least it allows (seed 003: Harbor's "1 to 5 seconds", shipped
// as 1): a default nobody chose for the workload.
func (s sourceLines) lowerBound(ref load.ValuesRef, doc *load.Document, path string) string {
	if ref.File == "" {
		return ""
	}
	r, ok := valuesdoc.Find(s.lines(ref.File), ref.Line, ref.Key)
	if !ok {
		return ""
	}
	var v any
	if json.Unmarshal(doc.JSON, &v) != nil {
		return ""
	}
	got, ok := load.ValueAt(v, load.SplitPath(path))
	if n, isNum := got.(float64); !ok || !isNum || n != r.Low {
		return ""
	}
	return fmt.Sprintf("%s:%d documents %s as %q and ships %g, its lower bound: the chart's default is the least it allows, not a value chosen for this workload.",
		ref.File, r.Line, ref.Key, r.Text, r.Low)
}

// place is where a values key is written: its line, and the column of
// its last segment on that line (1 when the file cannot be read). A key
// set with --set has no place.
func (s sourceLines) place(ref load.ValuesRef) *finding.Place {
	if ref.File == "" || ref.Line < 1 {
		return nil
	}
	at := &finding.Place{File: ref.File, Line: ref.Line, Column: 1}
	lines := s.lines(ref.File)
	key := ref.Key[strings.LastIndexByte(ref.Key, '.')+1:]
	if ref.Line <= len(lines) {
		text := lines[ref.Line-1]
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
