package termination

// BF601Evidence: a stop that ends in SIGKILL.
type BF601Evidence struct {
	Server                 string   `json:"server" doc:"the database or server the container was classified as"`
	Classification         string   `json:"classification" doc:"what the classification rests on: image, env, command"`
	Causes                 []string `json:"causes" doc:"why the stop ends in SIGKILL: pid1-shell (a shell as PID 1 drops the stop signal), smart-shutdown (PostgreSQL's SIGTERM waits for every client), short-window (the clean stop needs longer than the window)"`
	GracePeriodSeconds     int      `json:"gracePeriodSeconds" doc:"terminationGracePeriodSeconds of the pod (default 30)"`
	GraceSet               bool     `json:"graceSet" doc:"whether terminationGracePeriodSeconds is written in the manifest"`
	PreStopSeconds         *int     `json:"preStopSeconds,omitempty" doc:"how long the preStop hook runs, when it says (a sleep)"`
	WindowSeconds          int      `json:"windowSeconds" doc:"seconds from the stop signal to SIGKILL from Kubernetes 1.28: the grace period less the preStop, at least 2"`
	WindowBefore128Seconds int      `json:"windowBefore128Seconds" doc:"the same up to Kubernetes 1.27, when the preStop did not count: the grace period"`
	StopSignal             string   `json:"stopSignal,omitempty" doc:"the signal that stops the container, when known"`
	StopSignalFrom         string   `json:"stopSignalFrom,omitempty" doc:"where the stop signal was read: lifecycle.stopSignal, the image's STOPSIGNAL"`
	PID1                   string   `json:"pid1,omitempty" doc:"the shell command that stays PID 1, when it does"`
	CleanStopSeconds       *int     `json:"cleanStopSeconds,omitempty" doc:"seconds the server needs to stop cleanly, when the manifest gives the numbers"`
	CleanStop              string   `json:"cleanStop,omitempty" doc:"the arithmetic of the clean stop: the data to write over the write rate"`
	RecoveryLoop           string   `json:"recoveryLoop,omitempty" doc:"the rule whose probe then kills the crash recovery (BF101, BF105), which makes the finding an error"`
	RecoveryLoopSeconds    *int     `json:"recoveryLoopSeconds,omitempty" doc:"the longest recovery that probe lets finish"`
}
