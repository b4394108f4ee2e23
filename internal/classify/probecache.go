package classify

import (
	"path"
	"strings"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
)

// ProbeCache remembers what exec probes ask of their servers. Workloads
// repeat a few commands (pg_isready, redis-cli ping) over thousands of
// containers; reading one splits its script, walks its shell functions and
// matches the command tables, and the answer depends only on what the key
// below holds. It is safe for concurrent use and bounded: once full it
// answers without remembering.
type ProbeCache struct {
	max     int64
	entries sync.Map // execKey -> ProbeQuery
	n       atomic.Int64

	// audit, when set, is given every remembered answer together with
	// the answer read afresh: a test proves the key complete with it.
	audit func(cached, fresh ProbeQuery)
}

// Probes is the cache the scan rules share.
var Probes = NewProbeCache(4096)

// NewProbeCache returns a cache of at most max exec probes.
func NewProbeCache(max int) *ProbeCache { return &ProbeCache{max: int64(max)} }

// Audit makes every answer the cache gives be read afresh too and handed
// to f with it, for tests that the key holds everything an answer reads.
func (pc *ProbeCache) Audit(f func(cached, fresh ProbeQuery)) { pc.audit = f }

// execKey is everything execQuery reads: the command, the server of the
// verdict (a row of Servers, never a copy), whether the verdict is
// database-like, whether the kind runs to completion, and the base of the
// image's repository (known scripts are matched by it). The files of the
// input are not in it: an answer that read a file is not remembered.
type execKey struct {
	argv         string // the words, NUL-separated
	words        int
	image        string
	server       *Server
	databaseLike bool
	completes    bool
}

// ProbeWith is classify.ProbeWith, remembering the answers to exec probes.
func (pc *ProbeCache) ProbeWith(kind string, c *corev1.Container, p *corev1.Probe, v Verdict, files Files) ProbeQuery {
	if p == nil || p.TCPSocket != nil || p.GRPC != nil || p.HTTPGet != nil || p.Exec == nil {
		return ProbeWith(kind, c, p, v, files)
	}
	k, ok := keyOf(kind, c, p.Exec.Command, v)
	if !ok {
		return ProbeWith(kind, c, p, v, files)
	}
	if q, hit := pc.entries.Load(k); hit {
		if pc.audit != nil {
			pc.audit(q.(ProbeQuery), ProbeWith(kind, c, p, v, files))
		}
		return q.(ProbeQuery)
	}
	read := false
	seen := func(path string) (File, bool) {
		read = true
		if files == nil {
			return File{}, false
		}
		return files(path)
	}
	q := ProbeWith(kind, c, p, v, seen)
	if !read && pc.n.Load() < pc.max {
		if _, loaded := pc.entries.LoadOrStore(k, q); !loaded {
			pc.n.Add(1)
		}
	}
	return q
}

// keyOf is the key of an exec probe; ok is false when none can be made:
// a verdict's server that is a copy (an ensemble's members), or a word
// holding the separator.
func keyOf(kind string, c *corev1.Container, argv []string, v Verdict) (execKey, bool) {
	if v.Server != nil && !tableServer(v.Server) {
		return execKey{}, false
	}
	for _, w := range argv {
		if strings.IndexByte(w, 0) >= 0 {
			return execKey{}, false
		}
	}
	return execKey{
		argv:         strings.Join(argv, "\x00"),
		words:        len(argv),
		image:        path.Base(imageRepository(c.Image)),
		server:       v.Server,
		databaseLike: v.DatabaseLike,
		completes:    RunsToCompletion(kind),
	}, true
}

// tableServer says whether s is a row of Servers rather than a copy made
// for one container.
func tableServer(s *Server) bool {
	for i := range Servers {
		if &Servers[i] == s {
			return true
		}
	}
	return false
}
