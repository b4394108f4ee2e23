package controllers

// BF801Evidence: a replica count the manifest fixes under an autoscaler.
type BF801Evidence struct {
	Replicas            int32  `json:"replicas" doc:"spec.replicas as the manifest writes it: what every apply sets"`
	MinReplicas         int32  `json:"minReplicas" doc:"the autoscaler's lower bound"`
	MaxReplicas         int32  `json:"maxReplicas" doc:"the autoscaler's upper bound"`
	ScaledBy            string `json:"scaledBy" doc:"the HorizontalPodAutoscaler or KEDA ScaledObject that owns the count"`
	From                int32  `json:"from" doc:"the count the reset starts from: status.replicas when the object carries it, else the autoscaler's maximum"`
	PodsRemoved         int32  `json:"podsRemoved" doc:"from - replicas: pods the workload controller deletes at once"`
	RecoverySyncs       int    `json:"recoverySyncs" doc:"autoscaler periods (15 s each) to scale back up to from, at its scale-up rate"`
	RecoverySeconds     int    `json:"recoverySeconds" doc:"recoverySyncs x 15: seconds below from, before pod start-up and readiness"`
	ScaleUpPolicy       string `json:"scaleUpPolicy" doc:"the scale-up rate the recovery was computed with"`
	ReplicasFrom        string `json:"replicasFrom" doc:"what says the sync sets spec.replicas: the manifest, the last-applied annotation, or managedFields"`
	IgnoreDifferencesIn string `json:"ignoreDifferencesIn,omitempty" doc:"the Argo CD Application whose ignoreDifferences covers spec.replicas without RespectIgnoreDifferences=true"`
}

// BF802Evidence: a Forbid CronJob without a deadline on its runs.
type BF802Evidence struct {
	Schedule                 string `json:"schedule" doc:"spec.schedule"`
	IntervalSeconds          int    `json:"intervalSeconds" doc:"the shortest time between two scheduled runs, in seconds"`
	RunsPerDay               int    `json:"runsPerDay" doc:"scheduled runs in the 24 hours after the reference time: what one day of a hung run skips"`
	ActiveDeadlineSeconds    *int64 `json:"activeDeadlineSeconds,omitempty" doc:"spec.jobTemplate.spec.activeDeadlineSeconds, when set (longer than 2 intervals)"`
	PodActiveDeadlineSeconds *int64 `json:"podActiveDeadlineSeconds,omitempty" doc:"the pod template's activeDeadlineSeconds, when set: it bounds a running pod, not a Pending one"`
	BackoffLimit             int32  `json:"backoffLimit" doc:"spec.jobTemplate.spec.backoffLimit (default 6): failed pods a Job retries; a hung or Pending pod never fails"`
	StartingDeadlineSeconds  *int64 `json:"startingDeadlineSeconds,omitempty" doc:"spec.startingDeadlineSeconds, when set"`
}
