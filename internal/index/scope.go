package index

import (
	"path/filepath"
	"strings"
)

// A Scope says which other objects may answer an object's cross-object
// questions (its autoscaler, its analysis templates, the Deployment of
// its workloadRef). Objects that are applied together belong together:
//
//   - the objects of one render (a Helm chart, a Kustomize build) or of
//     one stream (standard input) see each other only (Apart);
//   - the objects of plain files see those of files in the same
//     directory, in the directories above it and in those below it, but
//     not in a sibling's tree (Tree): in a GitOps repository, the
//     autoscaler in apps/web/ scales the Deployment in apps/web/ or
//     apps/web/base/, not the Deployment of the same name in apps/api/ or
//     in envs/staging/;
//   - Everywhere (the zero Scope) sees and is seen by every object: the
//     objects of a live cluster, and an index built at once (Build).
type Scope uint32

// Everywhere is the scope of objects every object may see.
const Everywhere Scope = 0

type scopeDef struct {
	apart bool
	dir   string // absolute, for a tree
}

// Apart returns a new scope whose objects see only each other (and the
// objects of Everywhere).
func (ix *Index) Apart() Scope {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.scopes = append(ix.scopes, scopeDef{apart: true})
	return Scope(len(ix.scopes) - 1)
}

// Tree returns the scope of the plain files of directory dir (see Scope).
func (ix *Index) Tree(dir string) Scope {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if s, ok := ix.trees[dir]; ok {
		return s
	}
	ix.scopes = append(ix.scopes, scopeDef{dir: dir})
	s := Scope(len(ix.scopes) - 1)
	ix.trees[dir] = s
	return s
}

// sees reports whether an object of scope a may be answered with an
// object of scope b; ix.mu is held.
func (ix *Index) sees(a, b Scope) bool {
	if a == Everywhere || b == Everywhere || a == b {
		return true
	}
	da, db := ix.scopes[a], ix.scopes[b]
	if da.apart || db.apart {
		return false
	}
	return within(da.dir, db.dir) || within(db.dir, da.dir)
}

// within reports whether directory a is b or below it.
func within(a, b string) bool {
	return a == b || strings.HasPrefix(a, b) && (strings.HasSuffix(b, string(filepath.Separator)) || a[len(b)] == filepath.Separator)
}
