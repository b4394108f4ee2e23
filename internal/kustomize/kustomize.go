// Package kustomize builds Kustomize directories in-process with the
// kustomize API, exactly as `kubectl kustomize DIR` does, and traces each
// built object back to the resource file it came from, so that findings on
// fields the build left alone point at the line a user edits.
package kustomize

import (
	"backfire.dev/backfire/internal/lazyregexp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/source"
)

// Renderer builds Kustomize directories.
type Renderer struct {
	// files are read instead of the disk, by absolute path (backfire fix
	// builds an overlay with its new patch before writing it).
	files map[string][]byte
	// remote lets builds fetch remote resources (see remote.go).
	remote bool
}

// maxFile bounds each file a build reads, as a scan bounds its inputs.
const maxFile = source.DefaultMaxFileSize

// AllowRemote returns a Renderer whose builds fetch remote resources and
// bases, as kubectl kustomize does (an HTTP GET, a git clone): the
// --allow-remote-resources of backfire scan.
func (r *Renderer) AllowRemote() *Renderer {
	c := *r
	c.remote = true
	return &c
}

// WithFiles returns a Renderer that reads files (by path) instead of the
// disk, and the disk for every other file.
func WithFiles(files map[string][]byte) (*Renderer, error) {
	abs := map[string][]byte{}
	for p, data := range files {
		a, err := filepath.Abs(p)
		if err != nil {
			return nil, err
		}
		abs[a] = data
	}
	return &Renderer{files: abs}, nil
}

// disk is the file system builds read: the disk (regular files only,
// of bounded size), under r.files.
func (r *Renderer) disk() filesys.FileSystem {
	disk := &regularFS{filesys.MakeFsOnDisk()}
	if len(r.files) == 0 {
		return disk
	}
	return &filesFS{FileSystem: disk, files: r.files}
}

// regularFS reads only regular files, of at most maxFile bytes: a
// kustomization (or a resource it names) that is a named pipe would block
// the build forever, a device never end.
type regularFS struct{ filesys.FileSystem }

func (f *regularFS) ReadFile(path string) ([]byte, error) {
	data, err := source.ReadRegular(path, maxFile)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return data, nil
}

func (f *regularFS) Open(path string) (filesys.File, error) {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() && !st.IsDir() {
		return nil, fmt.Errorf("%s: not a regular file; not read", path)
	}
	return f.FileSystem.Open(path)
}

// filesFS reads some files from memory.
type filesFS struct {
	filesys.FileSystem
	files map[string][]byte
}

func (f *filesFS) file(path string) ([]byte, bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, false
	}
	data, ok := f.files[abs]
	return data, ok
}

func (f *filesFS) ReadFile(path string) ([]byte, error) {
	if data, ok := f.file(path); ok {
		return data, nil
	}
	return f.FileSystem.ReadFile(path)
}

func (f *filesFS) Exists(path string) bool {
	_, ok := f.file(path)
	return ok || f.FileSystem.Exists(path)
}

// CleanedAbs resolves a file that is only in memory through its directory.
func (f *filesFS) CleanedAbs(path string) (filesys.ConfirmedDir, string, error) {
	if _, ok := f.file(path); ok {
		abs, _ := filepath.Abs(path)
		d, _, err := f.FileSystem.CleanedAbs(filepath.Dir(abs))
		return d, filepath.Base(abs), err
	}
	return f.FileSystem.CleanedAbs(path)
}

// New returns a Renderer with `kubectl kustomize` defaults: resources
// loaded only from within each kustomization's root, no plugins, no Helm
// chart inflation.
func New() *Renderer { return &Renderer{} }

// builds serialises krusty runs: kyaml keeps its OpenAPI schema in package
// state that concurrent builds would race on.
var builds sync.Mutex

// options are kubectl kustomize's: krusty's defaults, with the output
// order left to the kustomization's sortOptions, else kustomize's legacy
// kind order (what the CLI passes when --reorder is not given).
func options() *krusty.Options {
	o := krusty.MakeDefaultOptions()
	o.Reorder = krusty.ReorderOptionUnspecified
	return o
}

// Render builds in.Path. Each built object is one stream whose lines are
// those of the object in `kubectl kustomize in.Path` output; its Trace
// moves a finding to the object's resource file when the field the finding
// is about is the same there.
func (r *Renderer) Render(in source.Input) ([]source.Stream, []load.Error) {
	dir := filepath.Clean(in.Path)
	kfile := kustomizationFile(dir)
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, []load.Error{{File: kfile, Message: err.Error()}}
	}
	if _, err := source.ReadRegular(kfile, maxFile); err != nil && kfile != dir {
		return nil, []load.Error{{File: kfile, Message: err.Error()}}
	}
	if !r.remote {
		if errs := remoteEntries(dir, maxFile); len(errs) > 0 {
			return nil, errs
		}
	}
	// Held through the reading of the results too: resources consult the
	// same schema when they are read.
	builds.Lock()
	defer builds.Unlock()
	root := abs
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		root = r // kustomize's loader reads through the resolved root
	}
	// One build, with origin annotations, to learn where each object came
	// from; kustomize's own clean-up removes them again, and the output
	// is then byte for byte kubectl's (sigs.k8s.io/yaml writes every
	// object anew, so the annotations leave no trace). Should the added
	// build metadata break the build, a plain build decides.
	ofs := &originFS{FileSystem: r.disk(), root: root}
	out, err := krusty.MakeKustomizer(options()).Run(ofs, abs)
	traced := err == nil
	if err != nil {
		out, err = krusty.MakeKustomizer(options()).Run(r.disk(), abs)
	}
	if err != nil {
		msg := err.Error()
		return nil, []load.Error{{File: kfile, Line: entryLine(kfile, msg), Message: "kustomize build failed: " + relativize(msg, dir)}}
	}
	origins := map[*resource.Resource]*resource.Origin{}
	if traced {
		for _, res := range out.Resources() {
			if o, err := res.GetOrigin(); err == nil && o != nil {
				origins[res] = o
			}
		}
		if ofs.injected {
			// The user did not ask for them: kubectl would not print them.
			if err := out.RemoveOriginAnnotations(); err != nil {
				return nil, []load.Error{{File: kfile, Message: "kustomize: " + err.Error()}}
			}
		}
	}

	files := newSourceFiles()
	patches := kustomizationPatches(dir)
	var streams []source.Stream
	line := 1 // where the object starts in the build's output
	for _, res := range out.Resources() {
		y, err := res.AsYAML()
		if err != nil {
			return nil, []load.Error{{File: kfile, Message: fmt.Sprintf("kustomize output of %s: %v", res.CurId(), err)}}
		}
		s := source.Stream{
			Name: dir,
			Data: y,
			// The lines of the whole build's output (padding each object
			// with the lines before it cost memory quadratic in the
			// objects).
			Line:   line,
			Origin: load.Origin{Kind: load.OverlayBuild, Dir: dir, Text: "built by kustomization " + dir},
		}
		line += strings.Count(string(y), "\n") + 1 // the object, then "---"
		if o := origins[res]; o != nil {
			describeOrigin(&s, o, dir, files, y, patches)
		}
		streams = append(streams, s)
	}
	return streams, nil
}

// describeOrigin names the file an object came from and, when that file's
// document can be matched, lets findings on unchanged fields point into it;
// findings on fields a patch set point into the patch.
func describeOrigin(s *source.Stream, o *resource.Origin, dir string, files *sourceFiles, built []byte, patches []patch) {
	var src *load.Document
	defer func() {
		if len(patches) == 0 {
			return
		}
		origName := ""
		if src != nil {
			origName, _ = identity(src)
		}
		s.Trace = func(d *load.Document, path string, _ load.Position) (tr load.Trace) {
			defer func() {
				if recover() != nil {
					tr = load.Trace{} // an odd patch costs its trace, never the scan
				}
			}()
			if src != nil {
				if tr := traceTo(d, src, path); tr.File != "" {
					return tr
				}
			}
			return patchTrace(patches, d, origName, path)
		}
	}()
	switch {
	case o.Repo != "":
		s.Origin.Text += fmt.Sprintf(" from %s in %s", o.Path, o.Repo)
		return
	case o.Path == "":
		if o.ConfiguredIn != "" {
			s.Origin.Text += fmt.Sprintf("; generated by %s in %s", o.ConfiguredBy.Kind, filepath.Join(dir, o.ConfiguredIn))
		}
		return
	}
	file := filepath.Join(dir, o.Path)
	s.Origin.From = file
	s.Origin.Text += " from " + file
	b := load.Parse(s.Name, built)
	if len(b.Documents) != 1 {
		return
	}
	src = files.match(file, b.Documents[0])
	if src == nil {
		return
	}
	if changed := diff(b.Documents[0], src); len(changed) > 0 {
		s.Origin.Text += "; the build changed " + summarizePaths(changed)
	}
	s.Trace = func(d *load.Document, path string, _ load.Position) load.Trace {
		return traceTo(d, src, path)
	}
}

func summarizePaths(paths []string) string {
	const show = 4
	if len(paths) <= show {
		return strings.Join(paths, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(paths[:show], ", "), len(paths)-show)
}

// kustomizationFile names the kustomization file of dir for errors.
func kustomizationFile(dir string) string {
	for _, name := range source.KustomizationFiles {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return dir
}

// failedEntry is the resources entry kustomize names when it cannot
// accumulate it.
var failedEntry = lazyregexp.New(`accumulating resources from '([^']+)'`)

// entryLine finds the line of the kustomization that lists the entry a
// build failed on; 0 when the error names none.
func entryLine(kfile, msg string) int {
	m := failedEntry().FindStringSubmatch(msg)
	if m == nil {
		return 0
	}
	data, err := source.ReadRegular(kfile, maxFile)
	if err != nil {
		return 0
	}
	for i, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "-") && strings.Trim(strings.TrimSpace(l[1:]), `"'`) == m[1] {
			return i + 1
		}
	}
	return 0
}

// absPath is an absolute path in a kustomize message: after a quote, a
// space or the start, so that URLs ("https://...") are left alone.
var absPath = lazyregexp.New(`(^|[\s'"])(/[^\s'"]*)`)

// relativize writes the absolute paths of kustomize's messages relative to
// the working directory when the user gave a relative directory.
func relativize(msg, given string) string {
	if filepath.IsAbs(given) {
		return msg
	}
	wd, err := os.Getwd()
	if err != nil {
		return msg
	}
	return absPath().ReplaceAllStringFunc(msg, func(m string) string {
		i := strings.IndexByte(m, '/')
		rel, err := filepath.Rel(wd, m[i:])
		if err != nil {
			return m
		}
		return m[:i] + rel
	})
}

// originFS reads the top kustomization with buildMetadata
// [originAnnotations] added, so that kustomize annotates every object
// with the file it came from. Build metadata set at the top applies to
// every base the build reaches.
type originFS struct {
	filesys.FileSystem
	root string
	// injected is set when the annotations were added here, not asked for
	// by the kustomization itself.
	injected bool
}

func (f *originFS) ReadFile(path string) ([]byte, error) {
	data, err := f.FileSystem.ReadFile(path)
	if err != nil || filepath.Dir(path) != f.root || !slices.Contains(source.KustomizationFiles, filepath.Base(path)) {
		return data, err
	}
	if out, ok := withOriginAnnotations(data); ok {
		f.injected = true
		return out, nil
	}
	return data, nil
}

// withOriginAnnotations adds originAnnotations to the buildMetadata of a
// kustomization. It reports false when the kustomization asks for them
// already, or cannot be parsed (kustomize will report that itself).
func withOriginAnnotations(data []byte) ([]byte, bool) {
	n, err := kyaml.Parse(string(data))
	if err != nil || n.YNode().Kind != kyaml.MappingNode {
		return nil, false
	}
	var meta []string
	if v := n.Field("buildMetadata"); v != nil {
		if err := v.Value.Document().Decode(&meta); err != nil {
			return nil, false
		}
	}
	if slices.Contains(meta, types.OriginAnnotations) {
		return nil, false
	}
	meta = append(meta, types.OriginAnnotations)
	if err := n.PipeE(kyaml.SetField("buildMetadata", kyaml.NewListRNode(meta...))); err != nil {
		return nil, false
	}
	s, err := n.String()
	if err != nil {
		return nil, false
	}
	return []byte(s), true
}
