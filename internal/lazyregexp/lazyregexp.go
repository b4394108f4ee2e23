// Package lazyregexp compiles a package's regular expressions when they
// are first used rather than when the program starts: compiling them all
// at start-up cost every run, a scan too, the time of those that only
// other commands use.
package lazyregexp

import (
	"regexp"
	"sync"
)

// New returns the expression compiled on the first call, as
// regexp.MustCompile compiles it (a bad expression panics then).
func New(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
