package rollouts

// BF401Evidence: the rollback-window weight jump. A fixed replica count
// fills replicas, replicasSet, canaryPods and neededPods; an autoscaler's
// range fills replicasMin to running instead. Every number is an integer.
type BF401Evidence struct {
	BacktrackWeight         int32         `json:"backtrackWeight" doc:"the traffic weight a rollback within the window jumps to"`
	BacktrackStep           int           `json:"backtrackStep" doc:"the step index the rollback resumes at"`
	MaxTrafficWeight        int32         `json:"maxTrafficWeight" doc:"the canary's maxTrafficWeight (default 100)"`
	RollbackWindowRevisions int32         `json:"rollbackWindowRevisions" doc:"rollbackWindow.revisions"`
	MinPodsPerReplicaSet    *int32        `json:"minPodsPerReplicaSet" doc:"canary.minPodsPerReplicaSet, null when unset"`
	FirstStepWeight         *int32        `json:"firstStepWeight" doc:"the first step's setWeight, null when the first step sets none"`
	RolloutsVersion         string        `json:"rolloutsVersion" doc:"the Argo Rollouts controller version computed for"`
	AppliesTo               string        `json:"appliesTo" doc:"the controller versions with this behaviour"`
	Replicas                *int32        `json:"replicas,omitempty" doc:"fixed replica count (spec.replicas, or 1 when unset)"`
	ReplicasSet             *bool         `json:"replicasSet,omitempty" doc:"whether spec.replicas is written"`
	CanaryPods              *int32        `json:"canaryPods,omitempty" doc:"canary pods that get the backtrack weight, at the fixed count"`
	NeededPods              *int32        `json:"neededPods,omitempty" doc:"pods that weight needs, at the fixed count"`
	ReplicasMin             *int32        `json:"replicasMin,omitempty" doc:"the autoscaler's minimum"`
	ReplicasMax             *int32        `json:"replicasMax,omitempty" doc:"the autoscaler's maximum"`
	ScaledBy                string        `json:"scaledBy,omitempty" doc:"the HorizontalPodAutoscaler or KEDA ScaledObject"`
	CanaryPodsAtMin         *int32        `json:"canaryPodsAtMin,omitempty" doc:"canary pods at the autoscaler's minimum"`
	CanaryPodsAtMax         *int32        `json:"canaryPodsAtMax,omitempty" doc:"canary pods at its maximum"`
	Bands                   []BF401Band   `json:"bands,omitempty" doc:"replica ranges that give the same canary pod count"`
	Running                 *BF401Running `json:"running,omitempty" doc:"the same at the replica count running now (status.replicas)"`
}

// BF401Band is a range of replica counts with one canary pod count.
type BF401Band struct {
	From       int32 `json:"replicasFrom"`
	To         int32 `json:"replicasTo"`
	CanaryPods int32 `json:"canaryPods"`
	Short      bool  `json:"short"`
}

// BF401Running is the jump at the replica count running now.
type BF401Running struct {
	Replicas   int32 `json:"replicas"`
	CanaryPods int32 `json:"canaryPods"`
	NeededPods int32 `json:"neededPods"`
}

// BF402Evidence: an analysis that cannot tell the canary from the stable.
type BF402Evidence struct {
	Template                string   `json:"template" doc:"the AnalysisTemplate or ClusterAnalysisTemplate"`
	Metric                  string   `json:"metric" doc:"the first blind metric"`
	Provider                string   `json:"provider" doc:"its provider (prometheus, datadog, ...)"`
	FailureLimit            int      `json:"failureLimit" doc:"the metric's failureLimit"`
	IntervalSeconds         float64  `json:"intervalSeconds" doc:"the metric's interval"`
	InitialDelaySeconds     float64  `json:"initialDelaySeconds" doc:"the metric's initialDelay"`
	TimeToAbortSeconds      float64  `json:"timeToAbortSeconds" doc:"seconds from the start of the run to the abort"`
	StartStep               int32    `json:"startStep" doc:"the step whose analysis starts the run"`
	BrokenTrafficShare      string   `json:"brokenTrafficShare" doc:"the traffic the broken version still serves then"`
	BlindMetrics            []string `json:"blindMetrics" doc:"every metric that cannot tell the canary from the stable"`
	RollbackWindowRevisions *int32   `json:"rollbackWindowRevisions" doc:"rollbackWindow.revisions, null without a window"`
	RolloutsVersion         string   `json:"rolloutsVersion" doc:"the controller version computed for"`
	AppliesTo               string   `json:"appliesTo" doc:"the controller versions with this behaviour"`
}

// BF402UncheckedEvidence: an analysis backfire could not check.
type BF402UncheckedEvidence struct {
	Unchecked       []string `json:"unchecked" doc:"the templates or queries not in the input"`
	StartStep       int32    `json:"startStep" doc:"the step whose analysis starts the run"`
	RolloutsVersion string   `json:"rolloutsVersion" doc:"the controller version computed for"`
}

// BF403Evidence: a revision history shorter than the rollback window.
type BF403Evidence struct {
	RollbackWindowRevisions  int32  `json:"rollbackWindowRevisions" doc:"rollbackWindow.revisions"`
	RevisionHistoryLimit     int32  `json:"revisionHistoryLimit" doc:"revisionHistoryLimit (default 10)"`
	RevisionHistoryLimitSet  bool   `json:"revisionHistoryLimitSet" doc:"whether it is written"`
	RevisionsLostFromWindow  int32  `json:"revisionsLostFromWindow" doc:"revisions the window admits that the history no longer holds"`
	RolloutsVersion          string `json:"rolloutsVersion" doc:"the controller version computed for"`
	AppliesTo                string `json:"appliesTo" doc:"the controller versions with this behaviour"`
	SuggestedHistoryLimitMin int32  `json:"suggestedHistoryLimitMin" doc:"the smallest revisionHistoryLimit that keeps the window's targets"`
}

// BF404Evidence: an abort with dynamicStableScale that never reaches
// weight 0.
type BF404Evidence struct {
	Bug              string `json:"bug" doc:"the upstream issue: argoproj/argo-rollouts#4841 (minPodsPerReplicaSet) or #4898 (abortScaleDownDelaySeconds)"`
	Replicas         int32  `json:"replicas" doc:"the replica count computed for (the autoscaler's minimum when one owns it)"`
	AbortedAt        int32  `json:"abortedAt" doc:"the setWeight the update is aborted at"`
	ParkedWeight     int32  `json:"parkedWeight" doc:"the canary weight the abort stops at"`
	MaxTrafficWeight int32  `json:"maxTrafficWeight" doc:"the canary's maxTrafficWeight (default 100)"`
	CanaryPods       int32  `json:"canaryPods" doc:"the pods the aborted canary keeps"`
	StablePods       int32  `json:"stablePods" doc:"the stable's size at the parked weight"`
	RolloutsVersion  string `json:"rolloutsVersion" doc:"the controller version computed for"`
	AppliesTo        string `json:"appliesTo" doc:"the controller versions with this behaviour"`
}

// BF405Evidence: an aborted canary scaled up again when the stable falls
// short.
type BF405Evidence struct {
	Replicas        int32  `json:"replicas" doc:"the replica count computed for (the autoscaler's minimum when one owns it)"`
	ShortBy         int32  `json:"shortBy" doc:"the fewest stable pods missing (a scale-up, an eviction) that scale the aborted canary up"`
	CanaryPods      int32  `json:"canaryPods" doc:"the pods the aborted canary is scaled to then"`
	Weight          int32  `json:"weight" doc:"the setWeight whose pods it is scaled to"`
	ScaledBy        string `json:"scaledBy,omitempty" doc:"the HorizontalPodAutoscaler or KEDA ScaledObject"`
	RolloutsVersion string `json:"rolloutsVersion" doc:"the controller version computed for"`
	AppliesTo       string `json:"appliesTo" doc:"the controller versions with this behaviour"`
}
