package config

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

// checkGlob reports a pattern path.Match cannot read.
func checkGlob(pattern string) error {
	for _, seg := range strings.Split(strings.Trim(pattern, "/"), "/") {
		if seg == "**" {
			continue
		}
		if _, err := path.Match(seg, ""); err != nil {
			return fmt.Errorf("bad glob %q: %v", pattern, err)
		}
	}
	return nil
}

// Ignored reports whether a file or directory is excluded by the ignore
// globs. Patterns are matched against the path relative to the
// configuration file's directory (the working directory when there is no
// file), segment by segment with path.Match; "**" matches any number of
// segments, and a pattern that matches a directory excludes what is in it.
func (c *Config) Ignored(name string) bool {
	if len(c.Ignore) == 0 {
		return false
	}
	base := "."
	if c.Path != "" {
		base = filepath.Dir(c.Path)
	}
	absBase, err1 := filepath.Abs(base)
	absName, err2 := filepath.Abs(name)
	if err1 != nil || err2 != nil {
		return false
	}
	rel, err := filepath.Rel(absBase, absName)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return false
	}
	segs := strings.Split(filepath.ToSlash(rel), "/")
	for _, p := range c.Ignore {
		if matchSegs(strings.Split(strings.Trim(p, "/"), "/"), segs) {
			return true
		}
	}
	return false
}

// matchSegs matches pattern segments against a prefix of the path's
// segments: a matched directory covers everything below it.
func matchSegs(pat, segs []string) bool {
	if len(pat) == 0 {
		return true
	}
	if pat[0] == "**" {
		for i := 0; i <= len(segs); i++ {
			if matchSegs(pat[1:], segs[i:]) {
				return true
			}
		}
		return false
	}
	if len(segs) == 0 {
		return false
	}
	ok, _ := path.Match(pat[0], segs[0])
	return ok && matchSegs(pat[1:], segs[1:])
}
