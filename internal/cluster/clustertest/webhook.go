package clustertest

import (
	"fmt"
	"net"
	"testing"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"backfire.dev/backfire/internal/testutil"
)

// WithWebhooks starts a control plane of the test's own (the shared one has
// no webhooks) that calls the validating webhooks at a local address: each
// webhook's clientConfig.service becomes the URL
// https://127.0.0.1:<LocalServingPort><service path>, and envtest writes a
// serving certificate for it to LocalServingCertDir (tls.crt, tls.key) and
// puts its CA in caBundle. The control plane stops when the test ends.
func WithWebhooks(t testing.TB, hooks []*admissionregistrationv1.ValidatingWebhookConfiguration) (*Env, *envtest.WebhookInstallOptions) {
	t.Helper()
	testutil.Heavy(t, "a kube-apiserver and etcd")
	logf.SetLogger(logr.Discard())
	root := testutil.RepoRoot(t)
	assets, err := assetsDir(root)
	if err != nil {
		t.Fatal(err)
	}
	crds, err := crdPaths(root)
	if err != nil {
		t.Fatal(err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hooks {
		for i := range h.Webhooks {
			cc := &h.Webhooks[i].ClientConfig
			if cc.Service == nil {
				continue
			}
			// Set here rather than by envtest, which would join host and
			// path with a second slash.
			url := fmt.Sprintf("https://127.0.0.1:%d%s", port, ptr.Deref(cc.Service.Path, "/"))
			cc.URL, cc.Service = &url, nil
		}
	}
	te := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     crds,
		ErrorIfCRDPathMissing: true,
		WebhookInstallOptions: envtest.WebhookInstallOptions{ValidatingWebhooks: hooks, LocalServingHost: "127.0.0.1", LocalServingPort: port},
	}
	cfg, err := te.Start()
	if err != nil {
		t.Fatalf("test control plane: %v", err)
	}
	t.Cleanup(func() {
		if err := te.Stop(); err != nil {
			t.Logf("stopping the test control plane: %v", err)
		}
	})
	e := &Env{env: te, Config: cfg}
	if e.Dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if e.Typed, err = kubernetes.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	return e, &te.WebhookInstallOptions
}

// freePort asks the kernel for a port nobody listens on.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
