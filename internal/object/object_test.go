package object

import (
	"slices"
	"strings"
	"testing"

	rolloutsv1alpha1 "github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"

	"backfire.dev/backfire/internal/load"
)

func decodeOne(t *testing.T, src string) (*Object, *load.Error) {
	t.Helper()
	f := load.Parse("o.yaml", []byte(src))
	if len(f.Errors) > 0 || len(f.Documents) != 1 {
		t.Fatalf("parse: %v (%d documents)", f.Errors, len(f.Documents))
	}
	return Decode(f.Documents[0])
}

func TestWrongTypeIsAnErrorAtItsLine(t *testing.T) {
	_, err := decodeOne(t, `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    spec:
      containers:
      - name: app
        livenessProbe:
          timeoutSeconds: "5"
`)
	if err == nil {
		t.Fatal("decoded a string timeoutSeconds")
	}
	if err.Line != 10 || err.Column != 27 {
		t.Errorf("error at %d:%d, want 10:27: %v", err.Line, err.Column, err)
	}
	for _, want := range []string{"timeoutSeconds", "an integer", "string"} {
		if !strings.Contains(err.Message, want) {
			t.Errorf("message %q lacks %q", err.Message, want)
		}
	}
}

func TestDecodeKinds(t *testing.T) {
	o, err := decodeOne(t, "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db, namespace: data}\nspec:\n  template:\n    spec:\n      containers: [{name: pg, image: postgres}]\n")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := o.Typed.(*appsv1.StatefulSet); !ok || o.Name != "db" || o.Namespace != "data" {
		t.Fatalf("got %T %s", o.Typed, o.Ref)
	}
	tmpl := o.PodTemplate()
	if tmpl == nil || tmpl.ContainerPath(0).String() != "spec.template.spec.containers[0]" || tmpl.Spec.Containers[0].Name != "pg" {
		t.Fatalf("template %+v", tmpl)
	}
	if st, why := o.Stateful(tmpl); !st || why != "StatefulSet" {
		t.Errorf("stateful %v %q", st, why)
	}

	o, err = decodeOne(t, "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: r}\nspec:\n  workloadRef: {apiVersion: apps/v1, kind: Deployment, name: d}\n")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := o.Typed.(*rolloutsv1alpha1.Rollout); !ok || o.PodTemplate() != nil {
		t.Errorf("workloadRef Rollout: %T, template %v", o.Typed, o.PodTemplate())
	}
	if _, set := o.Replicas(); set {
		t.Error("replicas reported as set")
	}

	o, err = decodeOne(t, "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: n}\nspec: {anything: [1, 2]}\n")
	if err != nil || o.Typed != nil || o.Name != "w" || o.Namespace != "n" {
		t.Errorf("unknown kind: %v %T %s", err, o.Typed, o.Ref)
	}
}

func TestCronJobTemplatePath(t *testing.T) {
	o, err := decodeOne(t, "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: c}\nspec:\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          containers: [{name: x}]\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := o.PodTemplate().ContainerPath(0).String(); got != "spec.jobTemplate.spec.template.spec.containers[0]" {
		t.Errorf("path %s", got)
	}
	if pos, exact := o.Doc.Locate(o.PodTemplate().ContainerPath(0).String()); !exact || pos.Line != 9 {
		t.Errorf("located at %d exact %v", pos.Line, exact)
	}
}

// What the API server rejects is an input error at the field's line, worded
// as kubectl words it, and the object is not returned.
func TestProbesTheAPIServerRejects(t *testing.T) {
	for _, tt := range []struct {
		name, src string
		line      int
		want      string
	}{
		{"liveness successThreshold", `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  template:
    spec:
      containers:
      - name: postgres
        livenessProbe:
          tcpSocket: {port: 5432}
          successThreshold: 2
`, 11, `StatefulSet "db" is invalid: spec.template.spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1`},
		{"startup successThreshold on a native sidecar", `apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  initContainers:
  - name: proxy
    restartPolicy: Always
    startupProbe:
      httpGet: {path: /, port: 15021}
      successThreshold: 3
  containers:
  - name: app
`, 10, `Pod "web" is invalid: spec.initContainers[0].startupProbe.successThreshold: Invalid value: 3: must be 1`},
		{"two handlers", `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    spec:
      containers:
      - name: app
        readinessProbe:
          exec: {command: [cat, /tmp/ready]}
          tcpSocket: {port: 8080}
`, 11, `Deployment "web" is invalid: spec.template.spec.containers[0].readinessProbe.tcpSocket: Forbidden: may not specify more than 1 handler type`},
		// Negative numbers: the API server refuses them; they used to
		// reach the arithmetic ("a recovery longer than -4 s").
		{"negative periodSeconds", `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  template:
    spec:
      containers:
      - name: postgres
        livenessProbe:
          tcpSocket: {port: 5432}
          initialDelaySeconds: 10
          periodSeconds: -4
          failureThreshold: -1
`, 12, `StatefulSet "db" is invalid: spec.template.spec.containers[0].livenessProbe.periodSeconds: Invalid value: -4: must be greater than or equal to 0 (and 1 more)`},
		{"negative timeout and threshold on readiness", `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    spec:
      containers:
      - name: app
        readinessProbe:
          httpGet: {path: /, port: 80}
          timeoutSeconds: -1
`, 11, `Deployment "web" is invalid: spec.template.spec.containers[0].readinessProbe.timeoutSeconds: Invalid value: -1: must be greater than or equal to 0`},
		{"probe grace period not positive", `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    spec:
      containers:
      - name: app
        livenessProbe:
          httpGet: {path: /, port: 80}
          terminationGracePeriodSeconds: 0
`, 11, `Deployment "web" is invalid: spec.template.spec.containers[0].livenessProbe.terminationGracePeriodSeconds: Invalid value: 0: must be greater than 0`},
		{"grace period on a readiness probe", `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    spec:
      containers:
      - name: app
        readinessProbe:
          httpGet: {path: /, port: 80}
          terminationGracePeriodSeconds: 30
`, 11, `Deployment "web" is invalid: spec.template.spec.containers[0].readinessProbe.terminationGracePeriodSeconds: Invalid value: 30: must not be set for readinessProbes`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o, err := decodeOne(t, tt.src)
			if err == nil {
				t.Fatalf("decoded an object the API server rejects: %v", o.Ref)
			}
			if o != nil {
				t.Error("the rejected object was returned for scanning")
			}
			if err.Line != tt.line || !strings.Contains(err.Message, tt.want) {
				t.Errorf("error %d: %s\nwant line %d with %s", err.Line, err.Message, tt.line, tt.want)
			}
		})
	}
	// Readiness may need several successes; liveness written as 1 is fine.
	if _, err := decodeOne(t, `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    spec:
      containers:
      - name: app
        readinessProbe: {tcpSocket: {port: 80}, successThreshold: 3}
        livenessProbe: {tcpSocket: {port: 80}, successThreshold: 1}
`); err != nil {
		t.Errorf("a valid object was rejected: %v", err)
	}
}

func TestConfigMapFileAt(t *testing.T) {
	o, err := decodeOne(t, `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: redis, namespace: cache}
spec:
  template:
    spec:
      containers:
      - name: redis
        volumeMounts:
        - {name: health, mountPath: /health}
        - {name: scripts, mountPath: /opt/scripts}
        - {name: one, mountPath: /usr/local/bin/liveness, subPath: live.sh}
        - {name: deeper, mountPath: /health/extra}
        - {name: claim, mountPath: /data}
      volumes:
      - name: health
        configMap: {name: redis-health}
      - name: scripts
        configMap:
          name: redis-scripts
          items:
          - {key: start-master.sh, path: start/master.sh}
          - {key: probe, path: probe.sh}
      - name: one
        configMap: {name: probes}
      - name: deeper
        configMap: {name: extra}
      - name: claim
        persistentVolumeClaim: {claimName: data}
`)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := o.PodTemplate()
	c := &tmpl.Spec.Containers[0]
	for p, want := range map[string]string{
		"/health/ping_liveness_local.sh": "redis-health/ping_liveness_local.sh",
		"/health/../health/ping.sh":      "redis-health/ping.sh",
		"/opt/scripts/probe.sh":          "redis-scripts/probe",
		"/opt/scripts/start/master.sh":   "redis-scripts/start-master.sh",
		"/opt/scripts/other.sh":          "", // not among the items
		"/usr/local/bin/liveness":        "probes/live.sh",
		"/health/extra/check":            "extra/check", // the deeper mount wins
		"/health/sub/dir.sh":             "",            // keys have no slashes
		"/data/check.sh":                 "",            // not a ConfigMap
		"/healthz.sh":                    "",            // a prefix of the name is not a directory
	} {
		f, ok := tmpl.ConfigMapFileAt(c, p)
		got := ""
		if ok {
			got = f.ConfigMap + "/" + f.Key
		}
		if got != want {
			t.Errorf("%s: got %q, want %q", p, got, want)
		}
	}
}

// Native sidecars are long-running containers; other init containers are
// not.
func TestContainersIncludeNativeSidecars(t *testing.T) {
	o, err := decodeOne(t, `apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  initContainers:
  - name: migrate
  - name: proxy
    restartPolicy: Always
  containers:
  - name: app
  - name: worker
`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range o.PodTemplate().Containers() {
		got = append(got, c.Name+"@"+c.Path().String())
	}
	want := "app@spec.containers[0] worker@spec.containers[1] proxy@spec.initContainers[1]"
	if strings.Join(got, " ") != want {
		t.Errorf("got %v, want %s", got, want)
	}
}

func TestReplicationControllerIsAWorkload(t *testing.T) {
	o, err := decodeOne(t, `apiVersion: v1
kind: ReplicationController
metadata: {name: redis}
spec:
  replicas: 2
  template:
    spec:
      containers:
      - name: redis
`)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := o.PodTemplate()
	if tmpl == nil || tmpl.ContainerPath(0).String() != "spec.template.spec.containers[0]" {
		t.Fatalf("no pod template for a ReplicationController: %+v", tmpl)
	}
	if n, set := o.Replicas(); n != 2 || !set {
		t.Errorf("replicas %d (set %v), want 2", n, set)
	}
	if !slices.Contains(WorkloadKinds, "ReplicationController") {
		t.Error("ReplicationController is not among the workload kinds")
	}
}

// Field names are matched case-sensitively, as the API server matches
// them (sigs.k8s.io/json): `Exec: null` and `TcpSocket:` beside `exec:`
// leave the exec probe that Kubernetes runs, and each is reported, at its
// key, as a field Kubernetes drops. Decoded case-insensitively (as
// encoding/json and json-iterator do), the probe was a tcpSocket probe.
func TestFieldNamesAreCaseSensitive(t *testing.T) {
	o, err := decodeOne(t, `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: data}
spec:
  template:
    spec:
      containers:
      - name: postgres
        image: postgres:16
        livenessProbe:
          exec: {command: [psql, -c, select 1]}
          Exec: null
          TcpSocket: {port: 5432}
          periodseconds: 1
      Containers: []
`)
	if err != nil {
		t.Fatal(err)
	}
	p := o.Typed.(*appsv1.StatefulSet).Spec.Template.Spec.Containers[0].LivenessProbe
	if p.Exec == nil || p.TCPSocket != nil || p.PeriodSeconds != 0 {
		t.Errorf("probe read as %+v, want the exec probe alone", p.ProbeHandler)
	}
	want := []string{
		`o.yaml:12:11: StatefulSet data/db: unknown field "spec.template.spec.containers[0].livenessProbe.Exec", dropped by Kubernetes, which reads field names case-sensitively (the field is "exec")`,
		`o.yaml:13:11: StatefulSet data/db: unknown field "spec.template.spec.containers[0].livenessProbe.TcpSocket", dropped by Kubernetes, which reads field names case-sensitively (the field is "tcpSocket")`,
		`o.yaml:14:11: StatefulSet data/db: unknown field "spec.template.spec.containers[0].livenessProbe.periodseconds", dropped by Kubernetes, which reads field names case-sensitively (the field is "periodSeconds")`,
		`o.yaml:15:7: StatefulSet data/db: unknown field "spec.template.spec.Containers", dropped by Kubernetes, which reads field names case-sensitively (the field is "containers")`,
	}
	var got []string
	for _, e := range o.Dropped {
		got = append(got, e.Error())
	}
	if !slices.Equal(got, want) {
		t.Errorf("dropped:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// An unknown field that is not a known one but for case is not reported:
// the custom resources' types hold only what the rules read.
func TestOtherUnknownFieldsAreNotReported(t *testing.T) {
	o, err := decodeOne(t, "apiVersion: keda.sh/v1alpha1\nkind: ScaledObject\nmetadata: {name: s}\nspec:\n  scaleTargetRef: {name: web}\n  triggers: [{type: cpu}]\n  fallback: {replicas: 2}\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Dropped) != 0 {
		t.Errorf("reported %v", o.Dropped)
	}
}
