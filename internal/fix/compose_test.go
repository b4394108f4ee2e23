package fix

import (
	"encoding/json"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/object"
)

var db = object.Ref{APIVersion: "apps/v1", Kind: "StatefulSet", Namespace: "registry", Name: "registry-database"}

func withPatch(rule, patch string) finding.Finding {
	return finding.Finding{Rule: rule, Object: db, Container: "database",
		Fix: &finding.Fix{Type: finding.StrategicMergePatch, Patch: json.RawMessage(patch)}}
}

func liveness(fields string) string {
	return `{"spec":{"template":{"spec":{"containers":[{"name":"database","livenessProbe":{` + fields + `}}]}}}}`
}

// The seed 003 database: BF101, BF102 and BF103 each proposed liveness
// numbers; applied in turn, BF103's failureThreshold or BF102's timeout
// undid BF101's. Composed, BF101 owns the probe it rewrites.
func TestComposeSeed003(t *testing.T) {
	fs := []finding.Finding{
		withPatch("BF102", liveness(`"timeoutSeconds":5,"failureThreshold":3`)),
		withPatch("BF103", liveness(`"failureThreshold":6`)),
		withPatch("BF101", liveness(`"exec":null,"tcpSocket":{"port":5432},"timeoutSeconds":3,"failureThreshold":6`)),
	}
	cs := Compose(fs)
	if len(cs) != 1 {
		t.Fatalf("%d changes, want one for the one object", len(cs))
	}
	c := cs[0]
	if len(c.Findings) != 3 {
		t.Errorf("change fixes %v, want all three findings", c.Findings)
	}
	got, _ := json.Marshal(c.Patch)
	want := liveness(`"exec":null,"failureThreshold":6,"tcpSocket":{"port":5432},"timeoutSeconds":3`)
	if !sameJSON(got, want) {
		t.Errorf("composed\n%s\nwant\n%s", got, want)
	}
	if len(c.Notes) == 0 || !strings.Contains(strings.Join(c.Notes, "\n"), "BF101 replaces the handler") {
		t.Errorf("notes %q do not say BF101 owns the probe", c.Notes)
	}
}

// Without a handler change the more tolerant number wins, whatever the
// order the findings come in.
func TestComposeLargerNumberWins(t *testing.T) {
	for _, order := range [][2]string{{"BF102", "BF103"}, {"BF103", "BF102"}} {
		fs := []finding.Finding{
			withPatch(order[0], liveness(`"failureThreshold":3,"timeoutSeconds":3`)),
			withPatch(order[1], liveness(`"failureThreshold":7`)),
		}
		fs[1].Fix.Patch = json.RawMessage(liveness(`"failureThreshold":7`))
		got, _ := json.Marshal(Compose(fs)[0].Patch)
		want := liveness(`"failureThreshold":7,"timeoutSeconds":3`)
		if !sameJSON(got, want) {
			t.Errorf("order %v: composed %s, want %s", order, got, want)
		}
	}
}

func TestComposeQuantitiesAndStrings(t *testing.T) {
	res := func(rule, mem, cpu string) finding.Finding {
		return withPatch(rule, `{"spec":{"template":{"spec":{"containers":[{"name":"database","resources":{"limits":{"memory":"`+mem+`"},"requests":{"cpu":"`+cpu+`"}}}]}}}}`)
	}
	fs := []finding.Finding{res("BF203", "1536Mi", "abc"), res("BF201", "2Gi", "xyz")}
	got, _ := json.Marshal(Compose(fs)[0].Patch)
	// 2Gi > 1536Mi; two strings that are no quantities: the lower ID.
	want := `{"spec":{"template":{"spec":{"containers":[{"name":"database","resources":{"limits":{"memory":"2Gi"},"requests":{"cpu":"xyz"}}}]}}}}`
	if !sameJSON(got, want) {
		t.Errorf("composed %s, want %s", got, want)
	}
}

func TestComposeSeparatesObjectsAndSkipsManualFixes(t *testing.T) {
	other := withPatch("BF102", liveness(`"timeoutSeconds":3`))
	other.Object.Name = "other"
	manual := finding.Finding{Rule: "BF402", Object: db, Fix: &finding.Fix{Type: finding.ManualChange, Description: "by hand"}}
	target := withPatch("BF101", liveness(`"timeoutSeconds":3`))
	dep := object.Ref{APIVersion: "apps/v1", Kind: "Deployment", Name: "behind"}
	target.Fix.Target = &dep
	cs := Compose([]finding.Finding{withPatch("BF102", liveness(`"timeoutSeconds":3`)), other, manual, target})
	if len(cs) != 3 {
		t.Fatalf("%d changes, want 3 (two objects and a fix target)", len(cs))
	}
	if cs[2].Target != dep {
		t.Errorf("a fix with a Target composes on the target, got %v", cs[2].Target)
	}
	for _, c := range cs {
		for _, i := range c.Findings {
			if i == 2 {
				t.Error("a manual change was composed")
			}
		}
	}
}

// Agree: every finding on the object proposes its part of the composition.
func TestAgree(t *testing.T) {
	fs := []finding.Finding{
		withPatch("BF102", liveness(`"timeoutSeconds":5,"failureThreshold":3`)),
		withPatch("BF101", liveness(`"exec":null,"tcpSocket":{"port":5432},"timeoutSeconds":3,"failureThreshold":6`)),
	}
	Agree(fs)
	if !sameJSON(fs[0].Fix.Patch, string(fs[1].Fix.Patch)) {
		t.Errorf("BF102 proposes\n%s\nBF101\n%s", fs[0].Fix.Patch, fs[1].Fix.Patch)
	}
	if !strings.Contains(fs[0].Fix.Description, "composed with the fix of BF101") {
		t.Errorf("BF102's description does not say it was composed: %s", fs[0].Fix.Description)
	}
	if strings.Contains(fs[1].Fix.Description, "composed") {
		t.Errorf("BF101's own patch was not changed, its description should not be: %s", fs[1].Fix.Description)
	}
}

func sameJSON(got []byte, want string) bool {
	var a, b any
	if json.Unmarshal(got, &a) != nil || json.Unmarshal([]byte(want), &b) != nil {
		return false
	}
	return equal(a, b)
}

// A composition handed to AgreeComposed is used for exactly the findings
// it composed, and agrees them as composing them again would; for any
// other set of findings it is not used.
func TestAgreeComposedUsesTheComposition(t *testing.T) {
	mk := func() []finding.Finding {
		return []finding.Finding{
			withPatch("BF102", liveness(`"timeoutSeconds":5,"failureThreshold":3`)),
			withPatch("BF101", liveness(`"exec":null,"tcpSocket":{"port":5432},"timeoutSeconds":3,"failureThreshold":6`)),
		}
	}
	want := mk()
	AgreeDecoded(want, nil)
	cs := Compose(mk())
	got := mk()
	AgreeComposed(got, nil, &cs[0], []int{0, 1})
	for i := range got {
		if string(got[i].Fix.Patch) != string(want[i].Fix.Patch) || got[i].Fix.Description != want[i].Fix.Description {
			t.Errorf("finding %d: %s, want %s", i, got[i].Fix.Patch, want[i].Fix.Patch)
		}
	}
	if string(want[0].Fix.Patch) == string(mk()[0].Fix.Patch) {
		t.Fatal("BF102's patch did not change: the test shows nothing")
	}

	// A composition with nothing in it changes nothing where it is used,
	// and is not used for other findings.
	empty := Change{Patch: map[string]any{}, Findings: []int{0, 1}}
	used := mk()
	AgreeComposed(used, nil, &empty, []int{0, 1})
	if string(used[0].Fix.Patch) == string(want[0].Fix.Patch) {
		t.Error("the composition given was not used")
	}
	ignored := mk()
	AgreeComposed(ignored, nil, &Change{Patch: map[string]any{}, Findings: []int{0, 1}}, []int{0, 2})
	if string(ignored[0].Fix.Patch) != string(want[0].Fix.Patch) {
		t.Error("a composition of other findings was used")
	}
}
