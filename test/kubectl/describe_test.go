package kubectl

import (
	"bytes"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubectl/pkg/cmd/events"
	"k8s.io/kubectl/pkg/describe"

	"backfire.dev/backfire/internal/diagnose"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/observe/printed"
)

// The pod of seed 003, as the API returns it, with its events.
func seed(now time.Time) (*corev1.Pod, []corev1.Event) {
	grace := int64(120)
	probe := func(delay int32) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"/docker-healthcheck.sh"}}},
			InitialDelaySeconds: delay, TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3}
	}
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "registry-database-0", Namespace: "registry", UID: "u-1"},
		Spec: corev1.PodSpec{TerminationGracePeriodSeconds: &grace, NodeName: "master-1",
			Containers: []corev1.Container{{Name: "database", Image: "docker.io/goharbor/harbor-db:v2.13.0",
				LivenessProbe: probe(300), ReadinessProbe: probe(1),
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")},
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi")}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "database", RestartCount: 42,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(5 * time.Minute)}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 141, Reason: "Error",
				StartedAt: at(5*time.Minute + 332*time.Second), FinishedAt: at(5*time.Minute + 8*time.Second)}}}}},
	}
	ref := corev1.ObjectReference{Kind: "Pod", Namespace: "registry", Name: pod.Name, UID: pod.UID, FieldPath: "spec.containers{database}"}
	ev := func(name, reason, typ, msg string, count int32, first, last time.Duration) corev1.Event {
		return corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "registry"}, InvolvedObject: ref, Reason: reason, Type: typ, Message: msg,
			Count: count, FirstTimestamp: at(first), LastTimestamp: at(last), Source: corev1.EventSource{Component: "kubelet", Host: "master-1"}}
	}
	return pod, []corev1.Event{
		ev("e1", "Unhealthy", "Warning", "Liveness probe failed: psql: error: connection to server at \"127.0.0.1\", port 5432 failed: FATAL:  the database system is not yet accepting connections\nDETAIL:  Consistent recovery state has not been yet reached.\n", 123, 3*time.Hour+56*time.Minute+48*time.Second, 4*time.Minute+58*time.Second),
		ev("e2", "Killing", "Normal", "Container database failed liveness probe, will be restarted", 42, 4*time.Hour+time.Minute+59*time.Second, 4*time.Minute+57*time.Second),
		ev("e3", "Started", "Normal", "Started container database", 1, 4*time.Minute+47*time.Second, 4*time.Minute+47*time.Second),
	}
}

// kubectl describe pod, printed by kubectl's own describer from a fake
// API server, is read back field for field.
func TestDescribePodRoundTrip(t *testing.T) {
	now := time.Now()
	pod, evs := seed(now)
	objs := []runtime.Object{pod}
	for i := range evs {
		objs = append(objs, &evs[i])
	}
	client := fake.NewClientset(objs...)
	out, err := (&describe.PodDescriber{Interface: client}).Describe("registry", pod.Name, describe.DescriberSettings{ShowEvents: true, ChunkSize: 500})
	if err != nil {
		t.Fatal(err)
	}
	c := printed.Read("describe.txt", []byte(out))
	if len(c.Pods) != 1 {
		t.Fatalf("%d pods in\n%s", len(c.Pods), out)
	}
	p := c.Pods[0]
	if p.Name != pod.Name || p.Namespace != "registry" || len(p.Containers) != 1 {
		t.Fatalf("pod %+v in\n%s", p, out)
	}
	ct := p.Containers[0]
	if ct.Name != "database" || !ct.Complete || ct.RestartCount.Value != "42" || ct.LastState.ExitCode.Value != "141" || ct.LastState.Reason.Value != "Error" {
		t.Errorf("container %+v in\n%s", ct, out)
	}
	for _, tc := range []struct {
		got  *printed.Probe
		want *corev1.Probe
	}{{ct.Liveness, pod.Spec.Containers[0].LivenessProbe}, {ct.Readiness, pod.Spec.Containers[0].ReadinessProbe}} {
		w := tc.want
		if g := tc.got; g == nil || g.Delay != int(w.InitialDelaySeconds) || g.Timeout != int(w.TimeoutSeconds) || g.Period != int(w.PeriodSeconds) ||
			g.Success != int(w.SuccessThreshold) || g.Failure != int(w.FailureThreshold) {
			t.Errorf("probe %+v, want %+v, in\n%s", g, w, out)
		}
	}
	if ct.Limits["memory"].Value != "2Gi" || ct.Requests["cpu"].Value != "500m" {
		t.Errorf("resources %+v %+v", ct.Limits, ct.Requests)
	}
	checkEvents(t, p.Events, evs, out)

	pods, _, errs := c.Observe()
	if len(errs) > 0 || len(pods) != 1 {
		t.Fatalf("observe: %v", errs)
	}
	got := pods[0].Pod
	if l := got.Spec.Containers[0].LivenessProbe; l == nil || l.Exec == nil || l.Exec.Command[0] != "/docker-healthcheck.sh" {
		t.Errorf("rebuilt liveness %+v", l)
	}
	lt := got.Status.ContainerStatuses[0].LastTerminationState.Terminated
	if run := lt.FinishedAt.Sub(lt.StartedAt.Time); run != 324*time.Second {
		t.Errorf("last run %v, want 324s", run)
	}

	// And the diagnosis reads seed 003's loop from it.
	res, err := diagnose.Run(diagnose.Input{Pods: diagnose.Stream{Name: "describe.txt", Data: []byte(out)}})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range res.Findings {
		if f.Rule == "BF501" && f.Severity == finding.Error && strings.Contains(f.Message, "match the liveness probe's 300 + 3 x 10 = 330 s") {
			found = true
		}
	}
	if !found || len(res.Errors) > 0 {
		t.Errorf("BF501 not read from kubectl's describe: %v %v", res.Errors, res.Findings)
	}
}

// A pod that never starts: an init container, a startup probe over HTTPS
// on a named host, a container waiting on a missing Secret.
func TestDescribeWaitingPodRoundTrip(t *testing.T) {
	now := time.Now()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "billing-api-0", Namespace: "billing", UID: "u-2"},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "migrate", Image: "ghcr.io/example/migrate:1", Command: []string{"sh", "-c", "migrate up"}}},
			Containers: []corev1.Container{{Name: "api", Image: "ghcr.io/example/billing-api:3.1.0",
				StartupProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Scheme: corev1.URISchemeHTTPS, Host: "127.0.0.1", Path: "/healthz", Port: intstr.FromString("https")}},
					PeriodSeconds: 5, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 60},
				LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8443)}}, PeriodSeconds: 10, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3}}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending,
			InitContainerStatuses: []corev1.ContainerStatus{{Name: "migrate", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed",
				StartedAt: metav1.NewTime(now.Add(-3 * time.Minute)), FinishedAt: metav1.NewTime(now.Add(-170 * time.Second))}}}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "api", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CreateContainerConfigError"}}}}},
	}
	ev := corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e1", Namespace: "billing"}, Reason: "Failed", Type: "Warning", Message: `Error: secret "billing-db" not found`,
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "billing", Name: pod.Name, UID: pod.UID, FieldPath: "spec.containers{api}"},
		Count:          16, FirstTimestamp: metav1.NewTime(now.Add(-3 * time.Minute)), LastTimestamp: metav1.NewTime(now.Add(-5 * time.Second)), Source: corev1.EventSource{Component: "kubelet"}}
	out, err := (&describe.PodDescriber{Interface: fake.NewClientset(pod, &ev)}).Describe("billing", pod.Name, describe.DescriberSettings{ShowEvents: true, ChunkSize: 500})
	if err != nil {
		t.Fatal(err)
	}
	c := printed.Read("describe.txt", []byte(out))
	if len(c.Pods) != 1 || len(c.Pods[0].Containers) != 2 {
		t.Fatalf("pods %+v in\n%s", c.Pods, out)
	}
	init, api := c.Pods[0].Containers[0], c.Pods[0].Containers[1]
	if !init.Init || init.State.Reason.Value != "Completed" || len(init.Command) != 3 || init.Command[2].Value != "migrate up" {
		t.Errorf("init container %+v in\n%s", init, out)
	}
	if api.State.Kind.Value != "Waiting" || api.State.Reason.Value != "CreateContainerConfigError" || api.Startup == nil || api.Startup.Failure != 60 || api.Liveness == nil || api.Liveness.Handler != "tcp-socket" {
		t.Errorf("api container %+v in\n%s", api, out)
	}
	pods, _, errs := c.Observe()
	if len(errs) > 0 || len(pods) != 1 {
		t.Fatalf("observe: %v", errs)
	}
	sp := pods[0].Pod.Spec.Containers[0].StartupProbe
	if sp == nil || sp.HTTPGet == nil || sp.HTTPGet.Scheme != corev1.URISchemeHTTPS || sp.HTTPGet.Host != "127.0.0.1" || sp.HTTPGet.Port.String() != "https" || sp.HTTPGet.Path != "/healthz" {
		t.Errorf("startup probe %+v from %q", sp.HTTPGet, api.Startup.Text)
	}
	if lp := pods[0].Pod.Spec.Containers[0].LivenessProbe; lp == nil || lp.TCPSocket == nil || lp.TCPSocket.Port.IntValue() != 8443 {
		t.Errorf("liveness %+v", lp)
	}
	checkEvents(t, c.Pods[0].Events, []corev1.Event{ev}, out)
	res, err := diagnose.Run(diagnose.Input{Pods: diagnose.Stream{Name: "describe.txt", Data: []byte(out)}})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range res.Findings {
		found = found || f.Rule == "BF502" && f.Container == "api" && strings.Contains(f.Message, "the container never started")
	}
	if !found {
		t.Errorf("BF502 not read: %v", res.Findings)
	}
}

// checkEvents compares printed rows with the events kubectl printed.
func checkEvents(t *testing.T, got []printed.Event, want []corev1.Event, out string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d events, want %d, in\n%s", len(got), len(want), out)
	}
	byReason := map[string]printed.Event{}
	for _, e := range got {
		byReason[e.Reason+e.Type] = e
	}
	for _, w := range want {
		g, ok := byReason[w.Reason+w.Type]
		if !ok {
			t.Errorf("no %s event in\n%s", w.Reason, out)
			continue
		}
		if g.Count != int(w.Count) || !strings.HasPrefix(strings.TrimSpace(w.Message), firstLine(g.Message)) || g.Message != strings.TrimSpace(w.Message) {
			t.Errorf("event %+v, want %q x%d", g, w.Message, w.Count)
		}
		if g.LastAge == nil || g.FirstAge == nil {
			t.Errorf("event %s without ages: %+v", w.Reason, g)
			continue
		}
		// The printed ages are truncated: the true age is within the slack.
		for _, a := range []struct {
			age  *printed.Age
			true time.Duration
		}{{g.LastAge, time.Since(w.LastTimestamp.Time)}, {g.FirstAge, time.Since(w.FirstTimestamp.Time)}} {
			if a.true < a.age.D-2*time.Second || a.true > a.age.D+a.age.Slack+2*time.Second {
				t.Errorf("%s: age %v (+%v) does not hold %v", w.Reason, a.age.D, a.age.Slack, a.true)
			}
		}
	}
}

func firstLine(s string) string { return strings.SplitN(s, "\n", 2)[0] }

// kubectl events (kubectl 1.26 and later) prints its own table.
func TestKubectlEventsRoundTrip(t *testing.T) {
	_, evs := seed(time.Now())
	var b bytes.Buffer
	p := events.NewEventPrinter(false, true)
	if err := p.PrintObj(&corev1.EventList{Items: evs}, &b); err != nil {
		t.Fatal(err)
	}
	c := printed.Read("events.txt", b.Bytes())
	if len(c.Loose) != len(evs) {
		t.Fatalf("%d events in\n%s", len(c.Loose), b.String())
	}
	for _, e := range c.Loose {
		if e.Kind != "Pod" || e.Name != "registry-database-0" || e.Namespace != "registry" {
			t.Errorf("object %s/%s in %s: %+v", e.Kind, e.Name, e.Namespace, e)
		}
	}
	checkEvents(t, c.Loose, evs, b.String())
}
