package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// Path is where the API server sends AdmissionReviews.
const Path = "/validate"

// ServeOptions configure Serve.
type ServeOptions struct {
	// Addr is the HTTPS address of Path ("host:port"; the port is required).
	Addr string
	// HealthAddr serves /livez, /readyz and /metrics over plain HTTP, for
	// the kubelet and Prometheus inside the cluster.
	HealthAddr        string
	CertFile, KeyFile string
	Handler           HandlerOptions
	// Cluster is nil without cluster access.
	Cluster *ClusterContext
	Log     *slog.Logger
	// CertPoll is how often the certificate files are re-read besides
	// file-change events; 0 means controller-runtime's default (10 s).
	CertPoll time.Duration
	// Ready, when set, is told once both servers listen (tests).
	Ready func()
}

// Serve runs the webhook until ctx ends. Certificates are reloaded when
// their files change (controller-runtime's certwatcher), without a restart.
func Serve(ctx context.Context, o ServeOptions) error {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	host, portStr, err := net.SplitHostPort(o.Addr)
	if err != nil {
		return fmt.Errorf("--addr %q: %w", o.Addr, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port <= 0 || port > 65535 {
		return fmt.Errorf("--addr %q: the port must be a number from 1 to 65535", o.Addr)
	}
	certs, err := certwatcher.New(o.CertFile, o.KeyFile)
	if err != nil {
		return fmt.Errorf("TLS certificate: %w", err)
	}
	if o.CertPoll > 0 {
		certs = certs.WithWatchInterval(o.CertPoll)
	}
	if o.Handler.Metrics == nil {
		o.Handler.Metrics = NewMetrics()
	}
	if o.Handler.Log == nil {
		o.Handler.Log = o.Log
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	srv := webhook.NewServer(webhook.Options{
		Host: host, Port: port,
		TLSOpts: []func(*tls.Config){func(c *tls.Config) {
			c.GetCertificate = certs.GetCertificate
			c.MinVersion = tls.VersionTLS12
		}},
	})
	srv.Register(Path, NewHandler(o.Handler))

	health := &http.Server{
		Handler:           healthMux(o, certs, srv),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      10 * time.Second,
	}
	hl, err := net.Listen("tcp", o.HealthAddr)
	if err != nil {
		return fmt.Errorf("--health-addr: %w", err)
	}

	done := make(chan error, 3)
	go func() {
		if err := certs.Start(ctx); err != nil {
			o.Log.Error("certificate watcher stopped", "err", err)
		}
	}()
	if o.Cluster != nil {
		o.Cluster.Start(ctx)
		go func() {
			if o.Cluster.WaitForSync(ctx) {
				o.Log.Info("cluster caches synced")
			}
		}()
	}
	go func() { done <- srv.Start(ctx) }()
	go func() {
		if err := health.Serve(hl); !errors.Is(err, http.ErrServerClosed) {
			done <- fmt.Errorf("health server: %w", err)
		}
	}()
	o.Log.Info("serving admission reviews", "addr", o.Addr, "path", Path, "health", hl.Addr().String(),
		"mode", string(o.Handler.Policy.Mode), "failOn", o.Handler.Policy.FailOn.String(), "cluster", o.Cluster != nil)
	if o.Ready != nil {
		go waitListening(ctx, srv, o.Ready)
	}

	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-done:
		cancel(runErr)
	}
	shutdown, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	_ = health.Shutdown(shutdown)
	return runErr
}

// waitListening calls ready once the webhook server answers TLS.
func waitListening(ctx context.Context, srv webhook.Server, ready func()) {
	check := srv.StartedChecker()
	req, _ := http.NewRequest(http.MethodGet, "/", nil)
	for ctx.Err() == nil {
		if check(req) == nil {
			ready()
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// healthMux serves the process's health as the product preaches it: /livez
// depends on nothing but the process, so a slow API server never gets the
// webhook restarted; /readyz says whether requests can be served well (a
// valid certificate loaded, the HTTPS server listening, the caches synced).
func healthMux(o ServeOptions, certs *certwatcher.CertWatcher, srv webhook.Server) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/livez", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	started := srv.StartedChecker()
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		var failed []string
		if err := certReady(certs); err != nil {
			failed = append(failed, "certificate: "+err.Error())
		}
		if err := started(r); err != nil {
			failed = append(failed, "webhook server: "+err.Error())
		}
		if o.Cluster != nil && !o.Cluster.Synced() {
			failed = append(failed, "cluster caches: not synced yet")
		}
		if len(failed) > 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			for _, f := range failed {
				fmt.Fprintln(w, f)
			}
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	// controller-runtime's own webhook series (in-flight, latency by
	// status code) sit beside the webhook's.
	mux.Handle("/metrics", promhttp.HandlerFor(prometheus.Gatherers{o.Handler.Metrics.Registry, crmetrics.Registry}, promhttp.HandlerOpts{}))
	return mux
}

// certReady checks that a certificate is loaded and valid now.
func certReady(certs *certwatcher.CertWatcher) error {
	c, _ := certs.GetCertificate(nil)
	if c == nil || len(c.Certificate) == 0 {
		return errors.New("not loaded")
	}
	leaf := c.Leaf
	if leaf == nil {
		var err error
		if leaf, err = x509.ParseCertificate(c.Certificate[0]); err != nil {
			return err
		}
	}
	now := time.Now()
	if now.Before(leaf.NotBefore) || now.After(leaf.NotAfter) {
		return fmt.Errorf("not valid now (valid %s to %s)", leaf.NotBefore.Format(time.RFC3339), leaf.NotAfter.Format(time.RFC3339))
	}
	return nil
}
