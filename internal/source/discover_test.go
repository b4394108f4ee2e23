package source

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"backfire.dev/backfire/internal/load"
)

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func paths(ins []Input) []string {
	var out []string
	for _, in := range ins {
		out = append(out, filepath.ToSlash(in.Path))
	}
	return out
}

func messages(errs []load.Error) string {
	var b strings.Builder
	for _, e := range errs {
		b.WriteString(e.Error() + "\n")
	}
	return b.String()
}

// A directory named through a symbolic link is walked, with or without a
// trailing slash (without one, the walk used to see only the link, and the
// scan read nothing and exited 0).
func TestSymlinkedDirectoryIsWalked(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "real", "app", "deploy.yaml"), "kind: X\n")
	symlink(t, "real", filepath.Join(dir, "link"))
	t.Chdir(dir)
	for _, p := range []string{"link", "link/"} {
		ins, errs := Discover([]string{p})
		if len(errs) > 0 || !slices.Equal(paths(ins), []string{"link/app/deploy.yaml"}) {
			t.Errorf("%s: inputs %v, errors %v", p, paths(ins), errs)
		}
	}
}

// Links met during a walk are followed when they stay inside the path
// named; one that leads out of it is an error naming it, a loop is walked
// once, and a file reached by two names is read once.
func TestWalkFollowsLinksInsideTheRootOnly(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(dir, "outside.yaml")
	write(t, outside, "kind: Secret\n")
	root := filepath.Join(dir, "repo")
	write(t, filepath.Join(root, "apps", "web", "deploy.yaml"), "kind: X\n")
	write(t, filepath.Join(root, "team", "hpa.yaml"), "kind: Y\n")
	symlink(t, "../../team", filepath.Join(root, "apps", "web", "team"))       // a directory inside
	symlink(t, "deploy.yaml", filepath.Join(root, "apps", "web", "same.yaml")) // a second name
	symlink(t, "..", filepath.Join(root, "apps", "loop"))                      // a loop
	symlink(t, outside, filepath.Join(root, "apps", "env.yaml"))               // out of the root
	symlink(t, "missing.yaml", filepath.Join(root, "apps", "gone.yaml"))       // dangling
	t.Chdir(dir)
	ins, errs := Discover([]string{"repo"})
	want := []string{"repo/apps/web/deploy.yaml", "repo/apps/web/team/hpa.yaml"}
	if !slices.Equal(paths(ins), want) {
		t.Errorf("inputs %v, want %v", paths(ins), want)
	}
	msg := messages(errs)
	if len(errs) != 2 || !strings.Contains(msg, "repo/apps/env.yaml: symbolic link to "+outside+", which is outside repo; not read") ||
		!strings.Contains(msg, "repo/apps/gone.yaml: symbolic link to a file that does not exist") {
		t.Errorf("errors:\n%s", msg)
	}
}

// A named pipe (or a device) met on a walk is not opened, which would
// block the scan: it is an error naming it. Named on the command line, a
// pipe is read (backfire scan <(helm template ...)).
func TestPipeOnAWalkIsAnError(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no named pipes:", err)
	}
	ins, errs := Discover([]string{dir})
	if len(ins) != 0 || len(errs) != 1 || !strings.Contains(errs[0].Message, "not a regular file (a named pipe)") {
		t.Errorf("inputs %v, errors %v", paths(ins), errs)
	}
	if ins, errs := Discover([]string{fifo}); len(ins) != 1 || len(errs) != 0 {
		t.Errorf("named: inputs %v, errors %v", paths(ins), errs)
	}
}

// A mapped file that is truncated while it is read faults (SIGBUS);
// Guard turns that into an error instead of a crash.
func TestTruncatedMappedFileIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.yaml")
	write(t, path, strings.Repeat("kind: ConfigMap\n", mapAbove/16+4096))
	data, _, err := MapFile(path, DefaultMaxFileSize)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	sum := 0
	err = Guard(func() {
		for _, b := range data {
			sum += int(b)
		}
	})
	if err != ErrShrank {
		t.Fatalf("reading the truncated file: %v (sum %d), want ErrShrank", err, sum)
	}
	defer func() {
		if p := recover(); p != "other" {
			t.Errorf("another panic: %v", p)
		}
	}()
	_ = Guard(func() { panic("other") })
}

// The project's configuration and its baseline are not manifests: a walk
// does not read them (they were counted as a scanned file with a skipped
// document), and a file named on the command line is still read.
func TestWalkSkipsBackfiresOwnFiles(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{".backfire.yaml", ".backfire.yml", ".backfire-baseline.json", "deploy.yaml", "sub/.backfire.yaml"} {
		write(t, filepath.Join(dir, name), "kind: X\n")
	}
	t.Chdir(dir)
	ins, errs := Discover([]string{"."})
	if len(errs) > 0 || !slices.Equal(paths(ins), []string{"deploy.yaml"}) {
		t.Errorf("walk: inputs %v, errors %v", paths(ins), errs)
	}
	ins, _ = Discover([]string{".backfire.yaml"})
	if !slices.Equal(paths(ins), []string{".backfire.yaml"}) {
		t.Errorf("named: inputs %v", paths(ins))
	}
}
