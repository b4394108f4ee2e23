// Package release tests what users install: the release archives and their
// checksums, the binary's version, the krew manifest, the container image and
// the GitHub Action's download. hack/test-release.sh builds a GoReleaser
// snapshot of the machine's own target and runs these tests on it
// (BACKFIRE_DIST); without it they skip, except the Action's download, which
// then runs on an archive it makes.
package release

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/testutil"
)

// snapshot is a GoReleaser snapshot's dist directory.
type snapshot struct {
	dir       string
	version   string            // 0.0.1-snapshot: the archives' version
	checksums map[string]string // file name -> sha256
}

// distOrSkip returns the snapshot hack/test-release.sh built.
func distOrSkip(t *testing.T) *snapshot {
	t.Helper()
	dir := os.Getenv("BACKFIRE_DIST")
	if dir == "" {
		t.Skip("BACKFIRE_DIST (a GoReleaser snapshot) is set by hack/test-release.sh")
	}
	s := &snapshot{dir: dir, checksums: readChecksums(t, filepath.Join(dir, "checksums.txt"))}
	for name := range s.checksums {
		if m := archiveName.FindStringSubmatch(name); m != nil && m[2] == runtime.GOOS && m[3] == runtime.GOARCH {
			s.version = m[1]
		}
	}
	if s.version == "" {
		t.Fatalf("checksums.txt lists no archive for %s/%s: %v", runtime.GOOS, runtime.GOARCH, s.checksums)
	}
	return s
}

// archiveName is .goreleaser.yaml's name_template.
var archiveName = regexp.MustCompile(`^backfire_(.+)_(linux|darwin|windows)_(amd64|arm64)\.(tar\.gz|zip)$`)

func (s *snapshot) archive() string {
	return filepath.Join(s.dir, "backfire_"+s.version+"_"+runtime.GOOS+"_"+runtime.GOARCH+".tar.gz")
}

func readChecksums(t *testing.T, file string) map[string]string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sums := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || len(sum) != 64 {
			t.Fatalf("checksums.txt line %q is not \"<sha256>  <file>\"", sc.Text())
		}
		sums[name] = sum
	}
	return sums
}

func sha256File(t *testing.T, file string) string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// untar unpacks a .tar.gz (or, with gz false, a .tar) into dir and returns
// the names it held.
func untar(t *testing.T, file, dir string, gz bool) []string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if gz {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	var names []string
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Clean(h.Name)
		if strings.HasPrefix(name, "..") || filepath.IsAbs(name) {
			t.Fatalf("%s: entry %q leaves the directory", file, h.Name)
		}
		names = append(names, name)
		dst := filepath.Join(dir, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(dst, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				t.Fatal(err)
			}
			out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o777)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(out, tr); err != nil {
				t.Fatal(err)
			}
			out.Close()
		}
	}
}

// The archives are what checksums.txt says; the one for this machine holds
// the static binary, the licence and the README; the binary names the
// snapshot's version, the commit it was built from and the commit's date.
func TestSnapshotArchiveChecksumsAndVersion(t *testing.T) {
	s := distOrSkip(t)
	for name, want := range s.checksums {
		if got := sha256File(t, filepath.Join(s.dir, name)); got != want {
			t.Errorf("%s: sha256 %s, checksums.txt says %s", name, got, want)
		}
	}
	dir := t.TempDir()
	names := untar(t, s.archive(), dir, true)
	for _, want := range []string{"backfire", "LICENSE", "README.md"} {
		if !slices.Contains(names, want) {
			t.Errorf("archive holds %v, not %s", names, want)
		}
	}
	bin := filepath.Join(dir, "backfire")
	assertStatic(t, bin)

	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("backfire version: %v\n%s", err, out)
	}
	head, err := exec.Command("git", "-C", testutil.RepoRoot(t), "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`^backfire v` + regexp.QuoteMeta(s.version) + ` \(commit ` + strings.TrimSpace(string(head)) +
		`, built \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)\), go1\.`)
	if !want.Match(out) {
		t.Errorf("backfire version printed\n%s\nwant it to match %s", out, want)
	}
}

// assertStatic fails unless the ELF binary asks for no dynamic loader and
// no shared library: the image FROM scratch has neither.
func assertStatic(t *testing.T, bin string) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatalf("%s is not an ELF binary: %v", bin, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s asks for a dynamic loader: it was not built with CGO_ENABLED=0", bin)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("%s links %v", bin, libs)
	}
}
