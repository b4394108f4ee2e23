package yamledit

import (
	"encoding/json"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"backfire.dev/backfire/internal/load"
)

// edit applies patch to document i of src, and checks that applying it
// again changes nothing.
func editTwice(t *testing.T, src string, i int, patch string, placeholders ...string) string {
	t.Helper()
	f := load.Parse("in.yaml", []byte(src))
	if len(f.Errors) > 0 {
		t.Fatal(f.Errors)
	}
	pos, _ := f.Documents[i].Locate("")
	var p map[string]any
	if err := jsonUnmarshal(patch, &p); err != nil {
		t.Fatal(err)
	}
	out, err := Edit([]byte(src), pos, p, placeholders)
	if err != nil {
		t.Fatal(err)
	}
	g := load.Parse("out.yaml", out)
	if len(g.Errors) > 0 {
		t.Fatalf("output does not load: %v\n%s", g.Errors, out)
	}
	pos2, _ := g.Documents[i].Locate("")
	again, err := Edit(out, pos2, p, placeholders)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(out) {
		t.Errorf("second edit changed the file again:\n%s", again)
	}
	return string(out)
}

const multiDoc = `# a comment that stays
apiVersion: v1
kind: ConfigMap   # trailing comment
metadata: {name: "settings"}
data:
  key: 'quoted value'
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db   # the database
spec:
  template:
    spec:
      containers:
        - name: sidecar
          image: "busybox"
        - name: db
          image: postgres:16
          livenessProbe:
            # why: checks the server answers
            exec:
              command: ["pg_isready", "-U", "postgres"]
            periodSeconds: 10   # every ten seconds
            timeoutSeconds: 1
          ports:
            - containerPort: 5432
---
# the last document
kind: Service
apiVersion: v1
metadata:
  name: db
`

func TestEditMultiDocumentByteForByte(t *testing.T) {
	got := editTwice(t, multiDoc, 1, `{"spec":{"template":{"spec":{"containers":[{"name":"db",
		"livenessProbe":{"exec":null,"tcpSocket":{"port":5432},"timeoutSeconds":3,"failureThreshold":6},
		"resources":{"requests":{"cpu":"500m"}}}]}}}}`,
		"spec.template.spec.containers[db].resources.requests.cpu")
	want := strings.Replace(multiDoc, `            # why: checks the server answers
            exec:
              command: ["pg_isready", "-U", "postgres"]
            periodSeconds: 10   # every ten seconds
            timeoutSeconds: 1
          ports:
            - containerPort: 5432
`, `            # why: checks the server answers
            tcpSocket:
              port: 5432
            periodSeconds: 10   # every ten seconds
            timeoutSeconds: 3
            failureThreshold: 6
          ports:
            - containerPort: 5432
          resources:
            requests:
              cpu: 500m  `+PlaceholderComment+`
`, 1)
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

const list = `apiVersion: v1
kind: List
items:
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: a}
  spec:
    template:
      spec:
        containers:
        - name: app
          resources:
            limits: {cpu: "1", memory: 1Gi}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: b}
  spec:
    template:
      spec:
        containers:
        - name: app
          resources:
            limits:
              cpu: "1"
              memory: 1Gi`

func TestEditListItemsAndFlowMappings(t *testing.T) {
	patch := `{"spec":{"template":{"spec":{"containers":[{"name":"app","resources":{"limits":{"cpu":null}}}]}}}}`
	got := editTwice(t, list, 0, patch)
	if want := strings.Replace(list, `limits: {cpu: "1", memory: 1Gi}`, `limits: {memory: 1Gi}`, 1); got != want {
		t.Errorf("first item: got\n%s", got)
	}
	got = editTwice(t, list, 1, patch)
	if want := strings.Replace(list, "              cpu: \"1\"\n", "", 1); got != want {
		t.Errorf("second item: got\n%s", got)
	}
}

func TestEditNoFinalNewline(t *testing.T) {
	got := editTwice(t, list, 1, `{"spec":{"template":{"spec":{"containers":[{"name":"app","resources":{"requests":{"memory":"1Gi"}}}]}}}}`)
	if want := list + "\n            requests:\n              memory: 1Gi\n"; got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

const rollout = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: web
spec:
  strategy:
    canary:
      steps:
      - setWeight: 1
      - pause: {duration: 5m}   # watch the dashboards
      - setWeight: 100
      - pause: {}
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - {key: node-role.kubernetes.io/control-plane, operator: Exists}
  revisionHistoryLimit: 1
`

// BF401 cuts the steps short: the kept steps keep their bytes. A mapping
// that a deletion empties goes with its key.
func TestEditStepsAndEmptiedMappings(t *testing.T) {
	got := editTwice(t, rollout, 0, `{"spec":{"strategy":{"canary":{"steps":[{"setWeight":1},{"pause":{"duration":"5m"}}]}},
		"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":null}},"revisionHistoryLimit":3}}`)
	want := `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: web
spec:
  strategy:
    canary:
      steps:
      - setWeight: 1
      - pause: {duration: 5m}   # watch the dashboards
  revisionHistoryLimit: 3
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestEditStepsReplaced(t *testing.T) {
	got := editTwice(t, rollout, 0, `{"spec":{"strategy":{"canary":{"steps":[{"setWeight":5},{"pause":{"duration":"5m"}}]}}}}`)
	if !strings.Contains(got, "      steps:\n      - setWeight: 5\n      - pause:\n          duration: 5m\n  affinity:") {
		t.Errorf("steps not replaced in the file's list indentation:\n%s", got)
	}
}

func TestEditErrors(t *testing.T) {
	f := load.Parse("in.yaml", []byte(multiDoc))
	pos, _ := f.Documents[1].Locate("")
	pos.Line += 2 // the file changed: nothing starts there
	if _, err := Edit([]byte(multiDoc), pos, map[string]any{"spec": nil}, nil); err == nil || !strings.Contains(err.Error(), "no longer there") {
		t.Errorf("edit at a moved object: %v", err)
	}
	block := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\ndata:\n  script: |\n    echo hi\n"
	g := load.Parse("in.yaml", []byte(block))
	pos, _ = g.Documents[0].Locate("")
	_, err := Edit([]byte(block), pos, map[string]any{"data": map[string]any{"script": "echo bye"}}, nil)
	if err == nil || !strings.Contains(err.Error(), "line 6") {
		t.Errorf("a block scalar is not edited in place; want an error at line 6, got %v", err)
	}
}

func TestEditAppendsToList(t *testing.T) {
	src := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- ../base   # the base\npatches:\n  - path: replicas.yaml\n# end\n"
	got := editTwice(t, src, 0, `{"patches":[{"path":"replicas.yaml"},{"path":"backfire-fix.yaml"}]}`)
	want := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- ../base   # the base\npatches:\n  - path: replicas.yaml\n  - path: backfire-fix.yaml\n# end\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func BenchmarkEdit(b *testing.B) {
	f := load.Parse("in.yaml", []byte(multiDoc))
	pos, _ := f.Documents[1].Locate("")
	var p map[string]any
	if err := jsonUnmarshal(`{"spec":{"template":{"spec":{"containers":[{"name":"db",
		"livenessProbe":{"exec":null,"tcpSocket":{"port":5432},"timeoutSeconds":3,"failureThreshold":6}}]}}}}`, &p); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Edit([]byte(multiDoc), pos, p, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

// A flow mapping whose values take a comment (a values file's "backfire
// fix" note, a placeholder) is rewritten in block style: a comment written
// inside it ran over its closing brace and the edited file did not parse.
// Its own comments are kept beside their keys, and a note says so.
func TestFlowMappingWithCommentsIsRewrittenInBlockStyle(t *testing.T) {
	src := `# Database settings
image: postgres:16
db:
  livenessProbe: {exec: {command: [pg_isready, -h, 127.0.0.1]}, periodSeconds: 10, timeoutSeconds: 1, failureThreshold: 3}  # keep it short
  readinessProbe: {
    tcpSocket: {port: 5432},  # the port (don't change it)
    periodSeconds: 5
  }
  name: db
`
	patch := map[string]any{"db": map[string]any{
		"livenessProbe":  map[string]any{"timeoutSeconds": 5.0},
		"readinessProbe": map[string]any{"timeoutSeconds": 3.0},
	}}
	comments := map[string]string{"db.livenessProbe.timeoutSeconds": "backfire fix: BF102", "db.readinessProbe.timeoutSeconds": "backfire fix: BF104"}
	var notes []string
	opts := Options{Comments: comments, KeepNulls: true, Notes: &notes}
	out, err := EditWith([]byte(src), load.Position{Line: 2, Column: 1}, patch, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := `# Database settings
image: postgres:16
db:
  livenessProbe:  # keep it short
    exec:
      command:
      - pg_isready
      - -h
      - 127.0.0.1
    periodSeconds: 10
    timeoutSeconds: 5  # backfire fix: BF102
    failureThreshold: 3
  readinessProbe:
    tcpSocket:  # the port (don't change it)
      port: 5432
    periodSeconds: 5
    timeoutSeconds: 3  # backfire fix: BF104
  name: db
`
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	if len(notes) != 2 || !strings.Contains(notes[0], "line 4: db.livenessProbe was a flow mapping ({...}); rewritten in block style") {
		t.Errorf("notes %q", notes)
	}
	notes = nil
	again, err := EditWith(out, load.Position{Line: 2, Column: 1}, patch, opts)
	if err != nil || string(again) != string(out) || len(notes) != 0 {
		t.Errorf("a second edit changed the file (%v, notes %q):\n%s", err, notes, again)
	}
	// Without comments to write, a flow mapping is edited in place.
	out, err = EditWith([]byte(src), load.Position{Line: 2, Column: 1}, patch, Options{KeepNulls: true})
	if err != nil || !strings.Contains(string(out), "timeoutSeconds: 5, failureThreshold: 3}  # keep it short") {
		t.Errorf("in place (%v):\n%s", err, out)
	}
}

// A key added after a last key whose entries are commented out goes after
// those comments: uncommenting them must give that key its items back,
// not the new key (a kustomization's components: with every component
// commented, and patches: added by fix).
func TestNewKeyAfterCommentedOutList(t *testing.T) {
	patch := map[string]any{"patches": []any{map[string]any{"path": "backfire-fix-deployment-web.yaml"}}}
	for _, c := range []struct{ in, uncommented string }{
		{
			in:          "resources:\n- ../base\ncomponents:\n# - ../components/a\n# - ../components/b\n",
			uncommented: "components:\n- ../components/a\n",
		},
		{
			in:          "resources:\n- ../base\ncomponents:\n- ../components/c\n# - ../components/b\n\n# commonLabels:\n#   team: web\n",
			uncommented: "components:\n- ../components/c\n- ../components/b\n",
		},
	} {
		out, err := Edit([]byte(c.in), load.Position{Line: 1, Column: 1}, patch, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Uncomment every commented component, as a user would.
		text := strings.ReplaceAll(string(out), "# - ../components/", "- ../components/")
		var got struct {
			Components []string         `yaml:"components"`
			Patches    []map[string]any `yaml:"patches"`
		}
		if err := yaml.Unmarshal([]byte(text), &got); err != nil {
			t.Fatalf("uncommented:\n%s\n%v", text, err)
		}
		if len(got.Patches) != 1 || len(got.Components) == 0 {
			t.Errorf("uncommented, the file holds components %v and patches %v:\n%s", got.Components, got.Patches, text)
		}
		if !strings.Contains(text, c.uncommented) {
			t.Errorf("uncommented, the file lacks %q:\n%s", c.uncommented, text)
		}
		if strings.Count(string(out), "#") != strings.Count(c.in, "#") {
			t.Errorf("comments lost:\n%s", out)
		}
	}
}
