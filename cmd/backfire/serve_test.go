package main

import (
	"strings"
	"testing"
)

// serve refuses settings it cannot honour before it listens: usage errors
// exit 2 with a message naming the flag.
func TestServeUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve"}, "--tls-cert and --tls-key"},
		{[]string{"serve", "--tls-cert", "c", "--tls-key", "k", "--mode", "block"}, "--mode"},
		{[]string{"serve", "--tls-cert", "c", "--tls-key", "k", "--fail-on", "info"}, "--fail-on"},
		{[]string{"serve", "--tls-cert", "c", "--tls-key", "k", "--cluster", "maybe"}, "--cluster"},
		{[]string{"serve", "--tls-cert", "c", "--tls-key", "k", "--log-level", "loud"}, "--log-level"},
		{[]string{"serve", "--tls-cert", "c", "--tls-key", "k", "--max-judging-memory", "lots"}, "--max-judging-memory"},
		{[]string{"serve", "--tls-cert", "c", "--tls-key", "k", "--max-judging-memory", "1Mi"}, "--max-judging-memory"},
		{[]string{"serve", "--tls-cert", "c", "--tls-key", "k", "--cluster", "off", "--config", "missing.yaml"}, "missing.yaml"},
	} {
		_, stderr, code := execute(t, "", tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 naming %s", tc.args, code, stderr, tc.want)
		}
	}
	// A certificate that cannot be read stops the server at start.
	_, stderr, code := execute(t, "", "serve", "--tls-cert", "missing.crt", "--tls-key", "missing.key", "--cluster", "off", "--addr", "127.0.0.1:1", "--health-addr", "127.0.0.1:0")
	if code != exitUsage || !strings.Contains(stderr, "missing.crt") {
		t.Errorf("unreadable certificate: exit %d, stderr %q", code, stderr)
	}
}
