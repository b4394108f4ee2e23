package fixplan

import (
	"backfire.dev/backfire/internal/lazyregexp"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/source"
)

// A field of a rendered object that no values key reaches is changed in
// the template: the reason names the template's line, found by reading
// the template's text for the field's keys, each nested under the one
// before (a `cpu:` line under `limits:` under `resources:`). Template
// actions are skipped; where an action prints the rest of the block, the
// deepest key written plainly is named, with the action's line.

var plainKey = lazyregexp.New(`^(\s*)(?:- )?([A-Za-z_][A-Za-z0-9_-]*):(.*)$`)

// templateLine says where the template of o writes the field at path (a
// field path as findings name it, list items named), or "".
func templateLine(o *object.Object, path string, maxSize int64) string {
	if o.Doc.Origin.Kind != load.ChartTemplate {
		return ""
	}
	data, err := source.ReadFile(o.Doc.File, maxSize)
	if err != nil {
		return ""
	}
	keys := fieldKeys(path)
	if len(keys) == 0 {
		return ""
	}
	best, bestDepth, action := writtenAt(strings.Split(string(data), "\n"), keys)
	if best < 0 {
		return ""
	}
	at := fmt.Sprintf("%s:%d", o.Doc.File, best+1)
	switch {
	case bestDepth == len(keys):
		return at + " writes " + strings.Join(keys, ".")
	case action >= 0:
		return fmt.Sprintf("%s writes %s, and a template action prints the rest of it (line %d)", at, strings.Join(keys[:bestDepth], "."), action+1)
	}
	return at + " writes " + strings.Join(keys[:bestDepth], ".")
}

// writtenAt finds where a template's lines write the field named by keys:
// the line of the deepest key written plainly (-1: none), how many of keys
// it is, and the first line of a template action where it stopped, or -1.
func writtenAt(lines []string, keys []string) (int, int, int) {
	best, bestDepth, action := -1, 0, -1
	for i, l := range lines {
		m := plainKey().FindStringSubmatch(l)
		if m == nil || m[2] != keys[0] || strings.Contains(l, "{{") && !strings.Contains(m[3], "{{") {
			continue
		}
		line, depth, act := descend(lines, i, keys[1:])
		if depth+1 > bestDepth {
			best, bestDepth, action = line, depth+1, act
		}
	}
	return best, bestDepth, action
}

// nearestRef is, of the values keys a template names, the one whose
// reference stands nearest the line that writes the block at path: the
// reference that renders it (`with .Values.resources` above `resources:`),
// or "" when the template does not write the block's key plainly.
func nearestRef(o *object.Object, path string, keys []string, maxSize int64) string {
	fk := fieldKeys(path)
	if len(fk) == 0 || len(keys) == 0 {
		return ""
	}
	data, err := source.ReadFile(o.Doc.File, maxSize)
	if err != nil {
		return ""
	}
	lines := strings.Split(string(data), "\n")
	at, depth, _ := writtenAt(lines, fk)
	if at < 0 || depth != len(fk) {
		return ""
	}
	best, bestDist := "", len(lines)
	for _, k := range keys {
		ref := regexp.MustCompile(`\.Values\.` + regexp.QuoteMeta(k) + `\b([^.]|$)`)
		for i, l := range lines {
			d := max(i-at, at-i)
			if d < bestDist && ref.MatchString(l) {
				best, bestDist = k, d
			}
		}
	}
	return best
}

// descend follows keys down the block under line i; it returns the line
// of the deepest key found, how many of keys it found, and the first
// line of a template action in the block where it stopped, or -1.
func descend(lines []string, i int, keys []string) (int, int, int) {
	ind := indentOfLine(lines[i])
	if len(keys) == 0 {
		return i, 0, -1
	}
	action := -1
	for j := i + 1; j < len(lines); j++ {
		t := strings.TrimSpace(lines[j])
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if strings.HasPrefix(t, "{{") {
			if action < 0 && !strings.HasPrefix(strings.TrimLeft(t, "{- "), "end") {
				action = j
			}
			continue
		}
		if indentOfLine(lines[j]) <= ind {
			break
		}
		if m := plainKey().FindStringSubmatch(lines[j]); m != nil && m[2] == keys[0] {
			line, depth, act := descend(lines, j, keys[1:])
			return line, depth + 1, act
		}
	}
	return i, 0, action
}

func indentOfLine(l string) int {
	return len(l) - len(strings.TrimLeft(l, " "))
}

// fieldKeys are the keys of a field below its container ("resources",
// "limits", "cpu"), or its last three keys outside a container.
func fieldKeys(path string) []string {
	path = strings.TrimSuffix(path, " (deleted)")
	segs := load.SplitPath(path)
	start := 0
	for i := 0; i+1 < len(segs); i++ {
		if containerListKeys[segs[i].Key] {
			start = i + 2
		}
	}
	if start == 0 && len(segs) > 3 {
		start = len(segs) - 3
	}
	var out []string
	for _, s := range segs[start:] {
		if !s.IsIndex {
			out = append(out, s.Key)
		}
	}
	return out
}

// templateLines says where the template writes the fields, as
// " (templates/x.yaml:88 writes resources.limits.cpu)", or "".
func templateLines(o *object.Object, fields []string, maxSize int64) string {
	if o == nil {
		return ""
	}
	if maxSize <= 0 {
		maxSize = source.DefaultMaxFileSize
	}
	var at []string
	for _, f := range fields {
		if l := templateLine(o, f, maxSize); l != "" && !slices.Contains(at, l) {
			at = append(at, l)
		}
	}
	if len(at) == 0 {
		return ""
	}
	return " (" + strings.Join(at, "; ") + ")"
}

// patchText is a composed patch as JSON.
func patchText(p map[string]any) string {
	b, _ := json.Marshal(p)
	return string(b)
}
