package cgroup

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The table of the rule catalog (BF201): old/new cpu.weight per request.
func TestWeightsTable(t *testing.T) {
	for _, tc := range []struct {
		milli          int64
		shares         uint64
		linear, newW   uint64
		describedAsRow string
	}{
		{0, 2, 1, 1, "0 -> 1/1"},
		{100, 102, 4, 17, "100m -> 4/17"},
		{250, 256, 10, 35, "250m -> 10/35"},
		{1000, 1024, 39, 100, "1 CPU -> 39/100"},
		{4000, 4096, 157, 303, "4 CPU -> 157/303"},
	} {
		w := WeightsOf(tc.milli)
		if w.Shares != tc.shares || w.Linear != tc.linear || w.Runtime != tc.newW {
			t.Errorf("%s: got shares %d, weights %d/%d; want shares %d, %d/%d",
				tc.describedAsRow, w.Shares, w.Linear, w.Runtime, tc.shares, tc.linear, tc.newW)
		}
	}
}

func TestWeightEnds(t *testing.T) {
	// Both formulas meet the cgroup v2 range at its ends.
	for _, s := range []uint64{0, 1, 2} {
		if LinearWeight(s) != 1 || RuntimeWeight(s) != 1 {
			t.Errorf("shares %d: weights %d/%d, want 1/1", s, LinearWeight(s), RuntimeWeight(s))
		}
	}
	for _, s := range []uint64{MaxShares, MaxShares + 1} {
		if LinearWeight(s) != MaxWeight || RuntimeWeight(s) != MaxWeight {
			t.Errorf("shares %d: weights %d/%d, want %d", s, LinearWeight(s), RuntimeWeight(s), MaxWeight)
		}
	}
	// A request too small for 2 shares still gets the minimum, and a huge
	// one is clamped.
	if Shares(1) != MinShares || Shares(1_000_000) != MaxShares {
		t.Errorf("Shares(1) = %d, Shares(1000 CPU) = %d", Shares(1), Shares(1_000_000))
	}
	// The new formula never gives less than the old one: that was the point
	// of the change.
	for s := uint64(2); s <= MaxShares; s += 97 {
		if RuntimeWeight(s) < LinearWeight(s) {
			t.Fatalf("shares %d: new weight %d < linear %d", s, RuntimeWeight(s), LinearWeight(s))
		}
	}
}

func TestQuota(t *testing.T) {
	for milli, want := range map[int64]time.Duration{
		900: 90 * time.Millisecond, 2000: 200 * time.Millisecond, 250: 25 * time.Millisecond,
		5: time.Millisecond, // rounded up to the kernel minimum
		0: 0,
	} {
		if got := Quota(milli); got != want {
			t.Errorf("Quota(%dm) = %v, want %v", milli, got, want)
		}
	}
}

func rl(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

func ctr(req, lim corev1.ResourceList) corev1.Container {
	return corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Requests: req, Limits: lim}}
}

func TestQOSClass(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec corev1.PodSpec
		want corev1.PodQOSClass
	}{
		{"nothing set", corev1.PodSpec{Containers: []corev1.Container{ctr(nil, nil)}}, corev1.PodQOSBestEffort},
		{"only ephemeral-storage", corev1.PodSpec{Containers: []corev1.Container{ctr(rl("ephemeral-storage", "1Gi"), nil)}}, corev1.PodQOSBestEffort},
		{"requests only", corev1.PodSpec{Containers: []corev1.Container{ctr(rl("cpu", "500m", "memory", "1Gi"), nil)}}, corev1.PodQOSBurstable},
		{"limits only: requests default to them", corev1.PodSpec{Containers: []corev1.Container{ctr(nil, rl("cpu", "1", "memory", "1Gi"))}}, corev1.PodQOSGuaranteed},
		{"equal, written differently", corev1.PodSpec{Containers: []corev1.Container{ctr(rl("cpu", "1000m", "memory", "1024Mi"), rl("cpu", "1", "memory", "1Gi"))}}, corev1.PodQOSGuaranteed},
		{"memory only, equal", corev1.PodSpec{Containers: []corev1.Container{ctr(rl("memory", "1Gi"), rl("memory", "1Gi"))}}, corev1.PodQOSBurstable},
		{"memory limit above request", corev1.PodSpec{Containers: []corev1.Container{ctr(rl("cpu", "1", "memory", "1Gi"), rl("cpu", "1", "memory", "2Gi"))}}, corev1.PodQOSBurstable},
		{"init container with requests", corev1.PodSpec{
			InitContainers: []corev1.Container{ctr(rl("cpu", "100m"), nil)},
			Containers:     []corev1.Container{ctr(nil, nil)}}, corev1.PodQOSBurstable},
		{"guaranteed beside best effort", corev1.PodSpec{Containers: []corev1.Container{
			ctr(nil, rl("cpu", "1", "memory", "1Gi")), ctr(nil, nil)}}, corev1.PodQOSBurstable},
		{"pod-level resources win", corev1.PodSpec{
			Resources:  &corev1.ResourceRequirements{Limits: rl("cpu", "2", "memory", "4Gi")},
			Containers: []corev1.Container{ctr(nil, nil)}}, corev1.PodQOSGuaranteed},
		{"pod-level hugepages only: containers decide", corev1.PodSpec{
			Resources:  &corev1.ResourceRequirements{Limits: rl("hugepages-2Mi", "2Mi")},
			Containers: []corev1.Container{ctr(nil, nil)}}, corev1.PodQOSBestEffort},
	} {
		if got := QOSClass(&tc.spec); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestOOMScoreAdj(t *testing.T) {
	gi := int64(1 << 30)
	for _, tc := range []struct {
		class    corev1.PodQOSClass
		req, cap int64
		want     int
	}{
		{corev1.PodQOSGuaranteed, 2 * gi, 16 * gi, -997},
		{corev1.PodQOSBestEffort, 0, 16 * gi, 1000},
		{corev1.PodQOSBurstable, 2 * gi, 16 * gi, 875},  // 1000 - 1000 x 2/16
		{corev1.PodQOSBurstable, 0, 16 * gi, 999},       // never equal to BestEffort
		{corev1.PodQOSBurstable, 16 * gi, 16 * gi, 3},   // never below Guaranteed + 1000
		{corev1.PodQOSBurstable, 100 * gi, 16 * gi, 3},  // request above capacity
		{corev1.PodQOSBurstable, gi / 10, 16 * gi, 994}, // 1000 - 6.25, truncated
	} {
		if got := OOMScoreAdj(tc.class, tc.req, tc.cap); got != tc.want {
			t.Errorf("%s req %d cap %d: %d, want %d", tc.class, tc.req, tc.cap, got, tc.want)
		}
	}
}

func TestEffectiveRequests(t *testing.T) {
	r := EffectiveRequests(corev1.ResourceRequirements{
		Requests: rl("memory", "1Gi"),
		Limits:   rl("cpu", "900m", "memory", "2Gi"),
	})
	if MilliCPU(r) != 900 || Memory(r) != 1<<30 {
		t.Errorf("cpu %dm, memory %d: want the cpu limit as request and the written memory request", MilliCPU(r), Memory(r))
	}
	if FormatMilliCPU(900) != "900m" || FormatMilliCPU(2000) != "2" {
		t.Errorf("FormatMilliCPU: %q %q", FormatMilliCPU(900), FormatMilliCPU(2000))
	}
}
