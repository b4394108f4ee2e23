package webhook

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// reviewBody wraps a request in the AdmissionReview the API server posts.
func reviewBody(t testing.TB, req *admissionv1.AdmissionRequest) []byte {
	t.Helper()
	b, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request:  req,
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func post(t testing.TB, url string, body []byte) (*http.Response, *admissionv1.AdmissionReview) {
	t.Helper()
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var ar admissionv1.AdmissionReview
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(data, &ar); err != nil {
			t.Fatalf("status 200 with a body that is not an AdmissionReview: %v\n%s", err, data)
		}
	}
	return resp, &ar
}

func testHandler(t testing.TB, o HandlerOptions) (*httptest.Server, *Metrics) {
	t.Helper()
	if o.Judge == nil {
		o.Judge = newJudge(t, nil, staticContext{})
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics()
	}
	if o.Policy.Mode == "" {
		o.Policy = deny
	}
	srv := httptest.NewServer(NewHandler(o))
	t.Cleanup(srv.Close)
	return srv, o.Metrics
}

func TestHandlerAnswersAReview(t *testing.T) {
	srv, m := testHandler(t, HandlerOptions{})
	req := request(t, admissionv1.Create, fixture(t, "bad-statefulset.yaml"), nil)
	resp, ar := post(t, srv.URL, reviewBody(t, req))
	if resp.StatusCode != http.StatusOK || ar.Response == nil {
		t.Fatalf("status %d, review %+v", resp.StatusCode, ar)
	}
	if ar.Response.UID != req.UID || ar.Response.Allowed || ar.Kind != "AdmissionReview" {
		t.Fatalf("response %+v", ar.Response)
	}
	if got := testutil.ToFloat64(m.requests.WithLabelValues("CREATE", "denied")); got != 1 {
		t.Errorf("requests{CREATE,denied} = %v", got)
	}
	if got := testutil.ToFloat64(m.findings.WithLabelValues("BF101", "error")); got != 1 {
		t.Errorf("findings{BF101,error} = %v", got)
	}
	if n := testutil.CollectAndCount(m.latency); n != 1 {
		t.Errorf("latency histogram has %d series", n)
	}
}

// Bad bodies get a clear 4xx, or a well-formed AdmissionResponse with a
// 4xx code (controller-runtime's decoder answers in the review itself).
func TestHandlerRejectsBadBodies(t *testing.T) {
	srv, m := testHandler(t, HandlerOptions{})
	huge := append([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"x","object":{"a":"`),
		bytes.Repeat([]byte("a"), 8<<20)...)
	for name, body := range map[string][]byte{
		"empty":      {},
		"not JSON":   []byte("<xml/>"),
		"no request": []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`),
		"wrong type": []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":7}}`),
		"huge":       huge,
		"truncated":  reviewBody(t, request(t, admissionv1.Create, fixture(t, "bad-statefulset.yaml"), nil))[:300],
	} {
		t.Run(name, func(t *testing.T) {
			resp, ar := post(t, srv.URL, body)
			switch {
			case resp.StatusCode >= 400 && resp.StatusCode < 500:
			case resp.StatusCode == http.StatusOK && ar.Response != nil && ar.Response.Result != nil &&
				ar.Response.Result.Code >= 400 && ar.Response.Result.Code < 500 && !ar.Response.Allowed:
			default:
				t.Fatalf("status %d, response %+v", resp.StatusCode, ar.Response)
			}
		})
	}
	if got := testutil.ToFloat64(m.errors.WithLabelValues("bad_request")); got < 1 {
		t.Errorf("errors{bad_request} = %v", got)
	}

	get, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	get.Body.Close()
	if get.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d", get.StatusCode)
	}
}

// A client that sends its headers and then stalls loses its connection at
// the deadline rather than holding a slot.
func TestSlowClientIsCutOff(t *testing.T) {
	srv, _ := testHandler(t, HandlerOptions{Timeout: 300 * time.Millisecond})
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"request\":")
	start := time.Now()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err == nil {
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode == http.StatusOK && !strings.Contains(string(body), `"code":400`) {
			t.Fatalf("stalled body answered %d: %s", resp.StatusCode, body)
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("stalled client held the request for %v", d)
	}
}

// A burst beyond the in-flight limit is refused with 429 (failurePolicy
// Ignore then admits the object) instead of queueing without bound.
func TestBurstBeyondTheLimitGets429(t *testing.T) {
	srv, m := testHandler(t, HandlerOptions{MaxInFlight: 1, QueueWait: 50 * time.Millisecond, Timeout: 2 * time.Second})
	// Hold the only slot with a body that never finishes.
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
	time.Sleep(100 * time.Millisecond)
	resp, _ := post(t, srv.URL, reviewBody(t, request(t, admissionv1.Create, fixture(t, "healthy-deployment.yaml"), nil)))
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("status %d, want 429", resp.StatusCode)
	}
	if got := testutil.ToFloat64(m.errors.WithLabelValues("overloaded")); got != 1 {
		t.Errorf("errors{overloaded} = %v", got)
	}
}

// A panic while judging admits the object with a warning (as failurePolicy
// Ignore would) and the server goes on.
func TestInternalErrorAdmitsWithAWarning(t *testing.T) {
	m := NewMetrics()
	var broken *Judge // every call panics
	srv := httptest.NewServer(NewHandler(HandlerOptions{Judge: broken, Policy: deny, Metrics: m}))
	defer srv.Close()
	body := reviewBody(t, request(t, admissionv1.Create, fixture(t, "bad-statefulset.yaml"), nil))
	for range 2 {
		resp, ar := post(t, srv.URL, body)
		if resp.StatusCode != http.StatusOK || ar.Response == nil || !ar.Response.Allowed ||
			len(ar.Response.Warnings) != 1 || !strings.Contains(ar.Response.Warnings[0], "internal error") {
			t.Fatalf("status %d, response %+v", resp.StatusCode, ar.Response)
		}
	}
	if got := testutil.ToFloat64(m.errors.WithLabelValues("internal")); got != 2 {
		t.Errorf("errors{internal} = %v", got)
	}
}
