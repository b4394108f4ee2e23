package index

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// podContainers are a pod set's containers kept in one string, as
// podLabels keep its labels: each container's name, image and pull policy
// after their lengths (uvarints). A slice of PodContainer costs an array
// and keeps the decoded object's strings, two allocations a container,
// for every workload until the scan ends. The empty string is no
// containers.
type podContainers string

func compactContainers(cs []PodContainer) podContainers {
	size := 0
	for _, c := range cs {
		for _, s := range []string{c.Name, c.Image, string(c.PullPolicy)} {
			size += uvarintLen(len(s)) + len(s)
		}
	}
	var b strings.Builder
	b.Grow(size)
	for _, c := range cs {
		for _, s := range []string{c.Name, c.Image, string(c.PullPolicy)} {
			writeUvarint(&b, len(s))
			b.WriteString(s)
		}
	}
	return podContainers(b.String())
}

// List returns the containers as they were compacted; nil for none.
func (p podContainers) List() []PodContainer {
	var out []PodContainer
	for s := string(p); s != ""; {
		var c PodContainer
		var policy string
		c.Name, s = field(s)
		c.Image, s = field(s)
		policy, s = field(s)
		c.PullPolicy = corev1.PullPolicy(policy)
		out = append(out, c)
	}
	return out
}
