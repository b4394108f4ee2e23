package load

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/benchcorpus"
	"backfire.dev/backfire/internal/testutil"
)

// splitPathGrown is SplitPath as it was before it walked the path with
// nextSegment: the list grown a segment at a time, every bracket's text
// offered to strconv.Atoi. SplitPath and Locate must split every path as
// it did.
func splitPathGrown(path string) []Segment {
	var segs []Segment
	for i := 0; i < len(path); {
		switch path[i] {
		case '.':
			i++
		case '[':
			j := strings.IndexByte(path[i:], ']')
			if j < 0 {
				segs = append(segs, Segment{Key: path[i+1:]})
				return segs
			}
			inner := path[i+1 : i+j]
			if n, err := strconv.Atoi(inner); err == nil {
				segs = append(segs, Segment{Index: n, IsIndex: true})
			} else {
				segs = append(segs, Segment{Key: inner})
			}
			i += j + 1
		default:
			j := i
			for j < len(path) && path[j] != '.' && path[j] != '[' {
				j++
			}
			segs = append(segs, Segment{Key: path[i:j]})
			i = j
		}
	}
	return segs
}

var splitPathSeeds = []string{
	"", ".", "..", "a", "a.b", "a..b", ".a.", "spec.template.spec.containers[0].livenessProbe",
	"spec.containers[web].resources.limits.cpu", "a[", "a[1", "a[]", "a[+1]", "a[-3]", "a[007]",
	"a[1_0]", "a[0x1]", "a[99999999999999999999]", "a[ 1]", "a[1 ]", "a[some/key].b[2][3]",
	"metadata.annotations[app.kubernetes.io/name]", "[0]", "[x].y", "a]b", "a.b[2].c[some/key]",
}

func TestSplitPathAsGrown(t *testing.T) {
	for _, p := range splitPathSeeds {
		checkSplitPath(t, p)
	}
}

// FuzzSplitPath: SplitPath splits any text as splitPathGrown does.
//
//	go test ./internal/load -run '^$' -fuzz FuzzSplitPath -fuzztime 1m
func FuzzSplitPath(f *testing.F) {
	for _, p := range splitPathSeeds {
		f.Add(p)
	}
	f.Fuzz(checkSplitPath)
}

func checkSplitPath(t *testing.T, path string) {
	got, want := SplitPath(path), splitPathGrown(path)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("SplitPath(%q) = %#v, want %#v", path, got, want)
	}
	var walked []Segment
	for s, i, ok := nextSegment(path, 0); ok; s, i, ok = nextSegment(path, i) {
		walked = append(walked, s)
	}
	if !reflect.DeepEqual(walked, want) {
		t.Fatalf("nextSegment walks %q as %#v, want %#v", path, walked, want)
	}
}

// TestLocateTakesEachSegment: a path's brackets, dots and named items are
// followed as written; a path that leaves the document stops at the last
// field it found.
func TestLocateTakesEachSegment(t *testing.T) {
	f := Parse("d.yaml", []byte("a:\n  b:\n  - x: 1\n  - y: [2, 3]\n  c.d: 4\napiVersion: v1\nkind: X\n"))
	if len(f.Errors) != 0 || len(f.Documents) != 1 {
		t.Fatalf("Parse: %v, %d documents", f.Errors, len(f.Documents))
	}
	docs := f.Documents
	for _, c := range []struct {
		path  string
		want  Position
		exact bool
	}{
		{"a", Position{1, 1}, true},
		{"a.b[1].y[1]", Position{4, 12}, true},
		{"a.b[1].y", Position{4, 5}, true},
		{"a..b[0].x", Position{3, 5}, true},
		{"a[c.d]", Position{5, 3}, true},
		{"a.b[2]", Position{2, 3}, false},
		{"a.b[x]", Position{2, 3}, false},
	} {
		for _, loc := range []interface {
			Locate(string) (Position, bool)
		}{docs[0], docs[0].Locator()} {
			if pos, exact := loc.Locate(c.path); pos != c.want || exact != c.exact {
				t.Errorf("%T.Locate(%q) = %v, %v; want %v, %v", loc, c.path, pos, exact, c.want, c.exact)
			}
		}
	}
}

// locateStepwise is locate as it was before it looked up only the
// deepest place: each segment's place looked up on the way down.
func locateStepwise(d *Document, path string) (pos Position, exact bool) {
	pos = Position{Line: d.Line, Column: 1}
	if p, ok := d.positionOf(0); ok {
		pos = p
	}
	off := 0
	for _, s := range splitPathGrown(path) {
		var keyOff, valOff int
		var found bool
		if s.IsIndex {
			valOff, found = arrayElem(d.JSON, off, s.Index)
			keyOff = valOff
		} else {
			keyOff, valOff, found = objectMember(d.JSON, off, s.Key)
		}
		if !found {
			return pos, false
		}
		if p, ok := d.positionOf(keyOff); ok {
			pos = p
		}
		off = valOff
	}
	return pos, true
}

// TestLocateAsStepwise: every field of every document of the
// repository's manifests and of two files of the benchmark corpus, and a field and an item below each that are
// not there, are placed as locateStepwise places them, by Locate and by
// a Locator asked in the document's order.
func TestLocateAsStepwise(t *testing.T) {
	root := filepath.Join("..", "..")
	bench := t.TempDir()
	if _, err := benchcorpus.Generate(bench, 2); err != nil {
		t.Fatal(err)
	}
	n := 0
	testutil.EachYAML(t, []string{filepath.Join(root, "testdata"), filepath.Join(root, "examples"), bench}, func(name string, data []byte) {
		for _, d := range Parse(name, data).Documents {
			var v any
			if err := json.Unmarshal(d.JSON, &v); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			loc := d.Locator()
			for _, p := range fieldPaths(v, "") {
				want, wantExact := locateStepwise(d, p)
				if pos, exact := d.Locate(p); pos != want || exact != wantExact {
					t.Errorf("%s: Locate(%q) = %v, %v; want %v, %v", name, p, pos, exact, want, wantExact)
				}
				if pos, exact := loc.Locate(p); pos != want || exact != wantExact {
					t.Errorf("%s: Locator.Locate(%q) = %v, %v; want %v, %v", name, p, pos, exact, want, wantExact)
				}
				n++
			}
		}
	})
	if n < 10000 {
		t.Fatalf("only %d paths compared", n)
	}
}

// fieldPaths lists the paths of v's fields and items as field.Path
// writes them (a key that a dot or bracket would split in brackets),
// each followed by an absent field and item below it.
func fieldPaths(v any, at string) []string {
	paths := []string{at + ".absent", at + "[1000]"}
	if at != "" {
		paths = append(paths, at)
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := at + "." + k
			if at == "" {
				p = k
			}
			if strings.ContainsAny(k, ".[]") {
				p = at + "[" + k + "]"
			}
			paths = append(paths, fieldPaths(e, p)...)
		}
	case []any:
		for i, e := range x {
			paths = append(paths, fieldPaths(e, at+"["+strconv.Itoa(i)+"]")...)
		}
	}
	return paths
}
