// Package baseline reads and writes a baseline file: the findings a team
// has accepted when it adopts backfire on a repository that already has
// some, so that CI fails only on new ones. A finding is named by its
// fingerprint (finding.Identity: rule, object kind, namespace and name,
// container, field path), the one --diff and SARIF's partialFingerprints
// use, so moving a document, reformatting a file or a rule rewording its
// message keeps it in the baseline. The other fields of an entry are for
// the people who review the file; only the fingerprint is matched.
package baseline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"backfire.dev/backfire/internal/finding"
)

// DefaultName is the name the docs suggest; a directory walk does not read
// a file of this name as a manifest.
const DefaultName = ".backfire-baseline.json"

// Schema names the file's format.
const Schema = "backfire/baseline/v1"

// File is a baseline.
type File struct {
	Schema   string  `json:"schema"`
	Findings []Entry `json:"findings"`
}

// Entry is one accepted finding.
type Entry struct {
	Fingerprint string `json:"fingerprint"`
	Rule        string `json:"rule"`
	Object      string `json:"object"`
	Container   string `json:"container,omitempty"`
	Path        string `json:"path,omitempty"`
}

// Of is the baseline of findings: one entry per fingerprint, sorted by
// rule, object, container and path, so that a file written again after
// unrelated changes does not change.
func Of(findings []finding.Finding) *File {
	seen := map[string]bool{}
	b := &File{Schema: Schema, Findings: []Entry{}}
	for _, f := range findings {
		if seen[f.Fingerprint] {
			continue
		}
		seen[f.Fingerprint] = true
		b.Findings = append(b.Findings, Entry{Fingerprint: f.Fingerprint, Rule: f.Rule, Object: f.Object.String(), Container: f.Container, Path: f.Path})
	}
	slices.SortFunc(b.Findings, func(x, y Entry) int {
		for _, c := range [][2]string{{x.Rule, y.Rule}, {x.Object, y.Object}, {x.Container, y.Container}, {x.Path, y.Path}, {x.Fingerprint, y.Fingerprint}} {
			if n := strings.Compare(c[0], c[1]); n != 0 {
				return n
			}
		}
		return 0
	})
	return b
}

// Fingerprints lists the accepted fingerprints.
func (b *File) Fingerprints() []string {
	out := make([]string, len(b.Findings))
	for i, e := range b.Findings {
		out[i] = e.Fingerprint
	}
	return out
}

// Stale counts the entries no finding of findings matches any more: fixed
// since the baseline was written, which writing it again drops.
func (b *File) Stale(findings []finding.Finding) int {
	now := map[string]bool{}
	for _, f := range findings {
		now[f.Fingerprint] = true
	}
	n := 0
	for _, e := range b.Findings {
		if !now[e.Fingerprint] {
			n++
		}
	}
	return n
}

// Write writes b to path, indented, one entry a few lines, for review.
func Write(path string, b *File) error {
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// Read reads a baseline; a malformed one is an error with its line.
func Read(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse reads a baseline from data; name is the file's name for errors.
func Parse(name string, data []byte) (*File, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var b File
	if err := dec.Decode(&b); err != nil {
		line := 1
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			line += bytes.Count(data[:se.Offset], []byte("\n"))
		case errors.As(err, &te):
			line += bytes.Count(data[:te.Offset], []byte("\n"))
		case err == io.EOF:
			return nil, fmt.Errorf("%s: empty: a baseline is written by --write-baseline", name)
		}
		return nil, fmt.Errorf("%s:%d: not a backfire baseline: %v", name, line, err)
	}
	if b.Schema != Schema {
		return nil, fmt.Errorf("%s: schema %q, want %q", name, b.Schema, Schema)
	}
	for i, e := range b.Findings {
		if len(e.Fingerprint) != 32 || strings.Trim(e.Fingerprint, "0123456789abcdef") != "" {
			return nil, fmt.Errorf("%s: findings[%d]: fingerprint %q is not 32 hex digits", name, i, e.Fingerprint)
		}
	}
	return &b, nil
}
