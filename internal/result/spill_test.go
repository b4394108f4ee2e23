package result

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
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

// A spill keeps an entry per finding until the report is written: the
// entries stay small and hold nothing the collector must follow.
func TestSpillEntriesAreSmallAndWithoutPointers(t *testing.T) {
	typ := reflect.TypeFor[spilled]()
	if typ.Size() > 56 {
		t.Errorf("an entry takes %d bytes, want at most 56", typ.Size())
	}
	for f := range typ.Fields() {
		switch f.Type.Kind() {
		case reflect.String, reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface, reflect.Struct:
			t.Errorf("field %s is a %s", f.Name, f.Type.Kind())
		}
	}
}

// Findings that differ only in their container are ordered by its name,
// not by the order the spill first saw the names in.
func TestSpillOrdersContainersByName(t *testing.T) {
	s, err := NewSpill()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	f := func(container string) finding.Finding {
		return finding.Finding{File: "a.yaml", Line: 4, Column: 3, Rule: "BF101", Container: container, Message: container}
	}
	s.Add(1, []finding.Finding{f("zeta"), f("")})
	s.Add(2, []finding.Finding{f("alpha")})
	s.Sort()
	var got []string
	if err := s.Each(func(b []byte) error {
		var x finding.Finding
		if err := json.Unmarshal(b, &x); err != nil {
			return err
		}
		got = append(got, x.Message)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := "|alpha|zeta"; strings.Join(got, "|") != want {
		t.Errorf("order %q, want %q", strings.Join(got, "|"), want)
	}
}

// Findings of many objects fill several of the spill's blocks (one
// object's findings more than a block): each comes back as the JSON
// report's encoder writes it, whichever block it was written in.
func TestSpillReturnsEachFindingAsEncodedAcrossBlocks(t *testing.T) {
	s, err := NewSpill()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var all []finding.Finding
	for obj := range 600 {
		n := obj % 4
		if obj == 300 {
			n = 3 // with messages of a block each
		}
		var fs []finding.Finding
		for i := range n {
			size := 1 + (obj*131+i*17)%9000
			if obj == 300 {
				size = spillBlock
			}
			fs = append(fs, finding.Finding{File: "a.yaml", Line: len(all) + 1, Column: 1, Rule: "BF101", Message: strings.Repeat("m", size)})
			all = append(all, fs[len(fs)-1])
		}
		s.Add(uint64(obj), fs)
	}
	s.Sort()
	if s.size < 4*spillBlock || s.Len() != len(all) {
		t.Fatalf("%d bytes, %d findings: the test wants several blocks", s.size, s.Len())
	}
	var want bytes.Buffer
	enc := NewFindingEncoder(&want)
	i := 0
	err = s.Each(func(b []byte) error {
		want.Reset()
		if err := enc.Encode(&all[i]); err != nil {
			return err
		}
		if !bytes.Equal(b, want.Bytes()) {
			t.Errorf("finding %d: %d bytes, want %d", i, len(b), want.Len())
		}
		i++
		return nil
	})
	if err != nil || i != len(all) {
		t.Fatalf("%d findings read, %v", i, err)
	}
}

// The report's order goes back and forth between blocks written one after
// the other (the objects of one file checked by different workers): each
// block is read from the file once, and each finding comes back whole.
func TestSpillReadsInterleavedBlocksOnce(t *testing.T) {
	s, err := NewSpill()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var all []finding.Finding
	for obj := range 2 {
		var fs []finding.Finding
		for i := range 4 {
			// Lines 1, 3, 5, 7 in the first object's block, 2, 4, 6, 8 in
			// the second's.
			line := 1 + obj + 2*i
			fs = append(fs, finding.Finding{File: "a.yaml", Line: line, Column: 1, Rule: "BF101",
				Message: strings.Repeat(string(rune('a'+line)), spillBlock/3)})
		}
		all = append(all, fs...)
		s.Add(uint64(obj), fs)
	}
	s.Sort()
	if len(s.blocks) != 2 {
		t.Fatalf("%d blocks, the test wants two", len(s.blocks))
	}
	var got []string
	err = s.Each(func(b []byte) error {
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
	for i, m := range got {
		if want := strings.Repeat(string(rune('a'+i+1)), spillBlock/3); m != want {
			t.Errorf("finding %d: %.10q…, want %.10q…", i, m, want)
		}
	}
	if len(got) != len(all) || s.reads != 2 {
		t.Errorf("%d findings in %d reads, want %d in 2", len(got), s.reads, len(all))
	}
}
