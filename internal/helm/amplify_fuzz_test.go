package helm

import "testing"

// FuzzAmplification: reading any template's calls never panics (the
// render recovers, but a panic would refuse a chart Helm renders).
func FuzzAmplification(f *testing.F) {
	for _, s := range []string{
		`{{ repeat 3 "x" }}`, `{{ seq }}`, `{{ range until (int .Values.n) }}{{ range 4 }}x{{ end }}{{ end }}`,
		`{{ .Values.pad | repeat 9 }}`, `{{ untilStep 0 10 0 }}`, `{{ define "a" }}{{ repeat $.Values.x.y }}{{ end }}`,
		`{{ with .Values }}{{ range .list }}{{ mul 1 2 . }}{{ end }}{{ end }}`,
	} {
		f.Add(s)
	}
	values := map[string]any{"n": 3, "pad": "ab", "x": map[string]any{"y": "1e9"}, "list": []any{1, 2}}
	f.Fuzz(func(t *testing.T, text string) {
		trees, err := parseTemplate("t", text)
		if err != nil {
			return
		}
		for _, tree := range trees {
			w := &amplifyWalk{tree: tree, values: values, maxBytes: 1 << 20}
			w.list(tree.Root, 1, tree.ParseName == tree.Name)
			if w.found != nil {
				_ = w.found.message()
			}
		}
	})
}
