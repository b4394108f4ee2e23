package webhook

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
)

// FuzzHandler posts arbitrary bodies to the /validate handler: whatever
// arrives, the answer is a 4xx or a well-formed AdmissionReview, never a
// panic or a 5xx. The seeds are the fixtures' reviews; the corpus found so
// far is in testdata/fuzz/FuzzHandler.
//
//	go test ./internal/webhook -run '^$' -fuzz FuzzHandler -fuzztime 5m
func FuzzHandler(f *testing.F) {
	for _, name := range []string{"bad-statefulset.yaml", "healthy-deployment.yaml", "rollout.yaml"} {
		obj := fixture(f, name)
		f.Add(reviewBody(f, request(f, admissionv1.Create, obj, nil)))
		f.Add(reviewBody(f, request(f, admissionv1.Update, obj, obj)))
	}
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","kind":{"group":"apps","version":"v1","kind":"Deployment"},"operation":"CREATE","object":{"apiVersion":"apps/v1","kind":"Deployment","spec":{"template":{"spec":{"containers":[{"name":"a","livenessProbe":{"exec":{"command":["pg_isready"]},"timeoutSeconds":1}}]}}}}}}`))
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"u","kind":{"kind":"Pod","version":"v1"},"operation":"UPDATE","object":[],"oldObject":"x"}}`))
	f.Add([]byte(`{}`))
	h := NewHandler(HandlerOptions{Judge: newJudge(f, nil, contextOf(f, "rollout-context.yaml")), Policy: deny})
	f.Fuzz(func(t *testing.T, body []byte) {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, Path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(rec, req)
		if rec.Code >= 400 && rec.Code < 500 {
			return
		}
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		var ar admissionv1.AdmissionReview
		if err := json.Unmarshal(rec.Body.Bytes(), &ar); err != nil || ar.Response == nil {
			t.Fatalf("not an AdmissionReview (%v): %s", err, rec.Body)
		}
		if r := ar.Response.Result; r != nil && r.Code >= 500 {
			t.Fatalf("server error in the review: %s", r.Message)
		}
		checkWarnings(t, ar.Response.Warnings)
	})
}
