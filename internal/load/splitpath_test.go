package load

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
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
