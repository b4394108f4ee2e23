package analysis

import (
	"testing"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
)

// A secretKeyRef arg takes its value from a Secret of the input: data is
// base64, stringData is plain; a Secret elsewhere, a missing key or a value
// that is not base64 leave it unknown.
func TestSecretArgs(t *testing.T) {
	ix, ro := objects(t, `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: app, namespace: shop}
---
apiVersion: v1
kind: Secret
metadata: {name: web, namespace: shop}
data:
  url: aHR0cHM6Ly9leGFtcGxlLmNvbS9vaw==
  broken: "not base64!"
stringData:
  token: plain
---
apiVersion: v1
kind: Secret
metadata: {name: web, namespace: other}
data:
  elsewhere: eA==
`)
	ref := func(name, key string) v1alpha1.Argument {
		return v1alpha1.Argument{Name: name + "/" + key, ValueFrom: &v1alpha1.ValueFrom{SecretKeyRef: &v1alpha1.SecretKeyRef{Name: name, Key: key}}}
	}
	args := Args(ix, ro, nil, []v1alpha1.Argument{ref("web", "url"), ref("web", "token"), ref("web", "broken"), ref("web", "elsewhere"), ref("absent", "url")})
	for arg, want := range map[string]struct {
		text  string
		known bool
	}{
		"web/url":       {"https://example.com/ok", true},
		"web/token":     {"plain", true},
		"web/broken":    {"the value of Secret web (key broken)", false},
		"web/elsewhere": {"the value of Secret web (key elsewhere)", false},
		"absent/url":    {"the value of Secret absent (key url)", false},
	} {
		if got := args[arg]; got.Text != want.text || got.Known != want.known || got.Secret == "" {
			t.Errorf("%s: %+v, want %q known=%v from a Secret", arg, got, want.text, want.known)
		}
	}
}

// TestSecretKeysAreMatchedExactly: a `StringData:` key written beside
// `data:` is a field Kubernetes drops, so its value is not the Secret's.
func TestSecretKeysAreMatchedExactly(t *testing.T) {
	ix, _ := objects(t, `apiVersion: v1
kind: Secret
metadata: {name: web, namespace: shop}
StringData:
  url: https://attacker.example/ok
`)
	if v, ok := SecretValue(ix, "shop", "web", "url"); ok {
		t.Errorf("read %q from a field Kubernetes drops", v)
	}
}
