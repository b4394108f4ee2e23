package kubectl

import (
	"bytes"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	cliprinters "k8s.io/cli-runtime/pkg/printers"
	"k8s.io/kubernetes/pkg/apis/core"
	corev1conv "k8s.io/kubernetes/pkg/apis/core/v1"
	"k8s.io/kubernetes/pkg/printers"
	"k8s.io/kubernetes/pkg/printers/internalversion"

	"backfire.dev/backfire/internal/diagnose"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/observe/printed"
)

// kubectl get prints what the API server's table generator gives
// (k8s.io/kubernetes pkg/printers/internalversion: printPod, printEvent)
// with kubectl's table printer (k8s.io/cli-runtime pkg/printers): both
// are run here, on the internal types the server converts to.
func getTable(t *testing.T, obj runtime.Object, wide, allNamespaces bool) string {
	t.Helper()
	gen := printers.NewTableGenerator().With(internalversion.AddHandlers)
	table, err := gen.GenerateTable(obj, printers.GenerateOptions{Wide: wide})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	p := cliprinters.NewTablePrinter(cliprinters.PrintOptions{Wide: wide, WithNamespace: allNamespaces})
	if err := p.PrintObj(table, &b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func internalPods(t *testing.T, pods ...*corev1.Pod) *core.PodList {
	t.Helper()
	out := &core.PodList{}
	for _, p := range pods {
		var in core.Pod
		if err := corev1conv.Convert_v1_Pod_To_core_Pod(p, &in, nil); err != nil {
			t.Fatal(err)
		}
		out.Items = append(out.Items, in)
	}
	return out
}

func internalEvents(t *testing.T, evs []corev1.Event) *core.EventList {
	t.Helper()
	out := &core.EventList{}
	for i := range evs {
		var in core.Event
		if err := corev1conv.Convert_v1_Event_To_core_Event(&evs[i], &in, nil); err != nil {
			t.Fatal(err)
		}
		out.Items = append(out.Items, in)
	}
	return out
}

// kubectl get pods, plain, -o wide and -A: every row's name, namespace,
// READY, STATUS, restart count, last restart's age and the pod's age are
// read back.
func TestGetPodsRoundTrip(t *testing.T) {
	now := time.Now()
	db, _ := seed(now)
	db.CreationTimestamp = metav1.NewTime(now.Add(-4*time.Hour - 2*time.Minute))
	crash := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "worker-7d9c-x2x", Namespace: "jobs", CreationTimestamp: metav1.NewTime(now.Add(-10 * time.Minute))},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "worker"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "worker", RestartCount: 6,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled",
				StartedAt: metav1.NewTime(now.Add(-3 * time.Minute)), FinishedAt: metav1.NewTime(now.Add(-2 * time.Minute))}}}}},
	}
	pending := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "api-0", Namespace: "billing", CreationTimestamp: metav1.NewTime(now.Add(-90 * time.Second))},
		Spec:       corev1.PodSpec{InitContainers: []corev1.Container{{Name: "migrate"}}, Containers: []corev1.Container{{Name: "api"}, {Name: "proxy"}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending,
			InitContainerStatuses: []corev1.ContainerStatus{{Name: "migrate", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CreateContainerConfigError"}}}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "api", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}},
				{Name: "proxy", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}}},
	}
	want := map[string]struct {
		ns, ready, status string
		restarts          int
		lastRestart, age  time.Duration // zero: not printed
	}{
		db.Name:      {"registry", "0/1", "Running", 42, 5*time.Minute + 8*time.Second, 4*time.Hour + 2*time.Minute},
		crash.Name:   {"jobs", "0/1", "CrashLoopBackOff", 6, 2 * time.Minute, 10 * time.Minute},
		pending.Name: {"billing", "0/2", "Init:CreateContainerConfigError", 0, 0, 90 * time.Second},
	}
	list := internalPods(t, db, crash, pending)
	for _, v := range []struct{ wide, all bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		out := getTable(t, list, v.wide, v.all)
		c := printed.Read("pods.txt", []byte(out))
		if len(c.Pods) != len(want) || len(c.Unread) > 0 {
			t.Fatalf("wide %v, -A %v: %d pods (unread %v) in\n%s", v.wide, v.all, len(c.Pods), c.Unread, out)
		}
		for _, p := range c.Pods {
			w, ok := want[p.Name]
			if !ok || p.Row == nil {
				t.Errorf("pod %q (row %v) in\n%s", p.Name, p.Row, out)
				continue
			}
			if v.all && p.Namespace != w.ns {
				t.Errorf("%s: namespace %q, want %q", p.Name, p.Namespace, w.ns)
			}
			r := p.Row
			if r.Ready != w.ready || r.Status != w.status || r.Restarts != w.restarts {
				t.Errorf("%s: row %+v, want %+v in\n%s", p.Name, r, w, out)
			}
			for _, a := range []struct {
				name string
				got  *printed.Age
				true time.Duration
			}{{"last restart", r.LastRestart, w.lastRestart}, {"age", r.Age, w.age}} {
				if a.true == 0 {
					if a.got != nil {
						t.Errorf("%s: %s %v printed where kubectl prints none", p.Name, a.name, a.got.D)
					}
					continue
				}
				if a.got == nil || a.true < a.got.D-2*time.Second || a.true > a.got.D+a.got.Slack+2*time.Second {
					t.Errorf("%s: %s %+v does not hold %v", p.Name, a.name, a.got, a.true)
				}
			}
		}
	}
}

// kubectl get events, plain, -o wide and -A: the object, type, reason,
// message and ages are read back; -o wide adds the count and the first
// time, which the plain table does not print.
func TestGetEventsRoundTrip(t *testing.T) {
	now := time.Now()
	_, evs := seed(now)
	list := internalEvents(t, evs)
	for _, v := range []struct{ wide, all bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		out := getTable(t, list, v.wide, v.all)
		c := printed.Read("events.txt", []byte(out))
		if len(c.Loose) != len(evs) {
			t.Fatalf("wide %v, -A %v: %d events in\n%s", v.wide, v.all, len(c.Loose), out)
		}
		for i, g := range c.Loose {
			w := evs[i]
			// kubectl's table printer prints a cell of several lines as
			// its first line and "..." (k8s.io/cli-runtime printers
			// tableprinter): the rest is not in the output to read.
			msg := strings.TrimSpace(w.Message)
			if first, _, multi := strings.Cut(msg, "\n"); multi {
				msg = first + "..."
			}
			if g.Kind != "Pod" || g.Name != "registry-database-0" || g.Reason != w.Reason || g.Type != w.Type || g.Message != msg {
				t.Errorf("wide %v, -A %v: event %+v, want %s %s %q in\n%s", v.wide, v.all, g, w.Type, w.Reason, msg, out)
			}
			if v.all && g.Namespace != "registry" {
				t.Errorf("namespace %q", g.Namespace)
			}
			if v.wide && (g.Count != int(w.Count) || g.FieldPath != w.InvolvedObject.FieldPath) {
				t.Errorf("wide: count %d, field path %q; want %d %q", g.Count, g.FieldPath, w.Count, w.InvolvedObject.FieldPath)
			}
			checks := []struct {
				age  *printed.Age
				true time.Duration
			}{{g.LastAge, now.Sub(w.LastTimestamp.Time)}}
			if v.wide {
				checks = append(checks, struct {
					age  *printed.Age
					true time.Duration
				}{g.FirstAge, now.Sub(w.FirstTimestamp.Time)})
			}
			for _, a := range checks {
				if a.age == nil || a.true < a.age.D-2*time.Second || a.true > a.age.D+a.age.Slack+2*time.Second {
					t.Errorf("%s: age %+v does not hold %v", w.Reason, a.age, a.true)
				}
			}
		}
	}
}

// kubectl get pods beside kubectl get events, as people paste them: the
// Killing row's verdict stands beside the pod's row.
func TestGetPodsAndEventsDiagnosed(t *testing.T) {
	now := time.Now()
	db, evs := seed(now)
	db.CreationTimestamp = metav1.NewTime(now.Add(-4*time.Hour - 2*time.Minute))
	paste := "$ kubectl get pods -n registry\n" + getTable(t, internalPods(t, db), false, false) +
		"$ kubectl get events -n registry\n" + getTable(t, internalEvents(t, evs), false, false)
	res, err := diagnose.Run(diagnose.Input{Pods: diagnose.Stream{Name: "paste.txt", Data: []byte(paste)}})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range res.Findings {
		found = found || f.Rule == "BF501" && f.Severity == finding.Warning && f.Container == "database" &&
			strings.Contains(f.Message, "killed container database 1 time for failing its liveness probe")
	}
	if !found || len(res.Errors) > 0 || len(res.Pods) != 1 {
		t.Errorf("errors %v, %d pods, findings %v in\n%s", res.Errors, len(res.Pods), res.Findings, paste)
	}
}
