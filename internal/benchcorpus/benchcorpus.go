// Package benchcorpus writes a deterministic repository of manifests for
// benchmarks: files x 100 documents, three Deployments, one StatefulSet (a
// database, some without requests, some with a 1 s query probe) and one
// Service in every five, shaped like the shared side-by-side corpus. The
// generated files are not committed.
package benchcorpus

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

var (
	teams  = []string{"payments", "search", "orders", "identity", "catalog", "billing", "growth", "platform"}
	images = []string{"registry.example.com/%s:%s", "ghcr.io/example/%s:%s", "quay.io/example/%s:%s"}
	dbs    = []struct {
		kind, image string
		port        int
		cmd         string
	}{
		{"postgres", "postgres:16.4", 5432, "pg_isready -h 127.0.0.1"},
		{"mysql", "mysql:8.4", 3306, "mysqladmin ping"},
		// A bare redis-cli ping exits 0 on LOADING: comparing its answer
		// with PONG is what makes it a probe that fails while Redis loads.
		{"redis", "redis:7.2", 6379, `[ "$(redis-cli ping)" = PONG ]`},
		{"mongo", "mongo:7.0", 27017, "mongosh --quiet --eval 'db.adminCommand(1)'"},
	}
)

type gen struct {
	rng *rand.Rand
	b   strings.Builder
}

func (g *gen) pick(xs ...int) int { return xs[g.rng.IntN(len(xs))] }

func (g *gen) labels(name, team, indent string) {
	fmt.Fprintf(&g.b, "%sapp.kubernetes.io/name: %s\n%sapp.kubernetes.io/part-of: %s\n%sapp.kubernetes.io/managed-by: kustomize\n",
		indent, name, indent, team, indent)
}

func (g *gen) env(n int) {
	g.b.WriteString("        env:\n")
	for i := range n {
		if i%3 == 2 {
			fmt.Fprintf(&g.b, "        - name: SECRET_%d\n          valueFrom:\n            secretKeyRef:\n              name: app-secrets\n              key: key%d\n", i, i)
		} else {
			fmt.Fprintf(&g.b, "        - name: VAR_%d\n          value: \"%d\"\n", i, g.rng.IntN(100000))
		}
	}
}

func (g *gen) deployment(idx int, ns string) (name string, port int) {
	name = fmt.Sprintf("svc-%05d", idx)
	team := teams[g.rng.IntN(len(teams))]
	image := fmt.Sprintf(images[g.rng.IntN(len(images))], name, fmt.Sprintf("%d.%d.%d", 1+g.rng.IntN(9), g.rng.IntN(31), g.rng.IntN(21)))
	port = g.pick(8080, 8000, 9090, 3000)
	mem := g.pick(64, 128, 256, 512)
	fmt.Fprintf(&g.b, "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: %s\n  namespace: %s\n  labels:\n", name, ns)
	g.labels(name, team, "    ")
	fmt.Fprintf(&g.b, "  annotations:\n    owner: team-%s@example.com\nspec:\n  replicas: %d\n  revisionHistoryLimit: 5\n  selector:\n    matchLabels:\n      app.kubernetes.io/name: %s\n", team, 2+g.rng.IntN(11), name)
	g.b.WriteString("  strategy:\n    type: RollingUpdate\n    rollingUpdate:\n      maxSurge: 25%\n      maxUnavailable: 0\n  template:\n    metadata:\n      labels:\n")
	g.labels(name, team, "        ")
	fmt.Fprintf(&g.b, "    spec:\n      serviceAccountName: %s\n      securityContext:\n        runAsNonRoot: true\n        runAsUser: %d\n      containers:\n      - name: app\n        image: %s\n        ports:\n        - name: http\n          containerPort: %d\n", name, 10000+g.rng.IntN(1000), image, port)
	g.env(1 + g.rng.IntN(6))
	fmt.Fprintf(&g.b, "        resources:\n          requests:\n            cpu: %dm\n            memory: %dMi\n          limits:\n            memory: %dMi\n", g.pick(50, 100, 250, 500), mem, 2*mem)
	fmt.Fprintf(&g.b, "        readinessProbe:\n          httpGet:\n            path: /ready\n            port: http\n          periodSeconds: %d\n          timeoutSeconds: %d\n", g.pick(5, 10), g.pick(1, 2, 3))
	fmt.Fprintf(&g.b, "        livenessProbe:\n          httpGet:\n            path: /healthz\n            port: http\n          initialDelaySeconds: %d\n          periodSeconds: 10\n          timeoutSeconds: %d\n          failureThreshold: 3\n", g.pick(10, 30, 60), g.pick(1, 2, 5))
	g.b.WriteString("        securityContext:\n          allowPrivilegeEscalation: false\n          readOnlyRootFilesystem: true\n")
	return name, port
}

func (g *gen) statefulset(idx int, ns string) (name string, port int) {
	db := dbs[g.rng.IntN(len(dbs))]
	name = fmt.Sprintf("%s-%05d", db.kind, idx)
	team := teams[g.rng.IntN(len(teams))]
	fmt.Fprintf(&g.b, "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: %s\n  namespace: %s\n  labels:\n", name, ns)
	g.labels(name, team, "    ")
	fmt.Fprintf(&g.b, "spec:\n  serviceName: %s\n  replicas: %d\n  podManagementPolicy: OrderedReady\n  selector:\n    matchLabels:\n      app.kubernetes.io/name: %s\n  template:\n    metadata:\n      labels:\n", name, g.pick(1, 3), name)
	g.labels(name, team, "        ")
	fmt.Fprintf(&g.b, "    spec:\n      terminationGracePeriodSeconds: 60\n      containers:\n      - name: %s\n        image: %s\n        ports:\n        - name: db\n          containerPort: %d\n", db.kind, db.image, db.port)
	g.env(1 + g.rng.IntN(4))
	if g.rng.Float64() < 0.7 {
		fmt.Fprintf(&g.b, "        resources:\n          requests:\n            cpu: %dm\n            memory: %dMi\n", g.pick(250, 500, 1000), g.pick(512, 1024, 2048))
	}
	fmt.Fprintf(&g.b, "        livenessProbe:\n          exec:\n            command: [\"sh\", \"-c\", %q]\n          initialDelaySeconds: %d\n          periodSeconds: 10\n          timeoutSeconds: %d\n", db.cmd, g.pick(30, 120, 300), g.pick(1, 1, 5))
	fmt.Fprintf(&g.b, "        readinessProbe:\n          tcpSocket:\n            port: db\n          periodSeconds: 5\n        volumeMounts:\n        - name: data\n          mountPath: /var/lib/%s\n", db.kind)
	fmt.Fprintf(&g.b, "  volumeClaimTemplates:\n  - metadata:\n      name: data\n    spec:\n      accessModes: [ReadWriteOnce]\n      resources:\n        requests:\n          storage: %dGi\n", g.pick(10, 20, 50, 100))
	return name, db.port
}

func (g *gen) service(name string, port int, ns string, headless bool) {
	fmt.Fprintf(&g.b, "apiVersion: v1\nkind: Service\nmetadata:\n  name: %s\n  namespace: %s\n  annotations:\n    prometheus.io/scrape: \"true\"\nspec:\n  type: ClusterIP\n", name, ns)
	if headless {
		g.b.WriteString("  clusterIP: None\n")
	}
	fmt.Fprintf(&g.b, "  selector:\n    app.kubernetes.io/name: %s\n  ports:\n  - name: main\n    port: %d\n    targetPort: %d\n    protocol: TCP\n", name, port, port)
}

// Generate writes files manifest files of 100 documents each into dir and
// returns the number of bytes written.
func Generate(dir string, files int) (int64, error) {
	g := &gen{rng: rand.New(rand.NewPCG(20260829, 1))}
	var total int64
	d, s := 0, 0
	for f := range files {
		ns := fmt.Sprintf("ns-%03d", f)
		g.b.Reset()
		type target struct {
			name string
			port int
		}
		var targets []target
		for i := range 100 {
			if i > 0 {
				g.b.WriteString("---\n")
			}
			switch i % 5 {
			case 0, 1, 2:
				n, p := g.deployment(d, ns)
				d++
				targets = append(targets, target{n, p})
			case 3:
				n, p := g.statefulset(s, ns)
				s++
				targets = append(targets, target{n, p})
			default:
				grp := i / 5
				t := targets[len(targets)-1]
				if grp%2 == 1 {
					t = targets[len(targets)-4]
				}
				g.service(t.name, t.port, ns, grp%2 == 0)
			}
		}
		p := filepath.Join(dir, fmt.Sprintf("manifests-%03d.yaml", f))
		if err := os.WriteFile(p, []byte(g.b.String()), 0o644); err != nil {
			return total, err
		}
		total += int64(g.b.Len())
	}
	return total, nil
}
