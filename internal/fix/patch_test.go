package fix

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"backfire.dev/backfire/internal/benchcorpus"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/testutil"
)

// containerPatchOfMaps is ContainerPatch built as maps and marshaled whole,
// the general way ContainerPatch writes out.
func containerPatchOfMaps(t *object.PodTemplate, container string, fields map[string]any) json.RawMessage {
	c := map[string]any{"name": container}
	for k, v := range fields {
		c[k] = v
	}
	return At(t.SpecPath.String(), map[string]any{listOf(t, container): []any{c}})
}

// templatesUnder decodes the objects with a pod template of the YAML files
// under the roots.
func templatesUnder(t *testing.T, roots ...string) []*object.PodTemplate {
	t.Helper()
	var out []*object.PodTemplate
	testutil.EachYAML(t, roots, func(path string, data []byte) {
		for _, doc := range load.Parse(path, data).Documents {
			if o, lerr := object.Decode(doc); lerr == nil && o.Typed != nil && o.PodTemplate() != nil {
				out = append(out, o.PodTemplate())
			}
		}
	})
	return out
}

// On every container of the benchmark corpus and the repository's
// manifests, with the fields the rules' fixes set (their probes moved and
// replaced, resources, new probes, a deletion) and the odd ones (a "name"
// field, escapes), the written-out patch is the marshaled maps' bytes.
func TestContainerPatchIsTheMapsMarshaled(t *testing.T) {
	dir := t.TempDir()
	if _, err := benchcorpus.Generate(dir, 5); err != nil {
		t.Fatal(err)
	}
	templates := templatesUnder(t, dir, "../../testdata", "../../examples", "../rules")
	if len(templates) < 500 {
		t.Fatalf("%d pod templates, want the corpus's and the repository's (500 or more)", len(templates))
	}
	patches := 0
	for _, pt := range templates {
		for _, c := range append(append([]any{}, toAny(pt.Spec.InitContainers)...), toAny(pt.Spec.Containers)...) {
			name := c.(map[string]any)["name"].(string)
			own := map[string]any{}
			for k, v := range c.(map[string]any) {
				if k != "name" {
					own[k] = v
				}
			}
			for _, fields := range []map[string]any{
				own,
				{"livenessProbe": map[string]any{"timeoutSeconds": 3, "failureThreshold": 3}},
				{"livenessProbe": map[string]any{"exec": nil, "tcpSocket": map[string]any{"port": int32(5432)}, "timeoutSeconds": 3, "failureThreshold": 6},
					"readinessProbe": map[string]any{"exec": own["livenessProbe"], "timeoutSeconds": 5, "periodSeconds": 10, "failureThreshold": 3}},
				{"resources": map[string]any{"requests": map[string]any{"cpu": "250m", "memory": "2048Mi"}, "limits": map[string]any{"cpu": nil}}},
				{"name": "renamed <&>", "a\u2028b": "\x00\"", "ports": []any{1.5, true, nil}},
				{},
			} {
				got, want := ContainerPatch(pt, name, fields), containerPatchOfMaps(pt, name, fields)
				if string(got) != string(want) {
					t.Fatalf("%s container %s:\nwritten %s\nmaps    %s", pt.Owner.Doc.File, name, got, want)
				}
				patches++
			}
		}
	}
	t.Logf("%d templates, %d patches", len(templates), patches)
}

// toAny is the containers as the manifest writes them.
func toAny[T any](list []T) []any {
	var out []any
	for _, c := range list {
		b, _ := json.Marshal(c)
		var m map[string]any
		json.Unmarshal(b, &m)
		out = append(out, m)
	}
	return out
}

func FuzzContainerPatch(f *testing.F) {
	f.Add(`{"livenessProbe":{"timeoutSeconds":3,"failureThreshold":3}}`, "db", uint8(0), false)
	f.Add(`{"livenessProbe":{"exec":null,"tcpSocket":{"port":5432}},"readinessProbe":{"exec":{"command":["sh","-c","pg_isready"]}}}`, "postgres", uint8(1), true)
	f.Add(`{"name":"x","resources":{"limits":{"cpu":null}}}`, "<app>", uint8(2), false)
	paths := []*field.Path{field.NewPath("spec"), field.NewPath("spec", "template", "spec"), field.NewPath("spec", "jobTemplate", "spec", "template", "spec")}
	f.Fuzz(func(t *testing.T, fieldsJSON, container string, path uint8, init bool) {
		var fields map[string]any
		if json.Unmarshal([]byte(fieldsJSON), &fields) != nil {
			return
		}
		pt := &object.PodTemplate{SpecPath: paths[int(path)%len(paths)], Spec: new(corev1.PodSpec)}
		if init {
			pt.Spec.InitContainers = append(pt.Spec.InitContainers, corev1.Container{Name: container})
		}
		got, want := ContainerPatch(pt, container, fields), containerPatchOfMaps(pt, container, fields)
		if string(got) != string(want) {
			t.Fatalf("written %s\nmaps    %s", got, want)
		}
	})
}
