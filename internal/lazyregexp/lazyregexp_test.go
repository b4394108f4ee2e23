package lazyregexp

import (
	"regexp"
	"testing"
)

// TestNew: the expression is compiled once, on first use, to what
// MustCompile gives.
func TestNew(t *testing.T) {
	re := New(`^a(b+)$`)
	first := re()
	if first != re() {
		t.Error("compiled twice")
	}
	if first.String() != regexp.MustCompile(`^a(b+)$`).String() || first.FindStringSubmatch("abb")[1] != "bb" {
		t.Errorf("compiled to %v", first)
	}
	bad := New(`(`) // no panic until it is used
	defer func() {
		if recover() == nil {
			t.Error("a bad expression compiled")
		}
	}()
	bad()
}
