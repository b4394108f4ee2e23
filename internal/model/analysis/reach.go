package analysis

import (
	"backfire.dev/backfire/internal/lazyregexp"
	"fmt"
	"net"
	"slices"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// urlHost finds the host of each URL in a text.
var urlHost = lazyregexp.New(`(?i)\b[a-z][a-z0-9+.-]*://(?:[^@/\s'"]*@)?(\[[^\]]+\]|[^/\s:'"?#)]+)`)

// Reach is whether a web or job metric measures the service the Rollout
// runs.
type Reach struct {
	Reaches bool
	// Why names what it reaches through, or why it measures neither version.
	Why string
}

// ReachOf decides whether a web or job metric can measure the Rollout's
// service: it names the Rollout or one of its Services (whole names), an
// in-cluster host (inCluster), or takes
// a value backfire does not know. A job that names none of them (a sleep,
// a fixed check) and a web call to a host outside the cluster (a status
// page, a third-party API) measure neither version. Metrics backends
// (Prometheus, Datadog...) are not judged here: their queries are.
//
// text is the metric's text with its args substituted, used the args it
// used.
func ReachOf(q Query, text string, used []Arg, names []string) Reach {
	if q.Provider != "web" && q.Provider != "job" {
		return Reach{Reaches: true}
	}
	for _, a := range used {
		if !a.Known {
			return Reach{true, fmt.Sprintf("its %s takes args.%s, %s", q.What, a.Name, a.Text)}
		}
	}
	for _, n := range names {
		if n != "" && NamesWord(text, n) {
			return Reach{true, fmt.Sprintf("its %s names %s", q.What, n)}
		}
	}
	var outside []string
	for _, m := range urlHost().FindAllStringSubmatch(text, -1) {
		host := strings.ToLower(strings.Trim(m[1], "[]"))
		if apiServer(host) {
			return Reach{false, fmt.Sprintf("its %s calls the Kubernetes API server (%s), which serves neither version", q.What, host)}
		}
		if inCluster(host) {
			return Reach{true, fmt.Sprintf("its %s calls %s in the cluster", q.What, host)}
		}
		if !slices.Contains(outside, host) {
			outside = append(outside, host)
		}
	}
	if strings.Contains(text, ".svc") {
		return Reach{true, fmt.Sprintf("its %s names a cluster Service", q.What)}
	}
	if len(outside) > 0 {
		return Reach{false, fmt.Sprintf("its %s calls %s, outside the cluster, and names neither the Rollout nor its Services: it measures neither version", q.What, strings.Join(outside, ", "))}
	}
	return Reach{false, fmt.Sprintf("its %s names no URL, Service or argument: it measures neither version", q.Provider)}
}

// NamesWord reports whether name occurs in text not as part of a longer
// name ("web" is not in "webhook" nor in "web-canary").
func NamesWord(text, name string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], name)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(name)
		if (start == 0 || !nameByte(text[start-1])) && (end == len(text) || !nameByte(text[end])) {
			return true
		}
		i = start + 1
	}
}

func nameByte(b byte) bool {
	return b == '-' || b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// apiServer reports whether host is the Kubernetes API server's Service,
// which every cluster has in the default namespace: a check of it (its
// /version, /healthz) measures the control plane, not the Rollout.
func apiServer(host string) bool {
	switch strings.TrimSuffix(host, ".") {
	case "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local":
		return true
	}
	return false
}

// inCluster reports whether a host can be a name the cluster resolves: an
// address, a bare or namespaced Service name ("prometheus.monitoring"),
// anything under .svc or .local; a host under an ICANN top-level domain
// (.com, .io, .uk) is outside. Only the last label is asked: a private
// suffix of the list (githubusercontent.com, github.io) is as public as
// its TLD, though PublicSuffix reports it with icann false.
func inCluster(host string) bool {
	if net.ParseIP(host) != nil || !strings.Contains(host, ".") {
		return true
	}
	for _, s := range []string{".svc", ".local", ".internal"} {
		if strings.HasSuffix(host, s) || strings.Contains(host, s+".") {
			return true
		}
	}
	tld := host[strings.LastIndexByte(host, '.')+1:]
	_, icann := publicsuffix.PublicSuffix(tld)
	return !icann
}
