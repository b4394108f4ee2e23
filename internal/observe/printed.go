package observe

import (
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"
)

// Unnamed stands for a pod or container a printed capture does not name.
const Unnamed = "(unnamed)"

// CaptureTime is the clock printed ages are placed on: a capture does not
// say when kubectl ran, so an age becomes CaptureTime - age, right for
// differences only (Event.Ago says which times are so placed).
var CaptureTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// AgoOf prints a time placed on CaptureTime as an age, the way kubectl
// does: "3m2s ago".
func AgoOf(t time.Time) string { return duration.HumanDuration(CaptureTime.Sub(t)) + " ago" }

// Printed says what a pod read from kubectl's printed text held (kubectl
// describe pod, a kubectl get pods row, an Events table, a fragment such as
// one Liveness line). Such a pod is rebuilt as a *corev1.Pod from what was
// printed; fields that were not printed are zero in it, and Has tells them
// apart from fields printed as zero, so that a rule says what the capture
// lacks instead of reading a default as an observation.
type Printed struct {
	// Forms lists what the capture held of this pod, in the order read:
	// "kubectl describe pod", "kubectl get pods", "Events table",
	// "kubectl get events", "Liveness line", "event messages".
	Forms []string
	// Named is false when the capture does not name the pod (an Events
	// table or a container block on its own).
	Named bool
	// PodLevel: the only status is the pod's, summed over its containers
	// (a kubectl get pods row), under an unnamed container.
	PodLevel bool
	// Spec: a whole container block was printed (image, probes, limits
	// and requests), so the static rules may read the spec.
	Spec bool
	// Lacks says what the capture does not show that a diagnosis could
	// use, one sentence each.
	Lacks []string

	has    map[string]bool
	absent map[string]bool
	lines  map[string]int
}

// MarkAbsent records that the capture shows the field at path is not set:
// a whole container block was printed without it (kubectl prints every
// probe a container has).
func (p *Printed) MarkAbsent(path string) {
	if p.absent == nil {
		p.absent = map[string]bool{}
	}
	p.absent[path] = true
}

// Absent reports whether the capture shows the field at path is unset.
func (p *Printed) Absent(path string) bool { return p.absent[path] }

// Mark records that the field at path was printed, at line.
func (p *Printed) Mark(path string, line int) {
	if p.has == nil {
		p.has, p.lines = map[string]bool{}, map[string]int{}
	}
	p.has[path] = true
	if _, ok := p.lines[path]; !ok && line > 0 {
		p.lines[path] = line
	}
}

// Has reports whether the field at path, or a field under it, was printed.
func (p *Printed) Has(path string) bool {
	if p.has[path] {
		return true
	}
	for k := range p.has {
		if strings.HasPrefix(k, path+".") || strings.HasPrefix(k, path+"[") {
			return true
		}
	}
	return false
}

// Line returns the line where the field at path was printed, or that of
// its nearest printed ancestor; 0 when none was.
func (p *Printed) Line(path string) int {
	for path != "" {
		if l, ok := p.lines[path]; ok {
			return l
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			break
		}
		path = path[:i]
	}
	return p.lines[""]
}

// First is the first line read of the pod.
func (p *Printed) First() int {
	first := 0
	for _, l := range p.lines {
		if first == 0 || l < first {
			first = l
		}
	}
	return first
}

// Form says what was read, for the report: "kubectl describe pod, Events table".
func (p *Printed) Form() string { return strings.Join(p.Forms, ", ") }

// AddForm records a form once.
func (p *Printed) AddForm(f string) {
	for _, g := range p.Forms {
		if g == f {
			return
		}
	}
	p.Forms = append(p.Forms, f)
}

// Fields lists the printed paths, sorted (for tests and debugging).
func (p *Printed) Fields() []string {
	out := make([]string, 0, len(p.has))
	for k := range p.has {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Knows reports whether the pod's field at path is an observation: always
// for a pod read from the API, and for a printed pod only when printed.
func (p *Pod) Knows(path string) bool {
	return p.Printed == nil || p.Printed.Has(path) || p.Printed.Absent(path)
}
