// Package testutil finds the repository and its corpus of real manifests from tests.
package testutil

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// RepoRoot returns the directory that holds go.mod.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test's directory")
		}
		dir = parent
	}
}

// Corpus returns testdata/corpus/<elem...>: the real public manifests the
// rules are tested on, copied into the repository with their sources
// (testdata/corpus/SOURCES.md) so that a clone passes its tests on its own.
func Corpus(t testing.TB, elem ...string) string {
	t.Helper()
	p := filepath.Join(append([]string{RepoRoot(t), "testdata", "corpus"}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("corpus missing: %v", err)
	}
	return p
}

// WriteFiles writes files (relative name to content) under dir, creating
// directories as needed.
func WriteFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// UnknownRule is a rule ID no rule can ever have: IDs are BF100 to BF999
// (TestCatalogEntriesAreComplete), so a test that needs an unknown rule
// does not break when the catalog grows to the ID it picked.
const UnknownRule = "BF000"

// YAMLFiles returns the paths of the .yaml and .yml files under the roots,
// in lexical order; a root that cannot be walked fails the test, so a
// moved corpus is not a silently empty one.
func YAMLFiles(t testing.TB, roots ...string) []string {
	t.Helper()
	var files []string
	for _, root := range roots {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
				files = append(files, path)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// EachYAML calls f with the path and bytes of every file YAMLFiles finds
// under the roots; a file that cannot be read fails the test.
func EachYAML(t testing.TB, roots []string, f func(path string, data []byte)) {
	t.Helper()
	for _, path := range YAMLFiles(t, roots...) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f(path, data)
	}
}
