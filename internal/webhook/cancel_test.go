package webhook

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/rules"
)

// slowRules are n rules of 20 ms each that count their runs: judging an
// object with them takes n x 20 ms.
func slowRules(n int, runs *atomic.Int64) []*rules.Rule {
	var rs []*rules.Rule
	for i := range n {
		rs = append(rs, &rules.Rule{ID: "BF9" + string(rune('0'+i/10)) + string(rune('0'+i%10)), Slug: "slow", Severity: finding.Error,
			Check: &rules.Scan{Run: func(*rules.Pass) { runs.Add(1); time.Sleep(20 * time.Millisecond) }}})
	}
	return rs
}

// A judging stops when its request ends, at its deadline or when its
// client goes: the burst of issue 33 went on judging for minutes after
// every request was answered, and grew to 2.42 GB. The rules stop between
// one and the next, and the judging's memory is given back then, not
// when it would have ended.
func TestJudgingStopsWhenItsRequestEnds(t *testing.T) {
	body := reviewBody(t, request(t, admissionv1.Create, fixture(t, "bad-statefulset.yaml"), nil))
	for _, c := range []struct {
		name      string
		query     string
		clientTTL time.Duration
	}{
		{"deadline", "?timeout=1s", 5 * time.Second}, // answered at 0.5 s
		{"client gone", "", 300 * time.Millisecond},  // no timeout sent: the server would wait 10 s
	} {
		t.Run(c.name, func(t *testing.T) {
			var runs atomic.Int64
			j, err := NewJudge(slowRules(90, &runs), rules.Options{}, staticContext{}) // 1.8 s of judging
			if err != nil {
				t.Fatal(err)
			}
			h := newHandler(HandlerOptions{Judge: j, Policy: deny})
			srv := httptest.NewServer(h)
			defer srv.Close()
			client := &http.Client{Timeout: c.clientTTL}
			resp, err := client.Post(srv.URL+c.query, "application/json", bytes.NewReader(body))
			if err == nil {
				resp.Body.Close()
			}
			// The rule running when the request ended finishes; none after.
			time.Sleep(100 * time.Millisecond)
			after := runs.Load()
			time.Sleep(500 * time.Millisecond)
			if got := runs.Load(); got != after || got >= 90 {
				t.Errorf("rules ran %d times when the request ended, %d half a second later (of 90): the judging went on", after, got)
			}
			if got := h.mem.inUse(); got != 0 {
				t.Errorf("%d bytes still held by a judging whose request ended", got)
			}
			if len(h.slots) != 0 {
				t.Errorf("%d slots still held", len(h.slots))
			}
		})
	}
}

// A judging cancelled halfway returns its context's error, never a verdict
// that lacks the findings of the rules it did not run.
func TestJudgeContextSaysItWasCancelled(t *testing.T) {
	var runs atomic.Int64
	j, err := NewJudge(slowRules(20, &runs), rules.Options{}, staticContext{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := j.JudgeContext(ctx, request(t, admissionv1.Create, fixture(t, "bad-statefulset.yaml"), nil)); err == nil {
		t.Fatal("a cancelled judging returned no error")
	}
	if n := runs.Load(); n >= 20 {
		t.Errorf("all %d rules ran", n)
	}
}

// readHead finds what identifies a review as the body streams by, up to
// the object, and what it can of a body cut short.
func TestReadHead(t *testing.T) {
	req := request(t, admissionv1.Update, fixture(t, "bad-statefulset.yaml"), fixture(t, "bad-statefulset.yaml"))
	body := reviewBody(t, req)
	h, err := readHead(bytes.NewReader(body))
	if err != nil || h.req.UID != req.UID || h.req.Kind != req.Kind || h.req.Namespace != req.Namespace || h.req.Name != req.Name ||
		h.req.Operation != admissionv1.Update || h.gvk.GroupVersion().String() != "admission.k8s.io/v1" || h.gvk.Kind != "AdmissionReview" {
		t.Fatalf("head %+v, %v", h, err)
	}
	cut := body[:bytes.Index(body, []byte(`"object"`))+12]
	if h, _ := readHead(bytes.NewReader(cut)); h.req.UID != req.UID {
		t.Errorf("cut short: uid %q", h.req.UID)
	}
	// The uid after the object (not how the API server writes it) is
	// still found, by reading on.
	late := `{"request":{"object":{"a":[1,{"uid":"no"}]},"uid":"yes","kind":{"group":"apps","version":"v1","kind":"Deployment"}},"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview"}`
	if h, err := readHead(strings.NewReader(late)); err != nil || h.req.UID != "yes" || h.req.Kind.Kind != "Deployment" || h.gvk.Version != "v1beta1" {
		t.Errorf("late uid: %+v, %v", h, err)
	}
	for _, bad := range []string{"", "[]", `{"request":7}`, `{"request":{"uid":{}}}`, "<xml/>"} {
		if h, _ := readHead(strings.NewReader(bad)); h.req.UID != "" {
			t.Errorf("%q: uid %q", bad, h.req.UID)
		}
	}
}
