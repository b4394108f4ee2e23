package fix_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"backfire.dev/backfire/internal/benchcorpus"
	"backfire.dev/backfire/internal/catalog"
	"backfire.dev/backfire/internal/config"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/fixcompose"
	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/testutil"
)

// agreement counts what compareAgreement saw.
type agreement struct {
	groups, disjoint, rewritten int
}

// compareAgreement checks, on every object of the files, the fixes the
// scan reports (fixcompose.RunAndAgree, with the shortcuts and the
// recompute's composition) against the general agreement of the same
// recomputed fixes.
func compareAgreement(t *testing.T, files []string) agreement {
	t.Helper()
	all := catalog.All()
	opts := &rules.Options{Config: &config.Config{}}
	var seen agreement
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var objs []*object.Object
		for _, doc := range load.Parse(file, data).Documents {
			if o, lerr := object.Decode(doc); lerr == nil {
				objs = append(objs, o)
			}
		}
		ix := index.Build(objs)
		for _, o := range objs {
			got := fixcompose.RunAndAgree(o, ix, all, opts).Findings
			found := rules.RunObject(o, ix, all, opts).Findings
			fixcompose.Recompute(o, ix, all, opts, found)
			want := make([]finding.Finding, len(found))
			for i := range found {
				want[i] = found[i].Finding
			}
			if why := sameComposition(want); why != "" {
				t.Errorf("%s %s: %s", file, o.Ref, why)
			}
			fix.AgreeGeneral(want)
			if len(got) != len(want) {
				t.Fatalf("%s %s: %d findings, want %d", file, o.Ref, len(got), len(want))
			}
			for i := range got {
				if !reflect.DeepEqual(got[i].Fix, want[i].Fix) {
					t.Errorf("%s %s %s: fix %+v, want %+v", file, o.Ref, got[i].Rule, got[i].Fix, want[i].Fix)
				}
				if want[i].Fix != nil && want[i].Fix.Own != nil {
					seen.rewritten++
				}
			}
			count(&seen, want)
		}
	}
	return seen
}

// sameComposition reports how the composition without notes differs from
// the composition with them, but for the notes; "" when it does not.
func sameComposition(fs []finding.Finding) string {
	quiet, full := fix.ComposePatchOnly(fs, nil), fix.ComposeDecoded(fs, nil)
	for i := range full {
		full[i].Notes = nil
	}
	if !reflect.DeepEqual(quiet, full) {
		return fmt.Sprintf("composed without notes %+v, with them %+v", quiet, full)
	}
	return ""
}

// count counts the objects with two fixes or more, and those whose fixes
// set no field in common.
func count(seen *agreement, fs []finding.Finding) {
	var ps []map[string]any
	for _, f := range fs {
		if f.Fix != nil && f.Fix.Type == finding.StrategicMergePatch && len(f.Fix.Patch) > 0 {
			if p, err := fix.DecodePatch(f.Fix.Patch); err == nil {
				ps = append(ps, p)
			}
		}
	}
	if len(ps) < 2 {
		return
	}
	seen.groups++
	decoded := make([]bool, len(ps))
	for i := range decoded {
		decoded[i] = true
	}
	if fix.Disjoint(ps, decoded) {
		seen.disjoint++
	}
}

func TestAgreementShortcutsOnTheBenchmarkCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("the benchmark corpus")
	}
	dir := t.TempDir()
	if _, err := benchcorpus.Generate(dir, 100); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	seen := compareAgreement(t, files)
	t.Logf("%+v", seen)
	if seen.disjoint < 400 || seen.groups-seen.disjoint < 400 || seen.rewritten < 500 {
		t.Errorf("%+v: want hundreds of objects with disjoint fixes, with others, and rewritten patches", seen)
	}
}

func TestAgreementShortcutsOnTheRepositorysManifests(t *testing.T) {
	files := testutil.YAMLFiles(t, "../../testdata", "../../examples")
	seen := compareAgreement(t, files)
	t.Logf("%+v", seen)
	if seen.disjoint == 0 || seen.rewritten == 0 {
		t.Errorf("%+v: want objects with disjoint fixes and rewritten patches", seen)
	}
}

// FuzzAgreementShortcuts agrees any three patches on one object: with the
// shortcuts as without them.
func FuzzAgreementShortcuts(f *testing.F) {
	container := func(fields string) string {
		return `{"spec":{"template":{"spec":{"containers":[{"name":"app",` + fields + `}]}}}}`
	}
	for _, seed := range [][3]string{
		{container(`"livenessProbe":{"exec":null,"failureThreshold":6,"tcpSocket":{"port":5432},"timeoutSeconds":3}`),
			container(`"livenessProbe":{"failureThreshold":3,"timeoutSeconds":3}`),
			container(`"resources":{"limits":{"memory":"2Gi"},"requests":{"cpu":"500m","memory":"1Gi"}}`)},
		{container(`"readinessProbe":{"exec":{"command":["sh"]},"tcpSocket":null,"timeoutSeconds":5}`),
			`{"spec":{"template":{"spec":{"containers":[{"name":"side","resources":{"limits":{"memory":"1Gi"}}}]}}}}`,
			`{"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"app","env":[{"name":"A","value":"1"}]},{"name":"app","env":[]}]}}}}`},
		{`{"spec":{"template":{"spec":{"containers":[{"name":"\u00e9","args":["a"]}]}}}}`, `{"a":{"b":1}}`, `{"a":{"c":[1,null]},"d":null}`},
		{`{"a":{"b":{}}}`, `{"a":{"b":{"c":1}}}`, `{"a":[{"name":"x","v":1}],"b":"\ufffd"}`},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	ref := object.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "web"}
	f.Fuzz(func(t *testing.T, a, b, c string) {
		var fs []finding.Finding
		for i, p := range []string{a, b, c} {
			fs = append(fs, finding.Finding{Rule: []string{"BF102", "BF101", "BF201"}[i], Object: ref, Container: "app",
				Fix: &finding.Fix{Type: finding.StrategicMergePatch, Description: "d.", Patch: []byte(p)}})
		}
		if why := sameComposition(fs); why != "" {
			t.Error(why)
		}
		want := slices.Clone(fs)
		fix.Agree(fs)
		fix.AgreeGeneral(want)
		for i := range fs {
			if !reflect.DeepEqual(fs[i].Fix, want[i].Fix) {
				t.Errorf("%s: fix %+v, want %+v", fs[i].Rule, fs[i].Fix, want[i].Fix)
			}
		}
	})
}
