package result

import (
	"encoding/json"
	"strings"
	"testing"
)

// The limit on nesting is encoding/json's: its scanner, indenting the
// whole finding, allows 10000 open objects and lists. A value at depth d
// (inside d of them, the finding's own braces first) opens the d+1th.
// Checked on indent at a depth near the limit: through a finding, a value
// that deep is indented into a hundred megabytes, and its depth is the
// one its lines are indented by, which the differential tests compare.
func TestIndentStopsAtEncodingJSONsDepthLimit(t *testing.T) {
	deep := func(n int) []byte { return []byte(strings.Repeat("[", n) + strings.Repeat("]", n)) }
	if !json.Valid(deep(10000)) || json.Valid(deep(10001)) {
		t.Fatal("encoding/json's limit is no longer 10000 nested values")
	}
	if _, err := indent(nil, deep(2), maxNesting-2); err != nil {
		t.Errorf("the 10000th nested list: %v", err)
	}
	if _, err := indent(nil, []byte(`{"a":{"b":{}}}`), maxNesting-2); err == nil {
		t.Error("the 10001st nested object is written")
	}
	if _, err := indent(nil, deep(3), maxNesting-2); err == nil {
		t.Error("the 10001st nested list is written")
	}
}
