package analysis

import (
	"strings"
	"testing"
)

func TestReachOf(t *testing.T) {
	names := []string{"web", "web-canary", "web-stable"}
	for _, tc := range []struct {
		name, doc string
		used      []Arg
		reaches   bool
		says      string
	}{
		{"job that sleeps", `{name: m, provider: {job: {spec: {template: {spec: {containers: [{name: c, image: busybox, command: [sleep, "30"]}]}}}}}}`,
			nil, false, "names no URL, Service or argument"},
		{"job fixed check", `{name: m, provider: {job: {spec: {template: {spec: {containers: [{name: c, image: busybox, command: [sh, -c, "exit 0"]}]}}}}}}`,
			nil, false, "measures neither version"},
		{"job curls the Service", `{name: m, provider: {job: {spec: {template: {spec: {containers: [{name: c, image: curl, args: ["http://web:8080/health"]}]}}}}}}`,
			nil, true, "names web"},
		{"job curls a namespaced Service", `{name: m, provider: {job: {spec: {template: {spec: {containers: [{name: c, image: curl, args: ["http://checkout.payments:8080/"]}]}}}}}}`,
			nil, true, "checkout.payments in the cluster"},
		{"job curls a third party", `{name: m, provider: {job: {spec: {template: {spec: {containers: [{name: c, image: curl, args: ["https://api.github.com/zen"]}]}}}}}}`,
			nil, false, "api.github.com, outside the cluster"},
		{"web call to the Kubernetes API server", `{name: m, provider: {web: {url: "https://kubernetes.default.svc/version", jsonPath: "{$.major}"}}}`,
			nil, false, "calls the Kubernetes API server (kubernetes.default.svc)"},
		{"web third-party status page", `{name: m, provider: {web: {url: "https://www.githubstatus.com/api/v2/status.json", jsonPath: "{$.status.indicator}"}}}`,
			nil, false, "www.githubstatus.com, outside the cluster"},
		{"web to a .svc host", `{name: m, provider: {web: {url: "http://metrics.monitoring.svc.cluster.local/q"}}}`,
			nil, true, "in the cluster"},
		{"web to an IP", `{name: m, provider: {web: {url: "http://10.0.0.7:9090/q"}}}`,
			nil, true, "10.0.0.7"},
		{"web third party naming the Rollout", `{name: m, provider: {web: {url: "https://api.datadoghq.com/api/v1/query?query=avg:errors{service:web}"}}}`,
			nil, true, "names web"},
		{"web to a gist, under a private suffix of the list", `{name: m, provider: {web: {url: "https://gist.githubusercontent.com/u/1/raw/example.json"}}}`,
			nil, false, "gist.githubusercontent.com, outside the cluster"},
		{"web to a Service in another namespace", `{name: m, provider: {web: {url: "http://metrics.monitoring:9090/q"}}}`,
			nil, true, "metrics.monitoring in the cluster"},
		{"webhook is not web", `{name: m, provider: {web: {url: "https://webhook.site/x"}}}`,
			nil, false, "webhook.site"},
		{"web with an unknown arg", `{name: m, provider: {web: {url: "{{args.url}}"}}}`,
			[]Arg{{Name: "url", Text: "the value of Secret s (key k)", Secret: "s (key k)"}}, true, "takes args.url"},
		{"prometheus is judged by its query", `{name: m, provider: {prometheus: {query: up}}}`, nil, true, ""},
	} {
		m := metric(t, tc.doc)
		q := QueryOf(m)
		r := ReachOf(q, strings.Join(q.Texts, "\n"), tc.used, names)
		if r.Reaches != tc.reaches || !strings.Contains(r.Why, tc.says) {
			t.Errorf("%s: reaches %v %q; want %v and %q", tc.name, r.Reaches, r.Why, tc.reaches, tc.says)
		}
	}
}
