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
	"runtime/debug"
	"slices"
	"strings"

	"backfire.dev/backfire/internal/baseline"
	"backfire.dev/backfire/internal/config"
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
	// Root is the path the user named that led to this input (Path
	// itself when named, or the directory walked): a chart's symbolic
	// links may lead anywhere inside it, and nowhere else. Empty means
	// Path.
	Root string
}

// Boundary returns the path whose contents the input may read: Root, or
// Path when Root is not set.
func (in Input) Boundary() string {
	if in.Root != "" {
		return in.Root
	}
	return in.Path
}

// StdinName is how standard input is named in findings and errors.
const StdinName = "<stdin>"

// DefaultMaxFileSize bounds one input file. Parsing YAML with positions
// costs about 30 bytes of memory per byte of input, so a larger file would
// take gigabytes; a manifest that large is almost certainly not one.
const DefaultMaxFileSize = 64 << 20

// skipDirs are never walked.
var skipDirs = map[string]bool{".git": true, "node_modules": true, "vendor": true}

// ownFiles are backfire's own files, which a walk does not read as
// manifests: the project configuration and the baseline under its usual
// name. Named on the command line, they are read like any file.
var ownFiles = append([]string{baseline.DefaultName}, config.FileNames...)

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
//
// Symbolic links are followed, the named path itself included, as long
// as they lead to somewhere inside the path named: a link that leads out
// of it is not read, and is an error that names the link and its target
// (a scan reads what it is given, and only that). A directory reached
// twice (a link loop, or two links to one place) is walked once, and a
// file reached by two names is read once, under the first name met.
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
			// A named file is read whatever it is (a pipe from <(...)
			// included): the user named it.
			kind := File
			if strings.HasSuffix(p, ".tgz") || strings.HasSuffix(p, ".tar.gz") {
				kind = Chart
			}
			ins = append(ins, Input{Path: p, Kind: kind, Explicit: true, Root: p})
			continue
		}
		if k, ok := dirKind(p); ok {
			ins = append(ins, Input{Path: p, Kind: k, Explicit: true, Root: p})
			continue
		}
		real, err := RealPath(p)
		if err != nil {
			errs = append(errs, load.Error{File: p, Message: describe(err)})
			continue
		}
		w := walker{root: p, realRoot: real, dirs: map[string]bool{real: true}, files: map[string]bool{}}
		w.walk(p, real)
		ins = append(ins, w.inputs...)
		errs = append(errs, w.errs...)
	}
	return ins, errs
}

// walker walks one directory named on the command line.
type walker struct {
	root, realRoot string
	// dirs and files are the real paths already walked or read.
	dirs, files map[string]bool
	inputs      []Input
	errs        []load.Error
}

// walk reads dir, whose real path (links resolved) is real.
func (w *walker) walk(dir, real string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		w.errs = append(w.errs, load.Error{File: dir, Message: describe(err)})
		return
	}
	for _, e := range entries {
		path, realPath := filepath.Join(dir, e.Name()), filepath.Join(real, e.Name())
		typ := e.Type()
		if typ&fs.ModeSymlink != 0 {
			target, err := RealPath(path)
			if err != nil {
				if IsManifestFile(e.Name()) {
					w.errs = append(w.errs, load.Error{File: path, Message: "symbolic link to a file that does not exist; not read"})
				}
				continue
			}
			st, err := os.Stat(target)
			if err != nil {
				w.errs = append(w.errs, load.Error{File: path, Message: describe(err)})
				continue
			}
			if !st.IsDir() && !IsManifestFile(e.Name()) {
				continue
			}
			if !Within(target, w.realRoot) {
				w.errs = append(w.errs, load.Error{File: path, Message: fmt.Sprintf("symbolic link to %s, which is outside %s; not read (name it on the command line to scan it)", target, w.root)})
				continue
			}
			realPath, typ = target, st.Mode().Type()
		}
		switch {
		case typ.IsDir():
			if skipDirs[e.Name()] || w.dirs[realPath] {
				continue
			}
			w.dirs[realPath] = true
			if k, ok := dirKind(path); ok {
				w.inputs = append(w.inputs, Input{Path: path, Kind: k, Root: w.root})
				continue
			}
			w.walk(path, realPath)
		case !IsManifestFile(e.Name()), slices.Contains(ownFiles, e.Name()):
		case !typ.IsRegular():
			w.errs = append(w.errs, load.Error{File: path, Message: "not a regular file (" + describeType(typ) + "); not read (name it on the command line to read it)"})
		case !w.files[realPath]:
			w.files[realPath] = true
			w.inputs = append(w.inputs, Input{Path: path, Kind: File, Root: w.root})
		}
	}
}

// RealPath is the absolute path of p with every symbolic link resolved.
func RealPath(p string) (string, error) {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	return filepath.Abs(r)
}

// Within reports whether path is dir or inside it; both are absolute
// real paths (see RealPath).
func Within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

func describeType(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "mode " + m.String()
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

// ReadRegular reads a file that must be a regular file of at most max
// bytes: for files a tool reads because another file names them (a
// kustomization's resources), where a named pipe would block the scan
// forever and a device would never end.
func ReadRegular(path string, max int64) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, errors.New(describe(err))
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s); not read", describeType(st.Mode().Type()))
	}
	if st.Size() > max {
		return nil, tooLarge(max)
	}
	return ReadFile(path, max)
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
	// Line is the line of Data's first byte in what its producer printed
	// (an object's place in a Kustomize build's output); 0 means 1.
	Line   int
	Origin load.Origin // how it was produced; zero for a file read as is
	// Trace, when set, follows fields of the stream's documents back to
	// the files they were written in (see load.Tracer).
	Trace load.Tracer
}

// Renderer turns a chart or a Kustomize directory into streams. Errors carry
// the file and line of the template or kustomization at fault.
type Renderer interface {
	Render(in Input) ([]Stream, []load.Error)
}

// ErrShrank is what reading a mapped file that was truncated meanwhile
// gives (see Guard).
var ErrShrank = errors.New("the file shrank while it was being read (truncated or rewritten in place); not scanned further")

// Guard runs read, which reads the bytes of a mapped file (MapFile), and
// turns the fault that touching a page past the file's new end raises
// (SIGBUS: the file was truncated while mapped) into ErrShrank instead
// of a crash. Any other panic goes on.
func Guard(read func()) (err error) {
	old := debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(old)
	defer func() {
		if p := recover(); p != nil {
			if _, fault := p.(interface{ Addr() uintptr }); fault {
				err = ErrShrank
				return
			}
			panic(p)
		}
	}()
	read()
	return nil
}
