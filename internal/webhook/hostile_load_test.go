package webhook

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// BenchmarkHostileClients is the load test with hostile clients, against
// the real server (TLS on loopback, the whole handler, warn mode, the
// default limits), each request sent as the API server sends it (with
// "?timeout=5s", and a client that gives up after 5 s):
//
//   - slow: 8 clients trickle a body of unknown length and stall, while
//     30 reviews of a typical Deployment are sent one after another;
//   - large4: 4 reviews of a 2.9 MB Deployment at once (the API server
//     takes objects up to 3 MiB);
//   - large8: 8 reviews of a 3.5 MB Deployment at once (an UPDATE with
//     both objects).
//
// For each it reports how many answers were verdicts, how many answers
// came without one (admitted unjudged, with a warning), how many failed
// (no answer within 5 s, or not an AdmissionReview: failurePolicy Ignore
// admits those silently), the slowest answer, and the peak resident
// memory of the process during the phase (Linux: VmHWM after resetting
// it, /proc/self/clear_refs).
//
//	go test ./internal/webhook -run '^$' -bench HostileClients -benchtime 1x
func BenchmarkHostileClients(b *testing.B) {
	base, client := startLoadServer(b)
	target := base + "?timeout=5s"
	small := reviewBody(b, request(b, admissionv1.Create, fixture(b, "healthy-deployment.yaml"), nil))
	large := func(size int) []byte { return reviewBody(b, bigRequest(b, size)) }
	l29, l35 := large(2900<<10), large(3500<<10)
	u, _ := url.Parse(base)
	for b.Loop() {
		// Slow clients beside legitimate ones.
		resetPeak()
		var stall []*tls.Conn
		for range 8 {
			c, err := tls.Dial("tcp", u.Host, client.Transport.(*http.Transport).TLSClientConfig)
			if err != nil {
				b.Fatal(err)
			}
			fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n", u.Path, u.Host)
			stall = append(stall, c)
		}
		time.Sleep(100 * time.Millisecond)
		var slow outcome
		for range 30 {
			slow.add(sendReview(client, target, small))
		}
		for _, c := range stall {
			c.Close()
		}
		slow.report(b, "slow")

		for _, phase := range []struct {
			name string
			body []byte
			n    int
		}{{"large4", l29, 4}, {"large8", l35, 8}} {
			resetPeak()
			var o outcome
			var mu sync.Mutex
			var wg sync.WaitGroup
			for range phase.n {
				wg.Go(func() {
					r := sendReview(client, target, phase.body)
					mu.Lock()
					o.add(r)
					mu.Unlock()
				})
			}
			wg.Wait()
			o.report(b, phase.name)
		}
	}
}

// answer is what one review got.
type answer struct {
	took             time.Duration
	judged, unjudged bool
	err              error
}

func sendReview(client *http.Client, url string, body []byte) answer {
	r := sendTo(client, url, "", bytes.NewReader(body), int64(len(body)))
	a := answer{took: r.took, err: r.err}
	switch {
	case r.err != nil:
	case r.review.Response.Result != nil && strings.HasPrefix(r.review.Response.Result.Message, "not judged"):
		a.unjudged = true
	default:
		a.judged = true
	}
	return a
}

type outcome struct {
	answers []answer
}

func (o *outcome) add(a answer) { o.answers = append(o.answers, a) }

func (o *outcome) report(b *testing.B, name string) {
	var judged, unjudged, failed int
	var lat []time.Duration
	for _, a := range o.answers {
		switch {
		case a.err != nil:
			failed++
		case a.judged:
			judged++
		case a.unjudged:
			unjudged++
		}
		lat = append(lat, a.took)
	}
	slices.Sort(lat)
	b.ReportMetric(float64(judged), name+"-judged")
	b.ReportMetric(float64(unjudged), name+"-unjudged")
	b.ReportMetric(float64(failed), name+"-failed")
	b.ReportMetric(ms(lat[len(lat)-1]), name+"-max-ms")
	if peak := peakRSS(); peak > 0 {
		b.ReportMetric(float64(peak>>20), name+"-peak-MiB")
	}
}

// bigRequest is a CREATE of a Deployment of about size bytes of JSON: a
// hundred containers with probes, each with a long environment.
func bigRequest(t testing.TB, size int) *admissionv1.AdmissionRequest {
	t.Helper()
	type env struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	const containers = 100
	perEnv := 180
	envs := size / containers / perEnv
	var cs []map[string]any
	for i := range containers {
		var e []env
		for j := range envs {
			e = append(e, env{Name: fmt.Sprintf("SETTING_%d_%d", i, j), Value: strings.Repeat("v", perEnv-40)})
		}
		cs = append(cs, map[string]any{
			"name": "c" + strconv.Itoa(i), "image": "registry.example.com/app:1",
			"env":            e,
			"livenessProbe":  map[string]any{"httpGet": map[string]any{"path": "/healthz", "port": 8080}, "timeoutSeconds": 3},
			"readinessProbe": map[string]any{"httpGet": map[string]any{"path": "/ready", "port": 8080}},
			"resources":      map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "128Mi"}},
		})
	}
	obj := map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "big", "namespace": "shop"},
		"spec": map[string]any{"replicas": 3, "selector": map[string]any{"matchLabels": map[string]any{"app": "big"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "big"}}, "spec": map[string]any{"containers": cs}}},
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return &admissionv1.AdmissionRequest{
		UID: types.UID("uid-big"), Kind: metav1.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"},
		Namespace: "shop", Name: "big", Operation: admissionv1.Create,
		Object: runtime.RawExtension{Raw: raw},
	}
}

// resetPeak starts the process's peak resident memory over (Linux).
func resetPeak() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSS is the process's peak resident memory since resetPeak, in
// bytes; 0 where it cannot be read.
func peakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
