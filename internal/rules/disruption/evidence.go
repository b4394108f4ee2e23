package disruption

// BF303Evidence: a disruption budget that refuses every eviction.
type BF303Evidence struct {
	Case                       string   `json:"case" doc:"which way it blocks: zero-disruptions, overlapping-budgets, no-scale-subresource or unready-single-pod"`
	Selects                    []string `json:"selects" doc:"the workloads whose pods the budget selects, with their counts"`
	ExpectedPods               int32    `json:"expectedPods" doc:"the pods the disruption controller expects, at the lowest count (0 when it cannot count them)"`
	DesiredHealthy             int32    `json:"desiredHealthy" doc:"the pods that must stay healthy: minAvailable, or expectedPods - maxUnavailable (percentages rounded up)"`
	DisruptionsAllowed         int32    `json:"disruptionsAllowed" doc:"evictions allowed with every pod healthy: expectedPods - desiredHealthy, at least 0"`
	MinAvailable               string   `json:"minAvailable,omitempty" doc:"spec.minAvailable as written"`
	MaxUnavailable             string   `json:"maxUnavailable,omitempty" doc:"spec.maxUnavailable as written"`
	UnhealthyPodEvictionPolicy string   `json:"unhealthyPodEvictionPolicy" doc:"spec.unhealthyPodEvictionPolicy, IfHealthyBudget when unset"`
	OtherBudget                string   `json:"otherBudget,omitempty" doc:"the other PodDisruptionBudget that selects the same pods"`
	Controller                 string   `json:"controller,omitempty" doc:"the selected pods' controller that has no scale subresource"`
}

// BF302Evidence: a StatefulSet whose cluster cannot form again.
type BF302Evidence struct {
	Case                string `json:"case" doc:"ordered-ready (pod 0 waits for peers that are created only after it is Ready) or peers-unresolvable (peers' DNS names have no record until they are Ready)"`
	StatefulSet         string `json:"statefulSet" doc:"the StatefulSet"`
	Replicas            int32  `json:"replicas" doc:"its replicas (the lowest count when autoscaled)"`
	Quorum              int32  `json:"quorum" doc:"floor(replicas / 2) + 1: the members a majority needs"`
	Server              string `json:"server" doc:"the clustered server"`
	Readiness           string `json:"readiness" doc:"the readiness check that needs the cluster"`
	Needs               string `json:"needs" doc:"what it needs, and where that was read"`
	PodManagementPolicy string `json:"podManagementPolicy" doc:"spec.podManagementPolicy, OrderedReady when unset"`
	Service             string `json:"service,omitempty" doc:"the governing headless Service (peers-unresolvable)"`
	PeerAddress         string `json:"peerAddress,omitempty" doc:"where the pods name their peers through that Service (peers-unresolvable)"`
}
