package classify

import (
	"testing"
)

// The committed lab run parses, and no row of the tables contradicts it:
// a table edited against what the lab measured fails here, without the
// lab's servers.
func TestLab(t *testing.T) {
	r, err := Lab()
	if err != nil {
		t.Fatalf("lab.json: %v", err)
	}
	for _, c := range LabContradictions(r) {
		t.Error(c)
	}
}
