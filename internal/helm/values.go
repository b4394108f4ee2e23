package helm

import (
	"fmt"
	"io"
	"os"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"helm.sh/helm/v3/pkg/strvals"
	sigsyaml "sigs.k8s.io/yaml"
)

// valuesLayer is one source of values: a values file (the chart's own
// values.yaml, a --values file) or one --set/--set-string expression. It
// remembers the line of every key so that a rendered value can be traced
// back to where it was set.
type valuesLayer struct {
	name   string // shown to users: a path, or "--set a.b=c"
	values map[string]any
	lines  map[string]int // dotted key -> line of the key; nil for --set
	keys   map[string]bool
	// expr is the --set or --set-string expression (asString), "" for files.
	expr     string
	asString bool
}

// file is the layer's values file, "" for --set.
func (l *valuesLayer) file() string {
	if l.lines == nil {
		return ""
	}
	return l.name
}

// readValuesFile reads a --values file the way helm does (sigs.k8s.io/yaml
// into a map), and again with positions for the key lines.
// At most max bytes are read: the file's values are rendered into every
// chart, and a values file is an input as any other (--max-file-size).
func readValuesFile(path string, max int64) (*valuesLayer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--values %s: %v", path, describeFileError(err))
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("--values %s: %v", path, describeFileError(err))
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("--values %s: larger than the %s a scan reads from one input (raise --max-file-size)", path, bytesize(max))
	}
	return parseValues(path, data)
}

func parseValues(name string, data []byte) (*valuesLayer, error) {
	l := &valuesLayer{name: name, values: map[string]any{}, lines: map[string]int{}, keys: map[string]bool{}}
	if err := sigsyaml.Unmarshal(data, &l.values); err != nil {
		return nil, fmt.Errorf("values file %s: %v", name, err)
	}
	if l.values == nil {
		l.values = map[string]any{}
	}
	var root yaml.Node
	if yaml.Unmarshal(data, &root) == nil && len(root.Content) > 0 {
		keyLines(root.Content[0], "", l.lines)
	}
	collectKeys(l.values, "", l.keys)
	return l, nil
}

// setLayer parses one --set or --set-string expression on its own, so that
// the keys it sets are known; values are merged in order later.
func setLayer(flag, expr string, asString bool) (*valuesLayer, error) {
	l := &valuesLayer{name: flag + " " + expr, values: map[string]any{}, keys: map[string]bool{}, expr: expr, asString: asString}
	var err error
	if asString {
		err = strvals.ParseIntoString(expr, l.values)
	} else {
		err = strvals.ParseInto(expr, l.values)
	}
	if err != nil {
		return nil, fmt.Errorf("%s %q: %v", flag, expr, err)
	}
	collectKeys(l.values, "", l.keys)
	return l, nil
}

// mergeMaps is helm's (pkg/cli/values): maps merge, anything else replaces.
// The package itself is not imported: it pulls in helm's network getters.
func mergeMaps(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if v, ok := v.(map[string]any); ok {
			if bv, ok := out[k]; ok {
				if bv, ok := bv.(map[string]any); ok {
					out[k] = mergeMaps(bv, v)
					continue
				}
			}
		}
		out[k] = v
	}
	return out
}

// keyLines records the line of every mapping key, by dotted path. Keys
// under lists are not addressable as .Values.a.b and are left out.
func keyLines(n *yaml.Node, prefix string, out map[string]int) {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		return
	}
	last := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		last[n.Content[i].Value] = i
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if last[k.Value] != i {
			// Helm reads values non-strictly: a repeated key's last
			// occurrence replaces the earlier ones, subtree and all.
			continue
		}
		key := k.Value
		if prefix != "" {
			key = prefix + "." + key
		}
		if _, seen := out[key]; !seen {
			out[key] = k.Line
		}
		keyLines(n.Content[i+1], key, out)
	}
}

func collectKeys(m map[string]any, prefix string, out map[string]bool) {
	for k, v := range m {
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		out[key] = true
		if sub, ok := v.(map[string]any); ok {
			collectKeys(sub, key, out)
		}
	}
}

// lookup walks a dotted key through nested maps.
func lookup(m map[string]any, key string) (any, bool) {
	var cur any = m
	for _, part := range strings.Split(key, ".") {
		mm, ok := cur.(map[string]any)
		if !ok {
			// chartutil.Values is a named map type.
			if vm, ok2 := cur.(interface{ AsMap() map[string]any }); ok2 {
				mm, ok = vm.AsMap(), true
			}
		}
		if !ok {
			return nil, false
		}
		cur, ok = mm[part]
		if !ok {
			return nil, false
		}
	}
	return cur, true
}

func describeFileError(err error) string {
	switch {
	case os.IsNotExist(err):
		return "no such file"
	case os.IsPermission(err):
		return "permission denied"
	}
	return err.Error()
}
