// Package index answers the cross-object questions of a scan: the
// templates a Rollout's analysis uses, the autoscaler that owns a workload's
// replicas, the Deployment behind a Rollout's workloadRef.
//
// An index can be built at once from objects (Build), or filled while the
// input is still being read (New, Add, Freeze), so that a scan need not
// keep every object until the end: the index keeps a few bytes per object
// (its key and place in the input) and the whole object only for the kinds
// whose contents other objects read (Retained). Rules that ask it questions
// before it is complete do so through a Recorder, which remembers each
// answer so that the scan can tell, once the index is complete, whose
// answers changed and check those objects again (see Recorder).
package index

import (
	"cmp"
	"slices"
	"sync"
	"unique"

	rolloutsv1alpha1 "github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"

	"backfire.dev/backfire/internal/object"
)

// An object without a namespace lands in the namespace it is applied to;
// for lookups between objects of one input that is the same for all of them.
const defaultNamespace = "default"

type key struct{ kind, namespace, name string }

func keyOf(kind, namespace, name string) key {
	if namespace == "" {
		namespace = defaultNamespace
	}
	return key{kind, namespace, name}
}

// Ordinal is an object's place in the input: objects are ordered by it,
// and where two objects share a key the first one counts.
type Ordinal uint64

// entry is one object as the index remembers it.
type entry struct {
	ord   Ordinal
	obj   *object.Object // nil when the object was not retained
	scope Scope
}

// listedEntry is an object of a listed kind, with the name and namespace
// the questions that list objects look at (Names, Named, InNamespace).
// Entries found by key need neither: their key holds both.
type listedEntry struct {
	entry
	name, namespace string
}

// Retained reports whether objects of kind are kept whole by an index that
// is filled while reading: these are the kinds whose contents the rules of
// other objects read (a probe's script in a ConfigMap, an analysis
// template, an autoscaler's range). Everything else is remembered by key
// and place only; a Deployment run by a Rollout's workloadRef is read
// again from its source when a rule needs it (see SetLoader).
func Retained(kind string) bool {
	switch kind {
	case "ConfigMap", "Secret", "AnalysisTemplate", "ClusterAnalysisTemplate", "MetricTemplate", "Canary",
		"HorizontalPodAutoscaler", "ScaledObject",
		"PodDisruptionBudget", "NetworkPolicy", "Ingress", "DestinationRule", "Application":
		return true
	}
	return false
}

// Index holds what the cross-object questions need. The zero value is not
// usable: use New or Build.
type Index struct {
	*state
	// rec, when set, records the answers given to one rule pass.
	rec *Recorder
	// scope is the scope of the object whose questions this view
	// answers (see View).
	scope Scope
}

type state struct {
	mu     sync.RWMutex
	frozen bool
	// objects are the retained objects (all of them for Build), in
	// ordinal order once frozen.
	objects []ordered
	byKey   map[key]keyed
	// byKind holds every object of a kind some question lists by name or
	// namespace (Services, AnalysisTemplates).
	byKind  map[string]*chunked[listedEntry]
	scalers map[key][]scaler
	// workloadRefs maps a Deployment to the Rollouts that run its template.
	workloadRefs map[key][]entry
	// podSets holds every workload's labels and counts, by namespace
	// and scope (see PodSet, scopedPodSets).
	podSets map[string]*scopedPodSets
	// filtered holds the pod sets each registered PodFilter matches.
	filtered map[*PodFilter]*chunked[podSetEntry]
	// load reads a dropped object again, for a frozen index.
	load func(Ordinal) *object.Object
	// window finds a dropped object that is still in memory while the
	// index fills: one of a file being checked (see SetWindow).
	window func(Ordinal) *object.Object
	// scopes are the scopes handed out, by number (0 is Everywhere);
	// trees finds a directory's.
	scopes []scopeDef
	trees  map[string]Scope
}

type ordered struct {
	ord Ordinal
	obj *object.Object
}

type scaler struct {
	Scaler
	ord   Ordinal
	scope Scope
}

// listed reports whether some question lists the kind (see Names, Named,
// InNamespace, OfKind).
func listed(kind string) bool {
	switch kind {
	case "Service", "AnalysisTemplate", "PodDisruptionBudget", "NetworkPolicy", "Ingress", "Application",
		"Deployment",     // by name: the Flagger controller a Canary runs under
		"MetricTemplate", // by name: the shared templates of Flagger's Canaries
		"Canary":         // the Canary whose target a workload is (see CopyOf)
		return true
	}
	return false
}

// Scaler is an autoscaler that owns a workload's replica count.
type Scaler struct {
	Object   *object.Object
	Min, Max int32
}

// New returns an empty index to be filled with Add and completed with
// Freeze.
func New() *Index {
	return &Index{state: &state{
		byKey:        map[key]keyed{},
		byKind:       map[string]*chunked[listedEntry]{},
		scalers:      map[key][]scaler{},
		workloadRefs: map[key][]entry{},
		podSets:      map[string]*scopedPodSets{},
		filtered:     map[*PodFilter]*chunked[podSetEntry]{},
		scopes:       []scopeDef{{}},
		trees:        map[string]Scope{},
	}}
}

// Build indexes objects that all belong together (scope Everywhere),
// keeping all of them.
func Build(objs []*object.Object) *Index {
	ix := New()
	for i, o := range objs {
		ix.Add(o, Ordinal(i), Everywhere, true)
	}
	ix.Freeze()
	return ix
}

// Add registers o at its place in the input, in scope; it may be called
// from several goroutines. keep retains the whole object whatever its
// kind.
func (ix *Index) Add(o *object.Object, ord Ordinal, scope Scope, keep bool) {
	e := entry{ord: ord, scope: scope}
	if keep || Retained(o.Kind) {
		e.obj = o
	}
	kind, namespace := intern(o.Kind), intern(o.Namespace)
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if e.obj != nil {
		ix.objects = append(ix.objects, ordered{ord, o})
	}
	k := keyOf(kind, namespace, o.Name)
	ix.addKeyed(k, e)
	if listed(kind) {
		list := ix.byKind[kind]
		if list == nil {
			list = &chunked[listedEntry]{}
			ix.byKind[kind] = list
		}
		list.insert(listedEntry{e, o.Name, namespace})
	}
	if ps, decoded, containers, ok := podSetOf(o, ord, scope); ok {
		ps.kind, ps.namespace = kind, namespace
		ns := normalNamespace(namespace)
		sets := ix.podSets[ns]
		if sets == nil {
			sets = &scopedPodSets{at: map[Scope]int{}}
			ix.podSets[ns] = sets
		}
		sets.add(ps)
		// The filters see the template's labels as decoded and its
		// containers as listed, not listed again from their compact form.
		for _, f := range registeredFilters() {
			if f.Match(ps.podSet(&ps, decoded, containers)) {
				list := ix.filtered[f]
				if list == nil {
					list = &chunked[podSetEntry]{}
					ix.filtered[f] = list
				}
				list.insert(ps)
			}
		}
	}
	switch v := o.Typed.(type) {
	case *autoscalingv2.HorizontalPodAutoscaler:
		min := int32(1)
		if v.Spec.MinReplicas != nil {
			min = *v.Spec.MinReplicas
		}
		t := keyOf(intern(v.Spec.ScaleTargetRef.Kind), namespace, v.Spec.ScaleTargetRef.Name)
		ix.scalers[t] = insert(ix.scalers[t], scaler{Scaler{Object: o, Min: min, Max: v.Spec.MaxReplicas}, ord, scope})
	case *object.ScaledObject:
		if v.Spec.ScaleTargetRef == nil {
			return
		}
		target := v.Spec.ScaleTargetRef.Kind
		if target == "" {
			target = "Deployment"
		}
		s := Scaler{Object: o, Min: object.KEDADefaultMinReplicas, Max: object.KEDADefaultMaxReplicas}
		if v.Spec.MinReplicaCount != nil {
			s.Min = *v.Spec.MinReplicaCount
		}
		if v.Spec.MaxReplicaCount != nil {
			s.Max = *v.Spec.MaxReplicaCount
		}
		t := keyOf(intern(target), namespace, v.Spec.ScaleTargetRef.Name)
		ix.scalers[t] = insert(ix.scalers[t], scaler{s, ord, scope})
	case *rolloutsv1alpha1.Rollout:
		if ref := v.Spec.WorkloadRef; ref != nil && ref.Kind == "Deployment" {
			t := keyOf("Deployment", namespace, ref.Name)
			ix.workloadRefs[t] = insert(ix.workloadRefs[t], e)
		}
	}
}

// inOrder is what the index's lists hold, each sorted by ordinal.
type inOrder interface{ ordinal() Ordinal }

func (e entry) ordinal() Ordinal       { return e.ord }
func (e podSetEntry) ordinal() Ordinal { return e.ord }
func (s scaler) ordinal() Ordinal      { return s.ord }

// insert adds e to list in its place. A full list grows by an eighth,
// not by append's half or more: the index's lists are kept until the scan
// ends, and what append leaves unused was a third of the pod sets'
// memory; the copies stay linear in the list's length.
func insert[E inOrder](list []E, e E) []E {
	i, _ := slices.BinarySearchFunc(list, e.ordinal(), func(x E, o Ordinal) int { return cmp.Compare(x.ordinal(), o) })
	if len(list) == cap(list) {
		list = append(make([]E, 0, len(list)+1+len(list)/8), list...)
	}
	return slices.Insert(list, i, e)
}

// intern returns the one copy of s that the index keeps of the strings
// most of its entries and recorded questions share, kinds and
// namespaces, rather than the copy decoded with each object.
func intern(s string) string { return unique.Make(s).Value() }

// Freeze completes the index: every object has been added.
func (ix *Index) Freeze() {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	slices.SortFunc(ix.objects, func(a, b ordered) int { return cmp.Compare(a.ord, b.ord) })
	ix.frozen = true
}

// SetLoader gives a frozen index the way to read a dropped object again
// when a rule needs its contents.
func (ix *Index) SetLoader(load func(Ordinal) *object.Object) { ix.load = load }

// SetWindow gives an index that is still filling the way to find an
// object it does not keep while its file is being checked: a rule asking
// for it then gets its contents instead of a guess that must be checked
// again once the index is complete.
func (ix *Index) SetWindow(window func(Ordinal) *object.Object) { ix.window = window }

// View returns the index as an object of scope sees it: every answer
// is made of objects that scope sees (see Scope). With rec, the view
// records every answer it gives into rec.
func (ix *Index) View(scope Scope, rec *Recorder) *Index {
	if rec != nil {
		rec.scope = scope
	}
	return &Index{state: ix.state, rec: rec, scope: scope}
}

// Objects returns the retained objects (every object, for Build), in
// input order once the index is frozen.
func (ix *Index) Objects() []*object.Object {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	out := make([]*object.Object, len(ix.objects))
	for i, o := range ix.objects {
		out[i] = o.obj
	}
	return out
}

// Get finds an object by kind, namespace and name.
func (ix *Index) Get(kind, namespace, name string) *object.Object {
	k := keyOf(kind, namespace, name)
	ix.mu.RLock()
	e, found := ix.first(ix.scope, k)
	ix.mu.RUnlock()
	ix.note(query{op: opGet, key: k}, found, e.ord)
	if !found {
		return nil
	}
	return ix.contents(e)
}

// keyed holds the objects of one key: the first in input order, and the
// others (usually none) in more, sorted by ordinal. Most keys have one
// object, which a list would cost an allocation of its own.
type keyed struct {
	first entry
	more  []entry
}

// addKeyed adds e to the objects of key k; ix.mu is held.
func (ix *Index) addKeyed(k key, e entry) {
	objs, ok := ix.byKey[k]
	switch {
	case !ok:
		ix.byKey[k] = keyed{first: e}
		return
	case e.ord < objs.first.ord:
		objs.first, e = e, objs.first
	}
	objs.more = insert(objs.more, e)
	ix.byKey[k] = objs
}

// first returns the first object of key k that scope sees; ix.mu is held.
func (ix *Index) first(scope Scope, k key) (entry, bool) {
	objs, ok := ix.byKey[k]
	if !ok {
		return entry{}, false
	}
	if ix.sees(scope, objs.first.scope) {
		return objs.first, true
	}
	for _, e := range objs.more {
		if ix.sees(scope, e.scope) {
			return e, true
		}
	}
	return entry{}, false
}

// contents returns an entry's object, reading a dropped one again when
// the index is complete; before that, the pass that asked is marked to be
// checked again once it is.
func (ix *Index) contents(e entry) *object.Object {
	if e.obj != nil {
		return e.obj
	}
	if ix.frozen && ix.load != nil {
		o := ix.load(e.ord)
		if o == nil && ix.rec != nil {
			// The loader has not read it yet (a scan's recheck reads
			// what its checks asked for together).
			ix.rec.Incomplete = true
		}
		return o
	}
	if !ix.frozen && ix.window != nil {
		if o := ix.window(e.ord); o != nil {
			return o
		}
	}
	if ix.rec != nil {
		ix.rec.Incomplete = true
	}
	return nil
}

// ClusterScoped finds a cluster-scoped object by kind and name.
func (ix *Index) ClusterScoped(kind, name string) *object.Object {
	return ix.Get(kind, "", name)
}

// Names returns the names of the objects of kind written with exactly this
// namespace ("" for none), in input order. Only the kinds some rule lists
// are indexed this way (Services).
func (ix *Index) Names(kind, namespace string) []string {
	ix.mu.RLock()
	var out []string
	var h hash
	for e := range ix.byKind[kind].all() {
		if e.namespace == namespace && ix.sees(ix.scope, e.scope) {
			out = append(out, e.name)
			h.add(e.ord)
		}
	}
	ix.mu.RUnlock()
	ix.note(query{op: opNames, key: key{kind, namespace, ""}}, true, Ordinal(h))
	return out
}

// Named returns the retained objects of kind named name in any namespace,
// in input order (AnalysisTemplates).
func (ix *Index) Named(kind, name string) []*object.Object {
	return ix.named(kind, name, opNamed)
}

// NamedAnywhere returns the objects of a listed kind named name in the
// whole input, whatever their scope, in input order: a cluster-wide
// controller (Flagger) runs the objects of every tree and every render,
// wherever its own manifest is kept.
func (ix *Index) NamedAnywhere(kind, name string) []*object.Object {
	return ix.named(kind, name, opNamedAnywhere)
}

// named answers Named and, with opNamedAnywhere, NamedAnywhere.
func (ix *Index) named(kind, name string, asked op) []*object.Object {
	ix.mu.RLock()
	var found []entry
	var h hash
	for e := range ix.byKind[kind].all() {
		if e.name == name && (asked == opNamedAnywhere || ix.sees(ix.scope, e.scope)) {
			found = append(found, e.entry)
			h.add(e.ord)
		}
	}
	ix.mu.RUnlock()
	ix.note(query{op: asked, key: key{kind, "", name}}, true, Ordinal(h))
	var out []*object.Object
	for _, e := range found {
		if o := ix.contents(e); o != nil {
			out = append(out, o)
		}
	}
	return out
}

// ScalersOf returns the HPAs and KEDA ScaledObjects whose scale target is o.
// A Rollout with workloadRef may be scaled through either object, so its
// Deployment's autoscalers are returned too.
func (ix *Index) ScalersOf(o *object.Object) []Scaler {
	scalers := ix.scalersAt(keyOf(o.Kind, o.Namespace, o.Name))
	if r, ok := o.Typed.(*rolloutsv1alpha1.Rollout); ok && r.Spec.WorkloadRef != nil && r.Spec.WorkloadRef.Kind == "Deployment" {
		if more := ix.scalersAt(keyOf("Deployment", o.Namespace, r.Spec.WorkloadRef.Name)); len(more) > 0 {
			scalers = append(scalers, more...)
		}
	}
	return scalers
}

func (ix *Index) scalersAt(k key) []Scaler {
	ix.mu.RLock()
	list := ix.scalers[k]
	var out []Scaler
	var h hash
	for _, s := range list {
		if ix.sees(ix.scope, s.scope) {
			out = append(out, s.Scaler)
			h.add(s.ord)
		}
	}
	ix.mu.RUnlock()
	ix.note(query{op: opScalers, key: k}, true, Ordinal(h))
	return out
}

// Replicas is how many pods a workload runs: spec.replicas, or the range of
// the autoscalers that own the count.
type Replicas struct {
	Min, Max int32
	// Set is true when spec.replicas was written and no autoscaler owns it.
	Set bool
	// ScaledBy lists the autoscalers; empty when spec.replicas decides.
	ScaledBy []Scaler
	// Running is status.replicas when the object carries a status (a live
	// object or a dump of one), else 0.
	Running int32
}

// ReplicasOf resolves a scalable workload's replica count. With no
// autoscaler and no spec.replicas it is 1, the API server's default.
func (ix *Index) ReplicasOf(o *object.Object) Replicas {
	scalers := ix.ScalersOf(o)
	if len(scalers) == 0 {
		n, set := o.Replicas()
		return Replicas{Min: n, Max: n, Set: set, Running: o.Running()}
	}
	r := Replicas{Min: scalers[0].Min, Max: scalers[0].Max, ScaledBy: scalers, Running: o.Running()}
	for _, s := range scalers[1:] {
		r.Min, r.Max = min(r.Min, s.Min), max(r.Max, s.Max)
	}
	return r
}

// PodTemplate returns the pod template a workload runs: its own, or for a
// Rollout with workloadRef, the referenced Deployment's. The second result
// explains why there is none (an unresolved workloadRef).
func (ix *Index) PodTemplate(o *object.Object) (*object.PodTemplate, string) {
	if t := o.PodTemplate(); t != nil {
		return t, ""
	}
	r, ok := o.Typed.(*rolloutsv1alpha1.Rollout)
	if !ok || r.Spec.WorkloadRef == nil {
		return nil, ""
	}
	ref := r.Spec.WorkloadRef
	if ref.Kind != "Deployment" {
		return nil, "workloadRef kind " + ref.Kind + " is not modelled"
	}
	d := ix.Get("Deployment", o.Namespace, ref.Name)
	if d == nil {
		return nil, "workloadRef Deployment " + ref.Name + " is not in the input"
	}
	return d.PodTemplate(), ""
}

// RunBy returns the places of the Rollouts that run this Deployment's
// template through workloadRef (how many there are is what callers ask).
// Such a Deployment is usually scaled to zero: findings about its pods
// belong to the Rollout.
func (ix *Index) RunBy(o *object.Object) int {
	if o.Kind != "Deployment" {
		return 0
	}
	k := keyOf("Deployment", o.Namespace, o.Name)
	ix.mu.RLock()
	n := 0
	var h hash
	for _, e := range ix.workloadRefs[k] {
		if ix.sees(ix.scope, e.scope) {
			h.add(e.ord)
			n++
		}
	}
	ix.mu.RUnlock()
	ix.note(query{op: opRunBy, key: k}, true, Ordinal(h))
	return n
}
