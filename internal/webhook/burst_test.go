package webhook

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"backfire.dev/backfire/internal/testutil"
)

// TestBurstHoldsMemoryAndNeverAdmitsUnjudged is the webhook's load test
// with hostile and unlucky clients, against the built binary (backfire
// serve, deny mode, the deployment's GOMEMLIMIT and limits) on loopback:
//
//   - slow: 20 clients claim a 3 MB body and trickle it, while 20
//     reviews are sent one after another;
//   - large: a body over the 7 MiB limit, with and without a length;
//   - burst: 100 reviews of a 3 MB Deployment at once, as the API server
//     sends them (its default timeout, 10 s).
//
// Every answer must be an AdmissionReview for its request's uid, within
// the API server's timeout; in deny mode none admits what was not judged;
// the server's peak resident memory (VmHWM) stays under the pod's 512 MiB,
// and the judgings stop with their requests (the CPU the server uses once
// the burst is answered).
func TestBurstHoldsMemoryAndNeverAdmitsUnjudged(t *testing.T) {
	testutil.Heavy(t, "a minute, a build of backfire and 2 GB of memory")
	dir := t.TempDir()
	bin := filepath.Join(dir, "backfire")
	build := exec.Command("go", "build", "-o", bin, "./cmd/backfire")
	build.Dir = testutil.RepoRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	pool := selfSigned(t, dir, "backfire-burst")
	port := freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := exec.CommandContext(ctx, bin, "serve", "--addr", "127.0.0.1:"+strconv.Itoa(port), "--health-addr", "127.0.0.1:0",
		"--tls-cert", filepath.Join(dir, "tls.crt"), "--tls-key", filepath.Join(dir, "tls.key"),
		"--cluster", "off", "--mode", "deny", "--log-level", "error")
	srv.Env = append(os.Environ(), "GOMEMLIMIT=400MiB") // as deploy/ sets it
	var logs bytes.Buffer
	srv.Stderr = &logs
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cancel()
		_ = srv.Wait()
		if t.Failed() {
			t.Logf("server log:\n%.4000s", logs.String())
		}
	}()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	for end := time.Now().Add(30 * time.Second); ; {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(end) {
			t.Fatalf("server did not listen: %v\n%s", err, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	tlsConfig := &tls.Config{RootCAs: pool}
	url := "https://" + addr + Path
	pid := srv.Process.Pid

	// slow
	small := reviewBody(t, request(t, admissionv1.Create, fixture(t, "bad-statefulset.yaml"), nil))
	slowAnswers := make([]string, 20)
	var slowWG sync.WaitGroup
	for i := range slowAnswers {
		slowWG.Go(func() { slowAnswers[i] = trickleReview(addr, tlsConfig, fmt.Sprintf("slow-%02d", i)) })
	}
	time.Sleep(200 * time.Millisecond)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsConfig, MaxIdleConnsPerHost: 128}}
	var slowMax time.Duration
	for i := range 20 {
		a := sendTo(client, url+"?timeout=5s", "uid-registry-database", bytes.NewReader(small), int64(len(small)))
		slowMax = max(slowMax, a.took)
		if a.err != nil || a.review.Response.Allowed || !strings.Contains(a.review.Response.Result.Message, "BF101") {
			t.Errorf("review %d beside slow clients: %v %+v", i, a.err, a.review)
		}
	}
	slowWG.Wait()
	for i, a := range slowAnswers {
		// Refused, not judged: its body too slow, or (while others held the
		// room for bodies) overloaded.
		if !strings.Contains(a, `"allowed":false`) || !strings.Contains(a, fmt.Sprintf(`"uid":"slow-%02d"`, i)) || !strings.Contains(a, "not judged: ") {
			t.Errorf("slow client %d: %.300s", i, a)
		}
	}
	t.Logf("slow: 20 reviews judged beside 20 slow clients, slowest %v", slowMax.Round(time.Millisecond))

	// large
	huge := append([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"large","kind":{"group":"apps","version":"v1","kind":"Deployment"},"name":"x","namespace":"y","operation":"CREATE","object":{"a":"`),
		bytes.Repeat([]byte("a"), MaxRequestBytes+1<<20)...)
	huge = append(huge, `"}}}`...)
	for _, length := range []int64{int64(len(huge)), -1} {
		a := sendTo(client, url+"?timeout=5s", "large", bytes.NewReader(huge), length)
		if a.err != nil || a.review.Response.Allowed || !strings.Contains(a.review.Response.Result.Message, "not judged: too large") {
			t.Errorf("large body (length %d): %v %+v", length, a.err, a.review)
		}
	}

	// burst
	resetPeakOf(pid)
	big := bigRequest(t, 3<<20)
	big.UID = "uid-big-000"
	body := reviewBody(t, big)
	at := bytes.Index(body, []byte(big.UID))
	head, tail := body[:at], body[at+len(big.UID):]
	burstClient := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsConfig, MaxIdleConnsPerHost: 128}}
	answers := make([]burstAnswer, 100)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() {
			uid := fmt.Sprintf("uid-big-%03d", i)
			r := io.MultiReader(bytes.NewReader(head), strings.NewReader(uid), bytes.NewReader(tail))
			answers[i] = sendTo(burstClient, url, uid, r, int64(len(body)))
		})
	}
	wg.Wait()
	answered := time.Since(start)
	cpuAtEnd := cpuOf(pid)
	time.Sleep(3 * time.Second)
	idleCPU := cpuOf(pid) - cpuAtEnd
	peak := peakOf(pid)
	var judged, unjudged int
	var slowest time.Duration
	for i, a := range answers {
		slowest = max(slowest, a.took)
		switch {
		case a.err != nil:
			t.Errorf("burst %d: %v", i, a.err)
		case strings.Contains(a.review.Response.Result.Message, "not judged"):
			unjudged++
			if a.review.Response.Allowed {
				t.Errorf("burst %d: admitted unjudged in deny mode: %+v", i, a.review.Response)
			}
		default:
			judged++
		}
	}
	t.Logf("burst: 100 reviews of %.1f MB: %d judged, %d refused as not judged, 0 failed; all answered in %v, slowest %v; peak RSS %d MiB; CPU in the 3 s after: %v",
		float64(len(body))/1e6, judged, unjudged, answered.Round(time.Millisecond), slowest.Round(time.Millisecond), peak>>20, idleCPU.Round(10*time.Millisecond))
	if peak == 0 || peak >= 512<<20 {
		t.Errorf("peak RSS %d MiB, want under 512 MiB", peak>>20)
	}
	if idleCPU > time.Second {
		t.Errorf("the server used %v of CPU in the 3 s after every request was answered: judgings went on", idleCPU)
	}
}

type burstAnswer struct {
	took   time.Duration
	review *admissionv1.AdmissionReview
	err    error
}

// sendTo posts a review and checks that the answer is an AdmissionReview
// for uid (any uid when uid is ""), within the client's timeout.
func sendTo(client *http.Client, url, uid string, body io.Reader, length int64) burstAnswer {
	req, err := http.NewRequest(http.MethodPost, url, body)
	if err != nil {
		return burstAnswer{err: err}
	}
	req.ContentLength = length
	if length < 0 {
		req.Body = io.NopCloser(body) // no length: chunked
	}
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return burstAnswer{took: time.Since(start), err: err}
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	a := burstAnswer{took: time.Since(start), err: err}
	var ar admissionv1.AdmissionReview
	switch {
	case err != nil:
	case resp.StatusCode != http.StatusOK || json.Unmarshal(data, &ar) != nil || ar.Response == nil || ar.Kind != "AdmissionReview" ||
		ar.APIVersion != "admission.k8s.io/v1" || uid != "" && string(ar.Response.UID) != uid || ar.Response.Result == nil && !ar.Response.Allowed:
		a.err = fmt.Errorf("not an AdmissionReview for %s: status %d: %.300s", uid, resp.StatusCode, data)
	default:
		if ar.Response.Result == nil {
			ar.Response.Result = &metav1.Status{}
		}
		a.review = &ar
	}
	return a
}

// trickleReview claims a 3 MB review, sends its start (with its uid) and
// then a byte every 100 ms, and returns the answer.
func trickleReview(addr string, cfg *tls.Config, uid string) string {
	c, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		return err.Error()
	}
	defer c.Close()
	fmt.Fprintf(c, "POST %s?timeout=5s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 3000000\r\n\r\n", Path, addr)
	fmt.Fprintf(c, `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":%q,"kind":{"group":"apps","version":"v1","kind":"Deployment"},"namespace":"shop","name":"slow","operation":"CREATE","object":{"a":"`, uid)
	done := make(chan string, 1)
	go func() {
		_ = c.SetReadDeadline(time.Now().Add(6 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			done <- err.Error()
			return
		}
		data, _ := io.ReadAll(resp.Body)
		done <- string(data)
	}()
	for {
		select {
		case a := <-done:
			return a
		case <-time.After(100 * time.Millisecond):
			_, _ = c.Write([]byte("a"))
		}
	}
}

// resetPeakOf starts a process's peak resident memory over (Linux).
func resetPeakOf(pid int) {
	_ = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

// peakOf is a process's peak resident memory (VmHWM), in bytes.
func peakOf(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// cpuOf is the CPU time a process has used (user and system).
func cpuOf(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command, which is in parentheses.
	f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+2:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100 // clock ticks (USER_HZ, 100 on Linux)
}
