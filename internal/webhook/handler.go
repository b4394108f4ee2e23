package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime"
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
	// "?timeout=5s", see timeout). The API server waits timeoutSeconds,
	// 10 s by default and 30 s at most (k8s.io/api
	// admissionregistration/v1/types.go, ValidatingWebhook.TimeoutSeconds).
	DefaultTimeout = 10 * time.Second
	// DefaultReadTimeout bounds the reading of a body of unknown length
	// (chunked, which the API server does not send): a client that
	// trickles one loses the connection instead of holding it (see
	// readTime).
	DefaultReadTimeout = 2 * time.Second
	// MaxRequestBytes is the largest body read: controller-runtime's
	// limit (pkg/webhook/admission/http.go, maxRequestSize: two objects
	// of at most 3 MiB, the API server's own request limit, and 1 MiB
	// for the rest).
	MaxRequestBytes = 7 << 20
	// DefaultMaxMemoryBytes bounds the memory the requests being judged
	// may hold at once, by their estimate (judgingBytes); and
	// DefaultMaxBodyBytes that of the requests being read or waiting to be
	// judged (BodyBytesPerByte: the body and its decoded object). With the
	// process's own and the cluster caches', they stay inside the
	// deployment's GOMEMLIMIT (400 MiB) and its 512 MiB limit.
	DefaultMaxMemoryBytes = 256 << 20
	DefaultMaxBodyBytes   = 48 << 20
)

// HandlerOptions configure the /validate handler.
type HandlerOptions struct {
	Judge   *Judge
	Policy  Policy
	Metrics *Metrics
	Log     *slog.Logger
	// MaxInFlight bounds the requests judged at once (CPU); 0 means one
	// per CPU (GOMAXPROCS): judging reads nothing but memory, so more at
	// once would only share the cores and make each late.
	MaxInFlight int
	// MaxMemoryBytes bounds the estimated memory of the requests judged
	// at once; 0 means DefaultMaxMemoryBytes.
	MaxMemoryBytes int64
	// MaxBodyBytes bounds the memory of the requests being read or
	// waiting for MaxMemoryBytes; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	Timeout      time.Duration
	ReadTimeout  time.Duration
}

// NewHandler returns the admission handler. Every request is answered
// with an AdmissionReview before the API server's timeout, whatever
// happens. A request waits, its body unread, for room for its body, which
// is read within a short read deadline; then, in line, for the memory its
// judging is estimated to take, and for a judging slot: at most half of
// its time in all. Its judging is cancelled when its time is up or its
// client goes. A request that cannot be judged in time (no room, no slot,
// too slow, too large) is answered as the policy says, without a verdict:
// admitted with a warning, or refused in deny mode, "not judged:
// overloaded".
func NewHandler(o HandlerOptions) http.Handler { return newHandler(o) }

func newHandler(o HandlerOptions) *handler {
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = runtime.GOMAXPROCS(0)
	}
	if o.MaxMemoryBytes <= 0 {
		o.MaxMemoryBytes = DefaultMaxMemoryBytes
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
	if o.Metrics == nil {
		o.Metrics = NewMetrics()
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	h := &handler{HandlerOptions: o, slots: make(chan struct{}, o.MaxInFlight), mem: newMemory(o.MaxMemoryBytes, true), bodies: newMemory(o.MaxBodyBytes, false)}
	h.review = &admission.Webhook{Handler: admission.HandlerFunc(h.handle)}
	h.judge = func(ctx context.Context, req *admissionv1.AdmissionRequest) (Verdict, error) {
		return h.Judge.JudgeContext(ctx, req)
	}
	return h
}

type handler struct {
	HandlerOptions
	slots  chan struct{}
	mem    *memory // judgings
	bodies *memory // bodies read, until their judging holds mem
	review *admission.Webhook
	// judge judges a request (tests slow it down).
	judge func(context.Context, *admissionv1.AdmissionRequest) (Verdict, error)
}

// Reasons of backfire_webhook_errors_total.
const (
	reasonBadRequest = "bad_request" // not a POST, an empty or undecodable body, no request
	reasonTooLarge   = "too_large"   // a body over MaxRequestBytes
	reasonSlowClient = "slow_client" // the body did not arrive within the read deadline
	reasonOverloaded = "overloaded"  // no room in memory, or no slot, in time
	reasonTimeout    = "timeout"     // judging did not end before the deadline
	reasonInternal   = "internal"    // a panic outside the rules
)

// notRead is why a body was not read whole.
type notRead struct {
	reason string // one of the reasons above
	status int    // the HTTP status of an answer without a uid
	err    error
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	defer func() { h.Metrics.latency.Observe(time.Since(start).Seconds()) }()
	if r.Method != http.MethodPost {
		h.Metrics.errors.WithLabelValues(reasonBadRequest).Inc()
		http.Error(w, "backfire: POST an AdmissionReview (admission.k8s.io/v1) as application/json", http.StatusMethodNotAllowed)
		return
	}
	deadline := start.Add(h.timeout(r))
	// Half of the time for waiting, half for reading and judging.
	queueBy := start.Add(deadline.Sub(start) / 2)
	rc := http.NewResponseController(w)
	// The answer is written by the deadline too; the deadlines are
	// cleared for the next request on the connection (the server sets
	// no WriteTimeout of its own that would).
	_ = rc.SetWriteDeadline(deadline.Add(time.Second))
	defer func() { _ = rc.SetWriteDeadline(time.Time{}) }()
	// The judging stops when the deadline passes or the client goes (the
	// API server closes the call at its timeout).
	ctx, cancel := context.WithDeadline(r.Context(), deadline)
	defer cancel()

	bodies := &hold{mem: h.bodies, refs: 1}
	defer bodies.done()
	body, fail := h.read(r, rc, bodies, queueBy, deadline)
	if fail != nil {
		h.refuse(w, r, rc, body, fail, deadline)
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
	// In line for the memory of its judging, which counts the body and
	// the decoded review too: the body's room is given back once it is
	// held.
	held := &hold{mem: h.mem, refs: 1}
	defer held.done()
	wait, stop := context.WithDeadline(ctx, queueBy)
	ok := held.take(wait, judgingBytes(body))
	stop()
	bodies.done()
	if !ok {
		h.Metrics.errors.WithLabelValues(reasonOverloaded).Inc()
		h.Log.Warn("admission request not judged: no memory free in time", "uid", req.UID, "bytes", len(body))
		writeReview(w, gvk, h.unjudged(req, "overloaded", "too many admission requests at once to judge this one before the API server's timeout"))
		return
	}
	writeReview(w, gvk, h.judgeBy(ctx, req, held, queueBy))
}

// timeout is how long a request may take: the API server's timeout for
// the call (it sends it as "?timeout=5s": k8s.io/apiserver
// pkg/admission/plugin/webhook/validating/dispatcher.go, callHook, sets
// it from the webhook's timeoutSeconds, rounded up to a whole second, and
// client-go's Request.Timeout puts it in the URL), less a second for the
// answer to travel and for the rounding (half of it for a timeout of a
// second or two), and never more than Timeout.
func (h *handler) timeout(r *http.Request) time.Duration {
	t := h.Timeout
	if d, err := time.ParseDuration(r.URL.Query().Get("timeout")); err == nil && d > 0 {
		t = min(t, max(d-time.Second, d/2))
	}
	return t
}

// read reads the body whole within the read deadline, once room for it
// is held in bodies (waiting until queueBy for it). On a failure it
// returns what it read of the body, for refuse.
func (h *handler) read(r *http.Request, rc *http.ResponseController, held *hold, queueBy, deadline time.Time) ([]byte, *notRead) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, &notRead{reasonBadRequest, http.StatusBadRequest, errors.New("request body is empty")}
	}
	tooLarge := &notRead{reasonTooLarge, http.StatusRequestEntityTooLarge, fmt.Errorf("request entity is too large; limit is %d bytes", MaxRequestBytes)}
	if r.ContentLength > MaxRequestBytes {
		return nil, tooLarge
	}
	overloaded := &notRead{reasonOverloaded, http.StatusTooManyRequests, errors.New("too many admission requests at once to judge this one before the API server's timeout")}
	// A body of known length holds its room at once, waiting in line for
	// it unread; one of unknown length (chunked, which the API server
	// does not send) holds it chunk by chunk as it arrives, without
	// waiting, so that a client that trickles holds little.
	size := r.ContentLength
	if size >= 0 {
		ctx, cancel := context.WithDeadline(r.Context(), queueBy)
		ok := held.take(ctx, BodyBytesPerByte*(size+1))
		cancel()
		if !ok {
			return nil, overloaded
		}
	}
	now := time.Now()
	readBy := now.Add(readTime(size, h.ReadTimeout, deadline.Sub(now)))
	_ = rc.SetReadDeadline(readBy)
	// Cleared only once the body is read: after an error, what net/http
	// reads of the rest of it must stop at the deadline too.
	cleared := false
	defer func() {
		if cleared {
			_ = rc.SetReadDeadline(time.Time{})
		}
	}()
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
				return buf, tooLarge
			}
			if !held.take(noWait, BodyBytesPerByte*int64(grow)) {
				return buf, overloaded
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
				return buf, &notRead{reasonSlowClient, http.StatusRequestTimeout, fmt.Errorf("the body did not arrive within %v", readBy.Sub(now).Round(time.Millisecond))}
			}
			return buf, &notRead{reasonBadRequest, http.StatusBadRequest, err}
		}
	}
	if len(buf) > MaxRequestBytes {
		return buf, tooLarge
	}
	cleared = true
	return buf, nil
}

// readTime is how long a body may take to arrive. One of known length
// holds its room from the start, and under a burst shares the network
// with a hundred others: it may take the request's time. One of unknown
// length (which the API server does not send) holds what has arrived:
// it is cut off at ReadTimeout, so that a client that trickles does not
// hold a connection for long.
func readTime(size int64, timeout, most time.Duration) time.Duration {
	if size < 0 {
		return min(timeout, most)
	}
	return most
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// refuse answers a request whose body was not read whole. Its review's
// uid is read from what was read and from the rest of the body as it
// streams by, without holding it: with the uid, the answer is one the API
// server takes (admitted with a warning, or in deny mode refused, "not
// judged"); without it (not a review the API server sent), a review
// with the HTTP status in its code.
func (h *handler) refuse(w http.ResponseWriter, r *http.Request, rc *http.ResponseController, read []byte, fail *notRead, deadline time.Time) {
	h.Metrics.errors.WithLabelValues(fail.reason).Inc()
	h.Log.Warn("admission request not read", "reason", fail.reason, "err", fail.err)
	w.Header().Set("Connection", "close")
	var rest io.Reader = bytes.NewReader(read)
	if fail.reason != reasonSlowClient && r.Body != nil {
		// The rest of the body streams by within the read deadline, up
		// to the objects (readHead stops there) or a bound.
		_ = rc.SetReadDeadline(earlier(time.Now().Add(h.ReadTimeout), deadline))
		rest = io.MultiReader(rest, io.LimitReader(r.Body, 2*MaxRequestBytes))
	}
	head, _ := readHead(rest)
	if head.req.UID == "" || fail.reason == reasonBadRequest {
		writeReview(w, nil, admission.Errored(int32(fail.status), fail.err))
		return
	}
	cause := map[string]string{reasonTooLarge: "too large", reasonSlowClient: "body too slow", reasonOverloaded: "overloaded"}[fail.reason]
	gvk := head.gvk
	writeReview(w, &gvk, h.unjudged(head.req, cause, fail.err.Error()))
}

// judgeBy judges a request in a slot and returns its answer by the
// deadline of ctx: the verdict, or, when no slot frees up by queueBy or
// the judging is not done in time, an answer without a verdict (see
// unjudged). The judging is cancelled with ctx; its memory stays held
// until it has stopped.
func (h *handler) judgeBy(ctx context.Context, req admission.Request, held *hold, queueBy time.Time) admission.Response {
	select {
	case h.slots <- struct{}{}:
	default:
		wait, cancel := context.WithDeadline(ctx, queueBy)
		defer cancel()
		select {
		case h.slots <- struct{}{}:
		case <-wait.Done():
			h.Metrics.errors.WithLabelValues(reasonOverloaded).Inc()
			h.Log.Warn("admission request not judged: too many at once", "uid", req.UID, "inFlight", cap(h.slots))
			return h.unjudged(req, "overloaded", "too many admission requests at once to judge this one before the API server's timeout")
		}
	}
	done := make(chan admission.Response, 1)
	held.add()
	go func() {
		defer held.done()
		defer func() { <-h.slots }()
		resp := h.review.Handle(ctx, req)
		if ctx.Err() == nil { // a cancelled judging's verdict is incomplete
			done <- resp
		}
	}()
	select {
	case resp := <-done:
		return resp
	case <-ctx.Done():
		h.Metrics.errors.WithLabelValues(reasonTimeout).Inc()
		h.Log.Warn("admission request not judged in time", "uid", req.UID, "kind", req.Kind.Kind, "name", req.Name)
		return h.unjudged(req, "timeout", "judging it took longer than the API server waits")
	}
}

// unjudged answers a request that was not judged: admitted with a
// warning that says so, or, in deny mode, refused: deny mode promises
// that nothing it would refuse gets in, so what it did not look at is not
// let through unseen. The answer says "not judged: " and the cause.
func (h *handler) unjudged(req admission.Request, cause, detail string) admission.Response {
	obj := describeRequest(req)
	h.Metrics.requests.WithLabelValues(string(req.Operation), "unjudged").Inc()
	why := "not judged: " + cause + " (" + detail + ")"
	var resp admission.Response
	if h.Policy.Mode == Deny {
		resp = admission.Denied(fmt.Sprintf("backfire refused %s, %s; in deny mode what backfire did not judge is refused: try again", obj, why))
	} else {
		resp = admission.Allowed(why).WithWarnings(FitWarnings([]string{
			fmt.Sprintf("backfire admitted %s without checking it, %s; run backfire scan on it", obj, why)})...)
	}
	resp.UID = req.UID
	return resp
}

func describeRequest(req admission.Request) string {
	name := req.Name
	if req.Namespace != "" {
		name = req.Namespace + "/" + name
	}
	if req.Kind.Kind == "" {
		return "the object"
	}
	return req.Kind.Kind + " " + name
}

// handle judges one decoded request. A panic anywhere in it is answered
// as a request that was not judged (admitted with a warning, refused in
// deny mode), and never crashes the server.
func (h *handler) handle(ctx context.Context, req admission.Request) (resp admission.Response) {
	op := string(req.Operation)
	defer func() {
		if v := recover(); v != nil {
			h.Metrics.errors.WithLabelValues(reasonInternal).Inc()
			h.Log.Error("internal error judging an admission request", "uid", req.UID, "kind", req.Kind.Kind, "name", req.Name, "panic", v)
			resp = h.unjudged(req, "internal error", fmt.Sprintf("%v; please report it", v))
		}
	}()
	if req.UID == "" || req.Kind.Kind == "" {
		h.Metrics.errors.WithLabelValues(reasonBadRequest).Inc()
		h.Metrics.requests.WithLabelValues(op, "error").Inc()
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("backfire: the AdmissionReview has no request (uid and kind are required)"))
	}
	v, err := h.judge(ctx, &req.AdmissionRequest)
	if err != nil {
		return admission.Errored(http.StatusServiceUnavailable, err) // never sent: the request has ended
	}
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
