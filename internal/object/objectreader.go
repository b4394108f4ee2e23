package object

import (
	"io"
	"reflect"
	"unsafe"

	jsoniter "github.com/json-iterator/go"
)

// readObject is the iterator's ReadObjectCB, read for read, except that
// it gives the callback each key as the bytes of the input rather than a
// new string: a key without escapes is read in place (a struct's decoder
// switches on it without allocating), any other one by ReadString, as
// ReadObjectCB reads it. json-iterator's own struct decoder makes a
// string of every key, most of a decode's allocations.
//
// It reads the iterator's buffer, position and depth, which json-iterator
// keeps unexported, at their offsets found once by reflection (iterFields);
// an iterator that reads from a stream goes through ReadObjectCB.
func readObject(iter *jsoniter.Iterator, callback func(*jsoniter.Iterator, []byte) bool) bool {
	it := (*iterFields)(unsafe.Pointer(iter))
	if it.reader() != nil {
		return iter.ReadObjectCB(func(iter *jsoniter.Iterator, key string) bool {
			return callback(iter, []byte(key))
		})
	}
	c := it.nextToken(iter)
	if c == '{' {
		if !it.incrementDepth(iter) {
			return false
		}
		c = it.nextToken(iter)
		if c == '"' {
			if iter.Error == nil { // unreadByte, for ReadString
				*it.head()--
			}
			if !callback(iter, it.readKey(iter)) {
				it.decrementDepth(iter)
				return false
			}
			c = it.nextToken(iter)
			for c == ',' {
				if !callback(iter, it.readKey(iter)) {
					it.decrementDepth(iter)
					return false
				}
				c = it.nextToken(iter)
			}
			if c != '}' {
				iter.ReportError("ReadObjectCB", `object not ended with }`)
				it.decrementDepth(iter)
				return false
			}
			return it.decrementDepth(iter)
		}
		if c == '}' {
			return it.decrementDepth(iter)
		}
		iter.ReportError("ReadObjectCB", `expect " after {, but found `+string([]byte{c}))
		it.decrementDepth(iter)
		return false
	}
	if c == 'n' {
		*it.head()-- // ReadNil reads the null as ReadObjectCB does
		iter.ReadNil()
		return true
	}
	iter.ReportError("ReadObjectCB", `expect { or n, but found `+string([]byte{c}))
	return false
}

// readKey reads a key and its colon as ReadObjectCB does: ReadString,
// then the colon or an error.
func (it *iterFields) readKey(iter *jsoniter.Iterator) []byte {
	start := *it.head()
	var key []byte
	if c := it.nextToken(iter); c == '"' {
		buf, head := *it.buf(), *it.head()
		for i := head; i < *it.tail(); i++ {
			if b := buf[i]; b == '"' {
				key = buf[head:i]
				*it.head() = i + 1
				break
			} else if b == '\\' || b < ' ' {
				break
			}
		}
	}
	if key == nil {
		// Escapes, control characters, null, not a string, the
		// end: all ReadString's.
		*it.head() = start
		key = []byte(iter.ReadString())
	}
	if c := it.nextToken(iter); c != ':' {
		iter.ReportError("ReadObject", "expect : after object field, but found "+string([]byte{c}))
	}
	return key
}

// iterFields reaches an Iterator's unexported fields.
type iterFields jsoniter.Iterator

var iterOffsets = func() (o struct{ reader, buf, head, tail, depth uintptr }) {
	t := reflect.TypeFor[jsoniter.Iterator]()
	for name, want := range map[string]struct {
		off *uintptr
		typ reflect.Type
	}{
		"reader": {&o.reader, reflect.TypeFor[io.Reader]()},
		"buf":    {&o.buf, reflect.TypeFor[[]byte]()},
		"head":   {&o.head, reflect.TypeFor[int]()},
		"tail":   {&o.tail, reflect.TypeFor[int]()},
		"depth":  {&o.depth, reflect.TypeFor[int]()},
	} {
		f, ok := t.FieldByName(name)
		if !ok || f.Type != want.typ {
			panic("object: json-iterator's Iterator has no field " + name + " " + want.typ.String())
		}
		*want.off = f.Offset
	}
	return o
}()

func (it *iterFields) at(off uintptr) unsafe.Pointer { return unsafe.Add(unsafe.Pointer(it), off) }
func (it *iterFields) reader() io.Reader             { return *(*io.Reader)(it.at(iterOffsets.reader)) }
func (it *iterFields) buf() *[]byte                  { return (*[]byte)(it.at(iterOffsets.buf)) }
func (it *iterFields) head() *int                    { return (*int)(it.at(iterOffsets.head)) }
func (it *iterFields) tail() *int                    { return (*int)(it.at(iterOffsets.tail)) }
func (it *iterFields) depth() *int                   { return (*int)(it.at(iterOffsets.depth)) }

// nextToken is the iterator's: the next byte that is not a space, or 0
// at the end, where a byte iterator's loadMore sets io.EOF.
func (it *iterFields) nextToken(iter *jsoniter.Iterator) byte {
	buf, tail := *it.buf(), *it.tail()
	for i := *it.head(); i < tail; i++ {
		switch c := buf[i]; c {
		case ' ', '\n', '\t', '\r':
		default:
			*it.head() = i + 1
			return c
		}
	}
	if iter.Error == nil {
		*it.head() = tail
		iter.Error = io.EOF
	}
	return 0
}

// maxDepth is json-iterator's limit of nesting.
const maxDepth = 10000

func (it *iterFields) incrementDepth(iter *jsoniter.Iterator) bool {
	*it.depth()++
	if *it.depth() <= maxDepth {
		return true
	}
	iter.ReportError("incrementDepth", "exceeded max depth")
	return false
}

func (it *iterFields) decrementDepth(iter *jsoniter.Iterator) bool {
	*it.depth()--
	if *it.depth() >= 0 {
		return true
	}
	iter.ReportError("decrementDepth", "unexpected negative nesting")
	return false
}
