package network

// BF304Evidence: an egress policy under which the pods cannot resolve names.
type BF304Evidence struct {
	Selects  []string `json:"selects" doc:"the workloads of the input whose pods the policy selects (empty when none is in the input: then the pods its selector names)"`
	Policies []string `json:"policies" doc:"the egress policies of the namespace that apply to those pods, this one included"`
	UDP      bool     `json:"udp" doc:"whether any of them allows UDP 53 to the cluster DNS"`
	TCP      bool     `json:"tcp" doc:"whether any of them allows TCP 53 to the cluster DNS"`
	Why      string   `json:"why" doc:"why the rules that mention port 53 do not reach the DNS pods, when some do"`
}

// BF701Evidence: outlier detection that ejects every endpoint, or none.
type BF701Evidence struct {
	Case               string `json:"case" doc:"ejects-all (maxEjectionPercent lets every host go, with panic routing off) or inert (not one host may be ejected)"`
	Host               string `json:"host" doc:"the DestinationRule's host"`
	Cluster            string `json:"cluster" doc:"the traffic policy judged: the host's, or a subset's"`
	Endpoints          int32  `json:"endpoints" doc:"pods behind it (the lowest count), 0 when the input does not say"`
	MaxEjectionPercent int32  `json:"maxEjectionPercent" doc:"maxEjectionPercent (Envoy's default 10 when unset)"`
	Ejectable          int32  `json:"ejectable" doc:"floor(maxEjectionPercent x endpoints / 100): hosts Envoy may eject at once"`
	MinHealthPercent   int32  `json:"minHealthPercent" doc:"minHealthPercent, Envoy's healthy_panic_threshold (Istio's default 0: no panic routing)"`
	Consecutive5xx     int32  `json:"consecutive5xxErrors" doc:"5xx answers in a row that eject a host (0: off; Envoy's default 5 when unset)"`
	ConsecutiveGateway int32  `json:"consecutiveGatewayErrors" doc:"502, 503 and 504 in a row that eject a host (0: off)"`
	BaseEjectionSecond int    `json:"baseEjectionSeconds" doc:"baseEjectionTime in seconds (default 30): the first ejection's length, times the number of ejections after"`
}
