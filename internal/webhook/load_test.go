package webhook

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
)

// BenchmarkJudgeDeployment is the CPU cost of one admission of a typical
// Deployment, in process: decode, index with the namespace's cached
// context, every rule, the answer.
//
//	go test ./internal/webhook -run '^$' -bench JudgeDeployment -benchmem
func BenchmarkJudgeDeployment(b *testing.B) {
	j := newJudge(b, nil, loadContext(b))
	req := request(b, admissionv1.Create, fixture(b, "healthy-deployment.yaml"), nil)
	b.ReportAllocs()
	for b.Loop() {
		v := j.Judge(req)
		_ = deny.Respond(v)
	}
}

// BenchmarkLoad200rps is the load test: the real server (TLS on loopback,
// controller-runtime's webhook server, the whole handler) sent a typical
// Deployment at a fixed 200 requests per second, open loop (a request is
// sent on schedule whether or not the earlier ones have been answered), for
// loadRequests requests; then as fast as 8 clients can for loadBurst. It
// stops by itself: both phases are bounded in count and time.
//
//	go test ./internal/webhook -run '^$' -bench Load200rps -benchtime 1x
func BenchmarkLoad200rps(b *testing.B) {
	const (
		rate         = 200
		loadRequests = 2000 // 10 s at 200/s
		loadBurst    = 5 * time.Second
	)
	url, client := startLoadServer(b)
	body := reviewBody(b, request(b, admissionv1.Create, fixture(b, "healthy-deployment.yaml"), nil))
	for b.Loop() {
		// Open loop at the target rate.
		lat := make([]time.Duration, loadRequests)
		failed := 0
		var mu sync.Mutex
		var wg sync.WaitGroup
		start := time.Now()
		for i := range loadRequests {
			// On a fixed schedule, so that a late tick does not lower the rate.
			time.Sleep(time.Until(start.Add(time.Duration(i) * time.Second / rate)))
			wg.Go(func() {
				d, err := send(client, url, body)
				mu.Lock()
				defer mu.Unlock()
				lat[i] = d
				if err != nil {
					failed++
				}
			})
		}
		wg.Wait()
		elapsed := time.Since(start)
		slices.Sort(lat)
		p50, p99 := lat[len(lat)/2], lat[len(lat)*99/100]
		b.ReportMetric(ms(p50), "p50-ms")
		b.ReportMetric(ms(p99), "p99-ms")
		b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
		b.ReportMetric(float64(loadRequests)/elapsed.Seconds(), "offered-rps")
		b.ReportMetric(float64(failed), "failed")
		if failed > 0 {
			b.Errorf("%d of %d requests failed at %d/s", failed, loadRequests, rate)
		}

		// Closed loop: the most this machine answers.
		var done, errs int
		var dmu sync.Mutex
		deadline := time.Now().Add(loadBurst)
		var cwg sync.WaitGroup
		for range 8 {
			cwg.Go(func() {
				for time.Now().Before(deadline) {
					_, err := send(client, url, body)
					dmu.Lock()
					done++
					if err != nil {
						errs++
					}
					dmu.Unlock()
				}
			})
		}
		cwg.Wait()
		b.ReportMetric(float64(done)/loadBurst.Seconds(), "max-rps")
		if errs > 0 {
			b.Errorf("%d of %d requests failed in the closed loop", errs, done)
		}
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// send posts one review and checks the answer is one.
func send(client *http.Client, url string, body []byte) (time.Duration, error) {
	start := time.Now()
	resp, err := client.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return time.Since(start), err
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	d := time.Since(start)
	if err == nil && (resp.StatusCode != http.StatusOK || !bytes.Contains(data, []byte(`"allowed":true`))) {
		err = fmt.Errorf("status %d: %.200s", resp.StatusCode, data)
	}
	return d, err
}

// loadContext is a namespace's cache as the informers hold it: the
// Rollout's ScaledObject and AnalysisTemplate, and 100 Deployments and 100
// Services beside them, which every admission indexes.
func loadContext(b testing.TB) staticContext {
	c := contextOf(b, "rollout-context.yaml")
	healthy := fixture(b, "healthy-deployment.yaml")
	for i := range 100 {
		for _, src := range []string{
			string(bytes.Replace(healthy, []byte("name: catalog-web"), []byte("name: web-"+strconv.Itoa(i)), 1)),
			fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata: {name: svc-%d, namespace: shop}\nspec: {ports: [{port: 80}]}\n", i),
		} {
			f := load.Parse("cache", []byte(src))
			o, err := object.Decode(f.Documents[0])
			if err != nil {
				b.Fatal(err)
			}
			c.objs = append(c.objs, o)
		}
	}
	return c
}

// startLoadServer runs Serve on a loopback port with a fresh self-signed
// certificate, and returns its URL and a client that trusts it.
func startLoadServer(b *testing.B) (string, *http.Client) {
	dir := b.TempDir()
	pool := selfSigned(b, dir, "backfire-load")
	port := freePort(b)
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, ServeOptions{
			Addr: "127.0.0.1:" + strconv.Itoa(port), HealthAddr: "127.0.0.1:0",
			CertFile: filepath.Join(dir, "tls.crt"), KeyFile: filepath.Join(dir, "tls.key"),
			Handler: HandlerOptions{Judge: newJudge(b, nil, loadContext(b)), Policy: Policy{Mode: Warn, FailOn: finding.Error}},
			Ready:   func() { close(ready) },
		})
	}()
	select {
	case <-ready:
	case err := <-done:
		b.Fatal(err)
	case <-time.After(20 * time.Second):
		b.Fatal("server did not start")
	}
	b.Cleanup(func() { cancel(); <-done })
	client := &http.Client{
		Timeout: 5 * time.Second, // the deploy/ timeoutSeconds
		Transport: &http.Transport{
			TLSClientConfig:     &tls.Config{RootCAs: pool},
			ForceAttemptHTTP2:   true,
			MaxIdleConnsPerHost: 64,
		},
	}
	return "https://127.0.0.1:" + strconv.Itoa(port) + Path, client
}

func freePort(b testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// selfSigned writes tls.crt and tls.key for 127.0.0.1 into dir, named cn.
func selfSigned(t testing.TB, dir, cn string) *x509.CertPool {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, typ string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("tls.crt", "CERTIFICATE", der)
	write("tls.key", "EC PRIVATE KEY", keyDER)
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return pool
}
