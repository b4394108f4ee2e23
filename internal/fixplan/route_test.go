package fixplan

import (
	"encoding/json"
	"testing"

	"backfire.dev/backfire/internal/load"
)

// A strategic merge patch may give the containers back in another order
// (redis-ha's redis and sentinel): the fields are compared by container
// name, and named at the index the object has them, or the routes are
// proven against the wrong container.
func TestDiffPairsNamedItems(t *testing.T) {
	var before, want any
	_ = json.Unmarshal([]byte(`{"containers":[{"name":"redis","image":"r"},{"name":"sentinel","image":"s"}]}`), &before)
	_ = json.Unmarshal([]byte(`{"containers":[{"name":"sentinel","image":"s","livenessProbe":{"failureThreshold":10}},{"name":"redis","image":"r","resources":{"requests":{"cpu":"500m"}}}]}`), &want)
	want = alignTo(before, want)
	var edits []fieldEdit
	diffValues(before, want, nil, &edits)
	got := map[string]bool{}
	for _, e := range edits {
		got[pathString(e.path)] = true
	}
	if len(got) != 2 || !got["containers[0].resources"] || !got["containers[1].livenessProbe"] {
		t.Errorf("edits %v, want containers[0].resources (redis) and containers[1].livenessProbe (sentinel)", got)
	}
	// The routes' proof reads the block from want at the index path.
	if v, ok := load.ValueAt(want, load.SplitPath("containers[0].resources.requests.cpu")); !ok || v != "500m" {
		t.Errorf("want's containers[0] is not redis after alignTo: %v", want)
	}
}
