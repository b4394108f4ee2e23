package classify

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
)

// rows is what ContainerIn reads of Servers before it weighs a row's
// evidence, built once (Servers is fixed): every container of every
// workload is matched against every row, and most match none.
type rows struct {
	// imageTokens is each row's ImageTokens, split into tokens.
	imageTokens [][][]string
	// imageFirst is the first bytes of each row's ImageTokens: an image
	// none of whose tokens begins with one matches no run of them, unless
	// the row has an empty run (emptyRun), which matches every image.
	imageFirst []byteSet
	emptyRun   []bool
	// ports and env are the rows each strong port (Server.Ports) and
	// environment name (Server.Env) names.
	ports map[int32]rowSet
	env   map[string]rowSet
}

var serverRows = sync.OnceValue(func() *rows {
	r := &rows{
		imageTokens: make([][][]string, len(Servers)),
		imageFirst:  make([]byteSet, len(Servers)),
		emptyRun:    make([]bool, len(Servers)),
		ports:       map[int32]rowSet{},
		env:         map[string]rowSet{},
	}
	for i, s := range Servers {
		for _, it := range s.ImageTokens {
			want := splitTokens(it)
			r.imageTokens[i] = append(r.imageTokens[i], want)
			if len(want) == 0 {
				r.emptyRun[i] = true
			} else {
				r.imageFirst[i].add(want[0][0])
			}
		}
		for _, p := range s.Ports {
			r.ports[p] = r.ports[p].with(i)
		}
		for _, e := range s.Env {
			r.env[e] = r.env[e].with(i)
		}
	}
	return r
})

// rowsNamedBy is the rows of Servers that a port or an environment
// variable of c names as strong evidence.
func rowsNamedBy(c *corev1.Container) rowSet {
	if len(Servers) > maxIndexedRows {
		return allRows
	}
	r := serverRows()
	var named rowSet
	for _, p := range c.Ports {
		named |= r.ports[p.ContainerPort]
	}
	for _, e := range c.Env {
		named |= r.env[e.Name]
	}
	return named
}

// rowSet is a set of rows of Servers; a table longer than maxIndexedRows
// is not indexed, every row being a candidate.
type rowSet uint64

const maxIndexedRows = 64

// allRows is every row.
const allRows = ^rowSet(0)

func (s rowSet) with(i int) rowSet {
	if i >= maxIndexedRows {
		return allRows
	}
	return s | 1<<i
}

func (s rowSet) has(i int) bool { return i >= maxIndexedRows || s&(1<<i) != 0 }

// byteSet is a set of bytes.
type byteSet [4]uint64

func (b *byteSet) add(c byte) { b[c/64] |= 1 << (c % 64) }

func (b byteSet) meets(o byteSet) bool {
	return b[0]&o[0] != 0 || b[1]&o[1] != 0 || b[2]&o[2] != 0 || b[3]&o[3] != 0
}

// firstBytes is the set of the tokens' first bytes.
func firstBytes(tokens []string) byteSet {
	var b byteSet
	for _, t := range tokens {
		if t != "" {
			b.add(t[0])
		}
	}
	return b
}
