// Package source finds the inputs of a scan: manifest files, directories
// walked recursively, standard input, Helm charts and Kustomize
// directories, and reads them within size limits.
package source

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"backfire.dev/backfire/internal/load"
)

// Kind is what an input is.
type Kind int

const (
	File Kind = iota
	Stdin
	Chart         // a directory with Chart.yaml, or a packaged chart .tgz
	Kustomization // a directory with kustomization.yaml
)

func (k Kind) String() string {
	return [...]string{"file", "stdin", "helm chart", "kustomization"}[k]
}

// Input is one thing to read.
type Input struct {
	Path string
	Kind Kind
	// Explicit is true when the user named the input rather than a
	// directory that contains it: an explicit empty file is an error, an
	// empty file met on a walk is not.
	Explicit bool
}

// StdinName is how standard input is named in findings and errors.
const StdinName = "<stdin>"

// DefaultMaxFileSize bounds one input file. Parsing YAML with positions
// costs about 30 bytes of memory per byte of input, so a larger file would
// take gigabytes; a manifest that large is almost certainly not one.
const DefaultMaxFileSize = 64 << 20

// skipDirs are never walked.
var skipDirs = map[string]bool{".git": true, "node_modules": true, "vendor": true}

// KustomizationFiles are the names kustomize recognises.
var KustomizationFiles = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// IsManifestFile reports whether a walk should read the file.
func IsManifestFile(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// Discover expands the paths given on the command line into inputs. A
// directory that is a Helm chart or a Kustomize directory is one input and
// is not walked further: its files are not manifests on their own.
func Discover(paths []string) ([]Input, []load.Error) {
	var ins []Input
	var errs []load.Error
	for _, p := range paths {
		if p == "-" {
			ins = append(ins, Input{Path: StdinName, Kind: Stdin, Explicit: true})
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			errs = append(errs, load.Error{File: p, Message: describe(err)})
			continue
		}
		if !st.IsDir() {
			kind := File
			if strings.HasSuffix(p, ".tgz") || strings.HasSuffix(p, ".tar.gz") {
				kind = Chart
			}
			ins = append(ins, Input{Path: p, Kind: kind, Explicit: true})
			continue
		}
		if k, ok := dirKind(p); ok {
			ins = append(ins, Input{Path: p, Kind: k, Explicit: true})
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				errs = append(errs, load.Error{File: path, Message: describe(err)})
				if d != nil && d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				if path != p && skipDirs[d.Name()] {
					return fs.SkipDir
				}
				if path != p {
					if k, ok := dirKind(path); ok {
						ins = append(ins, Input{Path: path, Kind: k})
						return fs.SkipDir
					}
				}
				return nil
			}
			if d.Type().IsRegular() && IsManifestFile(d.Name()) {
				ins = append(ins, Input{Path: path, Kind: File})
			}
			return nil
		})
		if err != nil {
			errs = append(errs, load.Error{File: p, Message: describe(err)})
		}
	}
	return ins, errs
}

func dirKind(dir string) (Kind, bool) {
	if exists(filepath.Join(dir, "Chart.yaml")) {
		return Chart, true
	}
	for _, name := range KustomizationFiles {
		if exists(filepath.Join(dir, name)) {
			return Kustomization, true
		}
	}
	return 0, false
}

func exists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// ReadFile reads a file of at most max bytes.
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, errors.New(describe(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err == nil && st.Size() > max {
		return nil, tooLarge(max)
	}
	if err == nil && st.Mode().IsRegular() && st.Size() > 0 {
		// Read a regular file in one allocation of its size.
		data := make([]byte, st.Size())
		if _, err := io.ReadFull(f, data); err == nil {
			return data, nil
		}
		f.Seek(0, io.SeekStart)
	}
	return readLimited(f, max)
}

// mapAbove is the size from which MapFile maps a file instead of reading
// it into memory.
const mapAbove = 16 << 20

// MapFile returns the contents of a file like ReadFile; a large regular
// file is mapped instead of read (see mapRegular). The caller calls
// release(n) when it is done with the first n bytes: their pages leave the
// process's memory, though the bytes stay readable. A file truncated
// while mapped would fault: only files above mapAbove, which the scan
// otherwise holds twice, are mapped.
func MapFile(path string, max int64) (data []byte, release func(n int), err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, func(int) {}, errors.New(describe(err))
	}
	st, serr := f.Stat()
	if serr == nil && st.Mode().IsRegular() && st.Size() > mapAbove && st.Size() <= max {
		if data, release, ok := mapRegular(f, st.Size()); ok {
			f.Close()
			return data, release, nil
		}
	}
	f.Close()
	data, err = ReadFile(path, max)
	return data, func(int) {}, err
}

// ReadStdin reads standard input of at most max bytes.
func ReadStdin(r io.Reader, max int64) ([]byte, error) { return readLimited(r, max) }

func readLimited(r io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, errors.New(describe(err))
	}
	if int64(len(data)) > max {
		return nil, tooLarge(max)
	}
	return data, nil
}

func tooLarge(max int64) error {
	return fmt.Errorf("larger than %d MiB; not scanned (split the file, or raise --max-file-size)", max>>20)
}

func describe(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "no such file or directory"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	}
	return err.Error()
}

// Stream is one manifest stream produced from an input: a file's bytes, or
// one template of a rendered chart.
type Stream struct {
	Name string // shown in findings: a path, or a chart's template path
	Data []byte
	// Documents, when set, replace Data: the stream's documents as their
	// producer split them, each with lines counted from its own first line
	// (a rendered chart's documents, as `helm template` prints each one
	// under its own "# Source:" header).
	Documents [][]byte
	Origin    load.Origin // how it was produced; zero for a file read as is
	// Trace, when set, follows fields of the stream's documents back to
	// the files they were written in (see load.Tracer).
	Trace load.Tracer
}

// Renderer turns a chart or a Kustomize directory into streams. Errors carry
// the file and line of the template or kustomization at fault.
type Renderer interface {
	Render(in Input) ([]Stream, []load.Error)
}
