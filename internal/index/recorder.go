package index

import (
	"slices"
	"unique"

	"k8s.io/apimachinery/pkg/labels"
)

// A Recorder remembers what the index answered to one rule pass made
// before the index was complete, so that the pass can be judged afterwards:
// when every question would get the same answer from the complete index,
// the pass's findings stand; otherwise the object is checked again.
//
// An answer is remembered by the places of the objects it was made of
// (their ordinals), not by their contents: objects are immutable once
// added, so the same places mean the same answer.
type Recorder struct {
	queries []recorded
	// Incomplete is set when a rule needed the contents of an object the
	// index does not keep (a Deployment run by a Rollout's workloadRef):
	// the pass is checked again once the index can read it.
	Incomplete bool
	// scope is the scope of the view that asked (see View).
	scope Scope
}

type op uint8

const (
	opGet op = iota
	opNames
	opNamed
	opNamedAnywhere
	opScalers
	opRunBy
	opList
	opPodSets
	// opFiltered is PodSetsWhere's question, asked of filter.
	opFiltered
)

// A query is one recorded question and its answer. A scan keeps the
// queries of most objects until it ends, so the fields are laid out to
// fit 64 bytes.
type query struct {
	key    key
	answer Ordinal
	op     op
	found  bool
	// filter is the PodFilter of opFiltered (see PodFilter.id).
	filter uint16
}

// recorded is a query as a Recorder keeps it until the scan ends: the
// kind and namespace by their interned handle, a pointer where a string
// is two words, so that it fits 48 bytes (a query takes 64; a scan of
// 300k objects keeps about two a object).
type recorded struct {
	kind, namespace unique.Handle[string]
	name            string
	answer          Ordinal
	op              op
	found           bool
	filter          uint16
}

func (r *recorded) query() query {
	return query{key: key{r.kind.Value(), r.namespace.Value(), r.name}, answer: r.answer, op: r.op, found: r.found, filter: r.filter}
}

// What a rule asks the index, as Asked names it: the kind of the objects it
// looks up (Get, Names, Named; PodTemplate asks for a workloadRef's
// Deployment), or one of these questions about a workload.
const (
	// Autoscalers: ScalersOf and ReplicasOf, the HPAs and ScaledObjects
	// that own a workload's replicas.
	Autoscalers = "autoscalers"
	// WorkloadRefs: RunBy, the Rollouts that run a Deployment's template.
	WorkloadRefs = "workloadRefs"
)

// Asked returns what the recorded questions asked about, sorted and
// without repeats: the rules declare theirs (rules.Rule.Reads), and a test
// compares the two.
func (r *Recorder) Asked() []string {
	var out []string
	for _, q := range r.queries {
		a := q.kind.Value()
		switch q.op {
		case opScalers:
			a = Autoscalers
		case opRunBy:
			a = WorkloadRefs
		case opPodSets, opFiltered:
			a = PodSets
		}
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	slices.Sort(out)
	return out
}

// note records an answer when the index is recording.
func (ix *Index) note(q query, found bool, answer Ordinal) {
	if ix.rec == nil {
		return
	}
	rq := recorded{kind: unique.Make(q.key.kind), namespace: unique.Make(q.key.namespace), name: q.key.name,
		answer: answer, op: q.op, found: found, filter: q.filter}
	for _, r := range ix.rec.queries {
		if r == rq {
			return
		}
	}
	ix.rec.queries = append(ix.rec.queries, rq)
}

// Stale reports whether the complete index answers any recorded question
// differently, or a rule could not read what it needed.
func (r *Recorder) Stale(ix *Index) bool {
	if r.Incomplete {
		return true
	}
	for i := range r.queries {
		q := r.queries[i].query()
		found, answer := ix.answer(r.scope, q)
		if found != q.found || answer != q.answer {
			return true
		}
	}
	return false
}

// Compact drops what is no longer needed once the pass is over and
// reports whether anything is left to check. The queries were appended
// one by one: they are copied to an array of their size, so that the room
// appending left is freed rather than kept until the scan ends.
func (r *Recorder) Compact() bool {
	switch {
	case len(r.queries) == 0:
		r.queries = nil
	case cap(r.queries) > len(r.queries):
		r.queries = append(make([]recorded, 0, len(r.queries)), r.queries...)
	}
	return r.Incomplete || len(r.queries) > 0
}

// answer asks q again as an object of scope, without recording.
func (ix *Index) answer(scope Scope, q query) (bool, Ordinal) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var h hash
	switch q.op {
	case opGet:
		e, found := ix.first(scope, q.key)
		return found, e.ord
	case opNames:
		for e := range ix.byKind[q.key.kind].all() {
			if e.namespace == q.key.namespace && ix.sees(scope, e.scope) {
				h.add(e.ord)
			}
		}
	case opNamed:
		for e := range ix.byKind[q.key.kind].all() {
			if e.name == q.key.name && ix.sees(scope, e.scope) {
				h.add(e.ord)
			}
		}
	case opNamedAnywhere:
		for e := range ix.byKind[q.key.kind].all() {
			if e.name == q.key.name {
				h.add(e.ord)
			}
		}
	case opScalers:
		for _, s := range ix.scalers[q.key] {
			if ix.sees(scope, s.scope) {
				h.add(s.ord)
			}
		}
	case opRunBy:
		for _, e := range ix.workloadRefs[q.key] {
			if ix.sees(scope, e.scope) {
				h.add(e.ord)
			}
		}
	case opList:
		for e := range ix.byKind[q.key.kind].all() {
			if (q.key.namespace == "" || normalNamespace(e.namespace) == q.key.namespace) && ix.sees(scope, e.scope) {
				h.add(e.ord)
			}
		}
	case opFiltered:
		_, a := ix.filteredLocked(scope, podFilter(q.filter), false)
		return true, a
	case opPodSets:
		match := selects(labels.Everything())
		if q.key.kind == servedBy {
			match = servedByMatch(q.key.name)
		} else if sel, err := labels.Parse(q.key.name); err == nil {
			match = selects(sel)
		}
		_, a := ix.selectedLocked(scope, q.key.namespace, match, false)
		return true, a
	}
	return true, Ordinal(h)
}

// hash folds a list of ordinals (FNV-1a over their bytes): equal lists in
// equal order hash equally, which is all a Recorder compares.
type hash uint64

func (h *hash) add(o Ordinal) {
	if *h == 0 {
		*h = 14695981039346656037
	}
	for i := range 8 {
		*h ^= hash(byte(o >> (8 * i)))
		*h *= 1099511628211
	}
}
