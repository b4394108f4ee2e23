// Package fix builds the changes that findings propose, as strategic merge
// patches that apply to the object as written.
package fix

import (
	"encoding/json"
	"slices"

	"backfire.dev/backfire/internal/jsonenc"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
)

// ContainerPatch returns a strategic merge patch that sets fields on one
// container of the template. Containers merge by name, so the patch touches
// only that container; a null value deletes a field (a probe handler that is
// being replaced must be deleted, or the API server sees two handlers).
func ContainerPatch(t *object.PodTemplate, container string, fields map[string]any) json.RawMessage {
	// Written out rather than built as maps for At: a patch per finding,
	// and this is the shape nearly all of them have. containerPatchOfMaps
	// is the general way, which the tests hold it to.
	segs := load.SplitPath(t.SpecPath.String())
	b := make([]byte, 0, 256)
	for _, s := range segs {
		b = append(jsonenc.AppendString(append(b, '{'), s.Key, true), ':')
	}
	b = append(jsonenc.AppendString(append(b, '{'), listOf(t, container), true), ':', '[', '{')
	var buf [8]string
	keys := buf[:0]
	if _, ok := fields["name"]; !ok {
		keys = append(keys, "name")
	}
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(jsonenc.AppendString(b, k, true), ':')
		v, ok := fields[k]
		if !ok {
			v = container // "name"
		}
		b = appendField(b, v)
	}
	b = append(b, '}', ']', '}')
	for range segs {
		b = append(b, '}')
	}
	return b
}

// appendField appends one field's value as jsonenc.Append does (a probe's
// or resources' small map with its keys sorted on the stack).
func appendField(b []byte, v any) []byte {
	b, err := jsonenc.Append(b, v)
	if err != nil {
		panic(err) // only maps, slices and scalars reach here
	}
	return b
}

// PodPatch is ContainerPatch with fields of the pod spec beside the
// container's (terminationGracePeriodSeconds); container "" or no fields
// patch the pod spec alone.
func PodPatch(t *object.PodTemplate, pod map[string]any, container string, fields map[string]any) json.RawMessage {
	spec := map[string]any{}
	for k, v := range pod {
		spec[k] = v
	}
	if container != "" && len(fields) > 0 {
		c := map[string]any{"name": container}
		for k, v := range fields {
			c[k] = v
		}
		spec[listOf(t, container)] = []any{c}
	}
	return At(t.SpecPath.String(), spec)
}

// listOf names the list that holds a container. Names are unique across
// containers and init containers: a native sidecar is patched in the list
// that holds it.
func listOf(t *object.PodTemplate, container string) string {
	for _, ic := range t.Spec.InitContainers {
		if ic.Name == container {
			return "initContainers"
		}
	}
	return "containers"
}

// At wraps value in the objects that lead to path ("spec.template.spec").
func At(path string, value any) json.RawMessage {
	segs := load.SplitPath(path)
	for i := len(segs) - 1; i >= 0; i-- {
		value = map[string]any{segs[i].Key: value}
	}
	b, err := jsonenc.Marshal(value)
	if err != nil {
		panic(err) // only maps, slices and scalars reach here
	}
	return b
}

// ContainerField names a field of one container of the template the way
// finding.Fix.Placeholders does: "spec.template.spec.containers[db].resources.requests.cpu".
func ContainerField(t *object.PodTemplate, container, field string) string {
	return t.SpecPath.String() + "." + listOf(t, container) + "[" + container + "]." + field
}
