package index

import (
	"slices"
	"strings"
	"testing"
)

// Containers come back as they were compacted, whatever their names hold.
func TestCompactContainers(t *testing.T) {
	for _, cs := range [][]PodContainer{
		nil,
		{{Name: "app", Image: "nginx:1.27", PullPolicy: "Always"}},
		{{Name: "", Image: ""}, {Name: "sidecar", Image: strings.Repeat("r/", 200) + "x", PullPolicy: "IfNotPresent"}},
		{{Name: "\x00\xff", Image: "é"}},
	} {
		got := compactContainers(cs).List()
		if !slices.Equal(got, cs) {
			t.Errorf("got %+v, want %+v", got, cs)
		}
	}
}

func BenchmarkCompactContainers(b *testing.B) {
	cs := []PodContainer{{Name: "app", Image: "registry.example/app:1.2.3", PullPolicy: "IfNotPresent"}, {Name: "proxy", Image: "envoy:1.30"}}
	for b.Loop() {
		_ = compactContainers(cs).List()
	}
}
