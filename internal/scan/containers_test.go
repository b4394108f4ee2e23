package scan

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// manyContainers is a Deployment of n PostgreSQL containers, each with
// the probes that draw BF101, BF103 and the other probe rules' fixes,
// which compose on the one object.
func manyContainers(n int) string {
	var b strings.Builder
	b.WriteString("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: big\n  namespace: default\nspec:\n  replicas: 3\n  selector:\n    matchLabels: {app: big}\n  template:\n    metadata:\n      labels: {app: big}\n    spec:\n      containers:\n")
	for i := range n {
		fmt.Fprintf(&b, `      - name: c%d
        image: postgres:16.4
        ports:
        - containerPort: %d
        livenessProbe:
          exec:
            command: ["pg_isready", "-h", "127.0.0.1"]
          periodSeconds: 10
          failureThreshold: 3
          timeoutSeconds: 1
        readinessProbe:
          tcpSocket:
            port: %d
          periodSeconds: 5
        resources:
          requests: {cpu: 100m, memory: 128Mi}
          limits: {memory: 256Mi}
`, i, 5000+i, 5000+i)
	}
	return b.String()
}

// scanAllocs scans one object of n containers and returns what the scan
// allocated (objects) and how many findings it reported.
func scanAllocs(t testing.TB, dir string, n int) (uint64, int) {
	p := filepath.Join(dir, fmt.Sprintf("c%d.yaml", n))
	if err := os.WriteFile(p, []byte(manyContainers(n)), 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res, err := Run(Options{Paths: []string{p}})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) > 0 {
		t.Fatalf("errors: %v", res.Errors)
	}
	return after.Mallocs - before.Mallocs, len(res.Findings)
}

// TestManyContainersScanLinearly: the scan of one object grows with its
// containers, not with their square (4,183 containers in one 3 MB object
// took 102 s: each container's fix was composed into, agreed with and
// placed from the start of the list of all of them). Measured in
// allocations, which do not depend on the machine's load: four times the
// containers must cost about four times as many, where the square cost
// sixteen. BenchmarkScanManyContainers measures the time.
func TestManyContainersScanLinearly(t *testing.T) {
	dir := t.TempDir()
	scanAllocs(t, dir, 10) // the catalog and the rules' tables, made once
	small, fs := scanAllocs(t, dir, 150)
	large, fl := scanAllocs(t, dir, 600)
	if fs == 0 || fl < 4*fs {
		t.Fatalf("findings %d and %d, want some and at least four times as many", fs, fl)
	}
	ratio := float64(large) / float64(small)
	t.Logf("allocations: %d for 150 containers, %d for 600 (%.2fx)", small, large, ratio)
	if ratio > 5 {
		t.Errorf("four times the containers allocated %.2fx as much (%d against %d): the scan grows faster than the object", ratio, large, small)
	}
}

// BenchmarkScanManyContainers scans one object of 2,000 containers.
//
//	go test ./internal/scan -run '^$' -bench ManyContainers -benchmem
func BenchmarkScanManyContainers(b *testing.B) {
	p := filepath.Join(b.TempDir(), "big.yaml")
	if err := os.WriteFile(p, []byte(manyContainers(2000)), 0o644); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Run(Options{Paths: []string{p}}); err != nil {
			b.Fatal(err)
		}
	}
}
