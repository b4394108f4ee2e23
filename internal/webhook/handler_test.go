package webhook

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
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

// A client that sends its headers and then stalls is cut off at the read
// deadline with a review that says so (code 408), rather than holding
// memory or a slot.
func TestSlowClientIsCutOff(t *testing.T) {
	srv, m := testHandler(t, HandlerOptions{Timeout: 300 * time.Millisecond})
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
		if resp.StatusCode == http.StatusOK && !strings.Contains(string(body), `"code":408`) {
			t.Fatalf("stalled body answered %d: %s", resp.StatusCode, body)
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("stalled client held the request for %v", d)
	}
	if got := testutil.ToFloat64(m.errors.WithLabelValues(reasonSlowClient)); got != 1 {
		t.Errorf("errors{slow_client} = %v", got)
	}
}

// trickle opens n connections that send their headers and part of a body,
// then stall.
func trickle(t *testing.T, addr string, n int) {
	t.Helper()
	for range n {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n")
	}
}

// Slow clients hold no judging slot: the body is read before a slot is
// taken. Eight clients trickling their bodies used to hold the slots for
// the whole timeout, and the legitimate reviews got 429 (which
// failurePolicy Ignore admits unjudged); here, with a single slot, every
// legitimate review is judged.
func TestSlowClientsDoNotHoldSlots(t *testing.T) {
	srv, m := testHandler(t, HandlerOptions{MaxInFlight: 1, Timeout: 5 * time.Second})
	trickle(t, srv.Listener.Addr().String(), 8)
	time.Sleep(100 * time.Millisecond)
	body := reviewBody(t, request(t, admissionv1.Create, fixture(t, "bad-statefulset.yaml"), nil))
	for i := range 30 {
		resp, ar := post(t, srv.URL, body)
		if resp.StatusCode != http.StatusOK || ar.Response == nil || ar.Response.Allowed {
			t.Fatalf("review %d: status %d, response %+v", i, resp.StatusCode, ar.Response)
		}
	}
	if got := testutil.ToFloat64(m.requests.WithLabelValues("CREATE", "denied")); got != 30 {
		t.Errorf("requests{CREATE,denied} = %v, want 30 judged", got)
	}
}

// Clients that claim large bodies and trickle them hold their room in the
// body budget for a short time only, and the reviews beside them pass
// them: every legitimate review is judged. (Before, eight such clients
// filled the budget for 2 s and the reviews got 429.)
func TestSlowLargeBodiesDoNotStarveReviews(t *testing.T) {
	srv, m := testHandler(t, HandlerOptions{})
	for range 20 {
		conn, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		fmt.Fprintf(conn, "POST /?timeout=5s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 3000000\r\n\r\n{\"request\":")
	}
	time.Sleep(100 * time.Millisecond)
	body := reviewBody(t, request(t, admissionv1.Create, fixture(t, "bad-statefulset.yaml"), nil))
	for i := range 10 {
		start := time.Now()
		resp, ar := post(t, srv.URL+"?timeout=5s", body)
		if resp.StatusCode != http.StatusOK || ar.Response == nil || ar.Response.Allowed || !strings.Contains(ar.Response.Result.Message, "BF101") {
			t.Fatalf("review %d after %v: status %d, response %+v", i, time.Since(start), resp.StatusCode, ar.Response)
		}
	}
	if got := testutil.ToFloat64(m.requests.WithLabelValues("CREATE", "denied")); got != 10 {
		t.Errorf("requests{CREATE,denied} = %v, want 10 judged", got)
	}
}

// slowHandler is a handler whose judging takes d.
func slowHandler(t *testing.T, o HandlerOptions, d time.Duration) (*httptest.Server, *Metrics) {
	t.Helper()
	if o.Judge == nil {
		o.Judge = newJudge(t, nil, staticContext{})
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics()
	}
	h := newHandler(o)
	judge := h.judge
	// A judging that does not stop when its request ends: the worst case.
	h.judge = func(ctx context.Context, req *admissionv1.AdmissionRequest) (Verdict, error) {
		time.Sleep(d)
		return judge(ctx, req)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, o.Metrics
}

// A request that finds no free slot in time, or whose judging does not end
// before the API server's timeout, is answered in time without a verdict:
// admitted with a warning that says so, or refused in deny mode, "not
// judged". (A 429, or no answer, would let failurePolicy Ignore admit it
// unseen.)
func TestUnjudgedRequestsAreAnsweredByThePolicy(t *testing.T) {
	body := reviewBody(t, request(t, admissionv1.Create, fixture(t, "bad-statefulset.yaml"), nil))
	for _, mode := range []Mode{Warn, Deny} {
		// The API server waits 2 s: the answer must come within it.
		srv, m := slowHandler(t, HandlerOptions{MaxInFlight: 1, Policy: Policy{Mode: mode, FailOn: deny.FailOn}}, 3*time.Second)
		url := srv.URL + "?timeout=2s"
		var wg sync.WaitGroup
		answers := make([]*admissionv1.AdmissionReview, 2)
		took := make([]time.Duration, 2)
		for i := range 2 {
			wg.Go(func() {
				time.Sleep(time.Duration(i) * 50 * time.Millisecond) // the second finds the slot taken
				start := time.Now()
				resp, ar := post(t, url, body)
				took[i] = time.Since(start)
				if resp.StatusCode != http.StatusOK {
					t.Errorf("%s %d: status %d", mode, i, resp.StatusCode)
				}
				answers[i] = ar
			})
		}
		wg.Wait()
		for i, ar := range answers {
			if ar == nil || ar.Response == nil || ar.Response.UID != "uid-registry-database" || ar.APIVersion != "admission.k8s.io/v1" {
				t.Fatalf("%s %d: %+v", mode, i, ar)
			}
			if took[i] > 1800*time.Millisecond {
				t.Errorf("%s %d: answered after %v, past the API server's 2 s", mode, i, took[i])
			}
			r := ar.Response
			switch mode {
			case Warn:
				if !r.Allowed || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "backfire admitted StatefulSet registry/registry-database without checking it, not judged: ") {
					t.Errorf("warn %d: %+v", i, r)
				}
			case Deny:
				if r.Allowed || !strings.Contains(r.Result.Message, "backfire refused StatefulSet registry/registry-database, not judged: ") ||
					!strings.Contains(r.Result.Message, "in deny mode what backfire did not judge is refused") {
					t.Errorf("deny %d: %+v", i, r)
				}
			}
		}
		if !strings.Contains(answers[0].Response.Result.Message+strings.Join(answers[0].Response.Warnings, ""), "not judged: timeout (judging it took longer than the API server waits)") ||
			!strings.Contains(answers[1].Response.Result.Message+strings.Join(answers[1].Response.Warnings, ""), "not judged: overloaded (too many admission requests at once") {
			t.Errorf("%s: reasons %+v / %+v", mode, answers[0].Response, answers[1].Response)
		}
		if testutil.ToFloat64(m.errors.WithLabelValues(reasonTimeout)) != 1 || testutil.ToFloat64(m.errors.WithLabelValues(reasonOverloaded)) != 1 ||
			testutil.ToFloat64(m.requests.WithLabelValues("CREATE", "unjudged")) != 2 {
			t.Errorf("%s: errors{timeout} %v, errors{overloaded} %v, requests{unjudged} %v", mode,
				testutil.ToFloat64(m.errors.WithLabelValues(reasonTimeout)), testutil.ToFloat64(m.errors.WithLabelValues(reasonOverloaded)),
				testutil.ToFloat64(m.requests.WithLabelValues("CREATE", "unjudged")))
		}
	}
}

// Requests wait, their bodies unread, until the memory their judging is
// estimated to take is free, in the order they came, for half of their
// time; then they are answered as not judged. In deny mode every answer
// is an AdmissionReview the API server takes (its request's uid) and none
// admits: a burst used to get plain-text 429s, which failurePolicy Ignore
// admits unjudged. The memory is all given back after the answers.
func TestMemoryBoundsJudgingAndOverloadIsRefused(t *testing.T) {
	body := reviewBody(t, request(t, admissionv1.Create, fixture(t, "bad-statefulset.yaml"), nil))
	o := HandlerOptions{Judge: newJudge(t, nil, staticContext{}), Policy: deny, Metrics: NewMetrics(), MaxMemoryBytes: judgingBytes(body)}
	h := newHandler(o)
	judge := h.judge
	h.judge = func(ctx context.Context, req *admissionv1.AdmissionRequest) (Verdict, error) {
		time.Sleep(time.Second)
		return judge(ctx, req)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	// The API server waits 4 s: the answer comes within 3 s, and a request
	// waits for memory for 1.5 s at most.
	url := srv.URL + "?timeout=4s"
	answers := make([]*admissionv1.AdmissionReview, 4)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() {
			time.Sleep(time.Duration(i) * 50 * time.Millisecond)
			start := time.Now()
			resp, ar := post(t, url, body)
			if resp.StatusCode != http.StatusOK {
				t.Errorf("request %d: status %d", i, resp.StatusCode)
			}
			if d := time.Since(start); d > 3500*time.Millisecond {
				t.Errorf("request %d: answered after %v", i, d)
			}
			answers[i] = ar
		})
	}
	wg.Wait()
	for i, ar := range answers {
		r := ar.Response
		if r == nil || r.UID != "uid-registry-database" || r.Allowed || ar.Kind != "AdmissionReview" {
			t.Fatalf("request %d: %+v", i, ar)
		}
		overloaded := strings.Contains(r.Result.Message, "not judged: overloaded")
		if judged := i < 2; judged == overloaded || (judged && !strings.Contains(r.Result.Message, "BF101")) {
			t.Errorf("request %d: want it %s, got %q", i, map[bool]string{true: "judged after the one before", false: "refused as overloaded"}[judged], r.Result.Message)
		}
	}
	if got := testutil.ToFloat64(o.Metrics.errors.WithLabelValues(reasonOverloaded)); got != 2 {
		t.Errorf("errors{overloaded} = %v", got)
	}
	// The handler gives the bytes back after its answer is written, so the
	// client may read the answer a moment before.
	for end := time.Now().Add(5 * time.Second); h.mem.inUse() != 0 && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	if got := h.mem.inUse(); got != 0 {
		t.Errorf("%d bytes held after the answers", got)
	}
}

// A body over the limit, announced or not, is answered with a review the
// API server takes, its uid read as the body streams by: refused in deny
// mode, "not judged: too large"; a body without a uid gets a review with
// code 413. Both are counted; so is every body that cannot be decoded.
func TestTooLargeAndUndecodableAreReviewsAndCounted(t *testing.T) {
	srv, m := testHandler(t, HandlerOptions{})
	huge := append([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"x","object":{"a":"`),
		bytes.Repeat([]byte("a"), MaxRequestBytes)...)
	for _, chunked := range []bool{false, true} {
		var r io.Reader = bytes.NewReader(huge)
		if chunked {
			r = io.MultiReader(r) // no length: sent chunked
		}
		resp, err := http.Post(srv.URL, "application/json", r)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var ar admissionv1.AdmissionReview
		if err := json.Unmarshal(data, &ar); err != nil || ar.APIVersion != "admission.k8s.io/v1" || ar.Kind != "AdmissionReview" ||
			ar.Response == nil || ar.Response.UID != "x" || ar.Response.Allowed || ar.Response.Result == nil ||
			!strings.Contains(ar.Response.Result.Message, "not judged: too large") {
			t.Errorf("chunked %v: status %d, %.300s", chunked, resp.StatusCode, data)
		}
	}
	noUID := append([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"object":{"a":"`), bytes.Repeat([]byte("a"), MaxRequestBytes)...)
	resp, err := http.Post(srv.URL, "application/json", bytes.NewReader(noUID))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var ar admissionv1.AdmissionReview
	if err := json.Unmarshal(data, &ar); err != nil || ar.Kind != "AdmissionReview" || ar.Response == nil || ar.Response.Result == nil ||
		ar.Response.Result.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("without a uid: status %d, %.300s", resp.StatusCode, data)
	}
	if got := testutil.ToFloat64(m.errors.WithLabelValues(reasonTooLarge)); got != 3 {
		t.Errorf("errors{too_large} = %v", got)
	}
	for _, body := range []string{"<xml/>", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":7}}`, `{"kind":`} {
		resp, ar := post(t, srv.URL, []byte(body))
		if resp.StatusCode != http.StatusOK || ar.APIVersion != "admission.k8s.io/v1" || ar.Response == nil || ar.Response.Result.Code != http.StatusBadRequest {
			t.Errorf("%s: status %d, %+v", body, resp.StatusCode, ar)
		}
	}
	if got := testutil.ToFloat64(m.errors.WithLabelValues(reasonBadRequest)); got != 3 {
		t.Errorf("errors{bad_request} = %v", got)
	}
}

// The API server's timeout, from the URL, sets the deadline: a second
// less, half of it when it is short, never more than Timeout.
func TestDeadlineFollowsTheAPIServersTimeout(t *testing.T) {
	h := newHandler(HandlerOptions{Timeout: 10 * time.Second})
	for q, want := range map[string]time.Duration{"": 10 * time.Second, "?timeout=5s": 4 * time.Second, "?timeout=1s": 500 * time.Millisecond, "?timeout=30s": 10 * time.Second, "?timeout=x": 10 * time.Second} {
		if got := h.timeout(httptest.NewRequest(http.MethodPost, "/validate"+q, nil)); got != want {
			t.Errorf("%q: %v, want %v", q, got, want)
		}
	}
}

// A panic while judging is answered as a request that was not judged:
// refused in deny mode, admitted with a warning in warn mode; the server
// goes on.
func TestInternalErrorIsNotJudged(t *testing.T) {
	body := reviewBody(t, request(t, admissionv1.Create, fixture(t, "bad-statefulset.yaml"), nil))
	for _, mode := range []Mode{Deny, Warn} {
		m := NewMetrics()
		var broken *Judge // every call panics
		srv := httptest.NewServer(NewHandler(HandlerOptions{Judge: broken, Policy: Policy{Mode: mode, FailOn: deny.FailOn}, Metrics: m}))
		defer srv.Close()
		for range 2 {
			resp, ar := post(t, srv.URL, body)
			r := ar.Response
			if resp.StatusCode != http.StatusOK || r == nil || r.UID != "uid-registry-database" || r.Allowed != (mode == Warn) ||
				!strings.Contains(r.Result.Message+strings.Join(r.Warnings, ""), "not judged: internal error") {
				t.Fatalf("%s: status %d, response %+v", mode, resp.StatusCode, r)
			}
		}
		if got := testutil.ToFloat64(m.errors.WithLabelValues("internal")); got != 2 {
			t.Errorf("%s: errors{internal} = %v", mode, got)
		}
	}
}
