package helm

import "testing"

// A repeated key is read as Helm reads it (sigs.k8s.io/yaml, not strict):
// the last occurrence is in effect, so the line a finding cites for a
// value is the last occurrence's, and keys only the earlier one had are
// not values at all.
func TestRepeatedValuesKeyLinesAreTheLastOccurrence(t *testing.T) {
	l, err := parseValues("values.yaml", []byte("redis:\n  replica:\n    count: 1\n    old: x\n  replica:\n    count: 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := l.lines["redis.replica"]; got != 5 {
		t.Errorf("redis.replica at line %d, want 5", got)
	}
	if got := l.lines["redis.replica.count"]; got != 6 {
		t.Errorf("redis.replica.count at line %d, want 6", got)
	}
	if got, ok := l.lines["redis.replica.old"]; ok {
		t.Errorf("redis.replica.old, which Helm does not read, has line %d", got)
	}
}
