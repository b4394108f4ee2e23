package gitbase

import (
	"archive/tar"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// A tar stream cannot write outside the directory, and links are not
// followed: only regular files and directories are written.
func TestExtractStaysInsideDir(t *testing.T) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range []*tar.Header{
		{Name: "deploy/", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: "deploy/a.yaml", Typeflag: tar.TypeReg, Mode: 0o644, Size: 2},
		{Name: "../escape.yaml", Typeflag: tar.TypeReg, Mode: 0o644, Size: 2},
		{Name: "link", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"},
	} {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			tw.Write([]byte("a\n"))
		}
	}
	tw.Close()
	root := t.TempDir()
	dir := filepath.Join(root, "tree")
	if err := extract(&buf, dir); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "deploy", "a.yaml")); err != nil || string(b) != "a\n" {
		t.Errorf("deploy/a.yaml: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(root, "escape.yaml")); err == nil {
		t.Error("a ../ name was written outside the tree")
	}
	if _, err := os.Lstat(filepath.Join(dir, "link")); err == nil {
		t.Error("a symlink was written")
	}
}

// Path maps command-line paths from a subdirectory into the base tree.
func TestCheckoutFromASubdirectory(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	repo := t.TempDir()
	os.MkdirAll(filepath.Join(repo, "deploy"), 0o755)
	os.WriteFile(filepath.Join(repo, "deploy", "a.yaml"), []byte("v: 1\n"), 0o644)
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", "commit", "-q", "-m", "base"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	os.WriteFile(filepath.Join(repo, "deploy", "a.yaml"), []byte("v: 2\n"), 0o644)
	t.Chdir(filepath.Join(repo, "deploy"))
	tree, err := Checkout("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	p, ok := tree.Path("a.yaml")
	if b, err := os.ReadFile(p); !ok || err != nil || string(b) != "v: 1\n" {
		t.Errorf("base of a.yaml: %q, %v, %v", b, ok, err)
	}
	if _, ok := tree.Path("-"); ok {
		t.Error("standard input has a base")
	}
	if _, ok := tree.Path(filepath.Join(os.TempDir(), "elsewhere.yaml")); ok {
		t.Error("a path outside the repository has a base")
	}
	if _, err := Checkout("no-such-rev"); err == nil {
		t.Error("a bad revision was accepted")
	}
}
