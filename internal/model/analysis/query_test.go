package analysis

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	"sigs.k8s.io/yaml"
)

// metric decodes a metric the way it is written in a template.
func metric(t *testing.T, doc string) *v1alpha1.Metric {
	t.Helper()
	var m v1alpha1.Metric
	if err := yaml.UnmarshalStrict([]byte(doc), &m); err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	return &m
}

// Every provider the v1.9.0 types carry, including those no fixture
// reaches: what each sends, and how its measurements are judged.
func TestQueryOfEveryProvider(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		provider  string
		texts     []string
		judged    Judge
	}{
		{"prometheus", `{name: m, provider: {prometheus: {address: "http://prom:9090", query: 'sum(rate(x{app="{{args.app}}"}[5m]))'}}}`,
			"prometheus", []string{`sum(rate(x{app="{{args.app}}"}[5m]))`}, ByConditions},
		{"datadog v1", `{name: m, provider: {datadog: {apiVersion: v1, query: 'avg:errors{service:web}'}}}`,
			"datadog", []string{"avg:errors{service:web}"}, ByConditions},
		{"datadog v2 queries and formula", `{name: m, provider: {datadog: {apiVersion: v2, queries: {b: 'sum:hits{a}', a: 'sum:errors{a}'}, formula: "a / b"}}}`,
			"datadog", []string{"sum:errors{a}", "sum:hits{a}", "a / b"}, ByConditions},
		{"newrelic", `{name: m, provider: {newRelic: {query: "SELECT count(*) FROM Transaction"}}}`,
			"newRelic", []string{"SELECT count(*) FROM Transaction"}, ByConditions},
		{"wavefront", `{name: m, provider: {wavefront: {query: 'ts(errors, app="web")'}}}`,
			"wavefront", []string{`ts(errors, app="web")`}, ByConditions},
		{"graphite", `{name: m, provider: {graphite: {address: "http://graphite", query: "target=web.errors"}}}`,
			"graphite", []string{"target=web.errors"}, ByConditions},
		{"influxdb", `{name: m, provider: {influxdb: {profile: p, query: 'from(bucket: "b")'}}}`,
			"influxdb", []string{`from(bucket: "b")`}, ByConditions},
		{"skywalking", `{name: m, provider: {skywalking: {address: "http://oap", query: "query { errors }"}}}`,
			"skywalking", []string{"query { errors }"}, ByConditions},
		{"cloudwatch expression and metricStat", `{name: m, provider: {cloudWatch: {metricDataQueries: [
			{id: rate, expression: "errors / requests"},
			{id: errors, metricStat: {metric: {namespace: AWS/ELB, metricName: HTTPCode_5XX, dimensions: [{name: TargetGroup, value: web-canary}]}, period: 60, stat: Sum}}]}}}`,
			"cloudWatch", []string{"errors / requests", "HTTPCode_5XX", "TargetGroup=web-canary"}, ByConditions},
		{"kayenta", `{name: m, provider: {kayenta: {address: "http://kayenta", application: web, canaryConfigName: c, metricsAccountName: a, configurationAccountName: a, storageAccountName: a,
			threshold: {pass: 90, marginal: 75}, scopes: [{name: default, controlScope: {scope: web-stable, step: 60}, experimentScope: {scope: web-canary, step: 60}}]}}}`,
			"kayenta", []string{"web-stable", "web-canary"}, ByScore},
		{"web url body jsonPath headers", `{name: m, provider: {web: {url: "http://web/health", method: POST, body: '{"a":1}', jsonPath: "{$.ok}", headers: [{key: X-Token, value: "{{args.token}}"}]}}}`,
			"web", []string{"http://web/health", `{"a":1}`, "{$.ok}", "{{args.token}}"}, ByConditions},
		{"web jsonBody", `{name: m, provider: {web: {url: "http://web/q", method: POST, jsonBody: {q: "{{args.hash}}"}}}}`,
			"web", []string{"http://web/q", `{"q":"{{args.hash}}"}`}, ByConditions},
		{"job command args env", `{name: m, provider: {job: {spec: {template: {spec: {restartPolicy: Never, initContainers: [{name: i, image: busybox, command: [sleep, "5"]}],
			containers: [{name: c, image: curl, command: [curl, -f], args: ["http://web/health"], env: [{name: H, value: "{{args.hash}}"}, {name: S, valueFrom: {secretKeyRef: {name: s, key: k}}}]}]}}}}}}`,
			"job", []string{"sleep", "5", "curl", "-f", "http://web/health", "{{args.hash}}"}, ByJob},
		{"plugin", `{name: m, provider: {plugin: {"argoproj-labs/sample": {query: "up"}}}}`,
			"plugin", []string{`{"query":"up"}`}, ByPlugin},
		{"no provider", `{name: m}`, "", nil, ByConditions},
	} {
		q := QueryOf(metric(t, tc.doc))
		if q.Provider != tc.provider || !slices.Equal(q.Texts, tc.texts) || q.Judged != tc.judged {
			t.Errorf("%s: got %s %q judged %d, want %s %q judged %d", tc.name, q.Provider, q.Texts, q.Judged, tc.provider, tc.texts, tc.judged)
		}
	}
}

// Plugin configuration is kept as the JSON the controller passes on.
func TestPluginTextIsJSON(t *testing.T) {
	q := QueryOf(metric(t, `{name: m, provider: {plugin: {a: {x: 1}, b: {y: "{{args.z}}"}}}}`))
	for _, s := range q.Texts {
		if !json.Valid([]byte(s)) {
			t.Errorf("not JSON: %s", s)
		}
	}
	if len(q.Texts) != 2 || q.Texts[0] != `{"x":1}` {
		t.Errorf("plugin texts %q, want sorted by plugin name", q.Texts)
	}
}

func TestComparesScopes(t *testing.T) {
	args := map[string]Arg{"a": {Name: "a", Text: "web", Known: true}}
	for doc, want := range map[string]bool{
		`{name: m, provider: {kayenta: {scopes: [{name: s, controlScope: {scope: "{{args.a}}-stable"}, experimentScope: {scope: "{{args.a}}-canary"}}]}}}`: true,
		`{name: m, provider: {kayenta: {scopes: [{name: s, controlScope: {scope: "{{args.a}}"}, experimentScope: {scope: web}}]}}}`:                        false,
		`{name: m, provider: {prometheus: {query: up}}}`: false,
	} {
		if got := ComparesScopes(metric(t, doc), args); got != want {
			t.Errorf("%s: %v, want %v", doc, got, want)
		}
	}
}
