package source

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// A large file is mapped, a small one read; both give the file's bytes,
// and released bytes stay readable (the mapping is kept).
func TestMapFile(t *testing.T) {
	dir := t.TempDir()
	for _, size := range []int{100, mapAbove + 12345} {
		want := bytes.Repeat([]byte("kind: ConfigMap\n---\n"), size/20+1)[:size]
		path := filepath.Join(dir, "f.yaml")
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		got, release, err := MapFile(path, int64(size))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("size %d: contents differ", size)
		}
		release(size / 2)
		release(size)
		if !bytes.Equal(got, want) {
			t.Errorf("size %d: contents differ after release", size)
		}
		if _, _, err := MapFile(path, int64(size-1)); err == nil {
			t.Errorf("size %d: a file over the limit was read", size)
		}
	}
}
