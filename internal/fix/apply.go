package fix

import (
	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"backfire.dev/backfire/internal/jsonenc"
)

// Apply applies a strategic merge patch to an object's JSON, as `kubectl
// patch --type strategic` does: typed is the object's Go type
// (object.Object.Typed, a pointer to it), whose field tags say how lists
// merge (containers by name, other lists replaced). The custom resources
// backfire models (an Argo Rollout) have such a type too; an object of a
// kind without one is patched as a JSON merge patch (RFC 7386: maps
// merge, lists are replaced). It is the one applier of patches: fix's
// planner, the simulators and the tests use it.
func Apply(doc, patch []byte, typed any) ([]byte, error) {
	if typed == nil {
		return jsonpatch.MergePatch(doc, patch)
	}
	return strategicpatch.StrategicMergePatch(doc, patch, typed)
}

// ApplyChange applies a composed change (see Compose) to an object's JSON.
func ApplyChange(doc []byte, c Change, typed any) ([]byte, error) {
	patch, err := jsonenc.Marshal(c.Patch)
	if err != nil {
		return nil, err
	}
	return Apply(doc, patch, typed)
}
