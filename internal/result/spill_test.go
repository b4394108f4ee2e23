package result

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/finding"
)

// Findings come back sorted as rules.Sort sorts them, ties in input
// order, without the dropped ones, each as the JSON report encodes it.
func TestSpillSortsDropsAndReturnsTheEncodedFindings(t *testing.T) {
	s, err := NewSpill()
	if err != nil {
		t.Fatal(err)
	}
	name := s.file.Name()
	f := func(file string, line int, rule, msg string) finding.Finding {
		return finding.Finding{File: file, Line: line, Column: 3, Rule: rule, Severity: finding.Warning, Message: msg}
	}
	// Added out of order, from "two objects" (ordinals 7 and 2).
	s.Add(7, []finding.Finding{f("b.yaml", 1, "BF101", "b1"), f("a.yaml", 9, "BF102", "tie, second object")})
	gone := s.Add(5, []finding.Finding{f("a.yaml", 1, "BF101", "dropped")})
	s.Add(2, []finding.Finding{f("a.yaml", 9, "BF102", "tie, first object"), f("a.yaml", 2, "BF201", "<a2>")})
	s.Drop(gone)
	s.Sort()
	var got []string
	err = s.Each(func(b []byte) error {
		if !strings.HasPrefix(string(b), "{\n      \"rule\"") || strings.HasSuffix(string(b), "\n") {
			t.Errorf("not encoded at the report's depth: %q", b)
		}
		var x finding.Finding
		if err := json.Unmarshal(b, &x); err != nil {
			return err
		}
		got = append(got, x.Message)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "<a2>|tie, first object|tie, second object|b1"
	if strings.Join(got, "|") != want || s.Len() != 4 {
		t.Errorf("findings %q (%d), want %q", strings.Join(got, "|"), s.Len(), want)
	}
	n := 0
	s.Severities(func(sev finding.Severity) {
		if sev == finding.Warning {
			n++
		}
	})
	if n != 4 {
		t.Errorf("%d severities", n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(name); !os.IsNotExist(err) {
		t.Errorf("the temporary file is still there: %v", err)
	}
}
