package webhook

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// Defaults of HandlerOptions.
const (
	// DefaultTimeout bounds one request, from reading the body to writing
	// the answer: the API server gives up after timeoutSeconds anyway
	// (deploy/: 5 s), and a slow client must not hold a slot longer.
	DefaultTimeout = 10 * time.Second
	// DefaultQueueWait is how long a request waits for a free slot before
	// it is refused with 429 (failurePolicy Ignore then admits the object).
	DefaultQueueWait = time.Second
)

// HandlerOptions configure the /validate handler.
type HandlerOptions struct {
	Judge   *Judge
	Policy  Policy
	Metrics *Metrics
	Log     *slog.Logger
	// MaxInFlight bounds the requests judged at once, and with the
	// 7 MiB body limit of controller-runtime's admission decoder, memory;
	// 0 means 4 per CPU.
	MaxInFlight int
	Timeout     time.Duration
	QueueWait   time.Duration
}

// NewHandler returns the admission handler: controller-runtime's
// AdmissionReview decoding behind a concurrency limit and a deadline.
func NewHandler(o HandlerOptions) http.Handler {
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = 4 * runtime.GOMAXPROCS(0)
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.QueueWait <= 0 {
		o.QueueWait = DefaultQueueWait
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics()
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	h := &handler{HandlerOptions: o, slots: make(chan struct{}, o.MaxInFlight)}
	h.review = &admission.Webhook{Handler: admission.HandlerFunc(h.handle)}
	return h
}

type handler struct {
	HandlerOptions
	slots  chan struct{}
	review *admission.Webhook
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	defer func() { h.Metrics.latency.Observe(time.Since(start).Seconds()) }()
	if r.Method != http.MethodPost {
		h.Metrics.errors.WithLabelValues("bad_request").Inc()
		http.Error(w, "backfire: POST an AdmissionReview (admission.k8s.io/v1) as application/json", http.StatusMethodNotAllowed)
		return
	}
	wait := time.NewTimer(h.QueueWait)
	defer wait.Stop()
	select {
	case h.slots <- struct{}{}:
		defer func() { <-h.slots }()
	case <-wait.C:
		h.Metrics.errors.WithLabelValues("overloaded").Inc()
		h.Log.Warn("admission request refused: too many at once", "inFlight", cap(h.slots))
		http.Error(w, "backfire: too many admission requests at once; try again", http.StatusTooManyRequests)
		return
	case <-r.Context().Done():
		return
	}

	// A slow client cannot hold the slot past the deadline: the body read
	// and the answer's write fail instead. The deadlines are cleared for
	// the next request on the connection (the server sets no WriteTimeout
	// of its own that would).
	rc := http.NewResponseController(w)
	deadline := time.Now().Add(h.Timeout)
	_ = rc.SetReadDeadline(deadline)
	_ = rc.SetWriteDeadline(deadline)
	defer func() { _ = rc.SetWriteDeadline(time.Time{}) }()
	ctx, cancel := context.WithDeadline(r.Context(), deadline)
	defer cancel()
	h.review.ServeHTTP(w, r.WithContext(ctx))
}

// handle judges one decoded request. A panic anywhere in it admits the
// object with a warning, as failurePolicy Ignore would: an internal error
// of the linter never blocks a change, and never crashes the server.
func (h *handler) handle(_ context.Context, req admission.Request) (resp admission.Response) {
	op := string(req.Operation)
	defer func() {
		if v := recover(); v != nil {
			h.Metrics.errors.WithLabelValues("internal").Inc()
			h.Metrics.requests.WithLabelValues(op, "error").Inc()
			h.Log.Error("internal error judging an admission request", "uid", req.UID, "kind", req.Kind.Kind, "name", req.Name, "panic", v)
			resp = admission.Allowed("not judged: internal error").WithWarnings(
				FitWarnings([]string{fmt.Sprintf("backfire could not judge this object (internal error: %v); please report it", v)})...)
		}
	}()
	if req.UID == "" || req.Kind.Kind == "" {
		h.Metrics.errors.WithLabelValues("bad_request").Inc()
		h.Metrics.requests.WithLabelValues(op, "error").Inc()
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("backfire: the AdmissionReview has no request (uid and kind are required)"))
	}
	v := h.Judge.Judge(&req.AdmissionRequest)
	resp = h.Policy.Respond(v)
	for _, f := range v.Findings {
		h.Metrics.findings.WithLabelValues(f.Rule, f.Severity.String()).Inc()
	}
	h.Metrics.errors.WithLabelValues("decode").Add(float64(len(v.Errors)))
	h.Metrics.errors.WithLabelValues("rule").Add(float64(len(v.RuleErrors)))
	decision := "allowed"
	switch {
	case !resp.Allowed:
		decision = "denied"
	case v.Skipped != "":
		decision = "skipped"
	case len(resp.Warnings) > 0:
		decision = "warned"
	}
	h.Metrics.requests.WithLabelValues(op, decision).Inc()
	level := slog.LevelDebug
	if decision == "denied" || len(v.Errors)+len(v.RuleErrors) > 0 {
		level = slog.LevelInfo
	}
	h.Log.Log(context.Background(), level, "admission", "uid", req.UID, "operation", op,
		"object", v.Object.String(), "user", req.UserInfo.Username, "decision", decision,
		"findings", len(v.Findings), "errors", len(v.Errors)+len(v.RuleErrors))
	return resp
}
