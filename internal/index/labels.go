package index

import (
	"encoding/binary"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// podLabels are a pod template's labels kept in one string, which the
// index keeps for every workload until the scan ends: a decoded map of a
// few labels costs some 300 bytes, and each of its keys and values is an
// allocation of its own. The string holds the number of labels, then each
// label in key order, its key and value each after its length (lengths as
// uvarints, so that any key or value is kept as written). A key is kept by
// its number in labelKeys, where there is room: the same few keys label
// every workload ("app.kubernetes.io/name" is 22 bytes), and a workload's
// labels are then about a third of their size. A nil map is
// the empty string, and an empty map the count 0 alone, so that Map gives
// back what was compacted.
//
// podLabels implement labels.Labels: a selector matches them as it
// matches labels.Set of the map. Pass a pointer to one that lives in an
// entry, so that the interface holds no copy.
type podLabels string

func compactLabels(m map[string]string) podLabels {
	if m == nil {
		return ""
	}
	// A template has a few labels: their keys and numbers are sorted on
	// the stack, not in two lists made for each workload.
	var keysBuf [smallLabels]string
	var idsBuf [smallLabels]int
	keys, ids := keysBuf[:0], idsBuf[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	size := uvarintLen(len(keys))
	for i, k := range keys {
		ids = append(ids, labelKeys.id(k))
		if ids[i] >= 0 {
			size += uvarintLen(ids[i] << 1)
		} else {
			size += uvarintLen(len(k)<<1|1) + len(k)
		}
		size += uvarintLen(len(m[k])) + len(m[k])
	}
	var b strings.Builder
	b.Grow(size)
	writeUvarint(&b, len(keys))
	for i, k := range keys {
		// A key by number is an even tag, a key written out an odd one.
		if ids[i] >= 0 {
			writeUvarint(&b, ids[i]<<1)
		} else {
			writeUvarint(&b, len(k)<<1|1)
			b.WriteString(k)
		}
		writeUvarint(&b, len(m[k]))
		b.WriteString(m[k])
	}
	return podLabels(b.String())
}

// smallLabels is how many labels compactLabels sorts without allocating.
const smallLabels = 16

// labelKeys numbers the label keys the index has seen, up to
// maxLabelKeys of them (keys past that are written out in each
// workload's labels). Numbers are read without the lock: a number is
// handed out only once its key is stored.
var labelKeys keyTable

const maxLabelKeys = 1 << 12

type keyTable struct {
	mu   sync.Mutex
	ids  map[string]int
	keys [maxLabelKeys]atomic.Pointer[string]
}

// id returns k's number, -1 when the table is full.
func (t *keyTable) id(k string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if id, ok := t.ids[k]; ok {
		return id
	}
	if t.ids == nil {
		t.ids = map[string]int{}
	}
	id := len(t.ids)
	if id >= maxLabelKeys {
		return -1
	}
	// Not the decoded object's string, which it would keep; and not &k,
	// which would move every caller's k to the heap, found or not.
	kept := strings.Clone(k)
	t.keys[id].Store(&kept)
	t.ids[kept] = id
	return id
}

// key reads a key off s: by number or written out.
func (t *keyTable) key(s string) (string, string) {
	tag, s := uvarint(s)
	if tag&1 == 1 {
		n := tag >> 1
		return s[:n], s[n:]
	}
	return *t.keys[tag>>1].Load(), s
}

// Lookup returns the value of label and whether it is set.
func (l podLabels) Lookup(label string) (string, bool) {
	n, s := uvarint(string(l))
	for ; n > 0; n-- {
		var k, v string
		k, s = labelKeys.key(s)
		v, s = field(s)
		if k == label {
			return v, true
		}
		if k > label {
			break // the keys are sorted
		}
	}
	return "", false
}

// Has reports whether label is set.
func (l podLabels) Has(label string) bool {
	_, ok := l.Lookup(label)
	return ok
}

// Get returns the value of label, "" when it is not set.
func (l podLabels) Get(label string) string {
	v, _ := l.Lookup(label)
	return v
}

// Map returns the labels as the map they were compacted from: nil for
// nil.
func (l podLabels) Map() map[string]string {
	if l == "" {
		return nil
	}
	n, s := uvarint(string(l))
	m := make(map[string]string, n)
	for ; n > 0; n-- {
		var k, v string
		k, s = labelKeys.key(s)
		v, s = field(s)
		m[k] = v
	}
	return m
}

// field splits a length-prefixed string off s.
func field(s string) (string, string) {
	n, s := uvarint(s)
	return s[:n], s[n:]
}

// uvarint reads the uvarint s starts with, as binary.Uvarint does.
func uvarint(s string) (int, string) {
	var x int
	var shift uint
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b < 0x80 {
			return x | int(b)<<shift, s[i+1:]
		}
		x |= int(b&0x7f) << shift
		shift += 7
	}
	return 0, ""
}

func writeUvarint(b *strings.Builder, n int) {
	var buf [binary.MaxVarintLen64]byte
	b.Write(binary.AppendUvarint(buf[:0], uint64(n)))
}

func uvarintLen(n int) int {
	size := 1
	for ; n >= 0x80; n >>= 7 {
		size++
	}
	return size
}
