package webhook

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics are the webhook's Prometheus series, on a registry of their own.
type Metrics struct {
	Registry *prometheus.Registry
	requests *prometheus.CounterVec
	latency  prometheus.Histogram
	findings *prometheus.CounterVec
	errors   *prometheus.CounterVec
}

// NewMetrics registers the webhook's series on a new registry.
func NewMetrics() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "backfire_webhook_requests_total",
			Help: "Admission requests answered, by operation and decision (allowed, warned, denied, skipped, unjudged, error).",
		}, []string{"operation", "decision"}),
		// The API server waits timeoutSeconds (deploy/: 5 s) at most; the
		// buckets resolve the 20 ms target and show the tail up to it.
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "backfire_webhook_request_duration_seconds",
			Help:    "Time to judge one admission request and write the answer.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .02, .05, .1, .25, .5, 1, 2.5, 5},
		}),
		findings: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "backfire_webhook_findings_total",
			Help: "Findings on admitted objects, by rule and severity.",
		}, []string{"rule", "severity"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "backfire_webhook_errors_total",
			Help: "Requests or rules that failed, by reason (bad_request, too_large, slow_client, overloaded, timeout, decode, rule, internal).",
		}, []string{"reason"}),
	}
	m.Registry.MustRegister(m.requests, m.latency, m.findings, m.errors,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}
