package webhook

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic/dynamicinformer"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/tools/cache"

	"backfire.dev/backfire/internal/object"
)

// servedName is the common name of the certificate the server presents.
func servedName(t *testing.T, addr string) string {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].Subject.CommonName
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// A certificate rotated on disk is served without a restart, and the
// health endpoints say what they should.
func TestServeReloadsCertificateAndReportsHealth(t *testing.T) {
	dir := t.TempDir()
	pool := selfSigned(t, dir, "first")
	port, health := freePort(t), freePort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, ServeOptions{
			Addr: addr, HealthAddr: "127.0.0.1:" + strconv.Itoa(health),
			CertFile: filepath.Join(dir, "tls.crt"), KeyFile: filepath.Join(dir, "tls.key"),
			Handler:  HandlerOptions{Judge: newJudge(t, nil, nil), Policy: deny},
			CertPoll: 100 * time.Millisecond,
			Ready:    func() { close(ready) },
		})
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatal(err)
	case <-time.After(20 * time.Second):
		t.Fatal("server did not start")
	}
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	base := "http://127.0.0.1:" + strconv.Itoa(health)
	if code, body := get(t, base+"/livez"); code != http.StatusOK {
		t.Errorf("/livez %d %s", code, body)
	}
	if code, body := get(t, base+"/readyz"); code != http.StatusOK {
		t.Errorf("/readyz %d %s", code, body)
	}

	// One admission over TLS, trusted through the first certificate.
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 5 * time.Second}
	body := reviewBody(t, request(t, admissionv1.Create, fixture(t, "bad-statefulset.yaml"), nil))
	if _, err := send(client, "https://"+addr+Path, body); err == nil || !strings.Contains(err.Error(), `"allowed":false`) {
		t.Errorf("deny mode admission: %v", err)
	}
	_, metrics := get(t, base+"/metrics")
	for _, want := range []string{`backfire_webhook_requests_total{decision="denied",operation="CREATE"} 1`,
		`backfire_webhook_findings_total{rule="BF101",severity="error"} 1`, "backfire_webhook_request_duration_seconds_bucket",
		"controller_runtime_webhook_requests_total"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	if got := servedName(t, addr); got != "first" {
		t.Fatalf("serving %q", got)
	}
	selfSigned(t, dir, "second")
	deadline := time.Now().Add(10 * time.Second)
	for servedName(t, addr) != "second" {
		if time.Now().After(deadline) {
			t.Fatal("the rotated certificate was not served within 10 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestServeRefusesBadSettings(t *testing.T) {
	dir := t.TempDir()
	for name, o := range map[string]ServeOptions{
		"no port":     {Addr: "127.0.0.1", CertFile: filepath.Join(dir, "tls.crt"), KeyFile: filepath.Join(dir, "tls.key")},
		"port 0":      {Addr: ":0", CertFile: filepath.Join(dir, "tls.crt"), KeyFile: filepath.Join(dir, "tls.key")},
		"no cert yet": {Addr: ":8443", CertFile: filepath.Join(dir, "tls.crt"), KeyFile: filepath.Join(dir, "tls.key")},
	} {
		err := Serve(context.Background(), o)
		if err == nil {
			t.Errorf("%s: served", name)
		}
	}
}

// /readyz waits for the cluster caches; /livez does not.
func TestReadyzWaitsForTheCaches(t *testing.T) {
	dir := t.TempDir()
	selfSigned(t, dir, "ready")
	var synced atomic.Bool
	cc := &ClusterContext{
		factory:     dynamicinformer.NewDynamicSharedInformerFactory(dynamicfake.NewSimpleDynamicClient(runtime.NewScheme()), 0),
		synced:      []cache.InformerSynced{synced.Load},
		byNamespace: map[string]map[objectKey]*object.Object{}, snapshot: map[string][]*object.Object{},
	}
	port, health := freePort(t), freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, ServeOptions{
			Addr: "127.0.0.1:" + strconv.Itoa(port), HealthAddr: "127.0.0.1:" + strconv.Itoa(health),
			CertFile: filepath.Join(dir, "tls.crt"), KeyFile: filepath.Join(dir, "tls.key"),
			Handler: HandlerOptions{Judge: newJudge(t, nil, cc), Policy: deny},
			Cluster: cc,
			Ready:   func() { close(ready) },
		})
	}()
	defer func() { cancel(); <-done }()
	select {
	case <-ready:
	case err := <-done:
		t.Fatal(err)
	case <-time.After(20 * time.Second):
		t.Fatal("server did not start")
	}
	base := "http://127.0.0.1:" + strconv.Itoa(health)
	if code, body := get(t, base+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "cluster caches") {
		t.Errorf("/readyz before the sync: %d %s", code, body)
	}
	if code, _ := get(t, base+"/livez"); code != http.StatusOK {
		t.Errorf("/livez before the sync: %d", code)
	}
	// Judged before the sync, a finding says the context was incomplete.
	v := newJudge(t, nil, cc).Judge(request(t, admissionv1.Create, fixture(t, "bad-statefulset.yaml"), nil))
	if len(v.Findings) == 0 || !strings.Contains(strings.Join(v.Findings[0].Assumptions, " "), "still being read") {
		t.Errorf("assumptions before the sync: %q", v.Findings[0].Assumptions)
	}
	synced.Store(true)
	if code, body := get(t, base+"/readyz"); code != http.StatusOK {
		t.Errorf("/readyz after the sync: %d %s", code, body)
	}
}
