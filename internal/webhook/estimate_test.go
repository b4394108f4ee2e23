package webhook

import (
	"context"
	"encoding/json"
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiruntime "k8s.io/apimachinery/pkg/runtime"

	"backfire.dev/backfire/internal/testutil"
)

// manyFindings is a StatefulSet of n PostgreSQL containers, each with the
// findings of seed 003's database (BF101, BF102, BF103, BF201) and fixes
// that compose: the object that costs the most memory per byte to judge.
func manyFindings(t testing.TB, n int) *admissionv1.AdmissionRequest {
	probe := func(timeout int) map[string]any {
		return map[string]any{"exec": map[string]any{"command": []string{"/docker-healthcheck.sh"}}, "timeoutSeconds": timeout, "initialDelaySeconds": 300}
	}
	var cs []map[string]any
	for i := range n {
		cs = append(cs, map[string]any{
			"name": "c" + strconv.Itoa(i), "image": "docker.io/goharbor/harbor-db:v2.13.0",
			"livenessProbe": probe(1), "readinessProbe": probe(1),
			"env":   []map[string]any{{"name": "A", "value": "b"}},
			"ports": []map[string]any{{"containerPort": 5432}},
		})
	}
	raw, err := json.Marshal(map[string]any{
		"apiVersion": "apps/v1", "kind": "StatefulSet",
		"metadata": map[string]any{"name": "many", "namespace": "shop"},
		"spec": map[string]any{"replicas": 1, "serviceName": "many", "selector": map[string]any{"matchLabels": map[string]any{"app": "many"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "many"}}, "spec": map[string]any{"containers": cs}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return &admissionv1.AdmissionRequest{UID: "uid-many", Kind: metav1.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"},
		Namespace: "shop", Name: "many", Operation: admissionv1.Create, Object: apiruntime.RawExtension{Raw: raw}}
}

// TestJudgingMemoryEstimate measures the peak heap of one judging, from
// the body to the answer (decoding the review, the object, the rules, the
// composed fixes), on the objects that cost the most per byte and on
// typical ones, and checks that the estimate the handler holds for it
// (judgingBytes) covers it. The figures are in docs/webhook.md.
func TestJudgingMemoryEstimate(t *testing.T) {
	testutil.Heavy(t, "a minute of judging")
	defer debug.SetGCPercent(debug.SetGCPercent(5)) // the heap close to what is live
	h := newHandler(HandlerOptions{Judge: newJudge(t, nil, staticContext{}), Policy: deny})
	for _, c := range []struct {
		name string
		req  *admissionv1.AdmissionRequest
	}{
		{"seed 003's StatefulSet", request(t, admissionv1.Create, fixture(t, "bad-statefulset.yaml"), nil)},
		{"300 containers with findings", manyFindings(t, 300)},
		{"1000 containers with findings", manyFindings(t, 1000)},
		{"3 MB Deployment, 100 containers, long environments", bigRequest(t, 3<<20)},
	} {
		body := reviewBody(t, c.req)
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		stop := make(chan struct{})
		peaked := make(chan uint64)
		go func() {
			var m runtime.MemStats
			var peak uint64
			for {
				select {
				case <-stop:
					peaked <- peak
					return
				case <-time.After(time.Millisecond):
				}
				runtime.ReadMemStats(&m)
				peak = max(peak, m.HeapAlloc)
			}
		}()
		start := time.Now()
		req, _, err := decodeReview(body)
		if err != nil {
			t.Fatal(err)
		}
		resp := h.review.Handle(context.Background(), req)
		took := time.Since(start)
		close(stop)
		peak := <-peaked - before.HeapAlloc
		if resp.Allowed && c.name != "3 MB Deployment, 100 containers, long environments" {
			t.Errorf("%s: admitted", c.name)
		}
		t.Logf("%s: body %d bytes, peak heap %.1f MiB (%.0f bytes a byte), estimate %.1f MiB, %v",
			c.name, len(body), float64(peak)/(1<<20), float64(peak)/float64(len(body)), float64(judgingBytes(body))/(1<<20), took.Round(time.Millisecond))
		if int64(peak) > judgingBytes(body) {
			t.Errorf("%s: peak heap %d bytes, over the estimate %d", c.name, peak, judgingBytes(body))
		}
	}
}
