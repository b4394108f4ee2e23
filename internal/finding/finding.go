// Package finding holds what a rule reports. Reporters only format these.
package finding

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"backfire.dev/backfire/internal/object"
)

// Severity orders how soon a finding's outage path is met.
type Severity int

const (
	// None is below every severity; --fail-on none never fails.
	None Severity = iota
	Info
	Warning
	Error
)

func (s Severity) String() string {
	switch s {
	case Info:
		return "info"
	case Warning:
		return "warning"
	case Error:
		return "error"
	}
	return "none"
}

// ParseSeverity reads "error", "warning", "info" or "none".
func ParseSeverity(s string) (Severity, error) {
	switch strings.ToLower(s) {
	case "error":
		return Error, nil
	case "warning", "warn":
		return Warning, nil
	case "info":
		return Info, nil
	case "none":
		return None, nil
	}
	return None, fmt.Errorf("unknown severity %q (want error, warning, info or none)", s)
}

func (s Severity) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

func (s *Severity) UnmarshalJSON(b []byte) error {
	var str string
	if err := json.Unmarshal(b, &str); err != nil {
		return err
	}
	v, err := ParseSeverity(str)
	*s = v
	return err
}

// Finding is one safeguard that will backfire, proven with the manifest's
// own numbers.
type Finding struct {
	Rule      string     `json:"rule"`
	Slug      string     `json:"slug"`
	Severity  Severity   `json:"severity"`
	Object    object.Ref `json:"object"`
	Container string     `json:"container,omitempty"`
	File      string     `json:"file"`
	Line      int        `json:"line"`
	Column    int        `json:"column"`
	Path      string     `json:"path,omitempty"`
	Message   string     `json:"message"`
	// Mechanism is the causal chain, a short line per step, with the
	// arithmetic filled in.
	Mechanism []string `json:"mechanism"`
	// Evidence holds the numbers the mechanism was computed from.
	Evidence map[string]any `json:"evidence,omitempty"`
	// Assumptions say what the rule assumed where an input was missing.
	Assumptions []string `json:"assumptions,omitempty"`
	Fix         *Fix     `json:"fix,omitempty"`
	// Origin says how the object was produced when not from a plain file
	// (a Helm template, a Kustomize overlay).
	Origin string `json:"origin,omitempty"`
	// ValuesSource names the values-file key that supplied the value at
	// Path and where it is set, for objects rendered from a Helm chart:
	// "values.yaml:1074 database.internal.livenessProbe.timeoutSeconds".
	ValuesSource string `json:"valuesSource,omitempty"`
	// Fingerprint identifies the finding across runs and across edits
	// that do not touch it (see ComputeFingerprint): --diff and SARIF's
	// partialFingerprints match findings by it.
	Fingerprint string `json:"fingerprint,omitempty"`
	// OutputLine says Line and Column are a position in generated output
	// (a template's rendered text), not in File as written; formats that
	// quote File's lines must not quote that one.
	OutputLine bool `json:"-"`
	// ValuesAt is where ValuesSource's key is written (file, line and the
	// key's column), when the values file could be read.
	ValuesAt *Place `json:"-"`
	// Stream is the stream the object's document was read from, as given:
	// the file, the chart template's rendered output, the overlay's build.
	// Two objects of one kind and name in two files are two objects: with
	// Identity it tells them apart where File may not (the base file two
	// overlays build from).
	Stream string `json:"-"`
}

// Key is what orders findings in a report: file, line, column, rule and
// container.
type Key struct {
	File         string
	Line, Column int
	Rule         string
	Container    string
}

// Key returns the finding's ordering key.
func (f *Finding) Key() Key {
	return Key{File: f.File, Line: f.Line, Column: f.Column, Rule: f.Rule, Container: f.Container}
}

// CompareKeys orders two keys as reports list findings.
func CompareKeys(a, b Key) int {
	return cmp.Or(
		cmp.Compare(a.File, b.File),
		cmp.Compare(a.Line, b.Line),
		cmp.Compare(a.Column, b.Column),
		cmp.Compare(a.Rule, b.Rule),
		cmp.Compare(a.Container, b.Container),
	)
}

// Place is a position in a file.
type Place struct {
	File         string
	Line, Column int
}

// Identity is what names a finding and not where it sits: the rule, the
// object's kind, namespace and name, the container and the field path.
// Lines, files and messages are left out, so adding a document above it,
// moving it to another file or a rule rewording its message keeps it; the
// API version is left out so that moving to a newer version of the same
// kind does too. It is the one definition of "the same finding": the
// fingerprint hashes it, the webhook compares an object's findings before
// and after an update by it, and fix compares its rescan by it (with the
// finding's Stream, since two files may hold objects of one name).
type Identity struct {
	Rule, Kind, Namespace, Name, Container, Path string
}

// Identity returns the finding's identity.
func (f *Finding) Identity() Identity {
	return Identity{Rule: f.Rule, Kind: f.Object.Kind, Namespace: f.Object.Namespace, Name: f.Object.Name, Container: f.Container, Path: f.Path}
}

// Fingerprint hashes the identity: --diff and SARIF's partialFingerprints
// match findings by it.
func (id Identity) Fingerprint() string {
	// The fields, each ended by a zero byte, hashed in one piece from a
	// buffer on the stack (a longer identity grows it onto the heap): a
	// hash.Hash, its sum and its hex were each an allocation per finding.
	var buf [256]byte
	b := buf[:0]
	for _, s := range [...]string{id.Rule, id.Kind, id.Namespace, id.Name, id.Container, id.Path} {
		b = append(b, s...)
		b = append(b, 0)
	}
	sum := sha256.Sum256(b)
	var text [32]byte
	hex.Encode(text[:], sum[:16])
	return string(text[:])
}

// Instance names the finding in one run: its fingerprint in the stream
// its object was read from. Two files that each define Deployment web
// give two findings of one fingerprint; their fixes are told apart by it.
func (f *Finding) Instance() string { return f.Fingerprint + "\x00" + f.Stream }

// ComputeFingerprint is the fingerprint of the finding's identity.
func (f *Finding) ComputeFingerprint() string { return f.Identity().Fingerprint() }

// Fix is a change that removes the finding.
type Fix struct {
	Description string `json:"description"`
	// Type is "strategic-merge-patch" (Patch applies to the object with
	// kubectl patch --type strategic) or "yaml" (a change to make by hand).
	Type  string          `json:"type"`
	Patch json.RawMessage `json:"patch,omitempty"`
	// Target is the object the patch applies to when it is not the
	// finding's object (the Deployment behind a Rollout's workloadRef).
	Target *object.Ref `json:"target,omitempty"`
	// Placeholders are the fields of Patch whose values the tool cannot
	// know (request sizes), as dotted paths with list items named by their
	// "name": "spec.template.spec.containers[db].resources.requests.cpu".
	// backfire fix marks them with a YAML comment.
	Placeholders []string `json:"placeholders,omitempty"`
	// Own is the rule's own patch when Patch was composed with the fixes
	// of other findings on the object (see fix.Agree); not in the output.
	Own json.RawMessage `json:"-"`
}

// Fix types.
const (
	StrategicMergePatch = "strategic-merge-patch"
	ManualChange        = "yaml"
)
