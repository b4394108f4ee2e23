package fixcompose_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"backfire.dev/backfire/internal/catalog"
	"backfire.dev/backfire/internal/config"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/fixcompose"
	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/scan"
)

func decode(t *testing.T, file string) *object.Object {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	f := load.Parse(file, data)
	o, lerr := object.Decode(f.Documents[0])
	if lerr != nil {
		t.Fatal(lerr)
	}
	return o
}

var flapping = filepath.Join("testdata", "same-check-flapping-readiness.yaml")

// patches runs rs on the fixture and returns each rule's patch.
func patches(t *testing.T, rs []*rules.Rule, compose bool) (*object.Object, map[string]string) {
	t.Helper()
	o := decode(t, flapping)
	ix := index.Build([]*object.Object{o})
	opts := &rules.Options{Config: &config.Config{}}
	res := rules.RunObject(o, ix, rs, opts)
	if compose {
		fixcompose.Recompute(o, ix, rs, opts, res.Findings)
	}
	out := map[string]string{}
	for _, f := range res.Findings {
		out[f.Rule] = string(f.Fix.Patch)
	}
	return o, out
}

// applied composes the patches, applies them to o and scans the result
// with the whole catalog.
func applied(t *testing.T, o *object.Object, ps map[string]string) *scan.Result {
	t.Helper()
	var fs []finding.Finding
	for id, p := range ps {
		fs = append(fs, finding.Finding{Rule: id, Object: o.Ref, Fix: &finding.Fix{Type: finding.StrategicMergePatch, Patch: json.RawMessage(p)}})
	}
	changes := fix.Compose(fs)
	patch, _ := json.Marshal(changes[0].Patch)
	out, err := strategicpatch.StrategicMergePatch(o.Doc.JSON, patch, o.Typed)
	if err != nil {
		t.Fatal(err)
	}
	res, err := scan.Run(scan.Options{Stdin: bytes.NewReader(out), Paths: []string{"-"}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// BF104's fix raises readiness's failureThreshold; BF103 computed its
// liveness failureThreshold from the old one. Merged as they come, the two
// patches leave BF103 firing; composed by their declarations, BF103 is
// asked again on the object with BF104's fix applied, and both are gone.
func TestReaderIsComputedAgainAfterTheWriter(t *testing.T) {
	bf103, bf104 := catalog.ByID("BF103"), catalog.ByID("BF104")
	rs := []*rules.Rule{bf103, bf104}
	o, merged := patches(t, rs, false)
	if len(merged) != 2 {
		t.Fatalf("findings %v, want BF103 and BF104", merged)
	}
	if got := applied(t, o, merged); !slices.ContainsFunc(got.Findings, func(f finding.Finding) bool { return f.Rule == "BF103" }) {
		t.Fatal("the patches merged alone already silence BF103: the fixture does not show the case")
	}
	_, composed := patches(t, rs, true)
	if composed["BF104"] != merged["BF104"] {
		t.Errorf("BF104's patch changed: %s, was %s", composed["BF104"], merged["BF104"])
	}
	if composed["BF103"] == merged["BF103"] {
		t.Fatalf("BF103's patch was not computed again: %s", composed["BF103"])
	}
	for _, f := range applied(t, o, composed).Findings {
		t.Errorf("after the composed fix: %s %s", f.Rule, f.Message)
	}
}

// The composition does not depend on the order the rules run in.
func TestCompositionIsOrderIndependent(t *testing.T) {
	all := catalog.All()
	_, want := patches(t, all, true)
	reversed := slices.Clone(all)
	slices.Reverse(reversed)
	if _, got := patches(t, reversed, true); !mapsEqual(got, want) {
		t.Errorf("reversed order: %v, want %v", got, want)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestFieldsNameContainerPodAndObjectFields(t *testing.T) {
	o := decode(t, flapping)
	patch := json.RawMessage(`{"metadata":{"annotations":{"a":"b"}},"spec":{"replicas":3,"template":{"spec":{"affinity":null,"containers":[{"name":"app","livenessProbe":{"exec":null,"tcpSocket":{"port":8080}}}]}}}}`)
	got := fixcompose.Fields(o, patch)
	want := []fixcompose.Field{
		{Path: "metadata.annotations.a"},
		{Path: "pod.affinity"},
		{Path: "spec.replicas"},
		{Path: "container.livenessProbe.exec", Container: "app"},
		{Path: "container.livenessProbe.tcpSocket.port", Container: "app"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("fields %v, want %v", got, want)
	}
	if !fixcompose.Overlaps([]string{"container.livenessProbe"}, "container.livenessProbe.exec") ||
		!fixcompose.Overlaps([]string{"container.livenessProbe.timeoutSeconds"}, "container.livenessProbe") ||
		fixcompose.Overlaps([]string{"container.livenessProbe"}, "container.livenessProbeX") ||
		fixcompose.Covers([]string{"container.livenessProbe.timeoutSeconds"}, "container.livenessProbe") {
		t.Error("Overlaps or Covers")
	}
}
