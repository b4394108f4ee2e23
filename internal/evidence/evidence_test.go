package evidence

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

type sample struct {
	Count    int      `json:"count" doc:"how many"`
	Share    float64  `json:"share" doc:"a | b"`
	Optional *int32   `json:"optional,omitempty" doc:"set or absent"`
	Nullable *int32   `json:"nullable" doc:"null when unset"`
	Names    []string `json:"names,omitempty"`
	Note     string   `json:"note,omitempty"`
	hidden   int
}

// Map keeps Go types (tests compare against typed values) and encodes to
// the same JSON as the struct.
func TestMapKeepsTypesAndMatchesJSON(t *testing.T) {
	zero, two := int32(0), int32(2)
	for _, v := range []sample{{Count: 3, Share: 0.5, Optional: &zero, hidden: 1}, {Nullable: &two, Names: []string{}, Note: "n"}} {
		m := Map(v)
		if _, ok := m["count"].(int); !ok {
			t.Errorf("count is %T", m["count"])
		}
		a, _ := json.Marshal(m)
		b, _ := json.Marshal(v)
		var x, y any
		json.Unmarshal(a, &x)
		json.Unmarshal(b, &y)
		if !reflect.DeepEqual(x, y) {
			t.Errorf("map %s, struct %s", a, b)
		}
	}
	if m := Map(sample{Optional: &zero}); m["optional"] != int32(0) || m["nullable"] != nil {
		t.Errorf("pointers: %v", m)
	}
	if Map(nil) != nil || Map(map[string]any{"a": 1})["a"] != 1 {
		t.Error("nil or map not passed through")
	}
}

func TestSchemaAndTable(t *testing.T) {
	s := Schema(reflect.TypeOf(sample{}))
	props := s["properties"].(map[string]any)
	if props["count"].(map[string]any)["type"] != "integer" || props["share"].(map[string]any)["type"] != "number" {
		t.Errorf("%v", props)
	}
	if got := props["optional"].(map[string]any)["type"]; got != "integer" {
		t.Errorf("optional pointer type %v: omitted when nil, never null", got)
	}
	if got := props["nullable"].(map[string]any)["type"]; !reflect.DeepEqual(got, []string{"integer", "null"}) {
		t.Errorf("nullable type %v", got)
	}
	if !reflect.DeepEqual(s["required"], []string{"count", "nullable", "share"}) || s["additionalProperties"] != false {
		t.Errorf("required %v", s["required"])
	}
	table := Table(reflect.TypeOf(sample{}))
	for _, want := range []string{"| `count` | integer | always | how many |", "| `share` | number | always | a \\| b |", "| `optional` | integer | optional |", "| `names` | array of string | optional |"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}
