package yamledit

import (
	"encoding/json"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/load"
)

// Any manifest text and patch: Edit never panics, an edit it returns is
// what the patch makes of the object (verify, checked inside Edit, is
// checked here again from the outside), and the same edit on its result
// changes nothing.
func FuzzEdit(f *testing.F) {
	f.Add(anchored, `{"spec":{"containers":[{"name":"a","livenessProbe":{"exec":null,"tcpSocket":{"port":5432}}}]}}`)
	f.Add(anchored, `{"spec":{"containers":[{"name":"b","livenessProbe":{"timeoutSeconds":3}}]}}`)
	f.Add("{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"Pod\",\n  \"metadata\": {\"name\": \"p\"},\n  \"spec\": {\"containers\": [{\"name\": \"a\"}]}\n}\n", `{"spec":{"containers":[{"name":"a","resources":{"limits":{"cpu":null,"memory":"1Gi"}}}]}}`)
	f.Add(strings.ReplaceAll("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: a\n    resources: {limits: {cpu: \"1\", memory: 1Gi}}\n", "\n", "\r\n"), `{"spec":{"containers":[{"name":"a","resources":{"limits":{"cpu":null}}}]}}`)
	f.Add("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: p}\n  spec: {x: 1}\n", `{"spec":{"x":2,"y":[1,2]}}`)
	f.Fuzz(func(t *testing.T, src, patchText string) {
		var patch map[string]any
		if json.Unmarshal([]byte(patchText), &patch) != nil {
			return
		}
		file := load.Parse("in.yaml", []byte(src))
		if len(file.Documents) == 0 {
			return
		}
		pos, _ := file.Documents[0].Locate("")
		out, err := Edit([]byte(src), pos, patch, nil)
		if err != nil {
			return
		}
		if err := verify([]byte(src), out, pos, patch, false, false); err != nil {
			t.Fatalf("an edit that does not make the patched object: %v\n%q\n%q", err, src, out)
		}
		again, err := Edit(out, pos, patch, nil)
		if err != nil {
			t.Fatalf("the edit again: %v\n%q", err, out)
		}
		if string(again) != string(out) {
			t.Errorf("a second edit changes the file again:\n%q\n%q", out, again)
		}
	})
}
