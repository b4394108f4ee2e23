package supply

import (
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/rules"
)

// BF902: a container that pulls its image, at every start, from a
// registry the cluster itself runs. A restart then needs the registry up;
// when the container is part of the registry (its server, its database),
// the restart needs the very service that is down.
var BF902 = rules.Register(&rules.Rule{
	ID:       "BF902",
	Slug:     "image-pull-always-needs-in-cluster-registry",
	Severity: finding.Warning,
	Summary:  "A container pulls its image at every start from a registry that runs in the same cluster: its restarts need that registry up, and the registry's own pods cannot restart while it is down.",
	Kinds:    object.WorkloadKinds,
	Reads:    []string{index.PodSets, index.WorkloadRefs, "Service", "Ingress", "ConfigMap", "Deployment", "DaemonSet", "ReplicationController"},
	Evidence: []any{BF902Evidence{}},
	Fix:      rules.FixFields{Sets: []string{"container.imagePullPolicy"}, From: []string{"container.imagePullPolicy", "container.image"}},
	Check:    &rules.Scan{Run: runBF902},
})

// The KEP-1755 ConfigMap that names a cluster's local registry
// (kubernetes/enhancements keps/sig-cluster-lifecycle/generic/1755).
const (
	hostingNamespace = "kube-public"
	hostingName      = "local-registry-hosting"
	hostingKey       = "localRegistryHosting.v1"
)

// served is a host[:port] the input makes reach a registry workload.
type served struct {
	host     string // lower case, with the port when the way in has one
	how      string
	registry index.PodSet
	server   string // Registry.Name
}

func runBF902(p *rules.Pass) {
	t := p.PodTemplate()
	if t == nil {
		return
	}
	regs := p.Index.PodSetsWhere(registries)
	if len(regs) == 0 {
		return
	}
	hosts := servedHosts(p, regs)
	if len(hosts) == 0 {
		return
	}
	for _, ct := range containers(t) {
		c := ct.c
		im, ok := parseImage(c.Image)
		if !ok {
			continue
		}
		policy, written := pullPolicy(c, im)
		if policy != corev1.PullAlways {
			continue
		}
		s, ok := match(hosts, im.host)
		if !ok {
			continue
		}
		own := partOf(p.Object, t, s.registry)
		p.Report(report(p, t, ct, im, written, s, own))
	}
}

// pullPolicy is the policy in effect: the written one, or the API
// server's default (pkg/apis/core/v1 defaults.go SetDefaults_Container:
// Always when the tag is latest, which ParseImageName gives an image
// without tag or digest; IfNotPresent otherwise).
func pullPolicy(c *corev1.Container, im image) (corev1.PullPolicy, bool) {
	if c.ImagePullPolicy != "" {
		return c.ImagePullPolicy, true
	}
	if im.tag == "latest" || (im.tag == "" && im.digest == "") {
		return corev1.PullAlways, false
	}
	return corev1.PullIfNotPresent, false
}

// servedHosts lists the hosts through which the input reaches each
// registry workload: its Services' DNS names (and cluster IPs), their node
// ports on localhost, the registry containers' host ports, the Ingress
// hosts in front of those Services, Harbor's external URL, and the hosts
// of the local-registry-hosting ConfigMap.
func servedHosts(p *rules.Pass, regs []index.PodSet) []served {
	var out []served
	add := func(host, how string, r index.PodSet) {
		out = append(out, served{host: strings.ToLower(host), how: how, registry: r, server: serverOf(r)})
	}
	for _, r := range regs {
		var svcs []string
		for _, o := range p.Index.InNamespace("Service", r.Namespace) {
			svc, ok := o.Typed.(*corev1.Service)
			if !ok || len(svc.Spec.Selector) == 0 || !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(r.Labels)) {
				continue
			}
			svcs = append(svcs, o.Name)
			ns := nsOf(r.Namespace)
			for _, port := range svc.Spec.Ports {
				pt := strconv.Itoa(int(port.Port))
				for _, name := range []string{o.Name, o.Name + "." + ns, o.Name + "." + ns + ".svc", o.Name + "." + ns + ".svc.cluster.local"} {
					add(name+":"+pt, "Service "+o.Name+" (the cluster DNS name, port "+pt+")", r)
					if port.Port == 80 || port.Port == 443 {
						add(name, "Service "+o.Name+" (the cluster DNS name)", r)
					}
				}
				if ip := svc.Spec.ClusterIP; ip != "" && ip != corev1.ClusterIPNone {
					add(ip+":"+pt, "Service "+o.Name+"'s cluster IP", r)
				}
				if port.NodePort != 0 {
					np := strconv.Itoa(int(port.NodePort))
					add("localhost:"+np, "Service "+o.Name+"'s node port "+np+" on the node itself", r)
					add("127.0.0.1:"+np, "Service "+o.Name+"'s node port "+np+" on the node itself", r)
				}
			}
		}
		if o := p.Index.Get(r.Kind, r.Namespace, r.Name); o != nil {
			if rt := o.PodTemplate(); rt != nil {
				for _, c := range rt.Containers() {
					for _, port := range c.Ports {
						if port.HostPort != 0 {
							hp := strconv.Itoa(int(port.HostPort))
							add("localhost:"+hp, fmt.Sprintf("container %s's host port %s", c.Name, hp), r)
							add("127.0.0.1:"+hp, fmt.Sprintf("container %s's host port %s", c.Name, hp), r)
						}
					}
					for _, e := range envOf(p, rt, c.Container) {
						if e.name == "EXT_ENDPOINT" {
							if h := urlHost(e.value); h != "" {
								add(h, "Harbor's EXT_ENDPOINT ("+e.from+")", r)
							}
						}
					}
				}
			}
		}
		for _, o := range p.Index.InNamespace("Ingress", r.Namespace) {
			ing, ok := o.Typed.(*networkingv1.Ingress)
			if !ok {
				continue
			}
			for _, rule := range ing.Spec.Rules {
				if rule.Host == "" || rule.HTTP == nil {
					continue
				}
				for _, path := range rule.HTTP.Paths {
					if b := path.Backend.Service; b != nil && slices.Contains(svcs, b.Name) {
						add(rule.Host, "Ingress "+o.Name+" to Service "+b.Name, r)
						break
					}
				}
			}
		}
	}
	if len(out) > 0 {
		if o := p.Index.Get("ConfigMap", hostingNamespace, hostingName); o != nil {
			if cm, ok := o.Typed.(*corev1.ConfigMap); ok {
				var h struct {
					Host                     string `json:"host"`
					HostFromContainerRuntime string `json:"hostFromContainerRuntime"`
				}
				if yaml.Unmarshal([]byte(cm.Data[hostingKey]), &h) == nil {
					for _, host := range []string{h.Host, h.HostFromContainerRuntime} {
						if host != "" {
							add(host, "ConfigMap kube-public/local-registry-hosting, the cluster's announced local registry", regs[0])
						}
					}
				}
			}
		}
	}
	return out
}

// match finds the way in that an image's host is: the host with its port,
// or without one for a Service or Ingress name.
func match(hosts []served, host string) (served, bool) {
	host = strings.ToLower(host)
	for _, s := range hosts {
		if s.host == host {
			return s, true
		}
	}
	return served{}, false
}

// partOf: the workload belongs to the registry's own release (the
// registry itself, or what it needs: its database, its cache), by the
// instance or release label they share, or is the registry workload.
func partOf(o *object.Object, t *object.PodTemplate, r index.PodSet) bool {
	if o.Kind == r.Kind && o.Name == r.Name && nsOf(o.Namespace) == nsOf(r.Namespace) {
		return true
	}
	if nsOf(o.Namespace) != nsOf(r.Namespace) {
		return false
	}
	for _, k := range []string{"app.kubernetes.io/instance", "release"} {
		if v := r.Labels[k]; v != "" && t.Meta.Labels[k] == v {
			return true
		}
	}
	return false
}

// pulled is a container whose image a start of the pod pulls: the
// long-running ones, and the init containers, which run again whenever
// the pod is created anew (after an eviction, on another node).
type pulled struct {
	c    *corev1.Container
	path *field.Path
	init bool
}

func containers(t *object.PodTemplate) []pulled {
	var out []pulled
	for _, ct := range t.Containers() {
		out = append(out, pulled{c: ct.Container, path: ct.Path()})
	}
	for i := range t.Spec.InitContainers {
		c := &t.Spec.InitContainers[i]
		if !object.IsSidecar(c) {
			out = append(out, pulled{c: c, path: t.SpecPath.Child("initContainers").Index(i), init: true})
		}
	}
	return out
}

func report(p *rules.Pass, t *object.PodTemplate, ct pulled, im image, written bool, s served, own bool) rules.Report {
	c := ct.c
	reg := fmt.Sprintf("%s (%s %s)", s.server, s.registry.Kind, s.registry.Name)
	why := "imagePullPolicy Always"
	if !written {
		why = "no imagePullPolicy and the tag latest, so the API server sets Always"
		if im.tag == "" {
			why = "no imagePullPolicy and no tag (latest), so the API server sets Always"
		}
	}
	ev := BF902Evidence{Image: c.Image, PullPolicy: string(corev1.PullAlways), PolicyWritten: written, RegistryHost: im.host,
		Registry: reg, ServedAs: s.how, PartOfRegistry: own}
	sev := finding.Warning
	what, starts := "container", "every start of the container, a restart after a crash or an eviction included,"
	if ct.init {
		what, starts = "init container", "every new pod (after an eviction, a node failure, a rollout)"
	}
	msg := fmt.Sprintf("%s %s pulls %s from %s, which %s serves in this cluster, with %s: %s needs that registry up",
		what, c.Name, c.Image, im.host, reg, why, starts)
	if own {
		sev = finding.Error
		msg = fmt.Sprintf("%s %s pulls %s from %s, the %s it is part of, with %s: when this pod restarts the registry it belongs to is down or short of it, so the restart waits on the service that cannot answer",
			what, c.Name, c.Image, im.host, reg, why)
	}
	mech := []string{
		fmt.Sprintf("The image comes from %s, and the input makes that host reach %s: %s.", im.host, reg, s.how),
		"With imagePullPolicy Always the kubelet does not look at the images already on the node (pkg/kubelet/images/image_manager.go, imagePullPrecheck returns at once for PullAlways): every container start pulls, or at least asks the registry for the manifest.",
		"When the registry does not answer, the start fails with ErrImagePull and the container waits in ImagePullBackOff, retried after 10 s doubling to 300 s (pkg/kubelet/kubelet.go, imageBackOffPeriod and MaxImageBackOff), although the image is on the node; after the registry is back, the pod may wait up to 300 s more.",
	}
	if own {
		mech = append(mech, fmt.Sprintf("This workload is part of %s's release: the registry needs it to serve (a registry's database and cache included). Once it is down, the registry cannot serve the image it needs to start again: it stays in ImagePullBackOff until someone changes the pull policy or the image by hand.", s.server),
			"The seed incident behind BF101 is this dependency in the other direction: a registry's PostgreSQL in a restart loop made every image pull of the cluster fail; with Always on the database's own image, the loop would have had no way out at all.")
	} else {
		mech = append(mech, fmt.Sprintf("So a crash, an OOM kill or an eviction of this container while %s is down or restarting (BF101 on its database, a node drain) is an outage of this workload too, until the registry serves again.", s.server))
	}
	mech = append(mech, "Linters ask for the opposite (kube-score container-image-pull-policy, Polaris pullPolicyNotAlways, Kyverno always-pull-images): Always guarantees that a moving tag is re-read and that the pull credentials are checked, at the price of a dependency on the registry at every start. backfire disagrees where that registry runs on the cluster it serves.")
	desc := fmt.Sprintf("Pull only when the image is missing: imagePullPolicy IfNotPresent on %s %s, so a restart on the same node starts from the image already there.", what, c.Name)
	if im.tag == "latest" || (im.tag == "" && im.digest == "") {
		desc += " With a moving tag (latest, or none) IfNotPresent keeps whichever version the node pulled first: pin a version or a digest (image@sha256:...) as well."
	}
	if own {
		desc += " Better still, pull the registry's own components from a registry outside the cluster, or preload them on the nodes."
	}
	desc += " On Kubernetes 1.35 and later (KubeletEnsureSecretPulledImages, beta and on) a private image can still be pulled again when the pod's pull credentials differ from those it was pulled with."
	return rules.Report{
		At:        t.Owner,
		Path:      pullPath(ct.path, written),
		Container: c.Name,
		Severity:  sev,
		Message:   msg,
		Mechanism: mech,
		Evidence:  ev,
		Fix: &finding.Fix{
			Description: desc,
			Type:        finding.StrategicMergePatch,
			Patch:       fix.ContainerPatch(t, c.Name, map[string]any{"imagePullPolicy": string(corev1.PullIfNotPresent)}),
		},
	}
}

func pullPath(container *field.Path, written bool) *field.Path {
	if written {
		return container.Child("imagePullPolicy")
	}
	return container.Child("image")
}

// env is a container's environment variable with its value as written,
// and where it was read.
type env struct{ name, value, from string }

// envOf reads a container's env values and the keys of the ConfigMaps it
// takes with envFrom.
func envOf(p *rules.Pass, t *object.PodTemplate, c *corev1.Container) []env {
	var out []env
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			out = append(out, env{e.Name, e.Value, "env of container " + c.Name})
		}
	}
	for _, ef := range c.EnvFrom {
		if ef.ConfigMapRef == nil {
			continue
		}
		o := p.Index.Get("ConfigMap", t.Owner.Namespace, ef.ConfigMapRef.Name)
		if o == nil {
			continue
		}
		if cm, ok := o.Typed.(*corev1.ConfigMap); ok {
			for _, k := range slices.Sorted(maps.Keys(cm.Data)) {
				out = append(out, env{ef.Prefix + k, cm.Data[k], "ConfigMap " + o.Name})
			}
		}
	}
	return out
}

// urlHost is the host[:port] of a URL ("https://core.harbor.domain").
func urlHost(u string) string {
	rest := u
	if i := strings.Index(u, "://"); i >= 0 {
		rest = u[i+3:]
	}
	host, _, _ := strings.Cut(rest, "/")
	if h, port, err := net.SplitHostPort(host); err == nil && (port == "443" || port == "80") {
		return h
	}
	return host
}

func serverOf(r index.PodSet) string {
	for _, c := range r.Containers {
		if reg, ok := registryOf(c.Image); ok {
			return reg.Name
		}
	}
	return "a registry"
}

func nsOf(ns string) string {
	if ns == "" {
		return "default"
	}
	return ns
}
