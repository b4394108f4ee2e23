package network

import (
	"backfire.dev/backfire/internal/exactjson"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/rules"
)

// BF701: an Istio DestinationRule whose outlier detection may eject every
// endpoint of its host with panic routing off (a failure all pods share
// becomes 503s from every client's sidecar, outlasting the cause), or
// cannot eject a single one (the circuit breaker it configures never
// opens).
var BF701 = rules.Register(&rules.Rule{
	ID:       "BF701",
	Slug:     "outlier-detection-ejects-every-endpoint",
	Severity: finding.Warning,
	Summary:  "An Istio DestinationRule's outlier detection may eject every endpoint with panic routing off, so a failure all pods share becomes 503s from every client's sidecar; or, below the host count Envoy needs, it can eject none.",
	Kinds:    []string{"DestinationRule"},
	Reads:    []string{"Service", index.PodSets},
	Evidence: []any{BF701Evidence{}},
	Fix:      rules.FixFields{Sets: []string{"spec.trafficPolicy.outlierDetection", "spec.subsets"}, From: []string{"spec.trafficPolicy.outlierDetection", "spec.subsets"}, FromDocument: true},
	Check:    &rules.Scan{Run: runBF701},
})

// Envoy's and Istio's defaults (envoy api/envoy/config/cluster/v3
// outlier_detection.proto; Istio pilot cluster_traffic_policy.go
// applyOutlierDetection: minHealthPercent becomes healthy_panic_threshold,
// 0 unless set).
const (
	envoyMaxEjectionPercent = 10
	envoyConsecutive5xx     = 5
	envoyBaseEjection       = 30 * time.Second
	envoyInterval           = 10 * time.Second
	fixMinHealthPercent     = 50
)

// cluster is one Envoy cluster the rule's policies make: the host's, or a
// subset's, with the outlier detection it gets.
type cluster struct {
	name string
	od   *object.OutlierDetection
	// own: the subset writes its own outlierDetection (else it inherits
	// the host's); subset is its index, -1 for the host.
	own    bool
	subset int
	n      int32 // endpoints, 0 when not known
	known  bool
}

// judged is a cluster's outlier detection in numbers.
type judged struct {
	c                cluster
	m, h, c5, gw     int32
	base, interval   time.Duration
	ejectable        int32
	ejectsAll, inert bool
}

func judge(c cluster) (judged, bool) {
	od := c.od
	if od == nil {
		return judged{}, false
	}
	j := judged{c: c, m: envoyMaxEjectionPercent, c5: envoyConsecutive5xx, base: envoyBaseEjection, interval: envoyInterval}
	if od.MaxEjectionPercent != nil && *od.MaxEjectionPercent > 0 {
		j.m = min(*od.MaxEjectionPercent, 100)
	}
	if od.MinHealthPercent != nil {
		j.h = *od.MinHealthPercent
		if j.h < 0 {
			j.h = 50 // Istio leaves Envoy's default
		}
	}
	switch {
	case od.Consecutive5xxErrors != nil:
		j.c5 = *od.Consecutive5xxErrors
	case od.ConsecutiveErrors != nil:
		j.c5 = *od.ConsecutiveErrors
	}
	if od.ConsecutiveGatewayErrors != nil {
		j.gw = *od.ConsecutiveGatewayErrors
	}
	if d, ok := object.Duration(od.BaseEjectionTime); ok {
		j.base = d
	}
	if d, ok := object.Duration(od.Interval); ok {
		j.interval = d
	}
	if j.c5 <= 0 && j.gw <= 0 {
		return judged{}, false // nothing ejects
	}
	// Envoy ejects while 100 x (ejected + 1) / hosts <= max_ejection_percent
	// (outlier_detection_impl.cc ejectHost): floor(M x N / 100) hosts.
	if c.known {
		j.ejectable = j.m * c.n / 100
	}
	j.ejectsAll = j.m >= 100 && j.h == 0 && (!c.known || c.n >= 1)
	j.inert = c.known && c.n >= 2 && j.ejectable == 0
	return j, j.ejectsAll || j.inert
}

func runBF701(p *rules.Pass) {
	dr, ok := p.Object.Typed.(*object.DestinationRule)
	if !ok {
		return
	}
	var top *object.OutlierDetection
	if dr.Spec.TrafficPolicy != nil {
		top = dr.Spec.TrafficPolicy.OutlierDetection
	}
	svc, svcNS := hostService(p, dr.Spec.Host)
	clusters := []cluster{{name: "host " + dr.Spec.Host, od: top, subset: -1}}
	clusters[0].n, clusters[0].known = endpoints(p, svc, svcNS, nil)
	for i, s := range dr.Spec.Subsets {
		c := cluster{name: "subset " + s.Name, od: top, subset: i}
		if s.TrafficPolicy != nil && s.TrafficPolicy.OutlierDetection != nil {
			c.od, c.own = s.TrafficPolicy.OutlierDetection, true
		}
		c.n, c.known = endpoints(p, svc, svcNS, s.Labels)
		clusters = append(clusters, c)
	}
	var bad []judged
	for _, c := range clusters {
		if j, ok := judge(c); ok {
			bad = append(bad, j)
		}
	}
	if len(bad) == 0 {
		return
	}
	j := bad[0]
	for _, b := range bad[1:] {
		if b.ejectsAll && !j.ejectsAll {
			j = b // the outage before the inert breaker
		}
	}
	var others []string
	for _, b := range bad {
		if b.c.name != j.c.name {
			others = append(others, b.c.name)
		}
	}
	p.Report(report701(p, dr, j, others, svc, bad))
}

// hostService finds the Service a host names: a short name in the rule's
// namespace, name.namespace, or the cluster-local FQDN. Wildcards and
// other hosts (ServiceEntries) are not looked up.
func hostService(p *rules.Pass, host string) (*corev1.Service, string) {
	if strings.Contains(host, "*") || host == "" {
		return nil, ""
	}
	parts := strings.Split(host, ".")
	name, ns := parts[0], p.Object.Namespace
	switch {
	case len(parts) == 1:
	case len(parts) == 2, len(parts) >= 3 && parts[2] == "svc":
		ns = parts[1]
	default:
		return nil, ""
	}
	o := p.Index.Get("Service", ns, name)
	if o == nil {
		return nil, ns
	}
	s, _ := o.Typed.(*corev1.Service)
	return s, ns
}

// endpoints counts the pods behind the Service with the subset's labels
// too, at the lowest count; known is false when the input does not say.
func endpoints(p *rules.Pass, svc *corev1.Service, ns string, subset map[string]string) (int32, bool) {
	if svc == nil || len(svc.Spec.Selector) == 0 {
		return 0, false
	}
	l := labels.Set{}
	for k, v := range svc.Spec.Selector {
		l[k] = v
	}
	for k, v := range subset {
		l[k] = v
	}
	var n int32
	sets := p.Index.Selected(ns, labels.SelectorFromSet(l))
	if len(sets) == 0 {
		return 0, false
	}
	for _, ps := range sets {
		if ps.PerNode {
			return 0, false
		}
		n += ps.Replicas.Min
	}
	return n, true
}

func report701(p *rules.Pass, dr *object.DestinationRule, j judged, others []string, svc *corev1.Service, bad []judged) rules.Report {
	c := j.c
	pods, every := "an unknown number of pods (no Service and workloads of the input behind the host)", "every endpoint (the input does not say how many pods serve it)"
	if c.known {
		pods = fmt.Sprintf("%d %s", c.n, plural(int(c.n), "pod", "pods"))
		every = fmt.Sprintf("all %d pods", c.n)
		if c.n == 1 {
			every = "its only pod"
		}
	}
	ev := BF701Evidence{Host: dr.Spec.Host, Cluster: c.name, Endpoints: c.n, MaxEjectionPercent: j.m, Ejectable: j.ejectable,
		MinHealthPercent: j.h, Consecutive5xx: max(j.c5, 0), ConsecutiveGateway: max(j.gw, 0), BaseEjectionSecond: int(j.base / time.Second)}
	trigger := triggerText(j)
	also := ""
	if len(others) > 0 {
		also = " (also " + strings.Join(others, ", ") + ")"
	}
	var msg string
	var mech []string
	sev := finding.None
	if j.ejectsAll {
		ev.Case = "ejects-all"
		msg = fmt.Sprintf("outlier detection of %s%s may eject %s (maxEjectionPercent %d) with minHealthPercent 0, which turns Envoy's panic routing off: a failure every pod shares (its database, a downstream API) gets each ejected after %s, and every client's sidecar answers 503 \"no healthy upstream\" itself, for %s and longer after the cause is gone",
			c.name, also, every, j.m, trigger, secs(j.base))
		mech = []string{
			fmt.Sprintf("Istio copies maxEjectionPercent (%d) into Envoy's max_ejection_percent and minHealthPercent (%d) into the cluster's healthy_panic_threshold; it sets 0 when the rule does not, \"as its not typically applicable in k8s environments with few pods per service\" (pilot cluster_traffic_policy.go, applyOutlierDetection).", j.m, j.h),
			fmt.Sprintf("Envoy ejects a host while 100 x (ejected + 1) / hosts <= max_ejection_percent (outlier_detection_impl.cc, ejectHost): at %d %% that is every host, %s.", j.m, pods),
			fmt.Sprintf("When every pod fails the same way, each is ejected by each client sidecar after %s (the sweep that returns ejected hosts runs every %s).", trigger, secs(j.interval)),
			"With the panic threshold at 0 Envoy never falls back to the ejected hosts: the client's sidecar answers 503 itself (response flag UH, \"no healthy upstream\"), even to requests the pods could have served.",
			fmt.Sprintf("An ejection lasts baseEjectionTime x the times the host was ejected (%s, %s, ...), at most max(300 s, baseEjectionTime) (outlier_detection.proto): after the cause recovers, the service stays down until the ejections expire, and a second failure doubles it.", secs(j.base), secs(2*j.base)),
		}
	} else {
		ev.Case = "inert"
		sev = finding.Info
		msg = fmt.Sprintf("outlier detection of %s%s can eject no host: maxEjectionPercent %d of %s allows floor(%d x %d / 100) = 0, and Envoy from 1.28 checks that limit before the first ejection too: the circuit breaker this rule configures never opens",
			c.name, also, j.m, pods, j.m, c.n)
		mech = []string{
			fmt.Sprintf("Envoy ejects a host only while 100 x (ejected + 1) / hosts <= max_ejection_percent (outlier_detection_impl.cc, ejectHost): 100 x 1 / %d = %d %% > %d %%, so not even the first.", c.n, 100/c.n, j.m),
			"Before Envoy 1.28 the first host was ejected whatever the percentage; 1.28.0 made it check the limit on the first ejection too (runtime guard envoy.reloadable_features.check_mep_on_first_eject, later removed), and 1.31 added always_eject_one_host for the old behaviour, which Istio does not set.",
			fmt.Sprintf("maxEjectionPercent unset is Envoy's default, 10 %%, which ejects nothing below 10 hosts; a failing pod keeps its share of requests (1 in %d).", c.n),
		}
	}
	mech = append(mech, "The ejection counters and the decision are per client sidecar: each client ejects on what it saw itself.")
	if c.own {
		ev.Cluster = c.name + " (its own outlierDetection)"
	}
	return rules.Report{
		Path:      odPath(c),
		Severity:  sev,
		Message:   msg,
		Mechanism: mech,
		Evidence:  ev,
		Fix:       fix701(p.Object, dr, bad),
	}
}

func triggerText(j judged) string {
	var t []string
	if j.c5 > 0 {
		if j.c5 == 1 {
			t = append(t, "a single 5xx answer")
		} else {
			t = append(t, fmt.Sprintf("%d 5xx answers in a row", j.c5))
		}
	}
	if j.gw > 0 {
		t = append(t, fmt.Sprintf("%d gateway errors (502, 503, 504) in a row", j.gw))
	}
	return strings.Join(t, " or ")
}

func odPath(c cluster) *field.Path {
	od := field.NewPath("spec", "trafficPolicy", "outlierDetection")
	if c.own {
		od = field.NewPath("spec", "subsets").Index(c.subset).Child("trafficPolicy", "outlierDetection")
	}
	if c.od != nil && c.od.MaxEjectionPercent != nil {
		return od.Child("maxEjectionPercent")
	}
	return od
}

// fix701 changes every outlierDetection of the rule that a judged cluster
// uses: panic routing at 50 % where every host may go, and a
// maxEjectionPercent that ejects at least one host and keeps one, from
// the counts it knows. Subsets are a list without a merge key, so their
// patch carries the whole list, read from the document as written.
func fix701(o *object.Object, dr *object.DestinationRule, bad []judged) *finding.Fix {
	type change struct{ minHealth, maxEject int32 }
	changes := map[int]*change{} // by subset index, -1 for the host's policy
	at := func(c cluster) int {
		if c.own {
			return c.subset
		}
		return -1
	}
	for _, j := range bad {
		ch := changes[at(j.c)]
		if ch == nil {
			ch = &change{}
			changes[at(j.c)] = ch
		}
		switch {
		case j.ejectsAll:
			ch.minHealth = fixMinHealthPercent
			if j.c.known && j.c.n >= 2 {
				keep := 100 * (j.c.n - 1) / j.c.n
				if ch.maxEject == 0 || keep < ch.maxEject {
					ch.maxEject = keep
				}
			}
		case j.inert:
			need := (100 + j.c.n - 1) / j.c.n // ceil(100 / N): one host
			if need > ch.maxEject {
				ch.maxEject = need
			}
		}
	}
	set := func(od map[string]any, ch *change) {
		if ch.minHealth > 0 {
			od["minHealthPercent"] = ch.minHealth
		}
		if ch.maxEject > 0 {
			od["maxEjectionPercent"] = ch.maxEject
		}
	}
	spec := map[string]any{}
	var desc []string
	if ch := changes[-1]; ch != nil {
		od := map[string]any{}
		set(od, ch)
		spec["trafficPolicy"] = map[string]any{"outlierDetection": od}
		desc = append(desc, "the host's outlierDetection: "+changeText(ch.minHealth, ch.maxEject))
	}
	if len(changes) > 1 || changes[-1] == nil {
		var doc struct {
			Spec struct {
				Subsets []map[string]any `json:"subsets"`
			} `json:"spec"`
		}
		if err := exactjson.Unmarshal(o.Doc.JSON, &doc); err == nil && len(doc.Spec.Subsets) == len(dr.Spec.Subsets) {
			var list []any
			for i, s := range doc.Spec.Subsets {
				if ch := changes[i]; ch != nil {
					tp, _ := s["trafficPolicy"].(map[string]any)
					od, _ := tp["outlierDetection"].(map[string]any)
					set(od, ch)
					desc = append(desc, fmt.Sprintf("subset %s's outlierDetection: %s", dr.Spec.Subsets[i].Name, changeText(ch.minHealth, ch.maxEject)))
				}
				list = append(list, s)
			}
			spec["subsets"] = list
		}
	}
	why := []string{"Set " + strings.Join(desc, "; ") + "."}
	panicOn, ejectOne := false, false
	for _, ch := range changes {
		panicOn, ejectOne = panicOn || ch.minHealth > 0, ejectOne || ch.maxEject > 0
	}
	if panicOn {
		why = append(why, "minHealthPercent 50 turns panic routing on: when fewer than half the hosts are healthy, Envoy sends to all of them again instead of answering 503 itself. For a service whose 500s come from a dependency all pods share, consecutiveGatewayErrors (502, 503, 504 from the pod) instead of consecutive5xxErrors keeps a shared failure from ejecting them at all.")
	}
	if ejectOne {
		why = append(why, "The maxEjectionPercent given ejects at least one host and keeps at least one, for the pods the input runs behind it: recompute it if the count changes.")
	}
	return &finding.Fix{
		Description: strings.Join(why, " "),
		Type:        finding.StrategicMergePatch,
		Patch:       fix.At("spec", spec),
	}
}

// secs says a duration in seconds, as the other findings do: "180 s".
func secs(d time.Duration) string {
	if d%time.Second != 0 {
		return d.String()
	}
	return fmt.Sprintf("%d s", d/time.Second)
}

func changeText(minHealth, maxEject int32) string {
	var t []string
	if minHealth > 0 {
		t = append(t, fmt.Sprintf("minHealthPercent %d", minHealth))
	}
	if maxEject > 0 {
		t = append(t, fmt.Sprintf("maxEjectionPercent %d", maxEject))
	}
	return strings.Join(t, ", ")
}
