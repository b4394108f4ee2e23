package release

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"backfire.dev/backfire/internal/testutil"
)

// The image is built from image/Containerfile by podman, FROM scratch, with
// the snapshot's binary laid out as GoReleaser's dockers_v2 lays out its
// build context. `podman run` needs cgroups and rlimits these machines do
// not give, so the image's saved filesystem (podman export) runs under
// chroot, as the image's user: `version` prints, and `serve` answers
// /livez and /readyz and serves TLS with the certificate it was given.
func TestImageBuiltByPodmanRunsFromItsFilesystem(t *testing.T) {
	s := distOrSkip(t)
	podman, err := exec.LookPath("podman")
	if err != nil {
		t.Fatal("no podman: hack/test-release.sh installs Debian's podman")
	}
	root := testutil.RepoRoot(t)
	work := t.TempDir()
	ctx := filepath.Join(work, "context")
	bin := filepath.Join(ctx, runtime.GOOS, runtime.GOARCH, "backfire")
	untar(t, s.archive(), filepath.Dir(bin), true)
	for _, f := range []string{"ca-certificates.crt", "passwd", "group"} {
		copyFile(t, filepath.Join(root, "image", f), filepath.Join(ctx, "image", f))
	}
	// Its own storage (vfs: nothing mounted that a cleanup would trip on);
	// podman wants a run root shorter than 50 characters.
	run, err := os.MkdirTemp("", "bfpod")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(run) })
	p := func(args ...string) string {
		t.Helper()
		all := append([]string{"--root", filepath.Join(work, "storage"), "--runroot", run, "--storage-driver", "vfs"}, args...)
		out, err := exec.Command(podman, all...).CombinedOutput()
		if err != nil {
			t.Fatalf("podman %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	const tag = "localhost/backfire:test"
	p("build", "--platform", runtime.GOOS+"/"+runtime.GOARCH, "-f", filepath.Join(root, "image", "Containerfile"), "-t", tag, ctx)

	var cfg []struct {
		Config struct {
			User       string
			Entrypoint []string
		}
		RootFS struct{ Layers []string }
	}
	if err := json.Unmarshal([]byte(p("image", "inspect", tag)), &cfg); err != nil || len(cfg) != 1 {
		t.Fatalf("podman image inspect: %v", err)
	}
	if c := cfg[0].Config; c.User != "65532:65532" || strings.Join(c.Entrypoint, " ") != "/backfire" {
		t.Errorf("image config %+v: want user 65532:65532 and entrypoint /backfire", c)
	}

	id := p("create", tag)
	saved := filepath.Join(work, "rootfs.tar")
	p("export", "-o", saved, id)
	p("rm", id)
	rootfs := filepath.Join(work, "rootfs")
	names := untar(t, saved, rootfs, false)
	for _, want := range []string{"backfire", "etc/ssl/certs/ca-certificates.crt", "etc/passwd", "etc/group"} {
		if !slices.Contains(names, want) {
			t.Errorf("image holds %v, not %s", names, want)
		}
	}
	for _, n := range names {
		if strings.HasPrefix(n, "bin") || strings.HasPrefix(n, "usr") || strings.HasPrefix(n, "lib") {
			t.Errorf("an image FROM scratch holds %s", n)
		}
	}
	assertStatic(t, filepath.Join(rootfs, "backfire"))

	// As the image's user, with nothing of this machine's environment.
	chroot := func(args ...string) *exec.Cmd {
		cmd := exec.Command("chroot", append([]string{"--userspec=65532:65532", rootfs, "/backfire"}, args...)...)
		cmd.Env = []string{"HOME=/home/nonroot"}
		return cmd
	}
	out, err := chroot("version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "backfire v"+s.version+" (commit ") {
		t.Fatalf("chroot ... /backfire version: %v\n%s", err, out)
	}

	// The serving certificate, where the chart mounts its Secret.
	tlsDir := filepath.Join(rootfs, "tls")
	if err := os.MkdirAll(tlsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	pool := selfSigned(t, tlsDir)
	addr, health := freeAddr(t), freeAddr(t)
	var logs strings.Builder
	srv := chroot("serve", "--addr="+addr, "--health-addr="+health, "--tls-cert=/tls/tls.crt", "--tls-key=/tls/tls.key", "--cluster=auto")
	srv.Stdout, srv.Stderr = &logs, &logs
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })

	for _, path := range []string{"/livez", "/readyz"} {
		if code := pollStatus(t, "http://"+health+path, nil); code != http.StatusOK {
			t.Errorf("GET %s: %d\n%s", path, code, logs.String())
		}
	}
	tlsClient := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	if code := pollStatus(t, "https://"+addr+"/validate", tlsClient); code == 0 {
		t.Errorf("no TLS answer on %s with the given certificate\n%s", addr, logs.String())
	}
	if !strings.Contains(logs.String(), "no cluster access") {
		t.Errorf("serve without a cluster does not say so:\n%s", logs.String())
	}
}

// selfSigned writes tls.crt and tls.key for 127.0.0.1 into dir, readable
// by the image's user, and returns the pool that trusts them.
func selfSigned(t *testing.T, dir string) *x509.CertPool {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "backfire.test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
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
	for name, block := range map[string]*pem.Block{"tls.crt": {Type: "CERTIFICATE", Bytes: der}, "tls.key": {Type: "EC PRIVATE KEY", Bytes: keyDER}} {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(block), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return pool
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatalf("%v (hack/test-release.sh copies the CA bundle, as the release's before hook does)", err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// pollStatus GETs url until it answers (30 s at most) and returns the
// status, 0 if it never answered.
func pollStatus(t *testing.T, url string, c *http.Client) int {
	t.Helper()
	if c == nil {
		c = &http.Client{Timeout: 2 * time.Second}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := c.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK || !strings.HasSuffix(url, "z") || time.Now().After(deadline) {
				return resp.StatusCode
			}
		} else if time.Now().After(deadline) {
			t.Logf("GET %s: %v", url, err)
			return 0
		}
		time.Sleep(200 * time.Millisecond)
	}
}
