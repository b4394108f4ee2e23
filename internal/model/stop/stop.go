// Package stop holds the kubelet's stop arithmetic: how long a container
// has between its stop signal and SIGKILL, given the grace period and the
// preStop hook, before and after Kubernetes 1.28 changed how they add up.
package stop

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// MinimumGracePeriod is the least the kubelet leaves a container after its
// preStop hook (pkg/kubelet/kuberuntime/kuberuntime_manager.go
// minimumGracePeriodInSeconds).
const MinimumGracePeriod = 2

// DefaultGracePeriod is terminationGracePeriodSeconds when unset.
const DefaultGracePeriod = corev1.DefaultTerminationGracePeriodSeconds

// Window is how long a container has from the stop signal to SIGKILL when
// its pod is deleted (a rolling update, a drain, an eviction, a scale
// down) with grace period g and a preStop hook that runs p seconds.
//
// From Kubernetes 1.28 the grace period covers the hook too: killContainer
// takes the deletion's grace, subtracts what the hook used and floors the
// rest at 2 s (kuberuntime_container.go, v1.28.0 :729-742; kubernetes PR
// #115835). Up to 1.27 the deletion's grace was applied after the hook
// (v1.27.0 :729-740), so the container got all of g after it.
func Window(g, p int) (since128, before128 int) {
	return max(g-min(p, g), MinimumGracePeriod), g
}

// PreStopSeconds is how long container c's preStop hook runs, when the
// hook says: the sleep action, or an exec of sleep (directly or as the only
// command of sh -c). ok is false for a hook whose duration is not written
// (an httpGet, a script), and there is no hook at all when has is false.
func PreStopSeconds(c *corev1.Container) (seconds int, ok, has bool) {
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil {
		return 0, false, false
	}
	h := c.Lifecycle.PreStop
	switch {
	case h.Sleep != nil:
		return int(h.Sleep.Seconds), true, true
	case h.Exec != nil:
		argv := h.Exec.Command
		if len(argv) >= 3 && isShell(argv[0]) && strings.HasPrefix(argv[1], "-") && strings.Contains(argv[1], "c") {
			argv = strings.Fields(argv[2])
		}
		if len(argv) == 2 && (argv[0] == "sleep" || strings.HasSuffix(argv[0], "/sleep")) {
			if n, err := strconv.Atoi(strings.TrimSuffix(argv[1], "s")); err == nil && n >= 0 {
				return n, true, true
			}
		}
	}
	return 0, false, true
}

func isShell(p string) bool {
	switch p[strings.LastIndexByte(p, '/')+1:] {
	case "sh", "bash", "ash", "dash":
		return true
	}
	return false
}
