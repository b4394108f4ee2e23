package fix

import (
	"encoding/json"
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"

	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/testutil"
)

// same reports whether two patched documents are the same object, and
// errors agree. Patched keeps the untouched parts' bytes where Apply
// re-encodes them, so they are compared decoded.
func same(t *testing.T, what string, applied, patched []byte, aerr, perr error) {
	t.Helper()
	if (aerr == nil) != (perr == nil) {
		t.Fatalf("%s: Apply error %v, Patched error %v", what, aerr, perr)
	}
	if aerr != nil {
		return
	}
	var a, p any
	if err := json.Unmarshal(applied, &a); err != nil {
		t.Fatalf("%s: Apply made bad JSON: %v", what, err)
	}
	if err := json.Unmarshal(patched, &p); err != nil {
		t.Fatalf("%s: Patched made bad JSON: %v\n%s", what, err, patched)
	}
	if !reflect.DeepEqual(a, p) {
		t.Fatalf("%s: objects differ\nApply:   %s\nPatched: %s", what, applied, patched)
	}
}

// The repository's manifests, each object with a pod template patched the
// ways the rules' fixes patch (probes, resources, the pod spec beside a
// container, several containers) and the ways they do not (new items,
// directives, items out of order): Patched must make Apply's object.
func TestPatchedMatchesApplyOnTheRepositorysManifests(t *testing.T) {
	var objects []*object.Object
	testutil.EachYAML(t, []string{"../../testdata", "../../examples", "../rules"}, func(path string, data []byte) {
		for _, doc := range load.Parse(path, data).Documents {
			if o, lerr := object.Decode(doc); lerr == nil && o.Typed != nil && o.PodTemplate() != nil {
				objects = append(objects, o)
			}
		}
	})
	if len(objects) < 50 {
		t.Fatalf("%d objects with a pod template, want the repository's (50 or more)", len(objects))
	}
	spliced := 0
	for _, o := range objects {
		for _, p := range patchesFor(o) {
			what := o.Doc.File + " " + o.Doc.Kind + " " + string(mustJSON(p))
			b := mustJSON(p)
			applied, aerr := Apply(o.Doc.JSON, b, o.Typed)
			patched, perr := Patched(o.Doc.JSON, p, o.Typed)
			same(t, what, applied, patched, aerr, perr)
			if perr == nil && string(patched) != string(applied) {
				spliced++ // kept the document's own bytes: spliced, not merged whole
			}
		}
	}
	t.Logf("%d objects, %d patches spliced", len(objects), spliced)
	if spliced == 0 {
		t.Error("every patch was merged whole: the splice never ran")
	}
}

// patchesFor returns patches of the shapes fixes take, and of others, on
// o's pod template.
func patchesFor(o *object.Object) []map[string]any {
	t := o.PodTemplate()
	var names []string
	for _, c := range t.Spec.Containers {
		names = append(names, c.Name)
	}
	if len(names) == 0 {
		return nil
	}
	first := names[0]
	item := func(name string, fields map[string]any) map[string]any {
		m := map[string]any{"name": name}
		for k, v := range fields {
			m[k] = v
		}
		return m
	}
	at := func(spec map[string]any) map[string]any {
		var v any = spec
		segs := load.SplitPath(t.SpecPath.String())
		for i := len(segs) - 1; i >= 0; i-- {
			v = map[string]any{segs[i].Key: v}
		}
		return v.(map[string]any)
	}
	containers := func(items ...any) map[string]any { return at(map[string]any{"containers": items}) }
	var all []map[string]any
	add := func(p map[string]any) { all = append(all, p) }
	add(containers(item(first, map[string]any{"livenessProbe": map[string]any{"timeoutSeconds": 5.0, "failureThreshold": 6.0}})))
	add(containers(item(first, map[string]any{"livenessProbe": map[string]any{"exec": nil, "tcpSocket": map[string]any{"port": 5432.0}}})))
	add(containers(item(first, map[string]any{"readinessProbe": map[string]any{"periodSeconds": 10.0}, "startupProbe": map[string]any{"failureThreshold": 30.0}})))
	add(containers(item(first, map[string]any{"resources": map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "256Mi"}}})))
	add(containers(item(first, map[string]any{"resources": map[string]any{"limits": map[string]any{"cpu": nil}}})))
	add(containers(item(first, map[string]any{"resources": map[string]any{"limits": map[string]any{"memory": "1Gi"}, "requests": map[string]any{"memory": "1Gi"}}})))
	add(at(map[string]any{"terminationGracePeriodSeconds": 60.0, "containers": []any{item(first, map[string]any{"lifecycle": map[string]any{"preStop": map[string]any{"sleep": map[string]any{"seconds": 5.0}}}})}}))
	add(containers(item("added-by-the-patch", map[string]any{"image": "x"})))
	add(containers(map[string]any{"name": first, "$patch": "delete"}))
	add(containers(map[string]any{"name": first, "$patch": "replace", "image": "x"}))
	add(containers(item(first, map[string]any{"$retainKeys": []any{"name", "image"}})))
	add(at(map[string]any{"$setElementOrder/containers": []any{map[string]any{"name": first}}, "containers": []any{item(first, map[string]any{"image": "y"})}}))
	add(at(map[string]any{"$patch": "replace"}))
	add(containers(item(first, map[string]any{"env": []any{map[string]any{"name": "A", "value": "1"}}})))
	add(containers(item(first, map[string]any{"ports": []any{map[string]any{"containerPort": 8080.0}}})))
	add(containers(item(first, map[string]any{"args": []any{"a", nil}, "command": []any{}})))
	add(containers(item(first, map[string]any{"startupProbe": map[string]any{"httpGet": map[string]any{"path": "/", "port": 80.0, "host": nil}, "exec": nil}})))
	add(containers(item(first, map[string]any{"livenessProbe": "not a probe", "readinessProbe": 1.5, "tty": true})))
	add(containers(item(first, map[string]any{"resources": nil, "image": nil, "imagePullPolicy": "Always"})))
	add(at(map[string]any{"containers": []any{}, "volumes": []any{map[string]any{"name": "added", "emptyDir": map[string]any{}}}}))
	add(map[string]any{"metadata": map[string]any{"annotations": map[string]any{"x": nil, "y": "z"}, "labels": nil}})
	add(map[string]any{"metadata": map[string]any{"labels": map[string]any{"added": "yes"}}})
	add(map[string]any{"spec": map[string]any{"replicas": 3.0}})
	add(map[string]any{"spec": nil})
	if len(names) > 1 {
		fields := map[string]any{"livenessProbe": map[string]any{"timeoutSeconds": 4.0}}
		var inOrder, reversed []any
		for i := range names {
			inOrder = append(inOrder, item(names[i], fields))
			reversed = append(reversed, item(names[len(names)-1-i], fields))
		}
		add(containers(inOrder...))
		add(containers(reversed...))
	}
	if len(t.Spec.InitContainers) > 0 {
		add(at(map[string]any{"initContainers": []any{item(t.Spec.InitContainers[0].Name, map[string]any{"resources": map[string]any{"requests": map[string]any{"cpu": "10m"}}})}}))
	}
	return all
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// FuzzPatched holds Patched to Apply on any document and patch.
func FuzzPatched(f *testing.F) {
	doc := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"a"},"spec":{"template":{"spec":{"containers":[{"name":"a","image":"x","livenessProbe":{"exec":{"command":["true"]},"timeoutSeconds":1}},{"name":"b","resources":{"limits":{"cpu":"1"}}}]}}}}`
	for _, p := range []string{
		`{"spec":{"template":{"spec":{"containers":[{"name":"a","livenessProbe":{"timeoutSeconds":5}}]}}}}`,
		`{"spec":{"template":{"spec":{"containers":[{"name":"b","resources":{"limits":{"cpu":null}}},{"name":"a","image":"y"}]}}}}`,
		`{"spec":{"template":{"spec":{"containers":[{"name":"c"}]}}}}`,
		`{"spec":{"template":{"spec":{"containers":[{"name":"a","$patch":"delete"}]}}}}`,
		`{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"b"},{"name":"a"}]}}}}`,
		`{"spec":{"template":{"metadata":{"labels":{"x":"y"}}}}}`,
		`{"spec":{"template":{"spec":{"containers":[{"name":"a","livenessProbe":{"exec":null,"tcpSocket":{"port":5432}},"args":["x",null],"startupProbe":{"exec":null,"periodSeconds":1}}]}}}}`,
		`{"metadata":{"name":null,"labels":{"a":null}},"spec":{"replicas":2,"paused":true,"template":null}}`,
	} {
		f.Add(doc, p)
	}
	f.Add(`{"spec" : { "template" : {"spec":{"containers":[ {"name":"a"} , {"name":"a"} ]}}}}`, `{"spec":{"template":{"spec":{"containers":[{"name":"a","image":"z"}]}}}}`)
	f.Add(`{"spec":{"template":{"spec":{"containers":[{"name":"\u0061","image":"x"}]}}},"spec":{}}`, `{"spec":{"template":{"spec":{"containers":[{"name":"a","image":"z"}]}}}}`)
	f.Fuzz(func(t *testing.T, doc, patch string) {
		var p map[string]any
		if json.Unmarshal([]byte(patch), &p) != nil {
			return
		}
		var d map[string]any
		if json.Unmarshal([]byte(doc), &d) != nil {
			return // the scan patches only documents it decoded
		}
		applied, aerr := Apply([]byte(doc), []byte(patch), &appsv1.Deployment{})
		patched, perr := Patched([]byte(doc), p, &appsv1.Deployment{})
		same(t, patch, applied, patched, aerr, perr)
	})
}
