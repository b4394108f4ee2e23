package fixplan

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"backfire.dev/backfire/internal/config"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/scan"
	"backfire.dev/backfire/internal/testutil"
)

// leaves flattens a patch to field -> value, list items named by "name".
func leaves(v any, path string, out map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			leaves(c, join(path, k), out)
		}
	case []any:
		if named(x) {
			for _, it := range x {
				leaves(it, path+"["+it.(map[string]any)["name"].(string)+"]", out)
			}
			return
		}
		b, _ := json.Marshal(x)
		out[path] = string(b)
	default:
		out[path] = fmt.Sprint(v)
	}
}

// What scan prints agrees with the composition: no two findings on one
// object propose different values for one field, on the examples and on
// every rule's positive fixtures run with the whole catalog.
func TestScanFixesAgree(t *testing.T) {
	root := testutil.RepoRoot(t)
	paths, _ := filepath.Glob(filepath.Join(root, "internal", "rules", "*", "testdata", "BF*", "positive", "*.yaml"))
	paths = append(paths, filepath.Join(root, "examples"))
	composed := 0
	for _, p := range paths {
		o := options(p)
		o.Scan.Rules.Config = &config.Config{Enable: []string{"BF203"}}
		res, err := scan.Run(o.Scan)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]map[string]string{} // object -> field -> value
		by := map[string]map[string]string{}   // object -> field -> rule
		for _, f := range res.Findings {
			if f.Fix == nil || len(f.Fix.Patch) == 0 {
				continue
			}
			if f.Fix.Own != nil {
				composed++
			}
			var patch any
			if err := json.Unmarshal(f.Fix.Patch, &patch); err != nil {
				t.Fatal(err)
			}
			obj := fix.TargetOf(f).String()
			if seen[obj] == nil {
				seen[obj], by[obj] = map[string]string{}, map[string]string{}
			}
			l := map[string]string{}
			leaves(patch, "", l)
			for field, v := range l {
				if w, ok := seen[obj][field]; ok && w != v {
					t.Errorf("%s: on %s, %s proposes %s = %s, %s proposes %s", p, obj, f.Rule, field, v, by[obj][field], w)
				}
				seen[obj][field], by[obj][field] = v, f.Rule
			}
		}
	}
	if composed < 5 {
		t.Errorf("only %d findings had their patch composed: the test does not reach the case it is for", composed)
	}
}
