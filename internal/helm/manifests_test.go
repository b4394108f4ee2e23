package helm

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
)

// helmSplit is releaseutil.SplitManifests in its documented order.
func helmSplit(out string) []string {
	m := releaseutil.SplitManifests(out)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Sort(releaseutil.BySplitManifestsOrder(keys))
	docs := make([]string, len(keys))
	for i, k := range keys {
		docs[i] = m[k]
	}
	return docs
}

func checkSplit(t *testing.T, name, out string) {
	t.Helper()
	want := helmSplit(out)
	got := splitManifests(out)
	if len(got) != len(want) {
		t.Fatalf("%s: %d documents, helm splits %d", name, len(got), len(want))
	}
	lines := strings.Split(out, "\n")
	for i, d := range got {
		if d.text != want[i] {
			t.Errorf("%s: document %d is\n%q\nhelm prints\n%q", name, i, d.text, want[i])
		}
		// The document's first line is where it says it starts.
		first, _, _ := strings.Cut(d.text, "\n")
		// (A one-line document is trimmed at its end too.)
		first = strings.TrimRightFunc(first, unicode.IsSpace)
		if d.line < 1 || d.line > len(lines) || !strings.HasSuffix(strings.TrimRightFunc(lines[d.line-1], unicode.IsSpace), first) {
			t.Errorf("%s: document %d starts at line %d, which is not %q", name, i, d.line, first)
		}
	}
}

func TestSplitManifestsIsHelms(t *testing.T) {
	for name, out := range map[string]string{
		"leading blank lines":     "\n\n\napiVersion: v1\nkind: ConfigMap\n",
		"leading marker":          "---\napiVersion: v1\nkind: A\n---\napiVersion: v1\nkind: B\n",
		"blank lines around docs": "\n  \n---\n\n\napiVersion: v1\nkind: A\n\n---\n\n# a comment\napiVersion: v1\nkind: B\n\n\n",
		"empty documents":         "---\n---\n\n---\napiVersion: v1\nkind: A\n---\n",
		"marker with a comment":   "apiVersion: v1\nkind: A\n--- # next\napiVersion: v1\nkind: B\n",
		"indented first line":     "\n\n  apiVersion: v1\n  kind: A\n",
		"only whitespace":         "\n \n\t\n",
		"windows line ends":       "\r\n\r\napiVersion: v1\r\nkind: A\r\n---\r\napiVersion: v1\r\nkind: B\r\n",
	} {
		checkSplit(t, name, out)
	}
}

// Every template of the Harbor chart splits as Helm splits it.
func TestSplitManifestsOnHarbor(t *testing.T) {
	chart := filepath.Join("..", "..", "testdata", "corpus", "harbor-helm")
	if _, err := os.Stat(chart); err != nil {
		t.Fatal(err)
	}
	ch, err := loader.Load(chart)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := chartutil.ToRenderValues(ch, map[string]any{}, chartutil.ReleaseOptions{Name: "r", Namespace: "default", IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	rendered, err := engine.Engine{}.Render(ch, vals)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for name, out := range rendered {
		if strings.TrimSpace(out) != "" {
			checkSplit(t, name, out)
			n++
		}
	}
	if n < 20 {
		t.Errorf("only %d templates rendered", n)
	}
}

// BenchmarkSplitManifests splits every rendered template of the Harbor
// chart the way helm template prints them.
//
//	go test ./internal/helm -run '^$' -bench SplitManifests -benchmem
func BenchmarkSplitManifests(b *testing.B) {
	ch, err := loader.Load(filepath.Join("..", "..", "testdata", "corpus", "harbor-helm"))
	if err != nil {
		b.Fatal(err)
	}
	vals, err := chartutil.ToRenderValues(ch, map[string]any{}, chartutil.ReleaseOptions{Name: "r", Namespace: "default", IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		b.Fatal(err)
	}
	rendered, err := engine.Engine{}.Render(ch, vals)
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	for _, out := range rendered {
		n += int64(len(out))
	}
	b.SetBytes(n)
	b.ReportAllocs()
	for b.Loop() {
		for _, out := range rendered {
			splitManifests(out)
		}
	}
}

// FuzzSplitManifests: any rendered text splits into exactly Helm's
// documents, each starting where it says.
//
//	go test ./internal/helm -run '^$' -fuzz FuzzSplitManifests -fuzztime 2m
func FuzzSplitManifests(f *testing.F) {
	for _, s := range []string{
		"\n\napiVersion: v1\nkind: A\n---\napiVersion: v1\nkind: B\n",
		"---\n---\n\n---\n# c\nkind: A\n--- # x\nkind: B\n",
		"a: ---\n----\n---a\n \t\n---\t\n",
		"\r\n---\r\nkind: A\r\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, out string) {
		checkSplit(t, "fuzz", out)
	})
}

// BenchmarkSplitManyManifests splits one template's output of n documents:
// the time per document stays the same as n grows (it grew with n when
// each document's line was counted from the start of the output).
//
//	go test ./internal/helm -run '^$' -bench SplitManyManifests
func BenchmarkSplitManyManifests(b *testing.B) {
	for _, n := range []int{1000, 10000, 40000} {
		var sb strings.Builder
		for i := range n {
			sb.WriteString("---\n# a comment\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c" + strings.Repeat("x", i%7) + "\ndata:\n  k: v\n")
		}
		out := sb.String()
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				if docs := splitManifests(out); len(docs) != n {
					b.Fatalf("%d documents", len(docs))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/doc")
		})
	}
}
