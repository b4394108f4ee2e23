package cluster

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"backfire.dev/backfire/internal/cluster/clustertest"
)

// ReadPod reads the pod with its status, only its events, and the logs of
// each container (the previous one only after a restart), with GET
// requests only.
func TestReadPodIsReadOnlyAndComplete(t *testing.T) {
	env := clustertest.Shared(t)
	ctx := context.Background()
	ns := env.FreshNamespace(t, "readpod")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "db-0", Namespace: ns},
		Spec: corev1.PodSpec{NodeName: "worker-1", Containers: []corev1.Container{{Name: "db", Image: "postgres:16"}, {Name: "exporter", Image: "postgres-exporter:0.15"}}}}
	created, err := env.Typed.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "db", RestartCount: 2, Image: "postgres:16", ImageID: "x"}, {Name: "exporter", Image: "postgres-exporter:0.15", ImageID: "y"}}
	if _, err := env.Typed.CoreV1().Pods(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i, about := range []string{"db-0", "db-1"} {
		ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: about + ".killing", Namespace: ns},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: about, Namespace: ns, FieldPath: "spec.containers{db}"},
			Reason:         "Killing", Message: "Container db failed liveness probe, will be restarted", Count: int32(3 + i), Type: "Normal",
			Source: corev1.EventSource{Component: "kubelet"}, FirstTimestamp: metav1.Now(), LastTimestamp: metav1.Now()}
		if _, err := env.Typed.CoreV1().Events(ns).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	var mu sync.Mutex
	var methods []string
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			mu.Lock()
			methods = append(methods, req.Method)
			mu.Unlock()
			return rt.RoundTrip(req)
		})
	})
	var logs []string
	res, err := ReadPod(ctx, PodOptions{Config: cfg, Context: ctxName, Namespace: ns, Name: "db-0",
		Logs: func(_ context.Context, namespace, pod, container string, previous bool) ([]byte, error) {
			logs = append(logs, container+map[bool]string{true: "/previous", false: ""}[previous])
			return []byte("log of " + container), nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range methods {
		if m != http.MethodGet {
			t.Errorf("ReadPod sent %s", m)
		}
	}
	if len(res.Pod.Documents) != 1 || res.Pod.Name != "cluster://"+ctxName+"/"+ns+"/Pod/db-0" || !strings.Contains(string(res.Pod.Documents[0].JSON), `"restartCount":2`) {
		t.Errorf("pod %s: %s", res.Pod.Name, res.Pod.Documents[0].JSON)
	}
	var list corev1.EventList
	if err := json.Unmarshal(res.Events, &list); err != nil || len(list.Items) != 1 || list.Items[0].InvolvedObject.Name != "db-0" || list.Kind != "List" {
		t.Errorf("events %v: %s", err, res.Events)
	}
	if strings.Join(logs, " ") != "db/previous db exporter" || len(res.Logs) != 3 || res.Logs[0].Name != "cluster://"+ctxName+"/"+ns+"/Pod/db-0/db/previous" {
		t.Errorf("logs asked %v, read %+v", logs, res.Logs)
	}

	// Through the API server, with no kubelet behind the node: notes, not
	// a failure.
	res, err = ReadPod(ctx, PodOptions{Config: env.Config, Context: ctxName, Namespace: ns, Name: "db-0"})
	if err != nil || len(res.Notes) != 3 || len(res.Logs) != 0 {
		t.Errorf("no kubelet: %v, notes %q, logs %+v", err, res.Notes, res.Logs)
	}
	if _, err := ReadPod(ctx, PodOptions{Config: env.Config, Context: ctxName, Namespace: ns, Name: "db-9"}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("missing pod: %v", err)
	}
}
