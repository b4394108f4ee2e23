package helm

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"helm.sh/helm/v3/pkg/ignore"

	"backfire.dev/backfire/internal/source"
)

// linkOutside finds a symbolic link in the chart directory that Helm's
// loader would follow (it follows every link, and only logs it:
// pkg/chart/loader/directory.go, LoadDir, through internal/sympath.Walk)
// to a file outside boundary, the path the user named. Such a file would
// be rendered into the scan's objects and reports, whatever it is (a
// template linked to /proc/self/environ prints the process's
// environment): the chart is not rendered instead. Files the chart's
// .helmignore leaves out are not looked at, as Helm does not load them.
// A directory link that leads back to where it is (a loop) is refused as
// well: Helm would follow it until the path is too long.
func linkOutside(chartDir, boundary string) error {
	top, err := filepath.Abs(chartDir)
	if err != nil {
		return nil
	}
	realBoundary, err := source.RealPath(boundary)
	if err != nil {
		return nil // the loader says what is wrong with it
	}
	rules := ignore.Empty()
	if r, err := ignore.ParseFile(filepath.Join(top, ignore.HelmIgnore)); err == nil {
		rules = r
	}
	rules.AddDefaults()
	var walk func(dir string, real []string) error
	walk = func(dir string, real []string) error {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil // the loader reports it
		}
		for _, e := range entries {
			path := filepath.Join(dir, e.Name())
			rel := filepath.ToSlash(strings.TrimPrefix(path, top+string(filepath.Separator)))
			info, err := os.Lstat(path)
			if err != nil {
				continue
			}
			if info.Mode()&fs.ModeSymlink == 0 {
				if info.IsDir() && !rules.Ignore(rel, info) {
					if err := walk(path, append(real, filepath.Join(real[len(real)-1], e.Name()))); err != nil {
						return err
					}
				}
				continue
			}
			target, err := source.RealPath(path)
			if err != nil {
				continue // dangling: the loader reports it
			}
			st, err := os.Stat(target)
			if err != nil || rules.Ignore(rel, st) {
				continue
			}
			if !source.Within(target, realBoundary) {
				return fmt.Errorf("%s is a symbolic link to %s, outside %s: the chart is not rendered (Helm would read the file into the chart); copy the file into the chart, or scan a directory that contains both", rel, target, boundary)
			}
			if st.IsDir() {
				for _, r := range real {
					if r == target {
						return fmt.Errorf("%s is a symbolic link to %s, which contains it (a loop): the chart is not rendered", rel, target)
					}
				}
				if err := walk(path, append(real, target)); err != nil {
					return err
				}
			}
		}
		return nil
	}
	realTop, err := source.RealPath(top)
	if err != nil {
		return nil
	}
	return walk(top, []string{realTop})
}
