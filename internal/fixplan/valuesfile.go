package fixplan

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/source"
	"backfire.dev/backfire/internal/yamledit"
)

// The values files a chart's fixes write: in place, or --values-out.

// file renders the values file: the existing one edited in place, or a
// new one.
func (v *valuesPlan) file(path string, old []byte) (*File, error) {
	patch := nest(v.set)
	f := &File{Path: path, Old: old}
	if old != nil {
		pos, err := rootPosition(old)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		// The file overrides the chart: a deletion is written as null.
		n, err := yamledit.EditWith(old, pos, patch, yamledit.Options{Placeholders: v.placeholders, Comments: v.comments, KeepNulls: true, Notes: &f.Notes, Values: true})
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		f.New = n
	} else {
		var n yaml.Node
		if err := n.Encode(patch); err != nil {
			return nil, err
		}
		comment(&n, "", v.placeholders, v.comments)
		var b bytes.Buffer
		b.WriteString("# Values written by backfire fix: pass this file last with --values.\n")
		enc := yaml.NewEncoder(&b)
		enc.SetIndent(2)
		if err := enc.Encode(&n); err != nil {
			return nil, err
		}
		enc.Close()
		f.New = b.Bytes()
	}
	for i := range v.changes {
		v.changes[i].file = path
		for _, r := range v.changes[i].rules {
			if !slices.Contains(f.Rules, r) {
				f.Rules = append(f.Rules, r)
			}
		}
	}
	return f, nil
}

func rootPosition(data []byte) (load.Position, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return load.Position{}, err
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return load.Position{}, fmt.Errorf("not a mapping of values")
	}
	return load.Position{Line: doc.Content[0].Line, Column: doc.Content[0].Column}, nil
}

// comment marks the placeholder keys of a new values file.
func comment(n *yaml.Node, path string, placeholders []string, comments map[string]string) {
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		p := join(path, n.Content[i].Value)
		switch {
		case slices.Contains(placeholders, p):
			n.Content[i+1].LineComment = yamledit.PlaceholderComment
		case comments[p] != "" && n.Content[i+1].Kind == yaml.MappingNode:
			n.Content[i].LineComment = "# " + comments[p]
		case comments[p] != "":
			n.Content[i+1].LineComment = "# " + comments[p]
		}
		comment(n.Content[i+1], p, placeholders, comments)
	}
}

// inSubchart reports whether a values file is a subchart's: under a
// charts/ folder of a chart fix renders. Only the part of the path below
// that chart counts: a chart kept at charts/<name>, as many repositories
// keep theirs, is not a subchart.
func (v *valuesPlan) inSubchart(path string) bool {
	for dir := range v.trials {
		rel, err := filepath.Rel(dir, path)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		if slices.Contains(strings.Split(filepath.ToSlash(filepath.Dir(rel)), "/"), "charts") {
			return true
		}
	}
	return false
}

// inPlace edits the values files that set the keys: the chart's
// values.yaml, or a --values file, each in place.
func (v *valuesPlan) inPlace(maxSize int64) ([]*File, error) {
	byFile := map[string]map[string]any{}
	for k, val := range v.set {
		f := v.fileOf[k]
		if byFile[f] == nil {
			byFile[f] = map[string]any{}
		}
		byFile[f][k] = val
	}
	var out []*File
	for _, path := range sortedKeys(byFile) {
		// A subchart's values file holds its keys without the prefix the
		// trace names them by: not written (the finding stays, reported).
		if path == "" || v.inSubchart(path) {
			continue
		}
		data, err := source.ReadFile(path, maxSize)
		if err != nil {
			return nil, err
		}
		pos, err := rootPosition(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		var ph []string
		for _, p := range v.placeholders {
			// The placeholder's key, or the key above it written whole.
			for k := p; k != ""; k = parentKey(k) {
				if f, ok := v.fileOf[k]; ok {
					if f == path {
						ph = append(ph, p)
					}
					break
				}
			}
		}
		// Keys are set, and deleted where the file alone sets them; a
		// chart default the file does not set is overridden with null.
		set, nulls := map[string]any{}, map[string]any{}
		for k, val := range byFile[path] {
			if val == nil && v.nulls[k] {
				nulls[k] = nil
			} else {
				set[k] = val
			}
		}
		var notes []string
		n, err := yamledit.EditWith(data, pos, nest(set), yamledit.Options{Placeholders: ph, Comments: v.comments, Notes: &notes, Values: true})
		if err == nil && len(nulls) > 0 {
			n, err = yamledit.EditWith(n, pos, nest(nulls), yamledit.Options{Comments: v.comments, KeepNulls: true, Notes: &notes, Values: true})
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		f := &File{Path: path, Old: data, New: n, Notes: notes}
		for _, c := range v.changes {
			for k := range c.values {
				if v.fileOf[k] == path {
					for _, r := range c.rules {
						if !slices.Contains(f.Rules, r) {
							f.Rules = append(f.Rules, r)
						}
					}
				}
			}
		}
		out = append(out, f)
	}
	return out, nil
}
