// Package cgroup models what a pod's resources become on the node: CPU
// shares and cgroup v2 cpu.weight under the two conversion formulas in use,
// the CFS quota of a cpu limit, the QoS class and the OOM score adjustment.
//
// Where the numbers come from (Kubernetes v1.37):
//   - shares: kubelet MilliCPUToShares (pkg/kubelet/cm/helpers_linux.go);
//   - linear weight: kubelet getCPUWeight (pkg/kubelet/cm/cgroup_manager_linux.go),
//     the formula every runtime used for containers before runc 1.3.2 and
//     crun 1.23;
//   - runtime weight: the quadratic-in-log formula of runc >= 1.3.2 and
//     crun >= 1.23 (kubernetes#131216), which maps the default 1024 shares
//     to the cgroup v2 default weight 100;
//   - QoS: pkg/apis/core/v1/helper/qos (the same code is in
//     k8s.io/kubectl/pkg/util/qos), applied to requests defaulted from limits;
//   - oom_score_adj: pkg/kubelet/qos/policy.go.
//
// The kubelet writes the pod and QoS-class cgroups itself, with the linear
// formula, in every version; only container cgroups, written by the runtime,
// get the new one.
package cgroup

import (
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Kernel and kubelet constants.
const (
	MinShares    = 2      // kernel minimum; what a container without a cpu request gets
	MaxShares    = 262144 // kernel maximum
	SharesPerCPU = 1024
	// DefaultWeight is the cgroup v2 cpu.weight of every cgroup nobody
	// configured: systemd services, the kubelet itself, kernel threads.
	DefaultWeight = 100
	MinWeight     = 1
	MaxWeight     = 10000
	// QuotaPeriod is the CFS period the kubelet sets with a cpu limit.
	QuotaPeriod = 100 * time.Millisecond
	// minQuota is the kernel's smallest quota; the kubelet rounds up to it.
	minQuota = time.Millisecond
)

// Shares converts a cpu request in millicores to CPU shares:
// max(2, milliCPU x 1024 / 1000), at most 262144.
func Shares(milliCPU int64) uint64 {
	if milliCPU <= 0 {
		return MinShares
	}
	return uint64(min(max(milliCPU*SharesPerCPU/1000, MinShares), MaxShares))
}

// LinearWeight is the old shares-to-weight conversion:
// 1 + ((shares - 2) x 9999) / 262142, in integers.
func LinearWeight(shares uint64) uint64 {
	shares = min(max(shares, MinShares), MaxShares)
	return 1 + ((shares-MinShares)*9999)/262142
}

// RuntimeWeight is the conversion of runc >= 1.3.2 and crun >= 1.23: a
// quadratic in log2(shares) through (2, 1), (1024, 100) and (262144, 10000),
// so that a 1-CPU request weighs what an unconfigured cgroup weighs.
func RuntimeWeight(shares uint64) uint64 {
	if shares <= MinShares {
		return MinWeight
	}
	if shares >= MaxShares {
		return MaxWeight
	}
	l := math.Log2(float64(shares))
	exp := (l*l+125*l)/612.0 - 7.0/34.0
	return min(uint64(math.Ceil(math.Pow(10, exp))), MaxWeight)
}

// Weights is a cpu request as the node sees it.
type Weights struct {
	MilliCPU int64
	Shares   uint64
	// Linear is the container's cpu.weight under runtimes older than runc
	// 1.3.2 / crun 1.23, and the pod cgroup's weight under every runtime.
	Linear uint64
	// Runtime is the container's cpu.weight under runc >= 1.3.2 / crun >= 1.23.
	Runtime uint64
}

// WeightsOf returns the shares and both weights of a cpu request.
func WeightsOf(milliCPU int64) Weights {
	s := Shares(milliCPU)
	return Weights{MilliCPU: milliCPU, Shares: s, Linear: LinearWeight(s), Runtime: RuntimeWeight(s)}
}

// OneCPU is the neighbour every BestEffort finding compares with: a
// container that requests 1 CPU (weight 39 linear, 100 new).
var OneCPU = WeightsOf(1000)

// Quota is the CPU time a cpu limit allows per CFS period:
// milliCPU x 100 ms / 1000, at least 1 ms.
func Quota(milliCPU int64) time.Duration {
	if milliCPU <= 0 {
		return 0
	}
	return max(time.Duration(milliCPU)*QuotaPeriod/1000, minQuota)
}

// EffectiveRequests returns the container's requests as the API server
// stores them: a resource with a limit and no request requests its limit.
func EffectiveRequests(r corev1.ResourceRequirements) corev1.ResourceList {
	out := corev1.ResourceList{}
	for k, v := range r.Requests {
		out[k] = v
	}
	for k, v := range r.Limits {
		if _, ok := out[k]; !ok {
			out[k] = v
		}
	}
	return out
}

// qosResources are the only resources that decide the QoS class.
var qosResources = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}

// QOSClass computes the pod's QoS class from its spec as written: pod-level
// resources when they set cpu or memory, else every init and regular
// container, with requests defaulted from limits.
func QOSClass(spec *corev1.PodSpec) corev1.PodQOSClass {
	if r := spec.Resources; r != nil && setsCPUOrMemory(*r) {
		return requirementsQOS(defaulted(*r))
	}
	var class corev1.PodQOSClass
	for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range cs {
			c := requirementsQOS(defaulted(cs[i].Resources))
			switch {
			case c == corev1.PodQOSBurstable:
				return c
			case class == "":
				class = c
			case class != c:
				return corev1.PodQOSBurstable // BestEffort beside Guaranteed
			}
		}
	}
	if class == "" {
		return corev1.PodQOSBestEffort
	}
	return class
}

func setsCPUOrMemory(r corev1.ResourceRequirements) bool {
	for _, n := range qosResources {
		if _, ok := r.Requests[n]; ok {
			return true
		}
		if _, ok := r.Limits[n]; ok {
			return true
		}
	}
	return false
}

func defaulted(r corev1.ResourceRequirements) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{Requests: EffectiveRequests(r), Limits: r.Limits}
}

func requirementsQOS(r corev1.ResourceRequirements) corev1.PodQOSClass {
	var class corev1.PodQOSClass
	for _, n := range qosResources {
		c := resourceQOS(r, n)
		switch {
		case c == corev1.PodQOSBurstable:
			return c
		case class == "":
			class = c
		case class != c:
			return corev1.PodQOSBurstable // one of cpu, memory set, the other not
		}
	}
	return class
}

func resourceQOS(r corev1.ResourceRequirements, n corev1.ResourceName) corev1.PodQOSClass {
	req, lim := r.Requests[n], r.Limits[n]
	switch {
	case !req.Equal(lim):
		return corev1.PodQOSBurstable
	case req.IsZero():
		return corev1.PodQOSBestEffort
	}
	return corev1.PodQOSGuaranteed
}

// OOM score adjustments the kubelet gives containers.
const (
	GuaranteedOOMScoreAdj = -997
	BestEffortOOMScoreAdj = 1000
)

// OOMScoreAdj returns a container's oom_score_adj: -997 for Guaranteed,
// 1000 for BestEffort, and for Burstable 1000 - 1000 x memRequest /
// capacity, kept within [3, 999] so that it stays between the other two.
// memRequest and capacity are bytes; capacity is the node's memory.
func OOMScoreAdj(class corev1.PodQOSClass, memRequest, capacity int64) int {
	switch class {
	case corev1.PodQOSGuaranteed:
		return GuaranteedOOMScoreAdj
	case corev1.PodQOSBestEffort:
		return BestEffortOOMScoreAdj
	}
	if capacity <= 0 {
		return BestEffortOOMScoreAdj - 1
	}
	adj := 1000 - 1000*memRequest/capacity
	return int(min(max(adj, 1000+GuaranteedOOMScoreAdj), BestEffortOOMScoreAdj-1))
}

// MilliCPU reads a cpu quantity in millicores (0 when absent).
func MilliCPU(l corev1.ResourceList) int64 {
	q, ok := l[corev1.ResourceCPU]
	if !ok {
		return 0
	}
	return q.MilliValue()
}

// Memory reads a memory quantity in bytes (0 when absent).
func Memory(l corev1.ResourceList) int64 {
	q, ok := l[corev1.ResourceMemory]
	if !ok {
		return 0
	}
	return q.Value()
}

// FormatMilliCPU renders millicores the way manifests write them: "900m", "2".
func FormatMilliCPU(m int64) string {
	return resource.NewMilliQuantity(m, resource.DecimalSI).String()
}
