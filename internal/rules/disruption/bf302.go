package disruption

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"backfire.dev/backfire/internal/classify"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/rules/podfacts"
)

// BF302: a StatefulSet of a clustered server whose readiness needs the
// cluster, with pods created one by one (OrderedReady), or with peers that
// find each other through a headless Service that publishes only Ready
// pods: after all pods restart, the cluster never forms again.
var BF302 = rules.Register(&rules.Rule{
	ID:       "BF302",
	Slug:     "quorum-statefulset-cannot-form",
	Severity: finding.Error,
	Summary:  "A clustered StatefulSet's readiness needs its peers, which are created, or resolvable, only once it is Ready: after all pods restart, the cluster never forms again.",
	Kinds:    []string{"StatefulSet", "Service"},
	Reads:    []string{index.Autoscalers, index.PodSets, "StatefulSet", "ConfigMap"},
	Evidence: []any{BF302Evidence{}},
	Fix:      rules.FixFields{Sets: []string{"spec.podManagementPolicy", "spec.publishNotReadyAddresses"}, From: []string{"spec.podManagementPolicy", "spec.publishNotReadyAddresses"}},
	Check:    &rules.Scan{Run: runBF302},
})

func runBF302(p *rules.Pass) {
	switch v := p.Object.Typed.(type) {
	case *appsv1.StatefulSet:
		orderedReady(p, v)
	case *corev1.Service:
		unresolvablePeers(p, v)
	}
}

// clustered is a StatefulSet whose readiness needs its cluster.
type clustered struct {
	o        *object.Object
	sts      *appsv1.StatefulSet
	t        *object.PodTemplate
	c        *corev1.Container
	need     classify.PeerNeed
	replicas int32
}

// clusterOf finds the container whose readiness needs the cluster, for a
// StatefulSet of at least two pods.
func clusterOf(p *rules.Pass, o *object.Object, sts *appsv1.StatefulSet, replicas int32) (clustered, bool) {
	t := o.PodTemplate()
	if t == nil || replicas < 2 {
		return clustered{}, false
	}
	for _, ct := range t.Containers() {
		if n, ok := classify.NeedsPeers(ct.Container, ct.ReadinessProbe, podfacts.Files(p, t, ct.Container)); ok {
			return clustered{o: o, sts: sts, t: t, c: ct.Container, need: n, replicas: replicas}, true
		}
	}
	return clustered{}, false
}

func policyOf(sts *appsv1.StatefulSet) appsv1.PodManagementPolicyType {
	if sts.Spec.PodManagementPolicy == "" {
		return appsv1.OrderedReadyPodManagement
	}
	return sts.Spec.PodManagementPolicy
}

func (c clustered) evidence(kase string) BF302Evidence {
	return BF302Evidence{
		Case: kase, StatefulSet: c.o.Name, Replicas: c.replicas, Quorum: c.replicas/2 + 1,
		Server: c.need.Check.Server, Readiness: c.need.Evidence, Needs: c.need.Check.Needs + " (" + c.need.Check.Source + ")",
		PodManagementPolicy: string(policyOf(c.sts)),
	}
}

// when says which restarts the deadlock follows.
func (c clustered) when() string {
	if c.need.Check.AfterRestart {
		return "after every restart of all its pods (a drain of their nodes, a power loss, a namespace restore)"
	}
	return "on the first install, and after every restart of all its pods"
}

func (c clustered) assumptions() []string {
	if !c.need.Check.Assumed {
		return nil
	}
	return []string{fmt.Sprintf("That %s passes only %s was not read in %s's source (%s): it is assumed. If it is local to the node, suppress this finding with the annotation backfire.dev/ignore: BF302.",
		c.need.Evidence, c.need.Check.Needs, c.need.Check.Server, c.need.Check.Source)}
}

func orderedReady(p *rules.Pass, sts *appsv1.StatefulSet) {
	if policyOf(sts) != appsv1.OrderedReadyPodManagement {
		return
	}
	c, ok := clusterOf(p, p.Object, sts, p.Index.ReplicasOf(p.Object).Min)
	if !ok {
		return
	}
	s := c.need.Check.Server
	msg := fmt.Sprintf("podManagementPolicy OrderedReady creates pod 1 only once pod 0 is Ready, and pod 0's readiness (%s) passes only %s: with %d replicas the %s cluster never forms %s",
		c.need.Evidence, c.need.Check.Needs, c.replicas, s, c.when())
	mech := []string{
		fmt.Sprintf("With OrderedReady (the default) the StatefulSet controller creates pod k+1 only when pod k is Running and Ready (processReplica, in its monotonic mode): %s-1 waits for %s-0.", p.Object.Name, p.Object.Name),
		fmt.Sprintf("Container %s of pod 0 is %s, and its readiness probe passes only %s: %s.", c.c.Name, s, c.need.Check.Needs, c.need.Evidence),
	}
	if c.need.Check.AfterRestart {
		mech = append(mech, fmt.Sprintf("On the first install pod 0 boots alone as a new cluster and the others join one by one. After all %d pods stopped, pod 0 may not have been the last to stop: it waits for peers that the controller creates only after pod 0 is Ready, gives up, exits, and starts waiting again, forever.", c.replicas))
	} else {
		mech = append(mech, fmt.Sprintf("Pod 0 alone is 1 member of %d, below a quorum of %d/2 + 1 = %d: its readiness never passes, pod 1 is never created, and the cluster never forms, on the first install as after a restart of all pods.", c.replicas, c.replicas, c.replicas/2+1))
	}
	if s == "RabbitMQ" {
		mech = append(mech, "RabbitMQ's maintainers call it a known issue and answer \"set PodManagementPolicy to Parallel\" (rabbitmq/cluster-operator#609; the boot log repeats \"Waiting for Mnesia tables for 30000 ms, 9 retries left\", #480), and RabbitMQ's clustering guide recommends Parallel on Kubernetes; Bitnami's RabbitMQ README documents the deadlock beside a chart that still defaults to OrderedReady.")
	} else {
		mech = append(mech, "The cure is the one RabbitMQ's maintainers give for the same deadlock: create the pods in Parallel (rabbitmq/cluster-operator#609).")
	}
	path := field.NewPath("spec", "podManagementPolicy")
	p.Report(rules.Report{
		Path:        path,
		Container:   c.c.Name,
		Message:     msg,
		Mechanism:   mech,
		Evidence:    c.evidence("ordered-ready"),
		Assumptions: c.assumptions(),
		Fix: &finding.Fix{
			Description: fmt.Sprintf("Create the pods in parallel: podManagementPolicy Parallel, so that all %d start and can find each other. The field cannot be changed on an existing StatefulSet: delete it without its pods (kubectl delete statefulset %s --cascade=orphan), then apply the changed manifest, which adopts them. Or make the readiness probe local to the node (RabbitMQ: rabbitmq-diagnostics ping), so that pod 0 is Ready while it waits.",
				c.replicas, p.Object.Name),
			Type:  finding.StrategicMergePatch,
			Patch: fix.At("spec", map[string]any{"podManagementPolicy": string(appsv1.ParallelPodManagement)}),
		},
	})
}

// unresolvablePeers: a headless Service that governs a clustered
// StatefulSet whose pods address their peers through it, without
// publishNotReadyAddresses. The EndpointSlice controller marks a pod ready
// only when it is Ready, and DNS gives no record for an endpoint that is
// not ready: peers cannot resolve each other until they are Ready, and
// they are Ready only once they have found each other.
func unresolvablePeers(p *rules.Pass, svc *corev1.Service) {
	if svc.Spec.ClusterIP != corev1.ClusterIPNone || svc.Spec.PublishNotReadyAddresses {
		return
	}
	for _, ps := range p.Index.ServedBy(p.Object.Namespace, p.Object.Name) {
		o := p.Index.Get("StatefulSet", ps.Namespace, ps.Name)
		if o == nil {
			continue
		}
		sts, _ := o.Typed.(*appsv1.StatefulSet)
		c, ok := clusterOf(p, o, sts, ps.Replicas.Min)
		if !ok {
			continue
		}
		addr, ok := peerAddress(p, c.t, p.Object.Name)
		if !ok {
			continue
		}
		reportUnresolvable(p, c, addr)
		return
	}
}

func reportUnresolvable(p *rules.Pass, c clustered, addr string) {
	svc, s := p.Object.Name, c.need.Check.Server
	msg := fmt.Sprintf("headless Service %s publishes only Ready pods, and StatefulSet %s's %s pods name their peers through it (%s) while their readiness (%s) passes only %s: peers cannot resolve each other until they are Ready, so after all pods restart the cluster never forms, whatever the pod management policy",
		svc, c.o.Name, s, addr, c.need.Evidence, c.need.Check.Needs)
	mech := []string{
		fmt.Sprintf("StatefulSet %s's pods get DNS names <pod>.%s through this headless Service, and they use them for their peers: %s.", c.o.Name, svc, addr),
		"The EndpointSlice controller marks an endpoint ready only when the pod is Ready, unless the Service sets publishNotReadyAddresses (k8s.io/endpointslice: ready = publishNotReadyAddresses || (serving && !terminating)); DNS (CoreDNS's kubernetes plugin) gives no record for an endpoint that is not ready.",
		fmt.Sprintf("Each pod's readiness passes only %s (%s): not Ready, its name does not resolve, so its peers cannot reach it, so no pod becomes Ready.", c.need.Check.Needs, c.need.Evidence),
		fmt.Sprintf("Parallel does not help: all %d pods start, and none can resolve another. A first install may still form if the pods find each other by IP (or by another Service); a restart of all pods, which gives them new IPs, does not.", c.replicas),
	}
	ev := c.evidence("peers-unresolvable")
	ev.Service, ev.PeerAddress = svc, addr
	p.Report(rules.Report{
		Path:        field.NewPath("spec", "clusterIP"),
		Message:     msg,
		Mechanism:   mech,
		Evidence:    ev,
		Assumptions: c.assumptions(),
		Fix: &finding.Fix{
			Description: fmt.Sprintf("Publish not-ready pods on the peer Service: publishNotReadyAddresses true on %s, so that every pod's name resolves from its start. Clients that should reach only Ready pods use a separate Service without it.", svc),
			Type:        finding.StrategicMergePatch,
			Patch:       fix.At("spec", map[string]any{"publishNotReadyAddresses": true}),
		},
	})
}

// envRef matches a $(VAR) reference of a container's env, args or
// command, which the kubelet expands from the container's env.
var envRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// peerAddress finds where the pods name a peer through the Service svc: a
// DNS name <pod>.svc[.ns...] in a ConfigMap mounted in the pod, an env
// value (its $(VAR) references expanded from the env before it), or an
// argument.
func peerAddress(p *rules.Pass, t *object.PodTemplate, svc string) (string, bool) {
	name := regexp.MustCompile(`[A-Za-z0-9)}_-]\.` + regexp.QuoteMeta(svc) + `($|[.:"'\s,/])`)
	for _, v := range t.Spec.Volumes {
		if v.ConfigMap == nil {
			continue
		}
		o := p.Index.Get("ConfigMap", t.Owner.Namespace, v.ConfigMap.Name)
		if o == nil {
			continue
		}
		cm, ok := o.Typed.(*corev1.ConfigMap)
		if !ok {
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(cm.Data)) {
			text := cm.Data[k]
			if loc := name.FindStringIndex(text); loc != nil {
				return fmt.Sprintf("ConfigMap %s, key %s: %q", v.ConfigMap.Name, k, lineAt(text, loc[0])), true
			}
		}
	}
	all := append(append([]corev1.Container{}, t.Spec.InitContainers...), t.Spec.Containers...)
	for _, c := range all {
		env := map[string]string{}
		for _, e := range c.Env {
			v := envRef.ReplaceAllStringFunc(e.Value, func(m string) string {
				if x, ok := env[m[2:len(m)-1]]; ok {
					return x
				}
				return m
			})
			if e.ValueFrom == nil {
				env[e.Name] = v // a fieldRef's value is the pod's own: left as $(VAR)
			}
			if name.MatchString(v) {
				return fmt.Sprintf("env %s=%s of container %s", e.Name, v, c.Name), true
			}
		}
		for _, a := range append(append([]string{}, c.Command...), c.Args...) {
			if name.MatchString(a) {
				return fmt.Sprintf("an argument of container %s, %q", c.Name, firstLine(a)), true
			}
		}
	}
	return "", false
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}

func lineAt(text string, off int) string {
	start := strings.LastIndexByte(text[:off], '\n') + 1
	end := strings.IndexByte(text[off:], '\n')
	if end < 0 {
		return strings.TrimSpace(text[start:])
	}
	return strings.TrimSpace(text[start : off+end])
}
