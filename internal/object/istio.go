package object

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DestinationRule is the part of Istio's networking.istio.io
// DestinationRule that backfire reads: the host, and the outlier
// detection of the traffic policy and of each subset. Istio's Go types are
// protocol buffers that need Istio's own JSON decoder (durations as
// protobuf Duration, wrapped integers) and a large module; these fields are
// stable across v1alpha3, v1beta1 and v1 (istio/api
// networking/v1alpha3/destination_rule.proto).
type DestinationRule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              DestinationRuleSpec `json:"spec"`
}

// DestinationRuleSpec holds the host and the policies.
type DestinationRuleSpec struct {
	Host          string         `json:"host"`
	TrafficPolicy *TrafficPolicy `json:"trafficPolicy,omitempty"`
	Subsets       []Subset       `json:"subsets,omitempty"`
}

// Subset is a named set of the host's endpoints, selected by labels.
type Subset struct {
	Name          string            `json:"name"`
	Labels        map[string]string `json:"labels,omitempty"`
	TrafficPolicy *TrafficPolicy    `json:"trafficPolicy,omitempty"`
}

// TrafficPolicy is the part of a traffic policy backfire reads.
type TrafficPolicy struct {
	OutlierDetection *OutlierDetection `json:"outlierDetection,omitempty"`
}

// OutlierDetection is Istio's circuit breaker: which errors eject an
// endpoint, for how long, and how much of the pool may be ejected.
type OutlierDetection struct {
	// ConsecutiveErrors is the deprecated name of Consecutive5xxErrors
	// (before Istio 1.5 it counted 502, 503 and 504 only).
	ConsecutiveErrors        *int32 `json:"consecutiveErrors,omitempty"`
	Consecutive5xxErrors     *int32 `json:"consecutive5xxErrors,omitempty"`
	ConsecutiveGatewayErrors *int32 `json:"consecutiveGatewayErrors,omitempty"`
	Interval                 string `json:"interval,omitempty"`
	BaseEjectionTime         string `json:"baseEjectionTime,omitempty"`
	MaxEjectionPercent       *int32 `json:"maxEjectionPercent,omitempty"`
	MinHealthPercent         *int32 `json:"minHealthPercent,omitempty"`
}

// Duration reads a duration of an Istio policy ("30s", "1m", "1.5s"); ok
// is false when it is unset or not a duration.
func Duration(s string) (time.Duration, bool) {
	if s == "" {
		return 0, false
	}
	d, err := time.ParseDuration(s)
	return d, err == nil
}
