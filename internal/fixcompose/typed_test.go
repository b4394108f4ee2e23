package fixcompose

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"backfire.dev/backfire/internal/benchcorpus"
	"backfire.dev/backfire/internal/catalog"
	"backfire.dev/backfire/internal/config"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/jsonenc"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/testutil"
)

// sameObject reports how the typed patch of o differs from the document
// patched and decoded again, "" when it does not: the same typed value,
// metadata, reference, dropped fields and document but for its JSON, and
// the same answer of every rule whose fix is computed from fields (the
// readers a recompute asks again) when ix is given, or both rejected. It
// reports "" too where the typed patch leaves the patch to the document.
func sameObject(o *object.Object, ix *index.Index, patch map[string]any) string {
	if len(o.Dropped) > 0 {
		return ""
	}
	// Each applier gets its own copy: a patch is not to be changed, but
	// a test that shares one could not tell.
	before := o.Typed.(runtime.Object).DeepCopyObject()
	typed, ok := typedPatched(o, clonePatch(patch))
	if !reflect.DeepEqual(before, o.Typed) {
		return "the typed patch changed the original object" // it shares what the patch leaves
	}
	if !ok {
		return ""
	}
	decoded := decodedPatched(o, clonePatch(patch))
	switch {
	case typed == nil && decoded == nil:
		return ""
	case typed == nil || decoded == nil:
		return "only one of the typed patch and the decode rejects the object"
	case !reflect.DeepEqual(typed.Typed, decoded.Typed):
		return "typed values differ"
	case !reflect.DeepEqual(typed.Meta, decoded.Meta) || typed.Ref != decoded.Ref:
		return "metadata differ"
	case !reflect.DeepEqual(typed.Dropped, decoded.Dropped):
		return "dropped fields differ"
	}
	td, dd := *typed.Doc, *decoded.Doc
	td.JSON, dd.JSON = nil, nil
	if !reflect.DeepEqual(td, dd) {
		return "documents differ"
	}
	if ix == nil {
		return ""
	}
	var readers []*rules.Rule
	for _, r := range catalog.All() {
		if len(r.Fix.From) > 0 && !r.Fix.FromDocument && r.ScanCheck() != nil && !r.ScanCheck().ReadsFindings {
			readers = append(readers, r)
		}
	}
	opts := &rules.Options{Config: &config.Config{}}
	tf, df := rules.RunObject(typed, ix, readers, opts).Findings, rules.RunObject(decoded, ix, readers, opts).Findings
	if len(tf) != len(df) {
		return "the readers find differently"
	}
	for i := range tf {
		if !reflect.DeepEqual(tf[i].Finding, df[i].Finding) {
			return "the readers answer differently: " + tf[i].Rule
		}
	}
	return ""
}

// sameStale reports how the stale parts the rules' declarations find
// differ from those a walk of every part's patch finds, "" when they do
// not.
func sameStale(o *object.Object, found []rules.Reported) string {
	var parts []int
	for i, f := range found {
		if f.Fix != nil && f.Fix.Type == finding.StrategicMergePatch && len(f.Fix.Patch) > 0 && f.Fix.Target == nil {
			parts = append(parts, i)
		}
	}
	byID := map[string]*rules.Rule{}
	for _, r := range catalog.All() {
		byID[r.ID] = r
	}
	decoded := func(i int) map[string]any {
		p, _ := fix.DecodePatch(found[i].Fix.Patch)
		return p
	}
	declared := staleOf(o, found, parts, byID, decoded, false)
	walked := staleOf(o, found, parts, byID, decoded, true)
	if !slices.Equal(declared, walked) {
		return fmt.Sprintf("stale parts %v by the declarations, %v by the patches", declared, walked)
	}
	if len(walked) > 0 {
		staleObjects++
	}
	return ""
}

// staleObjects counts the objects sameStale found stale parts on.
var staleObjects int

func clonePatch(p map[string]any) map[string]any {
	b, err := jsonenc.Marshal(p)
	if err != nil {
		panic(err)
	}
	out, err := fix.DecodePatch(b)
	if err != nil {
		panic(err)
	}
	return out
}

// comparePatches checks, on every object of the files, the typed patch
// against the decode on each fix of the rules alone and on their
// composition; it returns how many patches the typed patch applied.
func comparePatches(t *testing.T, files []string) int {
	t.Helper()
	all := catalog.All()
	opts := &rules.Options{Config: &config.Config{}}
	applied := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var objs []*object.Object
		for _, doc := range load.Parse(file, data).Documents {
			if o, lerr := object.Decode(doc); lerr == nil && o.Typed != nil {
				objs = append(objs, o)
			}
		}
		ix := index.Build(objs)
		for _, o := range objs {
			var fs []finding.Finding
			var ps []map[string]any
			res := rules.RunObject(o, ix, all, opts).Findings
			for _, f := range res {
				if f.Fix == nil || f.Fix.Type != finding.StrategicMergePatch || f.Fix.Target != nil || len(f.Fix.Patch) == 0 {
					continue
				}
				p, err := fix.DecodePatch(f.Fix.Patch)
				if err != nil {
					continue
				}
				fs, ps = append(fs, f.Finding), append(ps, p)
			}
			if why := sameStale(o, res); why != "" {
				t.Errorf("%s %s: %s", file, o.Ref, why)
			}
			patches := ps
			if changes := fix.ComposeDecoded(fs, ps); len(changes) == 1 && len(ps) > 1 {
				patches = append(patches, changes[0].Patch)
			}
			for _, p := range patches {
				if why := sameObject(o, ix, p); why != "" {
					b, _ := jsonenc.Marshal(p)
					t.Errorf("%s %s, patch %s: %s", file, o.Ref, b, why)
				}
				if _, ok := typedPatched(o, p); ok {
					applied++
				}
			}
		}
	}
	return applied
}

func TestTypedPatchIsTheDecodedPatchOnTheBenchmarkCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("the benchmark corpus")
	}
	dir := t.TempDir()
	if _, err := benchcorpus.Generate(dir, 100); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	staleObjects = 0
	if n := comparePatches(t, files); n < 1000 {
		t.Errorf("the typed patch applied %d patches of the corpus, want the recompute's 1,189 objects' and more", n)
	}
	if staleObjects < 1000 {
		t.Errorf("%d objects with stale fixes, want a thousand and more", staleObjects)
	}
}

func TestTypedPatchIsTheDecodedPatchOnTheRepositorysManifests(t *testing.T) {
	files := testutil.YAMLFiles(t, "../../testdata", "../../examples")
	if n := comparePatches(t, files); n < 40 {
		t.Errorf("the typed patch applied %d patches of the manifests, want the 48 their fixes make", n)
	}
}

// A rule whose fix is computed from its object's document, not only from
// its typed value, says so (FixFields.FromDocument): the recompute then
// patches the document for it. The rules that read it are found in their
// files.
func TestRulesThatReadTheDocumentSaySo(t *testing.T) {
	id := regexp.MustCompile(`ID:\s*"(BF[0-9]+)"`)
	readers := 0
	err := filepath.WalkDir("../rules", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil || !strings.Contains(string(src), "Doc.JSON") {
			return err
		}
		for _, m := range id.FindAllStringSubmatch(string(src), -1) {
			r := catalog.ByID(m[1])
			if r == nil || len(r.Fix.From) == 0 {
				continue
			}
			readers++
			if !r.Fix.FromDocument {
				t.Errorf("%s reads its document (%s) but its Fix does not say FromDocument", r.ID, path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if readers < 3 {
		t.Errorf("found %d rules that read their document, want BF401, BF404 and BF701 at least", readers)
	}
}

// FuzzTypedPatch patches the fixtures' objects with any patch: where the
// typed patch applies one, it is the document patched and decoded again.
func FuzzTypedPatch(f *testing.F) {
	for _, seed := range []struct{ doc, patch string }{
		{flappingFixture, `{"spec":{"template":{"spec":{"containers":[{"name":"app","livenessProbe":{"exec":null,"failureThreshold":6,"tcpSocket":{"port":8080},"timeoutSeconds":3}}]}}}}`},
		{flappingFixture, `{"spec":{"template":{"spec":{"containers":[{"name":"app","readinessProbe":{"exec":{"command":["pg_isready","-h","127.0.0.1"]},"tcpSocket":null,"timeoutSeconds":5},"resources":{"limits":{"memory":"2Gi"},"requests":{"cpu":"500m","memory":"1Gi"}}}]}}}}`},
		{flappingFixture, `{"metadata":{"annotations":{"a":"b","c":null},"labels":null},"spec":{"replicas":3,"template":{"spec":{"terminationGracePeriodSeconds":30,"affinity":{"nodeAffinity":null}}}}}`},
		{flappingFixture, `{"spec":{"template":{"spec":{"containers":[{"name":"app","livenessProbe":{"httpGet":{"port":"http","path":"/healthz"},"periodSeconds":-1}}]}}}}`},
	} {
		f.Add(seed.doc, seed.patch)
	}
	f.Fuzz(func(t *testing.T, doc, patch string) {
		fl := load.Parse("fuzz.yaml", []byte(doc))
		if len(fl.Documents) == 0 {
			return
		}
		o, lerr := object.Decode(fl.Documents[0])
		if lerr != nil || o.Typed == nil {
			return
		}
		p, err := fix.DecodePatch([]byte(patch))
		if err != nil || p == nil {
			return
		}
		// The readers are left out: what they simulate grows with the
		// numbers the fuzzer writes (a hundred million replicas).
		if why := sameObject(o, nil, p); why != "" {
			t.Errorf("patch %s: %s", patch, why)
		}
	})
}

const flappingFixture = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: sidecar
        image: envoy:1.30
      - name: app
        image: web:1.0
        ports:
        - {name: http, containerPort: 8080}
        env:
        - {name: A, value: "1"}
        livenessProbe:
          exec: {command: [cat, /tmp/ok]}
          periodSeconds: 5
          failureThreshold: 1
        readinessProbe:
          tcpSocket: {port: 8080}
          periodSeconds: 5
        resources:
          requests: {cpu: 100m}
`

// FuzzStaleParts runs the rules on any manifest: the stale parts the
// rules' declarations find are those a walk of every patch finds.
func FuzzStaleParts(f *testing.F) {
	f.Add(flappingFixture)
	if b, err := os.ReadFile(filepath.Join("testdata", "same-check-flapping-readiness.yaml")); err == nil {
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, doc string) {
		var objs []*object.Object
		for _, d := range load.Parse("fuzz.yaml", []byte(doc)).Documents {
			if o, lerr := object.Decode(d); lerr == nil {
				objs = append(objs, o)
			}
		}
		ix := index.Build(objs)
		opts := &rules.Options{Config: &config.Config{}}
		for _, o := range objs {
			if why := sameStale(o, rules.RunObject(o, ix, catalog.All(), opts).Findings); why != "" {
				t.Errorf("%s: %s", o.Ref, why)
			}
		}
	})
}
