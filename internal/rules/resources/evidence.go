package resources

// BF201Evidence: a stateful workload that runs BestEffort or Burstable
// without requests.
type BF201Evidence struct {
	QOSClass           string `json:"qosClass" doc:"the pod's QoS class"`
	CPUShares          uint64 `json:"cpuShares" doc:"cgroup v1 cpu.shares the container gets"`
	CPUWeightOld       uint64 `json:"cpuWeightOld" doc:"cgroup v2 cpu.weight under the linear formula (older runtimes)"`
	CPUWeightNew       uint64 `json:"cpuWeightNew" doc:"cgroup v2 cpu.weight under the runtime's current formula"`
	NeighbourWeightOld uint64 `json:"neighbourWeightOld" doc:"cpu.weight of a neighbour requesting 1 CPU, linear formula"`
	NeighbourWeightNew uint64 `json:"neighbourWeightNew" doc:"the same under the current formula"`
	OOMScoreAdj        int    `json:"oomScoreAdj" doc:"the container's oom_score_adj"`
	Classification     string `json:"classification" doc:"why the workload is stateful or database-like"`
}

// EvidenceMap is evidence.Map of e, built without reflection: BF201 is
// among the most frequent findings (see rules.EvidenceMapper).
func (e BF201Evidence) EvidenceMap() map[string]any {
	return map[string]any{
		"qosClass":           e.QOSClass,
		"cpuShares":          e.CPUShares,
		"cpuWeightOld":       e.CPUWeightOld,
		"cpuWeightNew":       e.CPUWeightNew,
		"neighbourWeightOld": e.NeighbourWeightOld,
		"neighbourWeightNew": e.NeighbourWeightNew,
		"oomScoreAdj":        e.OOMScoreAdj,
		"classification":     e.Classification,
	}
}

// BF202Evidence: a CPU limit on a latency-critical container.
type BF202Evidence struct {
	CPULimitMilli       int64    `json:"cpuLimitMilli" doc:"limits.cpu in millicores"`
	CPURequestMilli     int64    `json:"cpuRequestMilli" doc:"requests.cpu in millicores"`
	CPURequestDefaulted bool     `json:"cpuRequestDefaulted" doc:"whether requests.cpu is unset and defaults to the limit"`
	QuotaMs             float64  `json:"quotaMs" doc:"CFS quota per period, in milliseconds of CPU"`
	PeriodMs            float64  `json:"periodMs" doc:"CFS period in milliseconds"`
	QOSClass            string   `json:"qosClass" doc:"the pod's QoS class"`
	Classification      string   `json:"classification,omitempty" doc:"the database-like server, when the container is one"`
	Workers             *int     `json:"workers,omitempty" doc:"worker processes sharing the quota, when known"`
	WorkersSource       string   `json:"workersSource,omitempty" doc:"where the worker count was read"`
	WorkerServer        string   `json:"workerServer,omitempty" doc:"the server whose workers they are"`
	CPUPerWorkerMs      *float64 `json:"cpuPerWorkerMs,omitempty" doc:"quota per worker per period, in milliseconds, when all are busy"`
	StallMs             *float64 `json:"stallMs,omitempty" doc:"milliseconds each worker then stalls per period"`
}

// BF203Evidence: a database's memory request below its limit.
type BF203Evidence struct {
	MemoryLimit          string `json:"memoryLimit" doc:"limits.memory"`
	MemoryRequest        string `json:"memoryRequest" doc:"the memory request the fix sets (the limit)"`
	MemoryRequestDefault bool   `json:"memoryRequestDefault" doc:"whether requests.memory is unset"`
	QOSClass             string `json:"qosClass" doc:"the pod's QoS class"`
	Classification       string `json:"classification" doc:"the database-like server and why"`
}

// BF301Evidence: a database scheduled onto control-plane nodes.
type BF301Evidence struct {
	Classification       string   `json:"classification" doc:"why the workload is stateful or database-like"`
	TolerateControlPlane bool     `json:"toleratesControlPlane" doc:"whether the pod tolerates the control-plane taint"`
	NodeSelector         []string `json:"nodeSelector,omitempty" doc:"nodeSelector keys that select control-plane nodes"`
	RequiredNodeAffinity []string `json:"requiredNodeAffinity,omitempty" doc:"required node affinity terms that select them"`
}
