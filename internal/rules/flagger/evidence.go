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

// BF412Evidence: the weight the canary held, and the primary it left.
type BF412Evidence struct {
	MaxWeight                  int     `json:"maxWeight" doc:"the canary's highest weight (maxWeight or the last stepWeights)"`
	SizedForPercent            int     `json:"sizedForPercent" doc:"the share of traffic the primary's autoscaler can have sized it for: 100 - maxWeight"`
	LoadFactor                 float64 `json:"loadFactor" doc:"the load per primary pod after the rollback, over what it was sized for"`
	HeldAtMaxSeconds           float64 `json:"heldAtMaxSeconds" doc:"the longest the checks alone hold the canary at its highest weight before a rollback: (threshold + 1) x interval"`
	WaitSeconds                float64 `json:"waitSeconds" doc:"the seconds of the window the canary holds its highest weight on ticks that wait (not ready), beyond the checks: window - heldAtMaxSeconds, at least 0"`
	ConfirmPromotionWebhook    string  `json:"confirmPromotionWebhook" doc:"a confirm-promotion webhook that can hold the canary there longer, if any"`
	StabilizationWindowSeconds int32   `json:"stabilizationWindowSeconds" doc:"the autoscaler's scale-down stabilization window"`
	Autoscaler                 string  `json:"autoscaler" doc:"the Canary's autoscalerRef"`
	MinReplicas                int32   `json:"minReplicas" doc:"the primary's minReplicas (primaryScalerReplicas over the autoscaler's)"`
	MaxReplicas                int32   `json:"maxReplicas" doc:"the primary's maxReplicas"`
	AutoscalerInInput          bool    `json:"autoscalerInInput" doc:"whether the autoscaler is in the input (else its range is assumed)"`
	PodsAtFullTraffic          int     `json:"podsAtFullTraffic" doc:"the load, in pods for all traffic, above which the primary can shrink: minReplicas x 100 / sizedForPercent"`
	PrimaryPodsAtPeak          int32   `json:"primaryPodsAtPeak" doc:"the pods the primary's autoscaler keeps for its share when all traffic needs maxReplicas: ceil(maxReplicas x sizedForPercent / 100), at least minReplicas (0 when the autoscaler is not in the input)"`
}

// BF413Evidence: the Flagger release and what a failed promotion takes.
type BF413Evidence struct {
	FlaggerVersion          string `json:"flaggerVersion" doc:"the Flagger release of the input's controller"`
	FixedIn                 string `json:"fixedIn" doc:"the first release that halts a failed promotion"`
	Controller              string `json:"controller" doc:"where the version was read"`
	CanaryShare             string `json:"canaryShare" doc:"the traffic the canary serves while the primary is promoted"`
	Strategy                string `json:"strategy" doc:"canary, ab-testing or blue-green"`
	ProgressDeadlineSeconds int    `json:"progressDeadlineSeconds" doc:"the Canary's progressDeadlineSeconds (default 600)"`
}
