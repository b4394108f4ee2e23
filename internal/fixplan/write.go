package fixplan

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/pmezard/go-difflib/difflib"

	"backfire.dev/backfire/internal/finding"
)

// The plan's output: its diff, and its files written.

// Diff writes a unified diff of every changed file.
func (r *FixPlan) Diff(w io.Writer) error {
	for _, f := range r.Files {
		d := difflib.UnifiedDiff{
			A: difflib.SplitLines(string(f.Old)), B: difflib.SplitLines(string(f.New)),
			FromFile: "a/" + filepath.ToSlash(f.Path), ToFile: "b/" + filepath.ToSlash(f.Path),
			Context: 3,
		}
		if f.Old == nil {
			d.A, d.FromFile = nil, "/dev/null" // a new file
		}
		if err := difflib.WriteUnifiedDiff(w, d); err != nil {
			return err
		}
	}
	return nil
}

// Write writes every changed file, each through a temporary file renamed
// over it, so that no file is ever left half-written. A file that is read
// only, a symbolic link, or changed since it was read is not written; the
// errors say which, and the other files are still written. A finding
// whose fix writes a file that was not written is not fixed: it moves to
// Left with the error, and the file to Unwritten.
func (r *FixPlan) Write() []error {
	var errs []error
	failed := map[string]error{}
	var written []*File
	for _, f := range r.Files {
		if err := writeFile(f); err != nil {
			errs = append(errs, err)
			failed[f.Path] = err
			r.Unwritten = append(r.Unwritten, f)
			continue
		}
		written = append(written, f)
	}
	if len(failed) == 0 {
		return nil
	}
	r.Files = written
	var fixed []finding.Finding
	var in [][]string
	for i, f := range r.Fixed {
		var err error
		for _, p := range r.fixedIn[i] {
			if e, ok := failed[p]; ok {
				err = e
				break
			}
		}
		if err != nil {
			r.leaveOne(f, reason(ReasonUnwritable, "not written: "+err.Error()))
			delete(r.Spans, f.Instance())
			continue
		}
		fixed = append(fixed, f)
		in = append(in, r.fixedIn[i])
	}
	r.Fixed, r.fixedIn = fixed, in
	r.fileRules()
	return errs
}

func writeFile(f *File) error {
	info, err := os.Lstat(f.Path)
	if os.IsNotExist(err) && f.Old == nil {
		return create(f)
	}
	if err != nil {
		return err
	}
	if info.Mode()&os.ModeSymlink != 0 {
		return fmt.Errorf("%s: a symbolic link; fix does not write through links: run it on the file the link points to", f.Path)
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file", f.Path)
	}
	if info.Mode().Perm()&0o200 == 0 {
		return fmt.Errorf("%s: read-only (mode %v); not written", f.Path, info.Mode().Perm())
	}
	now, err := os.ReadFile(f.Path)
	if err != nil {
		return err
	}
	if !bytes.Equal(now, f.Old) {
		return fmt.Errorf("%s: changed since it was scanned; not written: run fix again", f.Path)
	}
	tmp, err := os.CreateTemp(filepath.Dir(f.Path), "."+filepath.Base(f.Path)+".backfire-*")
	if err != nil {
		return fmt.Errorf("%s: %v", f.Path, err)
	}
	done := false
	defer func() {
		if !done {
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(f.New); err != nil {
		tmp.Close()
		return fmt.Errorf("%s: %v", f.Path, err)
	}
	if err := tmp.Chmod(info.Mode().Perm()); err != nil {
		tmp.Close()
		return fmt.Errorf("%s: %v", f.Path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("%s: %v", f.Path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("%s: %v", f.Path, err)
	}
	if err := os.Rename(tmp.Name(), f.Path); err != nil {
		return fmt.Errorf("%s: %v", f.Path, err)
	}
	done = true
	return nil
}

func firstDiffLine(a, b []byte) int {
	line := 1
	for i := 0; i < len(a) && i < len(b) && a[i] == b[i]; i++ {
		if a[i] == '\n' {
			line++
		}
	}
	return line
}

// create writes a new file (a values file of --values-out) through a
// temporary file, and refuses to replace one made in the meantime.
func create(f *File) error {
	tmp, err := os.CreateTemp(filepath.Dir(f.Path), "."+filepath.Base(f.Path)+".backfire-*")
	if err != nil {
		return fmt.Errorf("%s: %v", f.Path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(f.New); err != nil {
		tmp.Close()
		return fmt.Errorf("%s: %v", f.Path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("%s: %v", f.Path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("%s: %v", f.Path, err)
	}
	// A hard link fails if the name exists: nothing made since is lost.
	if err := os.Link(tmp.Name(), f.Path); err != nil {
		return fmt.Errorf("%s: %v", f.Path, err)
	}
	return nil
}
