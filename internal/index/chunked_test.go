package index

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"
)

// sameAsInsert inserts ords into a chunked list and into one list by
// insert, and fails unless both hold the same entries in the same order,
// the chunked one in chunks of at most chunkLen entries, none empty, each
// but the first and the last at least half full.
func sameAsInsert(t *testing.T, ords []Ordinal) {
	t.Helper()
	var l chunked[entry]
	var want []entry
	for i, o := range ords {
		// Equal ordinals are told apart by scope, to see where each lands.
		e := entry{ord: o, scope: Scope(i)}
		l.insert(e)
		want = insert(want, e)
	}
	var got []entry
	for e := range l.all() {
		got = append(got, *e)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("chunked list %v, insert gives %v", got, want)
	}
	unused := 0
	for i, c := range l.chunks {
		if len(c) == 0 || len(c) > chunkLen {
			t.Fatalf("chunk %d of %d entries", i, len(c))
		}
		if i > 0 {
			unused += cap(c) - len(c)
		}
	}
	if unused > chunkLen*len(l.chunks)/2+chunkLen {
		t.Fatalf("%d entries unused in %d chunks", unused, len(l.chunks))
	}
	var k cursor[entry]
	k.chunks = l.chunks
	for i := range want {
		if e := k.at(); e == nil || *e != want[i] {
			t.Fatalf("cursor at %d gives %v, want %v", i, e, want[i])
		}
		k.next()
	}
	if k.at() != nil {
		t.Fatal("cursor goes past the end")
	}
}

// TestChunkedIsInsert: a chunked list holds what insert would, for inputs
// read in order, in reverse, by two workers out of step, and at random.
func TestChunkedIsInsert(t *testing.T) {
	const n = 3000
	var inOrder, reversed, twoWorkers, random, repeated []Ordinal
	for i := range n {
		inOrder = append(inOrder, Ordinal(i))
		reversed = append(reversed, Ordinal(n-i))
		// files of 60 objects, the second worker a file ahead
		file, at := i/120, i%120
		twoWorkers = append(twoWorkers, Ordinal(file*120+(at%2)*60+at/2))
		random = append(random, Ordinal(rand.IntN(n)))
		repeated = append(repeated, Ordinal(i%7))
	}
	for name, ords := range map[string][]Ordinal{"in order": inOrder, "reversed": reversed, "two workers": twoWorkers, "random": random, "repeated": repeated, "none": nil} {
		t.Run(name, func(t *testing.T) { sameAsInsert(t, ords) })
	}
	var l chunked[entry]
	for _, o := range inOrder {
		l.insert(entry{ord: o})
	}
	if len(l.chunks) != n/chunkLen+1 {
		t.Errorf("%d entries in order make %d chunks", n, len(l.chunks))
	}
	for _, c := range l.chunks[1 : len(l.chunks)-1] {
		if len(c) != chunkLen || cap(c) != chunkLen {
			t.Errorf("a chunk of a list read in order holds %d of %d", len(c), cap(c))
		}
	}
	var none *chunked[entry]
	for range none.all() {
		t.Error("a nil list yields an entry")
	}
}

// FuzzChunked: whatever the order of the ordinals, a chunked list holds
// what insert would.
//
//	go test ./internal/index -run '^$' -fuzz FuzzChunked -fuzztime 1m
func FuzzChunked(f *testing.F) {
	f.Add([]byte{1, 2, 3}, uint16(600))
	f.Add([]byte{9, 1, 9, 1, 0}, uint16(1000))
	f.Fuzz(func(t *testing.T, seed []byte, n uint16) {
		if len(seed) == 0 {
			return
		}
		ords := make([]Ordinal, int(n)%4000)
		for i := range ords {
			// a walk that mostly goes forward, by steps the seed gives
			b := seed[i%len(seed)]
			ords[i] = Ordinal(i) + Ordinal(b%64) - 32
			if b > 200 {
				ords[i] = Ordinal(binary.LittleEndian.Uint16([]byte{b, seed[(i+1)%len(seed)]}))
			}
		}
		sameAsInsert(t, ords)
	})
}
