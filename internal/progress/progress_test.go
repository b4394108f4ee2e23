package progress

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// Off a terminal there is no meter, and a nil meter takes counts quietly.
func TestNothingOffATerminal(t *testing.T) {
	var b bytes.Buffer
	if m := ForTerminal(&b, "scanning"); m != nil {
		t.Fatal("a meter on a buffer")
	}
	if m := ForTerminal(os.Stderr, "scanning"); m != nil {
		t.Fatal("a meter on the test's stderr, which is not a terminal here")
	}
	var m *Meter
	m.Count(1, 2)
	m.Done()
}

// On a terminal, each stage gets its own bar, named by its stage, with the
// count; a count that starts again is the next stage; Done clears the line.
func TestStagesAndCounts(t *testing.T) {
	var b bytes.Buffer
	m := New(&b, "scanning", "proving the fixes")
	m.delay, m.redraw = 0, 0
	m.Count(1, 40)
	m.Count(39, 40)
	out := b.String()
	if !strings.Contains(out, "scanning") || !strings.Contains(out, "39/40") {
		t.Fatalf("first stage drew %q", out)
	}
	m.Count(40, 40)
	b.Reset()
	m.Count(1, 3)
	if out := b.String(); !strings.Contains(out, "proving the fixes") || !strings.Contains(out, "1/3") {
		t.Fatalf("second stage drew %q", out)
	}
	m.Count(1, 5) // a third run of the work: the last stage's name again
	if out := b.String(); !strings.Contains(out, "1/5") {
		t.Fatalf("third stage drew %q", out)
	}
	b.Reset()
	m.Done()
	if out := b.String(); !strings.Contains(out, "\r") {
		t.Fatalf("Done left the bar: %q", out)
	}
}

// Work that ends within the delay draws nothing.
func TestShortWorkDrawsNothing(t *testing.T) {
	var b bytes.Buffer
	m := New(&b, "scanning")
	for i := 1; i <= 10; i++ {
		m.Count(i, 10)
	}
	m.Done()
	if b.Len() != 0 {
		t.Fatalf("short work drew %q", b.String())
	}
}
