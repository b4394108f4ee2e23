package scan_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/helm"
	"backfire.dev/backfire/internal/kustomize"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/rules/probes"
	"backfire.dev/backfire/internal/scan"
	"backfire.dev/backfire/internal/testutil"
)

// expect is one finding a rendered input must give, and why it is right.
type expect struct {
	rule, severity, object, container string
	file                              string // relative to the chart or overlay
	line                              int
	path                              string
	why                               string
}

func (e expect) key() string {
	return fmt.Sprintf("%s %s %s[%s] %s:%d %s", e.rule, e.severity, e.object, e.container, e.file, e.line, e.path)
}

func keyOf(f finding.Finding, root string) string {
	file := strings.TrimPrefix(f.File, filepath.ToSlash(root)+"/")
	return fmt.Sprintf("%s %s %s %s[%s] %s:%d %s", f.Rule, f.Severity, f.Object.Kind, f.Object.Name, f.Container, file, f.Line, f.Path)
}

// assertFindings compares the findings with the expected set, both ways:
// a missing finding and an unexpected one both fail.
func assertFindings(t *testing.T, res *scan.Result, root string, want []expect) {
	t.Helper()
	if len(res.Errors) > 0 {
		t.Fatalf("input errors: %v", res.Errors)
	}
	var got, exp []string
	for _, f := range res.Findings {
		got = append(got, keyOf(f, root))
	}
	for _, e := range want {
		exp = append(exp, e.key())
	}
	slices.Sort(got)
	slices.Sort(exp)
	for _, g := range got {
		if !slices.Contains(exp, g) {
			t.Errorf("unexpected finding: %s", g)
		}
	}
	for _, e := range want {
		if !slices.Contains(got, e.key()) {
			t.Errorf("missing finding: %s\n    (expected because %s)", e.key(), e.why)
		}
	}
}

func find(t *testing.T, res *scan.Result, rule, name string) finding.Finding {
	t.Helper()
	for _, f := range res.Findings {
		if f.Rule == rule && f.Object.Name == name {
			return f
		}
	}
	t.Fatalf("no %s on %s", rule, name)
	return finding.Finding{}
}

func scanChart(t *testing.T, chart string, opts helm.Options) *scan.Result {
	t.Helper()
	r, err := helm.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	res, err := scan.Run(scan.Options{Paths: []string{chart}, Charts: r})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

const (
	coreDpl       = "templates/core/core-dpl.yaml"
	databaseSS    = "templates/database/database-ss.yaml"
	jobserviceDpl = "templates/jobservice/jobservice-dpl.yaml"
	portalDpl     = "templates/portal/deployment.yaml"
	redisSS       = "templates/redis/statefulset.yaml"
	// Lines are what helm template prints under each "# Source:" header:
	// these two render a leading blank line, which Helm trims.
	registryDpl = "templates/registry/registry-dpl.yaml"
	trivySS     = "templates/trivy/trivy-sts.yaml"

	liveness0 = "spec.template.spec.containers[0].livenessProbe"
	liveness1 = "spec.template.spec.containers[1].livenessProbe"
	resources = "spec.template.spec.containers[0].resources"
)

// harborFindings is the whole catalog's verdict on goharbor/harbor-helm with
// its default values. Lines are lines of each template's rendered output.
// What is not here must not fire, and why:
//   - redis: no BF101/BF102/BF103: both probes are tcpSocket :6379, which
//     the kernel answers (it is BestEffort, so BF201 fires; the readiness
//     probe passes while it loads, so BF106 fires);
//   - trivy: no BF201 (values request cpu 200m, memory 512Mi), no BF103
//     (liveness /probe/healthy, readiness /probe/ready: different checks),
//     no BF202 (its cpu limit is 1 CPU and it is not database-like);
//   - core: BF101 needs a database; its startupProbe does not change BF103,
//     which compares liveness with readiness;
//   - nothing pins to control-plane nodes (BF301); there are no Rollouts.
var harborFindings = []expect{
	{"BF101", "error", "StatefulSet release-name-harbor-database", "database", databaseSS, 84, liveness0,
		"harbor-db is PostgreSQL (image goharbor/harbor-db, env PGDATA) and its liveness probe execs /docker-healthcheck.sh, which runs echo 'SELECT 1' | psql: it fails through crash recovery, and a recovery longer than 300 + 3 x 10 = 330 s is killed"},
	{"BF102", "error", "StatefulSet release-name-harbor-database", "database", databaseSS, 90, liveness0 + ".timeoutSeconds",
		"timeoutSeconds: 1 (values.yaml:1074) on an exec probe of a database-like container"},
	{"BF103", "warning", "StatefulSet release-name-harbor-database", "database", databaseSS, 84, liveness0,
		"readiness runs the same /docker-healthcheck.sh with the same 3 x 10 + 1 = 31 s budget: the pod is killed no later than it is taken out of rotation"},
	{"BF201", "error", "StatefulSet release-name-harbor-database", "database", databaseSS, 72, resources,
		"database.internal.resources is commented out in values.yaml: PostgreSQL runs BestEffort"},
	{"BF201", "error", "StatefulSet release-name-harbor-redis", "redis", redisSS, 47, resources,
		"redis.internal.resources is commented out: Redis runs BestEffort"},
	{"BF106", "info", "StatefulSet release-name-harbor-redis", "redis", redisSS, 67, "spec.template.spec.containers[0].readinessProbe",
		"a tcpSocket readiness probe on 6379 passes while Valkey loads its dataset and answers -LOADING; one replica, so info"},
	{"BF601", "error", "StatefulSet release-name-harbor-database", "database", databaseSS, 73, "spec.template.spec.containers[0].image",
		"harbor-db sets no STOPSIGNAL: SIGTERM, a smart shutdown, waits for pooled clients until SIGKILL at 120 s, and the recovery that follows is BF101's loop"},
	{"BF201", "warning", "Deployment release-name-harbor-jobservice", "jobservice", jobserviceDpl, 54, resources,
		"jobservice mounts a PersistentVolumeClaim (stateful) and sets no resources"},
	{"BF201", "warning", "Deployment release-name-harbor-registry", "registry", registryDpl, 55, resources,
		"registry mounts a PersistentVolumeClaim (stateful) and no container of the pod sets resources"},
	{"BF102", "warning", "Deployment release-name-harbor-core", "core", coreDpl, 71, liveness0 + ".timeoutSeconds",
		"httpGet liveness with timeoutSeconds: 1 (values.yaml:643)"},
	{"BF103", "warning", "Deployment release-name-harbor-core", "core", coreDpl, 64, liveness0,
		"liveness and readiness both GET :8080/api/v2.0/ping with failureThreshold 2: 2 x 10 + 1 = 21 s each"},
	{"BF102", "warning", "Deployment release-name-harbor-jobservice", "jobservice", jobserviceDpl, 64, liveness0 + ".timeoutSeconds",
		"httpGet liveness with timeoutSeconds: 1 (values.yaml:751)"},
	{"BF103", "warning", "Deployment release-name-harbor-jobservice", "jobservice", jobserviceDpl, 57, liveness0,
		"both probes GET :8080/api/v1/stats with the same 31 s budget"},
	{"BF102", "warning", "Deployment release-name-harbor-portal", "portal", portalDpl, 67, liveness0 + ".timeoutSeconds",
		"httpGet liveness with timeoutSeconds: 1 (values.yaml:599)"},
	{"BF103", "warning", "Deployment release-name-harbor-portal", "portal", portalDpl, 60, liveness0,
		"both probes GET :8080/ with the same 31 s budget"},
	{"BF102", "warning", "Deployment release-name-harbor-registry", "registry", registryDpl, 65, liveness0 + ".timeoutSeconds",
		"httpGet liveness with timeoutSeconds: 1 (values.yaml:826)"},
	{"BF103", "warning", "Deployment release-name-harbor-registry", "registry", registryDpl, 58, liveness0,
		"both probes GET :5000/ with the same 31 s budget"},
	{"BF102", "warning", "Deployment release-name-harbor-registry", "registryctl", registryDpl, 114, liveness1 + ".timeoutSeconds",
		"the registryctl sidecar's httpGet liveness has timeoutSeconds: 1 (values.yaml:849)"},
	{"BF103", "warning", "Deployment release-name-harbor-registry", "registryctl", registryDpl, 107, liveness1,
		"both registryctl probes GET :8080/api/health with the same 31 s budget"},
	{"BF102", "warning", "StatefulSet release-name-harbor-trivy", "trivy", trivySS, 134, liveness0 + ".timeoutSeconds",
		"httpGet liveness with timeoutSeconds: 1 (values.yaml:961)"},
}

// The acceptance test of Helm input: harbor-helm as it is.
func TestHarborChartFindings(t *testing.T) {
	chart := testutil.Corpus(t, "harbor-helm")
	res := scanChart(t, chart, helm.Options{})
	assertFindings(t, res, chart, harborFindings)

	values := filepath.ToSlash(filepath.Join(chart, "values.yaml"))
	bf102 := find(t, res, "BF102", "release-name-harbor-database")
	if want := filepath.ToSlash(filepath.Join(chart, databaseSS)); bf102.File != want || bf102.Line != 90 || bf102.Column != 11 {
		t.Errorf("BF102 at %s:%d:%d, want %s:90:11 (timeoutSeconds in the rendered template)", bf102.File, bf102.Line, bf102.Column, want)
	}
	if want := values + ":1074 database.internal.livenessProbe.timeoutSeconds"; bf102.ValuesSource != want {
		t.Errorf("BF102 values source %q, want %q", bf102.ValuesSource, want)
	}
	if !strings.HasPrefix(bf102.Origin, "rendered from chart harbor 1.4.0-dev") {
		t.Errorf("BF102 origin %q", bf102.Origin)
	}
	bf101 := find(t, res, "BF101", "release-name-harbor-database")
	if !strings.Contains(bf101.Message, "330 s (300 + 3 x 10)") {
		t.Errorf("BF101 message %q does not carry the seed's 330 s", bf101.Message)
	}
	if want := values + ":1071 database.internal.livenessProbe (5 keys)"; bf101.ValuesSource != want {
		t.Errorf("BF101 values source %q, want %q", bf101.ValuesSource, want)
	}
	if bf201 := find(t, res, "BF201", "release-name-harbor-database"); bf201.ValuesSource != "" {
		t.Errorf("BF201 is about absent resources, yet names a values source %q", bf201.ValuesSource)
	}
}

// The seed 003 fix, as far as the chart's values reach: the database keeps
// only BF101 (the probe still queries; no value can make it tcpSocket), and
// with failureThreshold 6 its recovery budget is 300 + 6 x 10 = 360 s; and
// BF601 (no value gives it a preStop hook).
func TestHarborChartWithFixValues(t *testing.T) {
	chart := testutil.Corpus(t, "harbor-helm")
	fix := filepath.Join(testutil.RepoRoot(t), "internal", "helm", "testdata", "harbor-fix-values.yaml")
	res := scanChart(t, chart, helm.Options{ValueFiles: []string{fix}})

	var want []expect
	for _, e := range harborFindings {
		if e.object == "StatefulSet release-name-harbor-database" && e.rule != "BF101" && e.rule != "BF601" {
			continue // BF102: timeout 5; BF103: liveness 6 x 10 + 5 = 65 s > readiness 35 s; BF201: requests set
		}
		want = append(want, e)
	}
	assertFindings(t, res, chart, want)

	bf101 := find(t, res, "BF101", "release-name-harbor-database")
	if !strings.Contains(bf101.Message, "360 s (300 + 6 x 10)") {
		t.Errorf("BF101 message %q: want the fixed budget, 360 s", bf101.Message)
	}
	fixName := filepath.ToSlash(fix)
	if !strings.HasPrefix(bf101.ValuesSource, fixName+":18,19 database.internal.livenessProbe.{timeoutSeconds,failureThreshold}; ") {
		t.Errorf("BF101 values source %q: want the fix file's keys first", bf101.ValuesSource)
	}
	if !strings.Contains(bf101.Origin, "values: values.yaml, "+fix) {
		t.Errorf("origin %q does not name the values file", bf101.Origin)
	}
}

// rollouts-demo overlays, whole catalog: one finding, traced through the
// overlay to the resource file.
func TestRolloutsDemoOverlayFindings(t *testing.T) {
	examples := testutil.Corpus(t, "rollouts-demo", "examples")
	dirs, _ := filepath.Glob(filepath.Join(examples, "*", "kustomization.yaml"))
	for _, k := range dirs {
		dir := filepath.Dir(k)
		name := filepath.Base(dir)
		if name == "preview-testing" {
			continue // refused by the load restrictor, as by kubectl (internal/kustomize tests)
		}
		t.Run(name, func(t *testing.T) {
			res, err := scan.Run(scan.Options{Paths: []string{dir}, Kustomize: kustomize.New()})
			if err != nil {
				t.Fatal(err)
			}
			var want []expect
			if name == "istio-subset" {
				want = append(want, expect{"BF402", "error", "Rollout istio-rollout", "", "rollout.yaml", 31, "spec.strategy.canary.analysis",
					"AnalysisTemplate istio-success-rate measures the whole istio-rollout Service (service arg istio-rollout), not the canary: a rollback judges the broken version, and there is no rollbackWindow"})
			}
			if name == "istio" {
				want = append(want, expect{"BF402", "error", "Rollout istio-rollout", "", "rollout.yaml", 33, "spec.strategy.canary.analysis",
					`the service arg is "canary", a word in a name, not the canaryService istio-rollout-canary: the query selects nothing by revision`})
			}
			// The overlay only sets a namespace: the finding is traced to
			// the overlay's rollout.yaml, line 31 ("analysis:").
			assertFindings(t, res, dir, want)
			for _, f := range res.Findings {
				if !strings.HasPrefix(f.Origin, "built by kustomization "+dir+" from ") || !strings.Contains(f.Origin, "the build changed metadata.namespace") {
					t.Errorf("origin %q", f.Origin)
				}
			}
		})
	}
}

// A finding on an overlay points into the base file when the overlay left
// the field alone, and at the build output when the overlay set it.
func TestOverlayFindingPositions(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"base/kustomization.yaml": "resources:\n- db.yaml\n",
		"base/db.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: db
spec:
  template:
    spec:
      containers:
      - name: api
        image: example/api:1
        livenessProbe:
          httpGet: {path: /healthz, port: 8080}
          timeoutSeconds: 1
`,
		"prod/kustomization.yaml": "resources:\n- ../base\nnamespace: prod\nnamePrefix: prod-\n",
		"fast/kustomization.yaml": `resources:
- ../base
patches:
- target: {kind: Deployment}
  patch: |
    - op: replace
      path: /spec/template/spec/containers/0/image
      value: example/api:2
`,
	}
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	base := filepath.Join(root, "base", "db.yaml")
	for _, tc := range []struct {
		overlay    string
		file       string
		line, col  int
		originPart string
	}{
		// namespace and prefix touch nothing the rule reads.
		{"prod", base, 13, 11, "the build changed metadata.name, metadata.namespace"},
		// the image patch leaves the probe as written.
		{"fast", base, 13, 11, "the build changed spec.template.spec.containers[0].image"},
	} {
		t.Run(tc.overlay, func(t *testing.T) {
			dir := filepath.Join(root, tc.overlay)
			res, err := scan.Run(scan.Options{Paths: []string{dir}, Kustomize: kustomize.New(), Catalog: []*rules.Rule{probes.BF102}})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Findings) != 1 {
				t.Fatalf("%d findings, want BF102 only: %v %v", len(res.Findings), res.Findings, res.Errors)
			}
			f := res.Findings[0]
			if f.File != tc.file || f.Line != tc.line || f.Column != tc.col {
				t.Errorf("BF102 at %s:%d:%d, want %s:%d:%d", f.File, f.Line, f.Column, tc.file, tc.line, tc.col)
			}
			if !strings.Contains(f.Origin, "built by kustomization "+dir+" from "+base) || !strings.Contains(f.Origin, tc.originPart) {
				t.Errorf("origin %q", f.Origin)
			}
		})
	}

	// An overlay that sets the offending value itself: the finding points
	// at the patch that set it, where the user edits it.
	if err := os.MkdirAll(filepath.Join(root, "fast1s"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "base", "db.yaml"), []byte(strings.Replace(files["base/db.yaml"], "timeoutSeconds: 1", "timeoutSeconds: 5", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "fast1s", "kustomization.yaml"), []byte(`resources:
- ../base
patches:
- target: {kind: Deployment}
  patch: |
    - op: replace
      path: /spec/template/spec/containers/0/livenessProbe/timeoutSeconds
      value: 1
`), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "fast1s")
	res, err := scan.Run(scan.Options{Paths: []string{dir}, Kustomize: kustomize.New(), Catalog: []*rules.Rule{probes.BF102}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 1 {
		t.Fatalf("%d findings, want BF102: %v", len(res.Findings), res.Errors)
	}
	f := res.Findings[0]
	if kfile := filepath.Join(dir, "kustomization.yaml"); f.File != kfile || f.Line != 8 || f.Column != 7 {
		t.Errorf("BF102 at %s:%d:%d, want %s:8:7 (value: 1 of the inline patch)", f.File, f.Line, f.Column, kfile)
	}
	if !strings.Contains(f.Origin, "the build changed spec.template.spec.containers[0].livenessProbe.timeoutSeconds") {
		t.Errorf("origin %q does not say the overlay set the timeout", f.Origin)
	}
}
