package yamledit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// A probe handler written literally in a Helm template is edited in the
// template's text. Only the safe case is handled: the handler block under
// the probe's key is plain YAML (no template action on any of its lines),
// its indentation is read from the template line, and exactly one such
// block in the file holds the handler the rendered object has. Anything
// else (a line with `{{`, a block built by a helper or toYaml) is refused
// with the reason, and the caller leaves the finding.

// ReplaceLiteralHandler replaces, in the text of a template, the literal
// block `oldKey:` under `probe:` whose value is old with `newKey: val`, at
// the same indentation. A template that already holds the new handler
// there, and not the old one, is returned unchanged: a second run changes
// nothing.
func ReplaceLiteralHandler(tmpl []byte, probe, oldKey string, old any, newKey string, val any) ([]byte, error) {
	lines := strings.SplitAfter(string(tmpl), "\n")
	blocks, templated := literalBlocks(lines, probe, oldKey, old)
	switch {
	case len(blocks) > 1:
		return nil, fmt.Errorf("%s.%s is written %d times in the template (lines %d and %d): not edited", probe, oldKey, len(blocks), blocks[0].from+1, blocks[1].from+1)
	case len(blocks) == 0 && templated > 0:
		return nil, fmt.Errorf("line %d: %s.%s is written with template actions: not edited", templated, probe, oldKey)
	case len(blocks) == 0:
		if done, _ := literalBlocks(lines, probe, newKey, val); len(done) == 1 {
			return tmpl, nil
		}
		return nil, fmt.Errorf("%s.%s is not written literally in the template (a helper or values build it): not edited", probe, oldKey)
	}
	b := blocks[0]
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(map[string]any{newKey: val}); err != nil {
		return nil, err
	}
	enc.Close()
	pad := strings.Repeat(" ", b.indent)
	eol := lineEnd(lines[b.from])
	if eol == "" {
		eol = "\n"
	}
	var nb strings.Builder
	for i, l := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
		if i > 0 {
			nb.WriteString(eol)
		}
		nb.WriteString(pad + l)
	}
	nb.WriteString(lineEnd(lines[b.to-1]))
	out := strings.Join(lines[:b.from], "") + nb.String() + strings.Join(lines[b.to:], "")
	return []byte(out), nil
}

type literalBlock struct {
	from, to int // lines [from, to), 0-based
	indent   int
}

// literalBlocks finds the blocks `key:` directly under `probe:` whose
// value is want. templated is the 1-based line of a candidate block that
// holds a template action, or 0.
func literalBlocks(lines []string, probe, key string, want any) (found []literalBlock, templated int) {
	wantJSON, err := json.Marshal(want)
	if err != nil {
		return nil, 0
	}
	var w any
	_ = json.Unmarshal(wantJSON, &w)
	for i, l := range lines {
		ind := indentOf(l)
		if strings.TrimSpace(l) != key+":" || ind < 0 {
			continue
		}
		if !under(lines, i, ind, probe) {
			continue
		}
		end := i + 1
		for end < len(lines) {
			t := strings.TrimSpace(lines[end])
			ni := indentOf(lines[end])
			if t == "" || ni > ind || (ni == ind && strings.HasPrefix(t, "- ")) {
				end++
				continue
			}
			break
		}
		for end > i+1 && strings.TrimSpace(lines[end-1]) == "" {
			end--
		}
		block := strings.Join(lines[i:end], "")
		if strings.Contains(block, "{{") || strings.Contains(block, "}}") {
			if templated == 0 {
				templated = i + 1
			}
			continue
		}
		var got map[string]any
		if yaml.Unmarshal([]byte(block), &got) != nil {
			continue
		}
		gj, err := json.Marshal(got[key])
		if err != nil {
			continue
		}
		var g any
		_ = json.Unmarshal(gj, &g)
		if reflect.DeepEqual(g, w) {
			found = append(found, literalBlock{from: i, to: end, indent: ind})
		}
	}
	return found, templated
}

// under reports whether the key at line i (indentation ind) sits directly
// in the mapping of `probe:`, itself a plain template line.
func under(lines []string, i, ind int, probe string) bool {
	for j := i - 1; j >= 0; j-- {
		t := strings.TrimSpace(lines[j])
		if t == "" || strings.HasPrefix(t, "{{") {
			continue // a control line ({{- if }}) prints nothing
		}
		ni := indentOf(lines[j])
		if ni >= ind {
			continue
		}
		return t == probe+":"
	}
	return false
}

// indentOf is the number of leading spaces of a line, -1 for a tab.
func indentOf(l string) int {
	n := len(l) - len(strings.TrimLeft(l, " "))
	if n < len(l) && l[n] == '\t' {
		return -1
	}
	return n
}

func lineEnd(l string) string {
	if strings.HasSuffix(l, "\r\n") {
		return "\r\n"
	}
	if strings.HasSuffix(l, "\n") {
		return "\n"
	}
	return ""
}
