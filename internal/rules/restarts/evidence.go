package restarts

// BF501Evidence: restart times against the probe's arithmetic.
type BF501Evidence struct {
	Restarts         int32  `json:"restarts" doc:"the container's restart count"`
	ObservedSeconds  int    `json:"observedSeconds" doc:"the observed period: the median interval between restarts, or the last run"`
	ObservedMeasure  string `json:"observedMeasure" doc:"what observedSeconds measures (median interval, mean interval, last run); with no period, what the finding rests on (Killing events, Unhealthy events, none)"`
	Intervals        *int   `json:"intervals,omitempty" doc:"how many intervals between restarts were measured"`
	MeanSeconds      *int   `json:"meanSeconds,omitempty" doc:"the mean interval"`
	MinSeconds       *int   `json:"minSeconds,omitempty" doc:"the shortest interval, where individual restart times are known"`
	MaxSeconds       *int   `json:"maxSeconds,omitempty" doc:"the longest interval, where individual restart times are known"`
	PredictedSeconds int    `json:"predictedSeconds" doc:"the probe's prediction of the quantity observedSeconds measures: a run, D + F x P, when it is the last run; a cycle, D + F x P plus the restart back-off, when it is an interval between restarts (or when nothing was observed)"`
	Formula          string `json:"formula,omitempty" doc:"the arithmetic of the matching probe (300 + 3 x 10), when the period matches"`
	Probe            string `json:"probe,omitempty" doc:"the probe whose arithmetic matches or whose events the finding reads: liveness, startup, readiness (which never restarts), none"`
}

// BF502Evidence: what an exit code shows.
type BF502Evidence struct {
	ExitCode  int32  `json:"exitCode" doc:"the container's last exit code"`
	Reason    string `json:"reason" doc:"the reason the kubelet recorded (OOMKilled, Error, Completed)"`
	Signal    int    `json:"signal" doc:"the signal number when the code is 128 + n, else 0"`
	OOMKilled bool   `json:"oomKilled" doc:"whether the kernel's OOM killer stopped it (reason OOMKilled)"`
	// ExitCodeShown is false for a capture that shows the reason only.
	ExitCodeShown *bool  `json:"exitCodeShown,omitempty" doc:"false when the input showed the reason but not the exit code (a kubectl get pods STATUS); absent otherwise"`
	NotStarted    string `json:"notStarted,omitempty" doc:"for a container the kubelet never started, what was missing: configuration, image or command"`
}

// BF503Evidence: recovery messages in the server's own log.
type BF503Evidence struct {
	Interrupted      int `json:"interrupted" doc:"lines saying a recovery was interrupted by a kill"`
	Recoveries       int `json:"recoveries" doc:"lines saying a crash recovery started"`
	Refused          int `json:"refused" doc:"lines of connections refused because the server was starting up or recovering"`
	ProbeRefused     int `json:"probeRefused" doc:"Unhealthy events whose message is the recovering server's refusal"`
	InvalidUTF8Lines int `json:"invalidUTF8Lines" doc:"log lines that were not valid UTF-8 (read with replacement characters)"`
}

// BF503ClientEvidence: a client refused by the recovering server.
type BF503ClientEvidence struct {
	Refused int    `json:"refused" doc:"lines of the client's log refused by the recovering server"`
	Client  string `json:"client" doc:"the client container whose log it is"`
}
