package probes

// BF101Evidence: the liveness probe that kills a database in recovery.
type BF101Evidence struct {
	TimeToKillSeconds       int    `json:"timeToKillSeconds" doc:"seconds from the first slow answer to the kill: (failureThreshold-1) x periodSeconds + timeoutSeconds"`
	NeverHealthyKillSeconds int    `json:"neverHealthyKillSeconds" doc:"seconds after a start at which a container that never answers is killed: the longest recovery that can finish"`
	InitialDelaySeconds     int    `json:"initialDelaySeconds" doc:"the liveness probe's initialDelaySeconds (default 0)"`
	PeriodSeconds           int    `json:"periodSeconds" doc:"the liveness probe's periodSeconds (default 10)"`
	TimeoutSeconds          int    `json:"timeoutSeconds" doc:"the liveness probe's timeoutSeconds (default 1)"`
	FailureThreshold        int    `json:"failureThreshold" doc:"the liveness probe's failureThreshold (default 3)"`
	GracePeriodSeconds      int    `json:"gracePeriodSeconds" doc:"terminationGracePeriodSeconds: SIGKILL at most this long after SIGTERM (default 30)"`
	Server                  string `json:"server" doc:"the database or server the container was classified as"`
	Classification          string `json:"classification" doc:"what the classification rests on: image, env, command"`
	ProbeQueries            string `json:"probeQueries" doc:"why the probe needs the server to answer a query"`
	StartupProbe            string `json:"startupProbe,omitempty" doc:"the startupProbe, when there is one, and why it does not cover a recovery"`
	StartupBudgetSeconds    *int   `json:"startupBudgetSeconds,omitempty" doc:"seconds the startupProbe holds liveness back, when there is one"`
	ListensDuringRecovery   *bool  `json:"listensDuringRecovery,omitempty" doc:"whether the server keeps its port open while it recovers, where the server table knows it"`
}

// BF102Evidence: a liveness probe's 1 s timeout.
type BF102Evidence struct {
	Handler               string `json:"handler" doc:"the probe's handler: exec, httpGet or grpc"`
	TimeoutSeconds        int    `json:"timeoutSeconds" doc:"the liveness probe's timeoutSeconds (1, or unset: the default 1)"`
	TimeoutSet            bool   `json:"timeoutSet" doc:"whether timeoutSeconds is written in the manifest"`
	PeriodSeconds         int    `json:"periodSeconds" doc:"the liveness probe's periodSeconds"`
	FailureThreshold      int    `json:"failureThreshold" doc:"the liveness probe's failureThreshold"`
	FailureWindowSeconds  int    `json:"failureWindowSeconds" doc:"failureThreshold x periodSeconds: seconds of slow answers that restart the container"`
	TimeToKillSeconds     int    `json:"timeToKillSeconds" doc:"seconds from the first slow answer to the kill"`
	GracePeriodSeconds    int    `json:"gracePeriodSeconds" doc:"terminationGracePeriodSeconds"`
	InitialDelaySeconds   int    `json:"initialDelaySeconds" doc:"the liveness probe's initialDelaySeconds"`
	NeverHealthyKillAfter int    `json:"neverHealthyKillAfter" doc:"seconds after a start at which a container that never answers is killed"`
	ProbeQueries          string `json:"probeQueries" doc:"what the probe runs against the server, when it queries one"`
	Server                string `json:"server,omitempty" doc:"the database-like server, when the container is one (then the finding is an error)"`
	Classification        string `json:"classification,omitempty" doc:"what that classification rests on"`
}

// BF103Evidence: liveness as strict as readiness, on the same check.
type BF103Evidence struct {
	Check                  string `json:"check" doc:"the check both probes run"`
	LivenessBudgetSeconds  int    `json:"livenessBudgetSeconds" doc:"failureThreshold x periodSeconds + timeoutSeconds of liveness"`
	ReadinessBudgetSeconds int    `json:"readinessBudgetSeconds" doc:"the same for readiness"`
	LivenessKillSeconds    int    `json:"livenessKillSeconds" doc:"seconds from the first failure to the kill"`
	ReadinessRemoveSeconds int    `json:"readinessRemoveSeconds" doc:"seconds from the first failure to the removal from the endpoints"`
}

// BF104Evidence: a readiness probe that drops a pod on one slow answer.
type BF104Evidence struct {
	FailureThreshold int  `json:"failureThreshold" doc:"the readiness probe's failureThreshold (1)"`
	SuccessThreshold int  `json:"successThreshold" doc:"the readiness probe's successThreshold"`
	PeriodSeconds    int  `json:"periodSeconds" doc:"the readiness probe's periodSeconds"`
	TimeoutSeconds   int  `json:"timeoutSeconds" doc:"the readiness probe's timeoutSeconds"`
	ReturnSeconds    int  `json:"returnSeconds" doc:"successThreshold x periodSeconds: seconds out of the endpoints for one slow answer"`
	Pods             int  `json:"pods" doc:"the fewest pods that serve behind the Service (or in the first canary step)"`
	PodsMax          int  `json:"podsMax" doc:"the most pods, for an autoscaled workload"`
	Canary           bool `json:"canary" doc:"whether pods counts the canary pods of the first traffic-routed step"`
}

// BF105Evidence: a startup probe that kills a recovery.
type BF105Evidence struct {
	StartupBudgetSeconds int    `json:"startupBudgetSeconds" doc:"initialDelaySeconds + failureThreshold x periodSeconds of the startup probe: the longest recovery that can finish"`
	InitialDelaySeconds  int    `json:"initialDelaySeconds" doc:"the startup probe's initialDelaySeconds (default 0)"`
	PeriodSeconds        int    `json:"periodSeconds" doc:"the startup probe's periodSeconds (default 10)"`
	FailureThreshold     int    `json:"failureThreshold" doc:"the startup probe's failureThreshold (default 3)"`
	TimeoutSeconds       int    `json:"timeoutSeconds" doc:"the startup probe's timeoutSeconds (default 1)"`
	GracePeriodSeconds   int    `json:"gracePeriodSeconds" doc:"the grace of a startup kill: the probe's terminationGracePeriodSeconds, else the pod's (default 30)"`
	ThresholdSeconds     int    `json:"thresholdSeconds" doc:"the recovery the budget must allow (thresholds.startupBudgetSeconds, default 600)"`
	Server               string `json:"server" doc:"the database or server the container was classified as"`
	Classification       string `json:"classification" doc:"what the classification rests on: image, env, command"`
	ProbeFails           string `json:"probeFails" doc:"why the startup probe fails while the server recovers"`
}

// BF106Evidence: a readiness probe that passes during recovery.
type BF106Evidence struct {
	Handler        string `json:"handler" doc:"the readiness probe's handler: tcpSocket, exec, httpGet or grpc"`
	Server         string `json:"server" doc:"the database or server the container was classified as"`
	Classification string `json:"classification" doc:"what the classification rests on: image, env, command"`
	ProbePasses    string `json:"probePasses" doc:"why the readiness probe passes while the server recovers"`
	Pods           int    `json:"pods" doc:"the most pods that may serve (spec.replicas, an autoscaler's maximum; 2 for a DaemonSet, meaning several): 1 makes the finding info"`
}

// BF107Evidence: readiness that flaps under load at any replica count.
type BF107Evidence struct {
	TimeoutSeconds   int      `json:"timeoutSeconds" doc:"the readiness probe's timeoutSeconds (1 or unset)"`
	TimeoutSet       bool     `json:"timeoutSet" doc:"whether timeoutSeconds is written in the manifest"`
	FailureThreshold int      `json:"failureThreshold" doc:"the readiness probe's failureThreshold (1)"`
	SuccessThreshold int      `json:"successThreshold" doc:"the readiness probe's successThreshold"`
	PeriodSeconds    int      `json:"periodSeconds" doc:"the readiness probe's periodSeconds"`
	ReturnSeconds    int      `json:"returnSeconds" doc:"successThreshold x periodSeconds: seconds out of the endpoints for one slow answer"`
	Workers          int      `json:"workers" doc:"worker processes of the server"`
	WorkersSource    string   `json:"workersSource" doc:"where the worker count was read (a flag, a variable, the server's default)"`
	WorkerServer     string   `json:"workerServer,omitempty" doc:"the server whose workers they are"`
	WorkersQueue     bool     `json:"workersQueue" doc:"whether each worker serves one request at a time, so a probe waits behind busy workers"`
	CPULimitMilli    *int64   `json:"cpuLimitMilli,omitempty" doc:"limits.cpu in millicores, when below one CPU with several workers"`
	CPUPerWorkerMs   *float64 `json:"cpuPerWorkerMs,omitempty" doc:"quota per worker per 100 ms period when all are busy"`
	Stretch          *float64 `json:"stretch,omitempty" doc:"wall time over CPU time of a request while all workers are busy"`
	MissCPUMs        *float64 `json:"missCpuMs,omitempty" doc:"milliseconds of CPU above which one request outlasts the probe's timeout"`
}

// EvidenceMap is evidence.Map of e, built without reflection: BF101,
// BF102 and BF106 are the most frequent findings (see rules.EvidenceMapper).
func (e BF101Evidence) EvidenceMap() map[string]any {
	m := make(map[string]any, 13)
	m["timeToKillSeconds"] = e.TimeToKillSeconds
	m["neverHealthyKillSeconds"] = e.NeverHealthyKillSeconds
	m["initialDelaySeconds"] = e.InitialDelaySeconds
	m["periodSeconds"] = e.PeriodSeconds
	m["timeoutSeconds"] = e.TimeoutSeconds
	m["failureThreshold"] = e.FailureThreshold
	m["gracePeriodSeconds"] = e.GracePeriodSeconds
	m["server"] = e.Server
	m["classification"] = e.Classification
	m["probeQueries"] = e.ProbeQueries
	if e.StartupProbe != "" {
		m["startupProbe"] = e.StartupProbe
	}
	if e.StartupBudgetSeconds != nil {
		m["startupBudgetSeconds"] = *e.StartupBudgetSeconds
	}
	if e.ListensDuringRecovery != nil {
		m["listensDuringRecovery"] = *e.ListensDuringRecovery
	}
	return m
}

// EvidenceMap is evidence.Map of e, built without reflection.
func (e BF102Evidence) EvidenceMap() map[string]any {
	m := make(map[string]any, 13)
	m["handler"] = e.Handler
	m["timeoutSeconds"] = e.TimeoutSeconds
	m["timeoutSet"] = e.TimeoutSet
	m["periodSeconds"] = e.PeriodSeconds
	m["failureThreshold"] = e.FailureThreshold
	m["failureWindowSeconds"] = e.FailureWindowSeconds
	m["timeToKillSeconds"] = e.TimeToKillSeconds
	m["gracePeriodSeconds"] = e.GracePeriodSeconds
	m["initialDelaySeconds"] = e.InitialDelaySeconds
	m["neverHealthyKillAfter"] = e.NeverHealthyKillAfter
	m["probeQueries"] = e.ProbeQueries
	if e.Server != "" {
		m["server"] = e.Server
	}
	if e.Classification != "" {
		m["classification"] = e.Classification
	}
	return m
}

// EvidenceMap is evidence.Map of e, built without reflection.
func (e BF106Evidence) EvidenceMap() map[string]any {
	return map[string]any{
		"handler":        e.Handler,
		"server":         e.Server,
		"classification": e.Classification,
		"probePasses":    e.ProbePasses,
		"pods":           e.Pods,
	}
}
