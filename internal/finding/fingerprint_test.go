package finding

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// fingerprintHashed is Identity.Fingerprint as it was before it hashed
// from a buffer on the stack: each field and its zero byte written to a
// hash.Hash. A fingerprint is kept across runs (--diff, SARIF), so the
// two must agree on every identity.
func fingerprintHashed(id Identity) string {
	h := sha256.New()
	for _, s := range []string{id.Rule, id.Kind, id.Namespace, id.Name, id.Container, id.Path} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func TestFingerprintAsHashed(t *testing.T) {
	long := strings.Repeat("spec.template.spec.containers[0].", 20) // past the stack buffer
	for _, id := range []Identity{
		{},
		{Rule: "BF101", Kind: "Deployment", Namespace: "default", Name: "web", Container: "app", Path: "spec.template.spec.containers[0].livenessProbe"},
		{Rule: "BF101", Kind: "Deployment", Name: "web\x00", Path: "a"},
		{Rule: "BF101", Kind: "Deployment", Name: "web", Path: "\x00a"},
		{Rule: "BF2", Path: long},
		{Rule: "BF2", Name: long, Path: long},
	} {
		if got, want := id.Fingerprint(), fingerprintHashed(id); got != want {
			t.Errorf("%+v: Fingerprint() = %s, want %s", id, got, want)
		}
	}
}

// FuzzFingerprint: the fingerprint of any identity is the hashed one.
//
//	go test ./internal/finding -run '^$' -fuzz FuzzFingerprint -fuzztime 1m
func FuzzFingerprint(f *testing.F) {
	f.Add("BF101", "Deployment", "default", "web", "app", "spec.template.spec.containers[0].livenessProbe")
	f.Add("", "", "", "", "", "")
	f.Fuzz(func(t *testing.T, rule, kind, namespace, name, container, path string) {
		id := Identity{Rule: rule, Kind: kind, Namespace: namespace, Name: name, Container: container, Path: path}
		if got, want := id.Fingerprint(), fingerprintHashed(id); got != want {
			t.Fatalf("%+v: Fingerprint() = %s, want %s", id, got, want)
		}
	})
}
