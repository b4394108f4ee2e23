package load

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// viaYAMLv3 converts one document the way the loader does without the
// block parser: yaml.v3's node tree, then the converter. ok is false
// where that fails or the document is not a mapping.
func viaYAMLv3(data []byte, first int) (blockDocument, bool) {
	root, err := decodeOne(data)
	if err != nil || root.Kind != yaml.DocumentNode || len(root.Content) == 0 {
		return blockDocument{}, false
	}
	shift(&root, first-1, 0)
	top := root.Content[0]
	if top.Kind != yaml.MappingNode {
		return blockDocument{}, false
	}
	c := converter{budget: aliasBudget(countNodes(top))}
	if c.value(top) != nil {
		return blockDocument{}, false
	}
	apiVersion, kind, terr := typeOf(top)
	if terr != nil {
		return blockDocument{}, false
	}
	return blockDocument{json: c.buf, marks: c.marks, line: top.Line, apiVersion: apiVersion, kind: kind}, true
}

// agree checks the block parser against yaml.v3 on one document: where
// the block parser converts it, yaml.v3 must too, to the same JSON and
// the same position of every key and value. It reports whether the block
// parser converted it.
func agree(t *testing.T, name string, data []byte, first int) bool {
	t.Helper()
	got, ok := parseBlock(data, first)
	if !ok {
		return false
	}
	want, wantOK := viaYAMLv3(data, first)
	switch {
	case !wantOK:
		t.Errorf("%s: the block parser converts a document yaml.v3 does not:\n%s", name, data)
	case string(got.json) != string(want.json):
		t.Errorf("%s: JSON\n got %s\nwant %s\nof\n%s", name, got.json, want.json, data)
	case !slices.Equal(got.marks, want.marks):
		t.Errorf("%s: positions\n got %v\nwant %v\nof\n%s", name, got.marks, want.marks, data)
	case got.line != want.line || got.apiVersion != want.apiVersion || got.kind != want.kind:
		t.Errorf("%s: line, apiVersion, kind %d %q %q, want %d %q %q", name, got.line, got.apiVersion, got.kind, want.line, want.apiVersion, want.kind)
	}
	return true
}

// agreeStream checks every document of a stream, split as the loader
// splits it, and the whole stream's outcome with and without the block
// parser. It returns how many documents there were and how many the
// block parser converted.
func agreeStream(t *testing.T, name string, data []byte) (docs, converted int) {
	t.Helper()
	if !slices.Contains(data[:min(len(data), 8000)], 0) {
		for _, ch := range splitDocuments(data) {
			docs++
			if agree(t, name, ch.data, ch.line) {
				converted++
			}
		}
	}
	with := Parse(name, data)
	blockOff = true
	without := Parse(name, data)
	blockOff = false
	if !reflect.DeepEqual(with, without) {
		t.Errorf("%s: the stream parses differently with the block parser:\n got %+v\nwant %+v", name, with, without)
	}
	return docs, converted
}

// TestBlockAgreesWithYAMLv3 holds the block parser to yaml.v3 on every
// YAML file of the repository (the rule fixtures, the public corpus of
// testdata/corpus, charts, examples, deploy manifests) and on every test
// of the YAML test suite (testdata/yaml-test-suite). BLOCK_CORPUS, a
// list of directories, adds others (a generated benchmark corpus).
func TestBlockAgreesWithYAMLv3(t *testing.T) {
	roots := []string{filepath.Join("..", "..")}
	if extra := os.Getenv("BLOCK_CORPUS"); extra != "" {
		roots = append(roots, filepath.SplitList(extra)...)
	}
	var files, docs, converted int
	for _, root := range roots {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			if d.IsDir() || !(strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
				return nil
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			n, c := agreeStream(t, path, data)
			files, docs, converted = files+1, docs+n, converted+c
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if files < 300 || converted < docs/2 {
		t.Fatalf("%d files, %d documents, %d converted by the block parser: the corpus is not being read", files, docs, converted)
	}
	t.Logf("%d files, %d documents, %d converted by the block parser", files, docs, converted)

	suite := yamlTestSuite(t)
	docs, converted = 0, 0
	for _, id := range slices.Sorted(func(yield func(string) bool) {
		for id := range suite {
			if !yield(id) {
				return
			}
		}
	}) {
		n, c := agreeStream(t, "yaml-test-suite/"+id, []byte(suite[id].YAML))
		docs, converted = docs+n, converted+c
	}
	if converted < 40 {
		t.Fatalf("the block parser converted only %d of the suite's %d documents", converted, docs)
	}
	t.Logf("YAML test suite: %d tests, %d documents, %d converted by the block parser", len(suite), docs, converted)
}

type suiteTest struct {
	YAML  string `json:"yaml"`
	Error bool   `json:"error"`
}

// yamlTestSuite reads the suite's inputs (testdata/yaml-test-suite).
func yamlTestSuite(t testing.TB) map[string]suiteTest {
	raw, err := os.ReadFile(filepath.Join("testdata", "yaml-test-suite", "tests.json"))
	if err != nil {
		t.Fatal(err)
	}
	var suite map[string]suiteTest
	if err := json.Unmarshal(raw, &suite); err != nil {
		t.Fatal(err)
	}
	return suite
}

// TestBlockPositions pins the places yaml.v3 gives the nodes the block
// parser writes itself: empty values, block scalars, flow items, keys
// after a sequence entry, and columns counted in characters.
func TestBlockPositions(t *testing.T) {
	for _, src := range []string{
		"apiVersion: v1\nkind: X\na:\nb: 1\n",
		"apiVersion: v1\nkind: X\nl:\n-\n- a\n-   \n- b: 1\n  c:\n",
		"apiVersion: v1\nkind: X\ns: |\n  one\n   two\n\n  three\nt: >-\n  a\n  b\n\n  c\n   d\n  e\nu: |+\n  keep\n\n",
		"apiVersion: v1\nkind: X\nf: [a, 'b', \"c\", 1, -2, true, null]\ne: []\nm: {}\n",
		"apiVersion: v1\nkind: X\nnon: \"ascii é\"\n\"ké\": [é, x]\nα: β # comment\n",
		"---\n# head\napiVersion: v1 # c\nkind: X\nmetadata:\n  name: n\n  labels:\n    a: \"1\"\n    b: '2'\n",
		"apiVersion: v1\nkind: X\nq: \"a\\tb\\u00e9\\x41\\\"\"\nr: 'it''s'\n",
		"apiVersion: v1\nkind: X\nn: [0x1F, 0o17, 017, 1_000, 1e3, .5, -1, 99999999999999999999]\ng: {a: {b: [c, {d: e}]}, \"f\":1, 'g' : h}\n",
	} {
		if !agree(t, "positions", []byte(src), 3) {
			t.Errorf("the block parser does not convert\n%s", src)
		}
	}
}

// TestBlockLeavesToYAMLv3 lists documents the block parser must not
// convert itself: outside its subset, or refused by yaml.v3.
func TestBlockLeavesToYAMLv3(t *testing.T) {
	for _, src := range []string{
		"a: &x 1\nb: *x\n",
		"a: !!str 1\n",
		"a: b\n  c\n",      // a multi-line plain scalar
		"a: \"b\n  c\"\n",  // a multi-line quoted scalar
		"a: 1\na: 2\n",     // a duplicate key
		"<<: {a: 1}\n",     // a merge key
		"a:\n\tb: 1\n",     // a tab as indentation
		"a: b: c\n",        // refused by yaml.v3
		"a: |2\n   x\n",    // an indentation indicator
		"a: [b,\n  c]\n",   // a flow sequence over two lines
		"- a\n- b\n",       // not a mapping
		"a: 1\r\nb: 2\r\n", // carriage returns
		"a: -.inf\n",       // no JSON for it
		"kind: List\napiVersion: v1\nitems: []\n",
		"? a\n: b\n",
		"a: \"\\/\"\n", // an escape yaml.v3 refuses
		"a: 'b'c\n",
		"a: |\nb: 1\n", // an empty block scalar
	} {
		if _, ok := parseBlock([]byte(src), 1); ok {
			t.Errorf("the block parser converts\n%s", src)
		}
	}
}

// FuzzBlock: on any input the block parser either leaves the document to
// yaml.v3 or agrees with it.
//
//	go test ./internal/load -run '^$' -fuzz FuzzBlock -fuzztime 5m
func FuzzBlock(f *testing.F) {
	f.Add([]byte(deployment))
	for _, t := range yamlTestSuite(f) {
		f.Add([]byte(t.YAML))
	}
	examples, _ := filepath.Glob(filepath.Join("..", "..", "examples", "*.yaml"))
	for _, p := range examples {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, ch := range splitDocuments(data) {
			agree(t, "fuzz", ch.data, ch.line)
		}
	})
}
