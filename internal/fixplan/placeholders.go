package fixplan

import (
	"bytes"
	"errors"
	"io"
	"sort"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"backfire.dev/backfire/internal/yamledit"
)

// placeholderLines gives every placeholder the plan writes its line, and
// adds those the patch paths do not name: a placeholder that follows its
// field into a chart's values key or an overlay's patch file is found by
// its comment in the new contents (one a file already had is not new).
func (r *FixPlan) placeholderLines() {
	for _, f := range r.Files {
		had := map[string]int{}
		for _, p := range commentedPlaceholders(f.Old) {
			had[p.Field+"="+p.Value]++
		}
		for _, p := range commentedPlaceholders(f.New) {
			if k := p.Field + "=" + p.Value; had[k] > 0 {
				had[k]--
				continue
			}
			p.File = f.Path
			i := -1
			for j, q := range r.Placeholders {
				if q.File == f.Path && q.Line == 0 && (q.Field == p.Field || strings.HasSuffix(q.Field, "."+p.Field) || strings.HasSuffix(p.Field, "."+q.Field)) {
					i = j
					break
				}
			}
			if i >= 0 {
				r.Placeholders[i].Line = p.Line
				continue
			}
			r.Placeholders = append(r.Placeholders, p)
		}
	}
	sort.SliceStable(r.Placeholders, func(a, b int) bool {
		pa, pb := r.Placeholders[a], r.Placeholders[b]
		if pa.File != pb.File {
			return pa.File < pb.File
		}
		return pa.Line < pb.Line
	})
}

// commentedPlaceholders lists the scalars of a YAML stream that carry
// yamledit.PlaceholderComment, with their dotted path (a list item with a
// name is [name], else [index]) and line. A stream that does not parse
// (a template) has none.
func commentedPlaceholders(data []byte) []Placeholder {
	if !bytes.Contains(data, []byte(yamledit.PlaceholderComment)) {
		return nil
	}
	var out []Placeholder
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) || err != nil {
			return out
		}
		walkPlaceholders(&doc, "", &out)
	}
}

func walkPlaceholders(n *yaml.Node, path string, out *[]Placeholder) {
	join := func(seg string) string {
		if path == "" || strings.HasPrefix(seg, "[") {
			return path + seg
		}
		return path + "." + seg
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			walkPlaceholders(c, path, out)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := join(k.Value)
			if v.Kind == yaml.ScalarNode && strings.Contains(v.LineComment+k.LineComment, yamledit.PlaceholderComment) {
				*out = append(*out, Placeholder{Field: p, Value: v.Value, Line: v.Line})
				continue
			}
			walkPlaceholders(v, p, out)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			seg := "[" + strconv.Itoa(i) + "]"
			if c.Kind == yaml.MappingNode {
				for j := 0; j+1 < len(c.Content); j += 2 {
					if c.Content[j].Value == "name" && c.Content[j+1].Kind == yaml.ScalarNode {
						seg = "[" + c.Content[j+1].Value + "]"
					}
				}
			}
			walkPlaceholders(c, join(seg), out)
		}
	}
}
