package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"backfire.dev/backfire/internal/load"
)

// LogFunc returns a container's log: the running instance's, or with
// previous the one that ran before its last restart (kubectl logs -p).
type LogFunc func(ctx context.Context, namespace, pod, container string, previous bool) ([]byte, error)

// PodOptions say which pod to read.
type PodOptions struct {
	Config    *rest.Config
	Context   string
	Namespace string
	Name      string
	// Logs fetches logs; nil means through the API server (the kubelet
	// serves them; a cluster without one has none).
	Logs LogFunc
	// MaxLogBytes caps each log read (the newest bytes are kept).
	MaxLogBytes int64
}

// ContainerLog is one log read from the cluster.
type ContainerLog struct {
	Container string
	Name      string // cluster://ctx/ns/Pod/name/container[/previous]
	Data      []byte
}

// PodResult is what the cluster holds about one pod.
type PodResult struct {
	Pod    load.File // the pod with its status, as kubectl get -o yaml prints it
	Events []byte    // its events, as kubectl get events -o json prints them
	// EventsName names Events for messages: cluster://ctx/ns/events/pod.
	EventsName string
	Logs       []ContainerLog
	// Notes are logs that could not be read: the diagnosis goes on
	// without them.
	Notes []string
}

// DefaultMaxLogBytes is the tail of each log read.
const DefaultMaxLogBytes = 8 << 20

// ReadPod reads a pod, its events and its containers' current and previous
// logs. It only ever sends GET requests.
func ReadPod(ctx context.Context, opts PodOptions) (*PodResult, error) {
	cfg := rest.CopyConfig(opts.Config)
	cfg.Wrap(readOnly)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	src := fmt.Sprintf("cluster://%s/%s", opts.Context, opts.Namespace)
	pod, err := cs.CoreV1().Pods(opts.Namespace).Get(ctx, opts.Name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("%s: get pod %s: %w", src, opts.Name, err)
	}
	pod.ManagedFields = nil
	pod.APIVersion, pod.Kind = "v1", "Pod"
	y, err := yaml.Marshal(pod)
	if err != nil {
		return nil, err
	}
	res := &PodResult{Pod: load.Parse(src+"/Pod/"+pod.Name, y), EventsName: src + "/events/" + pod.Name}

	sel := fields.Set{"involvedObject.kind": "Pod", "involvedObject.name": pod.Name, "involvedObject.namespace": pod.Namespace}.AsSelector().String()
	evs, err := cs.CoreV1().Events(opts.Namespace).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		res.Notes = append(res.Notes, fmt.Sprintf("%s: events not read: %v", src, err))
	} else {
		evs.APIVersion, evs.Kind = "v1", "List"
		for i := range evs.Items {
			evs.Items[i].APIVersion, evs.Items[i].Kind = "v1", "Event"
			evs.Items[i].ManagedFields = nil
		}
		if res.Events, err = json.MarshalIndent(evs, "", "    "); err != nil {
			return nil, err
		}
	}

	logs := opts.Logs
	if logs == nil {
		logs = apiLogs(cs, opts.MaxLogBytes)
	}
	statuses := append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...)
	for _, st := range statuses {
		for _, previous := range []bool{true, false} {
			if previous && st.RestartCount == 0 {
				continue
			}
			name := fmt.Sprintf("%s/Pod/%s/%s", src, pod.Name, st.Name)
			if previous {
				name += "/previous"
			}
			data, err := logs(ctx, pod.Namespace, pod.Name, st.Name, previous)
			if err != nil {
				res.Notes = append(res.Notes, fmt.Sprintf("%s: log not read: %v", name, err))
				continue
			}
			res.Logs = append(res.Logs, ContainerLog{Container: st.Name, Name: name, Data: data})
		}
	}
	return res, nil
}

// apiLogs reads logs through the API server's pods/log subresource with
// timestamps, as kubectl logs --timestamps does.
func apiLogs(cs kubernetes.Interface, maxBytes int64) LogFunc {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxLogBytes
	}
	return func(ctx context.Context, ns, pod, container string, previous bool) ([]byte, error) {
		req := cs.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Container: container, Previous: previous, Timestamps: true, LimitBytes: &maxBytes})
		rc, err := req.Stream(ctx)
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		return io.ReadAll(io.LimitReader(rc, maxBytes))
	}
}
