package index

import (
	"math"
	"slices"
	"sync"

	rolloutsv1alpha1 "github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"backfire.dev/backfire/internal/object"
)

// PodSet is a workload as the questions about pods see it: the labels its
// pods carry, how many it runs and what they run. A PodDisruptionBudget,
// a NetworkPolicy or a Service selects pods by label; the index keeps
// these few fields of every workload so that a rule on the selecting
// object can tell which workloads it selects without the workloads being
// retained.
type PodSet struct {
	Kind, Namespace, Name string
	// Labels are the pod template's labels (a Rollout with workloadRef:
	// its Deployment's).
	Labels map[string]string
	// Replicas is how many pods run: spec.replicas or the autoscalers'
	// range (see ReplicasOf); a Job's parallelism; 1 for a Pod. A
	// DaemonSet runs one pod per node: PerNode, and Replicas is zero.
	Replicas Replicas
	PerNode  bool
	// Containers are the long-running containers (native sidecars too).
	Containers []PodContainer
	// HostNetwork pods use the node's network: network policies do not
	// select them.
	HostNetwork bool
	// ServiceName is a StatefulSet's governing Service (spec.serviceName).
	ServiceName string
	// Scalable: the pods' controller has a scale subresource (Deployment,
	// StatefulSet, ReplicaSet, ReplicationController, Rollout), which the
	// disruption controller asks how many pods to expect. Jobs, CronJobs,
	// DaemonSets and bare Pods have none.
	Scalable bool
}

// PodContainer is one container of a pod set.
type PodContainer struct {
	Name, Image string
	PullPolicy  corev1.PullPolicy // as written; "" when unset
}

// podSetEntry is a pod set as the index keeps it, until the scan ends:
// the fields of PodSet that are the workload's own, its labels compact
// (see podLabels), and what resolves its count; podSet makes the PodSet
// an answer returns.
type podSetEntry struct {
	kind, namespace, name string
	labels                podLabels
	containers            podContainers
	serviceName           string
	// workloadRef names the Deployment whose template a Rollout runs.
	workloadRef string
	ord         Ordinal
	scope       Scope
	replicas    int32 // spec.replicas, or 1 when unset
	replicasSet bool
	perNode     bool
	hostNetwork bool
	scalable    bool
}

// podSetOf reads the fields of a workload the pod questions need; ok is
// false for kinds without pods. It returns the template's labels as
// decoded and its containers as listed too, for the registered filters.
func podSetOf(o *object.Object, ord Ordinal, scope Scope) (e podSetEntry, decoded map[string]string, containers []PodContainer, ok bool) {
	e = podSetEntry{kind: o.Kind, namespace: o.Namespace, name: o.Name, scalable: true, ord: ord, scope: scope}
	e.replicas, e.replicasSet = o.Replicas()
	switch v := o.Typed.(type) {
	case *rolloutsv1alpha1.Rollout:
		if v.Spec.WorkloadRef != nil && v.Spec.WorkloadRef.Kind == "Deployment" {
			e.workloadRef = v.Spec.WorkloadRef.Name
			return e, nil, nil, true
		}
	case *appsv1.DaemonSet:
		e.perNode, e.scalable = true, false
	case *appsv1.StatefulSet:
		e.serviceName = v.Spec.ServiceName
	case *batchv1.Job:
		e.replicas, e.scalable = parallelism(v.Spec.Parallelism), false
	case *batchv1.CronJob:
		e.replicas, e.scalable = parallelism(v.Spec.JobTemplate.Spec.Parallelism), false
	case *corev1.Pod:
		e.scalable = false
	}
	t := o.PodTemplate()
	if t == nil {
		return e, nil, nil, e.workloadRef != ""
	}
	e.labels = compactLabels(t.Meta.Labels)
	e.hostNetwork = t.Spec.HostNetwork
	if cs := t.Containers(); len(cs) > 0 {
		containers = make([]PodContainer, len(cs))
		for i, c := range cs {
			containers[i] = PodContainer{Name: c.Name, Image: c.Image, PullPolicy: c.ImagePullPolicy}
		}
		e.containers = compactContainers(containers)
	}
	return e, t.Meta.Labels, containers, true
}

// podSet returns the pod set as an answer gives it, its Replicas left
// to the caller: the pods run the template of t (e itself, or the
// Deployment of a Rollout with workloadRef), which carries labels and
// containers (t.containers listed).
func (e *podSetEntry) podSet(t *podSetEntry, labels map[string]string, containers []PodContainer) PodSet {
	return PodSet{
		Kind: e.kind, Namespace: e.namespace, Name: e.name,
		Labels:      labels,
		PerNode:     e.perNode,
		Containers:  containers,
		HostNetwork: t.hostNetwork,
		ServiceName: e.serviceName,
		Scalable:    e.scalable,
	}
}

func parallelism(p *int32) int32 {
	if p == nil {
		return 1 // the Job API's default
	}
	return *p
}

// PodSets names what a rule asks with Selected or PodSetsWhere, as Asked
// reports it.
const PodSets = "podSets"

// Selected returns the workloads of a namespace whose pods sel selects, in
// input order. A Deployment whose template a Rollout runs is left out (its
// pods are the Rollout's, which is returned with the Deployment's labels).
func (ix *Index) Selected(namespace string, sel labels.Selector) []PodSet {
	k := key{"", normalNamespace(namespace), sel.String()}
	out, h := ix.selected(ix.scope, k.namespace, selects(sel))
	ix.note(query{op: opPodSets, key: k}, true, h)
	return out
}

// servedBy marks a pod-set question by governing Service (ServedBy) in
// the Recorder's keys, apart from label selectors.
const servedBy = "StatefulSet.spec.serviceName"

// ServedBy returns the StatefulSets of namespace whose serviceName is
// service. Asked this narrowly, the answer changes only when such a
// StatefulSet is added, so a Service checked before the index is complete
// is checked again only then (a walk over every pod set of the namespace
// would be answered differently by every workload added after it).
func (ix *Index) ServedBy(namespace, service string) []PodSet {
	k := key{servedBy, normalNamespace(namespace), service}
	out, h := ix.selected(ix.scope, k.namespace, servedByMatch(service))
	ix.note(query{op: opPodSets, key: k}, true, h)
	return out
}

// A podSetMatch picks the pod sets an answer is made of, by the entry and
// its labels (the Deployment's, for a Rollout with workloadRef).
type podSetMatch func(e *podSetEntry, l labels.Labels) bool

func selects(sel labels.Selector) podSetMatch {
	return func(_ *podSetEntry, l labels.Labels) bool { return sel.Matches(l) }
}

func servedByMatch(service string) podSetMatch {
	return func(e *podSetEntry, _ labels.Labels) bool { return e.kind == "StatefulSet" && e.serviceName == service }
}

// PodFilter picks pod sets across namespaces (the workloads that run a
// container registry) by what their own template says. Filters are
// registered once (RegisterPodFilter): the index applies each to every
// workload as it is added, so that asking costs what the answer holds,
// not a walk over every workload of the input.
type PodFilter struct {
	Name  string
	Match func(PodSet) bool
	// id is the filter's place in the registered list, from 1 (0 for a
	// filter that was not registered): what a Recorder keeps of it.
	id uint16
}

var podFilters struct {
	sync.Mutex
	list []*PodFilter
}

// RegisterPodFilter makes f a question PodSetsWhere can answer; call it
// from a package-level variable's initialiser, before any index is built.
func RegisterPodFilter(f *PodFilter) *PodFilter {
	podFilters.Lock()
	defer podFilters.Unlock()
	if len(podFilters.list) == math.MaxUint16 {
		panic("index: too many pod filters")
	}
	podFilters.list = append(podFilters.list, f)
	f.id = uint16(len(podFilters.list))
	return f
}

// podFilter returns the registered filter of id, nil for 0.
func podFilter(id uint16) *PodFilter {
	if id == 0 {
		return nil
	}
	podFilters.Lock()
	defer podFilters.Unlock()
	return podFilters.list[id-1]
}

func registeredFilters() []*PodFilter {
	podFilters.Lock()
	defer podFilters.Unlock()
	return slices.Clip(podFilters.list)
}

// PodSetsWhere returns the workloads of every namespace that the
// registered filter f matches, in input order. A Rollout with workloadRef
// is judged without its Deployment's template.
func (ix *Index) PodSetsWhere(f *PodFilter) []PodSet {
	ix.mu.RLock()
	out, h := ix.filteredLocked(ix.scope, f, true)
	ix.mu.RUnlock()
	ix.note(query{op: opFiltered, key: key{"", "", f.Name}, filter: f.id}, true, h)
	return out
}

// filteredLocked lists the pod sets f matches that an object of scope
// sees, when collect is set, and the hash of what the answer was made of.
func (ix *Index) filteredLocked(scope Scope, f *PodFilter, collect bool) ([]PodSet, Ordinal) {
	var out []PodSet
	var h hash
	for e := range ix.filtered[f].all() {
		if !ix.sees(scope, e.scope) {
			continue
		}
		h.add(e.ord)
		r := ix.replicasLocked(scope, e, &h)
		if collect {
			ps := e.podSet(e, e.labels.Map(), e.containers.List())
			ps.Replicas = r
			out = append(out, ps)
		}
	}
	return out, Ordinal(h)
}

// selected lists the matching pod sets of namespace ns (every namespace
// for "") that an object of scope sees, and the hash of what the answer
// was made of.
func (ix *Index) selected(scope Scope, ns string, match podSetMatch) ([]PodSet, Ordinal) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.selectedLocked(scope, ns, match, true)
}

// selectedLocked is selected with ix.mu held; the pod sets are listed
// only when collect is set.
func (ix *Index) selectedLocked(scope Scope, ns string, match podSetMatch, collect bool) ([]PodSet, Ordinal) {
	var out []PodSet
	var h hash
	ix.eachPodSet(scope, ns, func(e *podSetEntry) {
		if e.kind == "Deployment" && slices.ContainsFunc(ix.workloadRefs[keyOf("Deployment", e.namespace, e.name)], func(r entry) bool { return ix.sees(e.scope, r.scope) }) {
			return // run by a Rollout
		}
		// The pods' template: a Rollout with workloadRef runs its
		// Deployment's.
		t := e
		if e.workloadRef != "" {
			d, ok := ix.podSetNamed(e.scope, e.namespace, "Deployment", e.workloadRef)
			if !ok {
				return
			}
			t = d
			h.add(d.ord)
		}
		if !match(e, &t.labels) {
			return
		}
		h.add(e.ord)
		r := ix.replicasLocked(scope, e, &h)
		if collect {
			ps := e.podSet(t, t.labels.Map(), t.containers.List())
			ps.Replicas = r
			out = append(out, ps)
		}
	})
	return out, Ordinal(h)
}

// scopedPodSets are the pod sets of one namespace, a list for each scope
// they were added in: a question walks the lists of the scopes its asker
// sees, not every workload of the namespace. An input of many sibling
// trees (a repository's copies per environment or cluster) writes the
// same namespace in each; walking them all made each question cost as
// much as the whole input held, and a scan's CPU grow with the square of
// its objects.
type scopedPodSets struct {
	lists []scopedList
	at    map[Scope]int // a scope's place in lists
}

type scopedList struct {
	scope Scope
	list  chunked[podSetEntry]
}

func (s *scopedPodSets) add(e podSetEntry) {
	i, ok := s.at[e.scope]
	if !ok {
		i = len(s.lists)
		s.at[e.scope] = i
		s.lists = append(s.lists, scopedList{scope: e.scope})
	}
	s.lists[i].list.insert(e)
}

// eachPodSet calls f with every pod set of namespace ns (every namespace
// for "") that an object of scope sees, in ordinal order; ix.mu is held.
func (ix *Index) eachPodSet(scope Scope, ns string, f func(*podSetEntry)) {
	var seen []*chunked[podSetEntry]
	add := func(s *scopedPodSets) {
		if s == nil {
			return
		}
		for i := range s.lists {
			if l := &s.lists[i]; len(l.list.chunks) > 0 && ix.sees(scope, l.scope) {
				seen = append(seen, &l.list)
			}
		}
	}
	if ns != "" {
		add(ix.podSets[ns])
	} else {
		for _, s := range ix.podSets {
			add(s)
		}
	}
	mergeOrdered(seen, f)
}

// mergeOrdered calls f with the entries of lists, each sorted by
// ordinal, in ordinal order.
func mergeOrdered(lists []*chunked[podSetEntry], f func(*podSetEntry)) {
	switch {
	case len(lists) == 1:
		for e := range lists[0].all() {
			f(e)
		}
		return
	case len(lists) > 8:
		// Many lists (an object of scope Everywhere asking about an input
		// of many trees): sort once rather than pick among them at every
		// step.
		var all []*podSetEntry
		for _, l := range lists {
			for e := range l.all() {
				all = append(all, e)
			}
		}
		slices.SortFunc(all, func(a, b *podSetEntry) int { return compareOrd(a.ord, b.ord) })
		for _, e := range all {
			f(e)
		}
		return
	}
	next := make([]cursor[podSetEntry], len(lists))
	for i, l := range lists {
		next[i].chunks = l.chunks
	}
	for {
		pick := -1
		var first *podSetEntry
		for i := range next {
			if e := next[i].at(); e != nil && (first == nil || e.ord < first.ord) {
				pick, first = i, e
			}
		}
		if pick < 0 {
			return
		}
		f(first)
		next[pick].next()
	}
}

// podSetNamed finds the first pod set, in input order, that an object of
// scope sees by kind and name; ix.mu is held.
func (ix *Index) podSetNamed(scope Scope, ns, kind, name string) (*podSetEntry, bool) {
	var found *podSetEntry
	s := ix.podSets[normalNamespace(ns)]
	if s == nil {
		return nil, false
	}
	for i := range s.lists {
		l := &s.lists[i]
		if !ix.sees(scope, l.scope) {
			continue
		}
		for e := range l.list.all() {
			if e.kind == kind && e.name == name {
				if found == nil || e.ord < found.ord {
					found = e
				}
				break
			}
		}
	}
	return found, found != nil
}

// replicasLocked resolves a pod set's count as ReplicasOf does, with the
// autoscalers both the asking scope and the pod set see, folding them into
// h.
func (ix *Index) replicasLocked(scope Scope, e *podSetEntry, h *hash) Replicas {
	var scalers []scaler
	if e.scalable {
		scalers = append(scalers, ix.scalers[keyOf(e.kind, e.namespace, e.name)]...)
		if e.workloadRef != "" {
			scalers = append(scalers, ix.scalers[keyOf("Deployment", e.namespace, e.workloadRef)]...)
		}
		scalers = slices.DeleteFunc(slices.Clone(scalers), func(s scaler) bool { return !ix.sees(scope, s.scope) || !ix.sees(e.scope, s.scope) })
	}
	if len(scalers) == 0 {
		return Replicas{Min: e.replicas, Max: e.replicas, Set: e.replicasSet}
	}
	r := Replicas{Min: scalers[0].Min, Max: scalers[0].Max}
	for _, s := range scalers {
		h.add(s.ord)
		r.ScaledBy = append(r.ScaledBy, s.Scaler)
		r.Min, r.Max = min(r.Min, s.Min), max(r.Max, s.Max)
	}
	return r
}

func normalNamespace(ns string) string {
	if ns == "" {
		return defaultNamespace
	}
	return ns
}

func compareOrd(a, b Ordinal) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// InNamespace returns the retained objects of a listed kind in a namespace
// (an object written without one counts as "default"), in input order: the
// PodDisruptionBudgets or NetworkPolicies beside the one a rule checks.
func (ix *Index) InNamespace(kind, namespace string) []*object.Object {
	ns := normalNamespace(namespace)
	return ix.list(kind, ns, func(e listedEntry) bool { return normalNamespace(e.namespace) == ns })
}

// OfKind returns the retained objects of a listed kind in every namespace,
// in input order (the Argo CD Applications of the input).
func (ix *Index) OfKind(kind string) []*object.Object {
	return ix.list(kind, "", func(listedEntry) bool { return true })
}

func (ix *Index) list(kind, ns string, in func(listedEntry) bool) []*object.Object {
	ix.mu.RLock()
	var found []entry
	var h hash
	for e := range ix.byKind[kind].all() {
		if in(*e) && ix.sees(ix.scope, e.scope) {
			found = append(found, e.entry)
			h.add(e.ord)
		}
	}
	ix.mu.RUnlock()
	ix.note(query{op: opList, key: key{kind, ns, ""}}, true, Ordinal(h))
	var out []*object.Object
	for _, e := range found {
		if o := ix.contents(e); o != nil {
			out = append(out, o)
		}
	}
	return out
}
