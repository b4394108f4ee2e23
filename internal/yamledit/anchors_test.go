package yamledit

import (
	"strings"
	"testing"

	"backfire.dev/backfire/internal/load"
)

const anchored = `apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: a
    livenessProbe: &probe
      exec:
        command: [check]
      timeoutSeconds: 1
    readinessProbe: *probe
  - name: b
    livenessProbe:
      <<: *probe
      periodSeconds: 20
`

// The use that changes is written out with its change; the anchor and
// the other uses stay.
func TestEditExpandsTheAliasThatChanges(t *testing.T) {
	out := editTwice(t, anchored, 0, `{"spec":{"containers":[{"name":"a","readinessProbe":{"timeoutSeconds":5}}]}}`)
	if !strings.Contains(out, "livenessProbe: &probe\n      exec:\n        command: [check]\n      timeoutSeconds: 1\n") {
		t.Errorf("the anchor changed:\n%s", out)
	}
	if !strings.Contains(out, "readinessProbe:\n      exec:") || !strings.Contains(out, "timeoutSeconds: 5") {
		t.Errorf("the alias is not expanded with its change:\n%s", out)
	}
	if !strings.Contains(out, "<<: *probe") {
		t.Errorf("the merge that does not change was expanded:\n%s", out)
	}
}

// The anchored node changes alone: its other uses are written out with
// what they held.
func TestEditKeepsOtherUsesOfAChangedAnchor(t *testing.T) {
	out := editTwice(t, anchored, 0, `{"spec":{"containers":[{"name":"a","livenessProbe":{"exec":null,"tcpSocket":{"port":5432}}}]}}`)
	if strings.Contains(out, "*probe") {
		t.Errorf("a use still follows the changed anchor:\n%s", out)
	}
	if strings.Count(out, "command:") != 2 || !strings.Contains(out, "tcpSocket:") {
		t.Errorf("the other uses do not keep the exec handler:\n%s", out)
	}
}

// A change to a key a mapping merges from an anchor expands the merge.
func TestEditExpandsAMergeItChangesThrough(t *testing.T) {
	out := editTwice(t, anchored, 0, `{"spec":{"containers":[{"name":"b","livenessProbe":{"exec":null,"httpGet":{"path":"/","port":80}}}]}}`)
	if strings.Count(out, "*probe") != 1 || strings.Count(out, "command:") != 1 {
		t.Errorf("the merge is not expanded, or the anchor changed:\n%s", out)
	}
}

// Every use getting the same change edits the anchor once.
func TestEditChangesASharedAnchorOnce(t *testing.T) {
	src := `apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: a
    readinessProbe: &probe
      httpGet: {path: /, port: 80}
      failureThreshold: 1
  - name: b
    readinessProbe: *probe
`
	out := editTwice(t, src, 0, `{"spec":{"containers":[{"name":"a","readinessProbe":{"failureThreshold":3}},{"name":"b","readinessProbe":{"failureThreshold":3}}]}}`)
	if !strings.Contains(out, "readinessProbe: *probe") || strings.Count(out, "failureThreshold: 3") != 1 {
		t.Errorf("the shared anchor is not edited once:\n%s", out)
	}
}

// verify refuses an edit whose result is not what the patch makes.
func TestVerifyRefusesAWrongEdit(t *testing.T) {
	old := []byte("kind: Pod\nmetadata: {name: p}\nspec: {x: 1}\n")
	wrong := []byte("kind: Pod\nmetadata: {name: p}\nspec: {x: 2, y: 1}\n")
	err := verify(old, wrong, load.Position{Line: 1, Column: 1}, map[string]any{"spec": map[string]any{"x": 2.0}}, false, false)
	if err == nil {
		t.Error("a wrong edit passed")
	}
	right := []byte("kind: Pod\nmetadata: {name: p}\nspec: {x: 2}\n")
	if err := verify(old, right, load.Position{Line: 1, Column: 1}, map[string]any{"spec": map[string]any{"x": 2.0}}, false, false); err != nil {
		t.Error(err)
	}
}

// JSON stays JSON: its indentation, its one-line objects, its line
// endings.
func TestEditJSON(t *testing.T) {
	src := "{\r\n    \"apiVersion\": \"v1\",\r\n    \"kind\": \"Pod\",\r\n    \"metadata\": {\"name\": \"p\"},\r\n    \"spec\": {\r\n        \"containers\": [\r\n            {\"name\": \"a\", \"image\": \"x\"}\r\n        ]\r\n    }\r\n}\r\n"
	out := editTwice(t, src, 0, `{"spec":{"containers":[{"name":"a","resources":{"requests":{"cpu":"100m"}}}]}}`)
	want := "{\r\n    \"apiVersion\": \"v1\",\r\n    \"kind\": \"Pod\",\r\n    \"metadata\": {\"name\": \"p\"},\r\n    \"spec\": {\r\n        \"containers\": [\r\n            {\"name\": \"a\", \"image\": \"x\", \"resources\": {\"requests\": {\"cpu\": \"100m\"}}}\r\n        ]\r\n    }\r\n}\r\n"
	if out != want {
		t.Errorf("got\n%q\nwant\n%q", out, want)
	}
}

// New lines in a CRLF file end with CRLF.
func TestEditKeepsCRLF(t *testing.T) {
	src := strings.ReplaceAll("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: a\n    image: x\n", "\n", "\r\n")
	out := editTwice(t, src, 0, `{"spec":{"containers":[{"name":"a","readinessProbe":{"httpGet":{"path":"/","port":80}}}]}}`)
	if strings.Count(out, "\n") != strings.Count(out, "\r\n") {
		t.Errorf("a line without CRLF: %q", out)
	}
}
