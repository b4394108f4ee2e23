package cluster

import (
	"path/filepath"
	"strings"
	"testing"
)

// With no kubeconfig and no pod around it, --cluster says what to give it,
// not client-go's "try setting KUBERNETES_MASTER environment variable".
func TestConnectWithoutAKubeconfigSaysWhatToGive(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("KUBECONFIG", "")
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBERNETES_SERVICE_PORT", "")
	_, err := Connect("", "")
	if err == nil || strings.Contains(err.Error(), "KUBERNETES_MASTER") || !strings.Contains(err.Error(), "--kubeconfig") {
		t.Errorf("error %v", err)
	}
	// A kubeconfig named but missing is another error: it names the file.
	missing := filepath.Join(home, "nope.yaml")
	if _, err := Connect(missing, ""); err == nil || !strings.Contains(err.Error(), "nope.yaml") {
		t.Errorf("missing file: %v", err)
	}
}
