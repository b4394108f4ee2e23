// Package gitbase reads the files of a git revision, so that a scan can be
// compared with the same scan of the base of a pull request
// (`backfire scan --diff BASE`). It runs the git binary: the repository's
// own configuration, worktrees and object stores all apply as they do for
// the user.
package gitbase

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Tree is a revision's files written to a temporary directory.
type Tree struct {
	// Dir holds the revision's tree, as the repository's top directory.
	Dir string
	// top and prefix place the working directory in the repository.
	top, prefix string
}

// ErrNoGit is returned when the git binary is not installed.
var ErrNoGit = errors.New("--diff needs git on the PATH, and it was not found")

// Checkout writes the tree of rev (any revision git understands: a branch,
// a tag, a commit, origin/main, HEAD~1) for the repository holding the
// working directory into a new temporary directory. Close removes it.
func Checkout(rev string) (*Tree, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return nil, ErrNoGit
	}
	top, err := git("rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("--diff: the working directory is not in a git repository: %w", err)
	}
	prefix, err := git("rev-parse", "--show-prefix")
	if err != nil {
		return nil, err
	}
	commit, err := git("rev-parse", "--verify", "--quiet", rev+"^{commit}")
	if err != nil || commit == "" {
		return nil, fmt.Errorf("--diff: %q is not a commit of this repository", rev)
	}
	dir, err := os.MkdirTemp("", "backfire-base-")
	if err != nil {
		return nil, err
	}
	t := &Tree{Dir: dir, top: strings.TrimSpace(top), prefix: strings.TrimSpace(prefix)}
	// From the top: in a subdirectory, git archive writes only that
	// subdirectory's part of the tree.
	cmd := exec.Command("git", "archive", "--format=tar", commit)
	cmd.Dir = t.top
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		t.Close()
		return nil, err
	}
	extractErr := extract(out, dir)
	if err := cmd.Wait(); err != nil {
		t.Close()
		return nil, fmt.Errorf("--diff: git archive %s: %v: %s", rev, err, strings.TrimSpace(stderr.String()))
	}
	if extractErr != nil {
		t.Close()
		return nil, fmt.Errorf("--diff: reading %s: %w", rev, extractErr)
	}
	return t, nil
}

// Close removes the temporary tree.
func (t *Tree) Close() error { return os.RemoveAll(t.Dir) }

// Path returns where a path given on the command line (relative to the
// working directory, or absolute inside the repository) is in the base
// tree; ok is false for standard input and for paths outside the
// repository, which have no base.
func (t *Tree) Path(p string) (string, bool) {
	if p == "-" {
		return "", false
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(t.top, filepath.FromSlash(t.prefix), p)
	}
	rel, err := filepath.Rel(t.top, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.Join(t.Dir, rel), true
}

func git(args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// extract writes regular files and directories of a tar stream under dir;
// links and names that would leave dir are skipped.
func extract(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.Clean(filepath.FromSlash(h.Name))
		if filepath.IsAbs(name) || name == ".." || strings.HasPrefix(name, ".."+string(filepath.Separator)) {
			continue
		}
		dst := filepath.Join(dir, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		}
	}
}
