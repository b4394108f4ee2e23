// Package probes holds the probe rules (BF1xx): liveness probes that kill a
// slow but healthy server, and keep killing it through crash recovery;
// readiness probes that empty a Service on one slow answer.
package probes

import (
	"encoding/json"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"backfire.dev/backfire/internal/classify"
)

// classification renders a database-like verdict for a finding:
// "PostgreSQL (image goharbor/harbor-db, env PGDATA)".
func classification(v classify.Verdict) string {
	return v.Server.Name + " (" + v.EvidenceString() + ")"
}

// handlerValue returns the probe's handler as the manifest writes it, for
// a patch that moves it to another probe.
func handlerValue(p *corev1.Probe) any {
	var v any
	switch {
	case p.Exec != nil:
		v = p.Exec
	case p.HTTPGet != nil:
		v = p.HTTPGet
	case p.TCPSocket != nil:
		v = p.TCPSocket
	case p.GRPC != nil:
		v = p.GRPC
	default:
		return nil
	}
	// A round trip through JSON gives maps, so the patch's key order
	// is the encoder's.
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // typed API structs always marshal
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		panic(err)
	}
	return m
}

// times renders "n time(s)".
func times(n int) string {
	if n == 1 {
		return "once"
	}
	return strconv.Itoa(n) + " times"
}
