package index

import (
	"cmp"
	"iter"
	"slices"
	"sort"
)

// chunkLen is how many entries a chunk of a chunked list holds at most.
const chunkLen = 32

// chunked is a list sorted by ordinal, kept in chunks of at most chunkLen
// entries, for the lists that grow with the input (the Deployments by
// name, a namespace's pod sets): a list grown in one piece, even by an
// eighth, is copied into a new array again and again (nine times its
// final size, allocated and copied, on the benchmark's pod sets), and an
// entry inserted before the last ones moves every entry after it. Only
// the first chunk grows as insert grows a list, so that the many short
// lists stay as tight as they were; the chunks after it are made whole
// (a list read in order leaves at most one chunk's room unused), and a
// full chunk an entry is inserted into is split in two, both halves
// with room for what follows.
type chunked[E inOrder] struct {
	chunks [][]E // none empty
}

// insert adds e in its place, before the entries of its ordinal or
// later: where insert places it in one list (TestChunkedIsInsert).
func (l *chunked[E]) insert(e E) {
	o := e.ordinal()
	n := len(l.chunks)
	if n == 0 {
		l.chunks = [][]E{insert(nil, e)}
		return
	}
	// The first chunk whose last entry is at or after e holds the place
	// insert would give e; past every entry, it goes at the end.
	i := sort.Search(n-1, func(i int) bool { c := l.chunks[i]; return c[len(c)-1].ordinal() >= o })
	c := l.chunks[i]
	if len(c) < chunkLen {
		l.chunks[i] = insert(c, e)
		return
	}
	j, _ := slices.BinarySearchFunc(c, o, func(x E, o Ordinal) int { return cmp.Compare(x.ordinal(), o) })
	if j == len(c) && i == n-1 {
		next := make([]E, 1, chunkLen)
		next[0] = e
		l.chunks = append(l.chunks, next)
		return
	}
	// Split the full chunk in halves, each with room for what follows.
	half := len(c) / 2
	upper := make([]E, len(c)-half, chunkLen)
	copy(upper, c[half:])
	clear(c[half:]) // what the entries moved refer to is not kept twice
	lower := c[:half]
	if j <= half {
		lower = slices.Insert(lower, j, e)
	} else {
		upper = slices.Insert(upper, j-half, e)
	}
	l.chunks[i] = lower
	l.chunks = slices.Insert(l.chunks, i+1, upper)
}

// all yields the entries in order; a nil list has none.
func (l *chunked[E]) all() iter.Seq[*E] {
	return func(yield func(*E) bool) {
		if l == nil {
			return
		}
		for _, c := range l.chunks {
			for i := range c {
				if !yield(&c[i]) {
					return
				}
			}
		}
	}
}

// cursor walks a chunked list's entries in order.
type cursor[E inOrder] struct {
	chunks [][]E
	c, i   int
}

// at is the entry the cursor is at, or nil past the end.
func (k *cursor[E]) at() *E {
	if k.c < len(k.chunks) {
		return &k.chunks[k.c][k.i]
	}
	return nil
}

func (k *cursor[E]) next() {
	if k.i++; k.i == len(k.chunks[k.c]) {
		k.c, k.i = k.c+1, 0
	}
}
