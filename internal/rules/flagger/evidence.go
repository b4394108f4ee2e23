package flagger

// BF411Evidence: the first blind metric and when it rolls back.
type BF411Evidence struct {
	Template              string   `json:"template" doc:"the MetricTemplate, or the inline query"`
	Metric                string   `json:"metric" doc:"the first blind metric"`
	Provider              string   `json:"provider" doc:"its provider (prometheus, datadog, ...)"`
	Why                   []string `json:"why" doc:"what the query selects instead of the canary"`
	Threshold             int      `json:"threshold" doc:"analysis.threshold: failed checks before the rollback"`
	IntervalSeconds       float64  `json:"intervalSeconds" doc:"analysis.interval: one check per interval"`
	TimeToRollbackSeconds float64  `json:"timeToRollbackSeconds" doc:"seconds from the start of the analysis to the rollback: (threshold + 1) x interval"`
	Strategy              string   `json:"strategy" doc:"canary, ab-testing or blue-green"`
	PrimaryShare          string   `json:"primaryShare" doc:"the traffic the broken primary serves while the canary is judged"`
	BlindMetrics          []string `json:"blindMetrics" doc:"every metric that cannot tell the canary from the primary"`
}

// BF411UncheckedEvidence: the templates not in the input.
type BF411UncheckedEvidence struct {
	Unchecked []string `json:"unchecked" doc:"the MetricTemplates not in the input"`
}
