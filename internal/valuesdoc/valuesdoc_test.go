package valuesdoc

import (
	"strings"
	"testing"
)

// Harbor's values.yaml (goharbor/harbor-helm, 1c1e847) documents the
// database probe timeouts above their parent keys.
const harbor = `    # The timeout used in livenessProbe; 1 to 5 seconds
    livenessProbe:
      timeoutSeconds: 1
    # The timeout used in readinessProbe; 1 to 5 seconds
    readinessProbe:
      timeoutSeconds: 1
    nodeSelector: {}
    replicas: 3 # 1-9 pods
    # -- Initial delay in seconds
    periodSeconds: 10
    # Give it 1-2 minutes to start
    initialDelaySeconds: 60
`

func TestFind(t *testing.T) {
	lines := strings.Split(harbor, "\n")
	for _, c := range []struct {
		line int
		key  string
		want Range
		ok   bool
	}{
		{3, "database.internal.livenessProbe.timeoutSeconds", Range{1, 5, 1, "The timeout used in livenessProbe; 1 to 5 seconds"}, true},
		{6, "database.internal.readinessProbe.timeoutSeconds", Range{1, 5, 4, "The timeout used in readinessProbe; 1 to 5 seconds"}, true},
		{8, "replicas", Range{1, 9, 8, "1-9 pods"}, true},
		{10, "periodSeconds", Range{}, false},
		{7, "nodeSelector", Range{}, false},
		{12, "initialDelaySeconds", Range{}, false}, // minutes, not the key's unit
	} {
		got, ok := Find(lines, c.line, c.key)
		if ok != c.ok || got != c.want {
			t.Errorf("%s at %d: %+v %v, want %+v %v", c.key, c.line, got, ok, c.want, c.ok)
		}
	}
}
