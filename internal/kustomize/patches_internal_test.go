package kustomize

import (
	"os"
	"path/filepath"
	"testing"

	"backfire.dev/backfire/internal/load"
)

// Kustomizations kustomize itself would refuse never make the patch
// reader panic; they just give no patches to trace to.
func TestOddPatchesDoNotPanic(t *testing.T) {
	built := load.Parse("built.yaml", []byte("apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: 1}]}\n")).Documents[0]
	for name, k := range map[string]string{
		"not a map":            "- a\n",
		"patches is a string":  "patches: x\n",
		"patch entry a list":   "patches: [[1]]\n",
		"target a string":      "patches: [{target: x, patch: '[]'}]\n",
		"bad regexp":           "patches: [{target: {name: '('}, patch: '[{op: add, path: /spec/ports, value: [{port: 1}]}]'}]\n",
		"op without value":     "patches: [{patch: '[{op: replace, path: /spec}]'}]\n",
		"broken inline yaml":   "patchesStrategicMerge: ['kind: [']\n",
		"missing patch file":   "patches: [{path: nope.yaml}]\n",
		"self as resource":     "resources: [.]\npatches: [{patch: '[{op: add, path: /spec/ports/-, value: {port: 1}}]'}]\n",
		"pointer past the end": "patches: [{patch: '[{op: add, path: /spec/ports/9/port, value: 1}]'}]\n",
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k), 0o644); err != nil {
			t.Fatal(err)
		}
		ps := kustomizationPatches(dir)
		for _, path := range []string{"", "spec", "spec.ports[0].port", "spec.ports[5]", "metadata[name]"} {
			tr := patchTrace(ps, built, "s", path)
			if name != "self as resource" && name != "bad regexp" && tr.File != "" {
				t.Errorf("%s: %s traced to %s:%d", name, path, tr.File, tr.Line)
			}
		}
	}
}
