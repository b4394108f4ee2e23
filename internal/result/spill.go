package result

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"

	"backfire.dev/backfire/internal/finding"
)

// A Spill keeps the findings of a large scan out of memory: each is
// written, already encoded as the JSON report writes it, to a temporary
// file as soon as its object is checked, and only what orders, counts and
// filters them stays in memory (about a hundred bytes a finding, against
// three kilobytes for the finding itself). The JSON report copies the
// encoded findings in order. Only that report reads a spill: the others
// need fields the JSON report does not carry (a chart finding's values
// line), and a scan for them keeps its findings in memory.
type Spill struct {
	mu   sync.Mutex
	file *os.File
	// size counts the bytes added, flushed counts those in the file; the
	// rest are in pending, written out a block at a time (one write per
	// object cost a system call for each).
	size, flushed int64
	pending       []byte
	// blocks are where each write starts in the file: a finding lies
	// whole in one, and Each reads them whole.
	blocks []int64
	// reads counts Each's reads of the file.
	reads   int
	entries []spilled
	// strings are the keys' strings by stringID; ids finds a string's.
	strings []string
	ids     map[string]stringID
	err     error
	// removed is true once the file has no name: it is gone with the
	// process however the process ends.
	removed bool
}

// spilled is one finding in the spill: its sort key and where its bytes are.
// A scan keeps one for every finding until the report is written (645k at
// a million objects), so it holds no pointer the collector would follow
// and takes 56 bytes, not 112: the key's strings (file, rule, container)
// are numbers into the spill's table of the strings it has seen.
type spilled struct {
	line, column int64
	// ord and seq order findings with equal keys: the object's place in
	// the input, then the finding's place among the object's.
	ord                   uint64
	off                   int64
	file, rule, container stringID
	seq                   uint32
	n                     uint32
	severity              int16
	dead                  bool
}

// stringID numbers a string of a Spill's table (see Spill.intern).
type stringID uint32

// Spilled is where Add put a list of findings, for Drop.
type Spilled struct{ from, to int }

// NewSpill creates the temporary file. Where the system allows it, the
// file loses its name at once (it lives while it is open); elsewhere
// Close removes it.
func NewSpill() (*Spill, error) {
	f, err := os.CreateTemp("", "backfire-findings-*")
	if err != nil {
		return nil, fmt.Errorf("temporary file for findings: %w", err)
	}
	return &Spill{file: f, removed: os.Remove(f.Name()) == nil}, nil
}

// Close removes the temporary file.
func (s *Spill) Close() error {
	if s == nil || s.file == nil {
		return nil
	}
	err := s.file.Close()
	if !s.removed {
		if rerr := os.Remove(s.file.Name()); err == nil {
			err = rerr
		}
	}
	s.file = nil
	return err
}

// Add writes the findings of the object at place ord in the input to the
// spill; it may be called from several goroutines. The first write error
// is kept and returned by Err.
func (s *Spill) Add(ord uint64, fs []finding.Finding) Spilled {
	if len(fs) == 0 {
		return Spilled{}
	}
	sb := spillBuffers.Get().(*spillBuffer)
	defer spillBuffers.Put(sb)
	buf := sb.buf[:0]
	ends := sb.ends[:0]
	for i := range fs {
		var err error
		if buf, err = sb.enc.finding(buf, &fs[i]); err != nil {
			s.fail(err)
			return Spilled{}
		}
		ends = append(ends, len(buf))
	}
	sb.buf, sb.ends = buf, ends
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return Spilled{}
	}
	// The block is written out before it would grow: it is made once, at
	// its full size, not grown from nothing a copy at a time.
	if len(s.pending)+len(buf) > cap(s.pending) {
		s.flush()
		if s.pending == nil {
			s.pending = make([]byte, 0, spillBlock)
		}
	}
	s.pending = append(s.pending, buf...)
	at := Spilled{from: len(s.entries), to: len(s.entries) + len(fs)}
	start := 0
	for i := range fs {
		f := &fs[i]
		s.entries = append(s.entries, spilled{
			line: int64(f.Line), column: int64(f.Column),
			file: s.intern(f.File), rule: s.intern(f.Rule), container: s.intern(f.Container),
			severity: int16(f.Severity),
			ord:      ord, seq: uint32(i),
			off: s.size + int64(start), n: uint32(ends[i] - start),
		})
		start = ends[i]
	}
	s.size += int64(len(buf))
	return at
}

// spillBlock is how much Add keeps before writing it to the file (more
// when one object's findings are larger).
const spillBlock = 1 << 20

// flush writes what is pending; s.mu is held.
func (s *Spill) flush() {
	if len(s.pending) == 0 || s.err != nil {
		return
	}
	s.blocks = append(s.blocks, s.flushed)
	if _, err := s.file.WriteAt(s.pending, s.flushed); err != nil {
		s.err = fmt.Errorf("writing findings to a temporary file: %w", err)
	}
	s.flushed += int64(len(s.pending))
	s.pending = s.pending[:0]
}

// spillBuffers keep Add's buffers and encoder from one object to the
// next: new ones would grow from nothing for each object. The findings
// are encoded straight into buf, which Add copies into the block.
var spillBuffers = sync.Pool{New: func() any { return &spillBuffer{enc: &FindingEncoder{}} }}

type spillBuffer struct {
	buf  []byte
	ends []int
	enc  *FindingEncoder
}

// Drop withdraws findings added before Sort (an object checked again).
func (s *Spill) Drop(at Spilled) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := at.from; i < at.to; i++ {
		s.entries[i].dead = true
	}
}

func (s *Spill) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
}

// Err is the first error writing the spill; after Sort, it includes the
// writing of the last block.
func (s *Spill) Err() error { return s.err }

// Len is the number of findings.
func (s *Spill) Len() int { return len(s.entries) }

// Sort orders the findings as rules.Sort orders findings listed in input
// order: by finding.Key, then by place in the input. It removes dropped findings; nothing is added after it.
func (s *Spill) Sort() {
	s.mu.Lock()
	s.flush()
	s.pending = nil
	s.mu.Unlock()
	s.entries = slices.DeleteFunc(s.entries, func(e spilled) bool { return e.dead })
	slices.SortFunc(s.entries, func(a, b spilled) int {
		return cmp.Or(
			s.compareStrings(a.file, b.file),
			cmp.Compare(a.line, b.line),
			cmp.Compare(a.column, b.column),
			s.compareStrings(a.rule, b.rule),
			s.compareStrings(a.container, b.container),
			cmp.Compare(a.ord, b.ord), cmp.Compare(a.seq, b.seq))
	})
}

// intern returns the number of str in the spill's table; s.mu is held.
func (s *Spill) intern(str string) stringID {
	if id, ok := s.ids[str]; ok {
		return id
	}
	if s.ids == nil {
		s.ids = map[string]stringID{}
	}
	id := stringID(len(s.strings))
	s.strings = append(s.strings, str)
	s.ids[str] = id
	return id
}

// compareStrings orders two numbered strings as finding.CompareKeys
// orders the strings of two keys.
func (s *Spill) compareStrings(a, b stringID) int {
	if a == b {
		return 0
	}
	return cmp.Compare(s.strings[a], s.strings[b])
}

// Severities calls fn with each finding's severity.
func (s *Spill) Severities(fn func(finding.Severity)) {
	for _, e := range s.entries {
		fn(finding.Severity(e.severity))
	}
}

// Each calls fn with each finding's encoded bytes, in order, after Sort; the slice is
// reused between calls.
func (s *Spill) Each(fn func(encoded []byte) error) error {
	// Findings in report order lie near each other in the file (it holds
	// them in the order objects were checked), but the report's order
	// goes back and forth between neighbouring blocks: a block read from
	// each finding on read the file two to three times over. The blocks
	// as written are read whole instead, and the last two kept, so that
	// each is read about once.
	var cache [2]struct {
		block int // index in s.blocks, -1 when empty
		data  []byte
	}
	cache[0].block, cache[1].block = -1, -1
	for _, e := range s.entries {
		k := s.blockOf(e.off)
		c := &cache[0] // the block read last: the other is given up first
		if c.block != k {
			cache[0], cache[1] = cache[1], cache[0]
		}
		if c.block != k {
			start, end := s.blocks[k], s.flushed
			if k+1 < len(s.blocks) {
				end = s.blocks[k+1]
			}
			if int64(cap(c.data)) < end-start {
				c.data = make([]byte, end-start)
			}
			c.data = c.data[:end-start]
			s.reads++
			if n, err := s.file.ReadAt(c.data, start); n < len(c.data) {
				if err == nil {
					err = io.ErrUnexpectedEOF
				}
				return fmt.Errorf("reading findings back from a temporary file: %w", err)
			}
			c.block = k
		}
		at := e.off - s.blocks[k]
		if err := fn(c.data[at : at+int64(e.n)]); err != nil {
			return err
		}
	}
	return nil
}

// blockOf is the index in s.blocks of the block that holds offset off.
func (s *Spill) blockOf(off int64) int {
	k, found := slices.BinarySearch(s.blocks, off)
	if !found {
		k--
	}
	return k
}
