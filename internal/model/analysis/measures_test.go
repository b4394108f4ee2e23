package analysis

import "testing"

func TestSightOf(t *testing.T) {
	prom := Query{Provider: "prometheus"}
	for _, tc := range []struct {
		query string
		sees  bool
	}{
		{`count(kube_pod_info{namespace="default", pod=~"example-app-.*"})`, false},
		{`vector(1)`, false},
		{`scalar(1) * 100`, false},
		{`sum(kube_deployment_spec_replicas{deployment="web"}) by (deployment)`, false},
		{`sum(kube_pod_labels{label_app="web"}) + count(kube_pod_created)`, false},
		{`sum(rate(http_requests_total{code=~"5.."}[1m])) / sum(rate(http_requests_total[1m]))`, true},
		{`sum(kube_pod_container_status_restarts_total{pod=~"web-.*"})`, true},
		{`histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket[5m])))`, true},
		{`(sum(irate(istio_requests_total{response_code!~"5.*"}[5m])) / sum(irate(istio_requests_total[5m]))) or on() vector(1)`, true},
		{`max_over_time(up{job="web"}[2m] offset 1m)`, true},
	} {
		if got := SightOf(prom, tc.query); got.Sees != tc.sees {
			t.Errorf("%s: sees %v (%s), want %v", tc.query, got.Sees, got.Why, tc.sees)
		}
	}
	if !SightOf(Query{Provider: "datadog"}, "avg:kubernetes.pods.running{*}").Sees {
		t.Error("other providers are assumed to see")
	}
}
