package fixplan

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"backfire.dev/backfire/internal/helm"
	"backfire.dev/backfire/internal/scan"
	"backfire.dev/backfire/internal/source"
)

// The proof's chart renders: Helm reads a chart and its values from disk,
// so the rescan renders copies with the new contents.

// charts builds the chart renderer: the user's values files, then the
// values-out file when it exists, or extra (the rescan's new values).
func charts(opts Options, withOut bool, extra string) (source.Renderer, error) {
	h := *opts.Helm
	h.ValueFiles = slices.Clone(h.ValueFiles)
	if withOut {
		h.ValueFiles = append(h.ValueFiles, opts.ValuesOut)
	}
	if extra != "" {
		h.ValueFiles = append(h.ValueFiles, extra)
	}
	return helm.New(h)
}

// rerender points the rescan at the new values files: Helm reads a chart
// and its values from disk, so a changed --values file is replaced by a
// temporary copy, and a chart whose values.yaml changed is copied to a
// temporary directory with the new file.
func rerender(so *scan.Options, opts Options, files []*File, renames map[string]string) (func(), error) {
	var tmps []string
	cleanup := func() {
		for _, t := range tmps {
			os.RemoveAll(t)
		}
	}
	h := *opts.Helm
	h.ValueFiles = slices.Clone(h.ValueFiles)
	var rest []*File
	for _, f := range files {
		if i := slices.IndexFunc(h.ValueFiles, func(p string) bool { return filepath.Clean(p) == filepath.Clean(f.Path) }); i >= 0 {
			tmp, err := os.CreateTemp("", "backfire-values-*.yaml")
			if err != nil {
				return cleanup, err
			}
			tmps = append(tmps, tmp.Name())
			_, err = tmp.Write(f.New)
			tmp.Close()
			if err != nil {
				return cleanup, err
			}
			h.ValueFiles[i] = tmp.Name()
			continue
		}
		rest = append(rest, f)
	}
	ts, err := copyCharts(so, rest, renames)
	tmps = append(tmps, ts...)
	if err != nil {
		return cleanup, err
	}
	r, err := helm.New(h)
	if err != nil {
		return cleanup, fmt.Errorf("the new values do not load: %v", err)
	}
	so.Charts = r
	return cleanup, nil
}

// copyCharts copies each chart one of files belongs to (a chart's
// values.yaml, a template) to a temporary directory with the new
// contents, and points the scan at the copy: Helm reads a chart from disk.
// It returns the temporary directories to remove; renames maps each copy
// to its chart, so that the rescan's streams are named as the scan's.
func copyCharts(so *scan.Options, files []*File, renames map[string]string) ([]string, error) {
	var tmps []string
	so.Paths = slices.Clone(so.Paths)
	copies := map[string]string{} // chart directory -> its copy
	for _, f := range files {
		chartDir := filepath.Dir(f.Path)
		for {
			if _, err := os.Stat(filepath.Join(chartDir, "Chart.yaml")); err == nil {
				break
			}
			up := filepath.Dir(chartDir)
			if up == chartDir {
				chartDir = ""
				break
			}
			chartDir = up
		}
		if chartDir == "" {
			continue // a plain manifest: read from the overlay
		}
		copyDir, ok := copies[chartDir]
		if !ok {
			i := slices.IndexFunc(so.Paths, func(p string) bool { return filepath.Clean(p) == filepath.Clean(chartDir) })
			if i < 0 {
				if rel, _ := filepath.Rel(chartDir, f.Path); filepath.Dir(rel) != "." && !strings.HasPrefix(filepath.ToSlash(rel), "templates/") {
					continue // a manifest kept beside a chart, not part of it
				}
				return tmps, fmt.Errorf("%s: to prove a change of a chart, pass the chart directory %s itself", f.Path, chartDir)
			}
			dir, err := os.MkdirTemp("", "backfire-chart-*")
			if err != nil {
				return tmps, err
			}
			tmps = append(tmps, dir)
			copyDir = filepath.Join(dir, filepath.Base(chartDir))
			if err := copyResolved(copyDir, chartDir); err != nil {
				return tmps, err
			}
			copies[chartDir] = copyDir
			renames[copyDir] = so.Paths[i]
			so.Paths[i] = copyDir
		}
		rel, err := filepath.Rel(chartDir, f.Path)
		if err != nil {
			return tmps, err
		}
		// The copy may hold a symbolic link where the chart does: remove
		// it, so that the new contents never reach what it points to.
		dst := filepath.Join(copyDir, rel)
		if err := os.Remove(dst); err != nil && !os.IsNotExist(err) {
			return tmps, err
		}
		if err := os.WriteFile(dst, f.New, 0o644); err != nil {
			return tmps, err
		}
	}
	return tmps, nil
}

// copyResolved copies the tree at src to dst with its symbolic links
// resolved, as Helm's loader reads a chart: a link to a file (even one
// outside the chart, which a relative link would leave dangling in the
// copy) becomes a copy of what it points to. A link to a directory that
// holds it is a loop, and an error.
func copyResolved(dst, src string) error {
	return copyDirResolved(dst, src, map[string]bool{})
}

func copyDirResolved(dst, src string, onPath map[string]bool) error {
	real, err := filepath.EvalSymlinks(src)
	if err != nil {
		return err
	}
	if onPath[real] {
		return fmt.Errorf("%s: a symbolic link loop", src)
	}
	onPath[real] = true
	defer delete(onPath, real)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		from, to := filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())
		info, err := os.Stat(from) // through links
		if err != nil {
			return fmt.Errorf("%s: %v", from, err)
		}
		if info.IsDir() {
			if err := copyDirResolved(to, from, onPath); err != nil {
				return err
			}
			continue
		}
		if !info.Mode().IsRegular() {
			continue // a FIFO or device is not part of a chart
		}
		data, err := os.ReadFile(from)
		if err != nil {
			return err
		}
		if err := os.WriteFile(to, data, info.Mode().Perm()|0o200); err != nil {
			return err
		}
	}
	return nil
}
