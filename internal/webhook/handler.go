package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"sync"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionv1beta1 "k8s.io/api/admission/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// Defaults of HandlerOptions.
const (
	// DefaultTimeout bounds one request, from its first byte to its
	// answer, when the API server does not say its own timeout (it does:
	// "?timeout=5s", see deadline).
	DefaultTimeout = 10 * time.Second
	// DefaultReadTimeout bounds the reading of a body. The API server
	// sends its review at once; a client that trickles its body loses
	// the connection instead of holding memory.
	DefaultReadTimeout = 2 * time.Second
	// DefaultQueueWait is how long a request waits for a free judging
	// slot (or for room in the body budget) before it is answered
	// without being judged.
	DefaultQueueWait = time.Second
	// MaxRequestBytes is the largest body read: controller-runtime's
	// limit (pkg/webhook/admission/http.go, maxRequestSize: two objects
	// of at most 3 MiB, the API server's own request limit, and 1 MiB
	// for the rest).
	MaxRequestBytes = 7 << 20
	// DefaultMaxBodyBytes bounds the bytes of the bodies held at once,
	// read or being judged. Judging one costs a few times its size (the
	// decoded review, the object's JSON, the typed object): 32 MiB of
	// bodies stays well inside the deployment's 512 MiB.
	DefaultMaxBodyBytes = 32 << 20
)

// HandlerOptions configure the /validate handler.
type HandlerOptions struct {
	Judge   *Judge
	Policy  Policy
	Metrics *Metrics
	Log     *slog.Logger
	// MaxInFlight bounds the requests judged at once (CPU); 0 means 4
	// per CPU.
	MaxInFlight int
	// MaxBodyBytes bounds the bytes of bodies held at once (memory); 0
	// means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	Timeout      time.Duration
	ReadTimeout  time.Duration
	QueueWait    time.Duration
}

// NewHandler returns the admission handler. Each request is read whole
// first, within a short read deadline and the body budget, then judged in
// one of MaxInFlight slots; its answer is written before the API server's
// timeout whatever happens: a request that finds no slot in time, or
// whose judging is not done in time, is answered without being judged as
// the policy says (admitted with a warning; refused in deny mode).
func NewHandler(o HandlerOptions) http.Handler { return newHandler(o) }

func newHandler(o HandlerOptions) *handler {
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = 4 * runtime.GOMAXPROCS(0)
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = DefaultReadTimeout
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
	h := &handler{HandlerOptions: o, slots: make(chan struct{}, o.MaxInFlight), budget: newBudget(o.MaxBodyBytes)}
	h.review = &admission.Webhook{Handler: admission.HandlerFunc(h.handle)}
	h.judge = func(req *admissionv1.AdmissionRequest) Verdict { return h.Judge.Judge(req) }
	return h
}

type handler struct {
	HandlerOptions
	slots  chan struct{}
	budget *budget
	review *admission.Webhook
	// judge judges a request (tests slow it down).
	judge func(*admissionv1.AdmissionRequest) Verdict
}

// Reasons of backfire_webhook_errors_total.
const (
	reasonBadRequest = "bad_request" // not a POST, an empty or undecodable body, no request
	reasonTooLarge   = "too_large"   // a body over MaxRequestBytes (413)
	reasonSlowClient = "slow_client" // the body did not arrive within the read deadline
	reasonOverloaded = "overloaded"  // no room in the body budget, or no slot in time
	reasonTimeout    = "timeout"     // judging did not end before the deadline
)

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	defer func() { h.Metrics.latency.Observe(time.Since(start).Seconds()) }()
	if r.Method != http.MethodPost {
		h.Metrics.errors.WithLabelValues(reasonBadRequest).Inc()
		http.Error(w, "backfire: POST an AdmissionReview (admission.k8s.io/v1) as application/json", http.StatusMethodNotAllowed)
		return
	}
	deadline := start.Add(h.timeout(r))
	rc := http.NewResponseController(w)
	// The answer is written by the deadline too; the deadlines are
	// cleared for the next request on the connection (the server sets
	// no WriteTimeout of its own that would).
	_ = rc.SetWriteDeadline(deadline.Add(time.Second))
	defer func() { _ = rc.SetWriteDeadline(time.Time{}) }()

	body, held, status, err := h.read(r, rc, deadline)
	defer held.done()
	if err != nil {
		reason := map[int]string{http.StatusRequestEntityTooLarge: reasonTooLarge, http.StatusRequestTimeout: reasonSlowClient, http.StatusTooManyRequests: reasonOverloaded}[status]
		if reason == "" {
			reason = reasonBadRequest
		}
		h.Metrics.errors.WithLabelValues(reason).Inc()
		h.Log.Warn("admission request not read", "reason", reason, "err", err)
		w.Header().Set("Connection", "close")
		if status == http.StatusTooManyRequests {
			// Without the body there is no review to answer.
			http.Error(w, "backfire: "+err.Error(), status)
			return
		}
		writeReview(w, nil, admission.Errored(int32(status), err))
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		h.Metrics.errors.WithLabelValues(reasonBadRequest).Inc()
		writeReview(w, nil, admission.Errored(http.StatusBadRequest, fmt.Errorf("contentType=%s, expected application/json", ct)))
		return
	}
	req, gvk, err := decodeReview(body)
	if err != nil {
		h.Metrics.errors.WithLabelValues(reasonBadRequest).Inc()
		writeReview(w, nil, admission.Errored(http.StatusBadRequest, err))
		return
	}
	writeReview(w, gvk, h.judgeBy(req, held, deadline))
}

// timeout is how long a request may take: the API server's timeout for
// the call (it sends it as "?timeout=5s": k8s.io/apiserver
// pkg/admission/plugin/webhook/validating/dispatcher.go, callHook, sets
// it from the webhook's timeoutSeconds, and client-go's Request.Timeout
// puts it in the URL), less a second for the answer to travel (half of
// it for a timeout of a second or two), and never more than Timeout.
func (h *handler) timeout(r *http.Request) time.Duration {
	t := h.Timeout
	if d, err := time.ParseDuration(r.URL.Query().Get("timeout")); err == nil && d > 0 {
		t = min(t, max(d-time.Second, d/2))
	}
	return t
}

// read reads the body whole within the read deadline, holding its bytes
// in the budget. On an error it returns the HTTP status that says why.
func (h *handler) read(r *http.Request, rc *http.ResponseController, deadline time.Time) ([]byte, *hold, int, error) {
	held := &hold{budget: h.budget, refs: 1}
	if r.Body == nil || r.Body == http.NoBody {
		return nil, held, http.StatusBadRequest, errors.New("request body is empty")
	}
	if r.ContentLength > MaxRequestBytes {
		return nil, held, http.StatusRequestEntityTooLarge, fmt.Errorf("request entity is too large; limit is %d bytes", MaxRequestBytes)
	}
	now := time.Now()
	readBy := now.Add(h.ReadTimeout)
	if deadline.Before(readBy) {
		readBy = deadline
	}
	_ = rc.SetReadDeadline(readBy)
	// Cleared only once the body is read: after an error, what net/http
	// reads of the rest of it must stop at the deadline too.
	cleared := false
	defer func() {
		if cleared {
			_ = rc.SetReadDeadline(time.Time{})
		}
	}()
	// A body of known length holds its length at once; one of unknown
	// length (chunked) holds what has arrived, chunk by chunk, so a client
	// that trickles holds little.
	size := r.ContentLength
	if size >= 0 && !held.take(size+1, h.QueueWait) {
		return nil, held, http.StatusTooManyRequests, errors.New("too many admission requests at once; try again")
	}
	var buf []byte
	if size >= 0 {
		buf = make([]byte, 0, size+1)
	}
	for {
		if len(buf) == cap(buf) {
			if size >= 0 {
				break // Content-Length bytes and more: net/http stops there
			}
			grow := min(max(64<<10, cap(buf)), MaxRequestBytes+1-cap(buf))
			if grow <= 0 {
				return nil, held, http.StatusRequestEntityTooLarge, fmt.Errorf("request entity is too large; limit is %d bytes", MaxRequestBytes)
			}
			if !held.take(int64(grow), 0) {
				return nil, held, http.StatusTooManyRequests, errors.New("too many admission requests at once; try again")
			}
			buf = append(buf[:cap(buf)], make([]byte, grow)...)[:len(buf)]
		}
		n, err := r.Body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var ne interface{ Timeout() bool }
			if errors.As(err, &ne) && ne.Timeout() {
				return nil, held, http.StatusRequestTimeout, fmt.Errorf("the body did not arrive within %v", readBy.Sub(now).Round(time.Millisecond))
			}
			return nil, held, http.StatusBadRequest, err
		}
	}
	if len(buf) > MaxRequestBytes {
		return nil, held, http.StatusRequestEntityTooLarge, fmt.Errorf("request entity is too large; limit is %d bytes", MaxRequestBytes)
	}
	cleared = true
	return buf, held, 0, nil
}

// judgeBy judges a request in a slot and returns its answer by the
// deadline: the verdict, or, when no slot frees up in time or the judging
// is not done in time, an answer without a verdict (see unjudged). The
// body stays held while the judging goes on.
func (h *handler) judgeBy(req admission.Request, held *hold, deadline time.Time) admission.Response {
	wait := time.NewTimer(min(h.QueueWait, time.Until(deadline)))
	defer wait.Stop()
	select {
	case h.slots <- struct{}{}:
	case <-wait.C:
		h.Metrics.errors.WithLabelValues(reasonOverloaded).Inc()
		h.Log.Warn("admission request not judged: too many at once", "uid", req.UID, "inFlight", cap(h.slots))
		return h.unjudged(req, "too many admission requests at once")
	}
	done := make(chan admission.Response, 1)
	held.add()
	go func() {
		defer held.done()
		defer func() { <-h.slots }()
		done <- h.review.Handle(context.Background(), req)
	}()
	late := time.NewTimer(time.Until(deadline))
	defer late.Stop()
	select {
	case resp := <-done:
		return resp
	case <-late.C:
		// The judging goes on in its slot until it ends; the answer
		// cannot wait for it.
		h.Metrics.errors.WithLabelValues(reasonTimeout).Inc()
		h.Log.Warn("admission request not judged in time", "uid", req.UID, "kind", req.Kind.Kind, "name", req.Name)
		return h.unjudged(req, "judging it took longer than the API server waits")
	}
}

// unjudged answers a request that could not be judged in time: admitted
// with a warning that says so, or, in deny mode, refused (an object that
// was not judged is not let through unseen).
func (h *handler) unjudged(req admission.Request, why string) admission.Response {
	obj := describeRequest(req)
	h.Metrics.requests.WithLabelValues(string(req.Operation), "unjudged").Inc()
	var resp admission.Response
	if h.Policy.Mode == Deny {
		resp = admission.Denied(fmt.Sprintf("backfire could not judge %s (%s); in deny mode an object that was not judged is refused: try again", obj, why))
	} else {
		resp = admission.Allowed("not judged: " + why).WithWarnings(FitWarnings([]string{
			fmt.Sprintf("backfire could not judge %s (%s): it was admitted without being checked; run backfire scan on it", obj, why)})...)
	}
	resp.UID = req.UID
	return resp
}

func describeRequest(req admission.Request) string {
	name := req.Name
	if req.Namespace != "" {
		name = req.Namespace + "/" + name
	}
	return req.Kind.Kind + " " + name
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
		h.Metrics.errors.WithLabelValues(reasonBadRequest).Inc()
		h.Metrics.requests.WithLabelValues(op, "error").Inc()
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("backfire: the AdmissionReview has no request (uid and kind are required)"))
	}
	v := h.judge(&req.AdmissionRequest)
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

// The AdmissionReview versions the handler reads: both are the same
// type, so a v1beta1 review decodes into v1's, and its answer is written
// in the version it came in (as controller-runtime's Webhook.ServeHTTP
// does, pkg/webhook/admission/http.go).
var reviews = func() serializer.CodecFactory {
	s := apiruntime.NewScheme()
	utilruntime.Must(admissionv1.AddToScheme(s))
	utilruntime.Must(admissionv1beta1.AddToScheme(s))
	return serializer.NewCodecFactory(s)
}()

type anyReview struct{ admissionv1.AdmissionReview }

func decodeReview(body []byte) (admission.Request, *schema.GroupVersionKind, error) {
	var req admission.Request
	ar := anyReview{}
	ar.Request = &req.AdmissionRequest
	ar.SetGroupVersionKind(admissionv1.SchemeGroupVersion.WithKind("AdmissionReview"))
	_, gvk, err := reviews.UniversalDeserializer().Decode(body, nil, &ar)
	return req, gvk, err
}

// writeReview writes an answer as an AdmissionReview of the request's
// version (v1 when it is not known: a body that could not be read or
// decoded still gets a review the API server can read).
func writeReview(w http.ResponseWriter, gvk *schema.GroupVersionKind, resp admission.Response) {
	ar := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "AdmissionReview"},
		Response: &resp.AdmissionResponse,
	}
	if gvk != nil && *gvk != (schema.GroupVersionKind{}) {
		ar.APIVersion, ar.Kind = gvk.GroupVersion().String(), gvk.Kind
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(ar)
}

// budget bounds the bytes of bodies held at once.
type budget struct {
	mu    sync.Mutex
	free  int64
	freed chan struct{} // closed and replaced when bytes are given back
}

func newBudget(n int64) *budget { return &budget{free: n, freed: make(chan struct{})} }

// take holds n bytes, waiting up to wait for them.
func (b *budget) take(n int64, wait time.Duration) bool {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		b.mu.Lock()
		if n <= b.free {
			b.free -= n
			b.mu.Unlock()
			return true
		}
		freed := b.freed
		b.mu.Unlock()
		select {
		case <-freed:
		case <-timer.C:
			return false
		}
	}
}

func (b *budget) give(n int64) {
	b.mu.Lock()
	b.free += n
	close(b.freed)
	b.freed = make(chan struct{})
	b.mu.Unlock()
}

// hold is one request's bytes in the budget, given back when both the
// handler and the judging (which may outlive the answer) are done.
type hold struct {
	budget *budget
	mu     sync.Mutex
	n      int64
	refs   int
}

func (h *hold) take(n int64, wait time.Duration) bool {
	if !h.budget.take(n, wait) {
		return false
	}
	h.mu.Lock()
	h.n += n
	h.mu.Unlock()
	return true
}

func (h *hold) add() {
	h.mu.Lock()
	h.refs++
	h.mu.Unlock()
}

func (h *hold) done() {
	h.mu.Lock()
	h.refs--
	var n int64
	if h.refs == 0 {
		n, h.n = h.n, 0
	}
	h.mu.Unlock()
	if n > 0 {
		h.budget.give(n)
	}
}
