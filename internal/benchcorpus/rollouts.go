package benchcorpus

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
)

// rollout writes one Argo Rollouts application shaped like seed 000
// (examples/order-front-api.yaml): a canary Rollout with Istio traffic
// routing and a rollback window, the KEDA ScaledObject that sizes it, the
// AnalysisTemplate its background analysis runs, and its two Services.
func (g *gen) rollout(idx int, ns string) {
	name := fmt.Sprintf("api-%05d", idx)
	first := g.pick(1, 5, 10, 20)
	minPods := g.pick(1, 2, 3)
	fmt.Fprintf(&g.b, `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata:
  name: %[1]s
  namespace: %[2]s
spec:
  revisionHistoryLimit: 4
  rollbackWindow:
    revisions: %[3]d
  selector:
    matchLabels:
      app: %[1]s
  strategy:
    canary:
      canaryService: %[1]s-canary
      stableService: %[1]s-stable
      trafficRouting:
        istio:
          virtualService:
            name: %[1]s
            routes:
            - primary
      minPodsPerReplicaSet: %[4]d
      analysis:
        templates:
        - templateName: %[1]s-errors
        args:
        - name: service
          value: %[1]s.%[2]s.svc.cluster.local
      steps:
      - setWeight: %[5]d
      - pause: {duration: 5m}
      - setWeight: %[6]d
      - pause: {duration: 5m}
      - setWeight: 100
  template:
    metadata:
      labels:
        app: %[1]s
    spec:
      containers:
      - name: api
        image: registry.example.com/%[2]s/%[1]s:2026.08.%[7]d
        command: ["gunicorn", "--workers", "%[8]d", "--bind", "0.0.0.0:8000", "app:wsgi"]
        ports:
        - containerPort: 8000
          name: http
        resources:
          requests:
            cpu: 500m
            memory: 512Mi
          limits:
            cpu: %[9]dm
            memory: 1Gi
        readinessProbe:
          httpGet:
            path: /ready
            port: http
          periodSeconds: 5
          timeoutSeconds: %[10]d
          failureThreshold: 1
        livenessProbe:
          httpGet:
            path: /live
            port: http
          periodSeconds: 10
          timeoutSeconds: 5
          failureThreshold: 6
---
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: %[1]s
  namespace: %[2]s
spec:
  scaleTargetRef:
    apiVersion: argoproj.io/v1alpha1
    kind: Rollout
    name: %[1]s
  minReplicaCount: %[11]d
  maxReplicaCount: %[12]d
  triggers:
  - type: prometheus
    metadata:
      serverAddress: http://prometheus.monitoring:9090
      query: sum(rate(istio_requests_total{destination_service_name="%[1]s"}[1m]))
      threshold: "5"
---
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata:
  name: %[1]s-errors
  namespace: %[2]s
spec:
  args:
  - name: service
  metrics:
  - name: error-rate
    interval: 20s
    failureLimit: 2
    successCondition: result[0] < 0.05
    provider:
      prometheus:
        address: http://prometheus.monitoring:9090
        query: |
          sum(rate(istio_requests_total{destination_service="{{args.service}}",response_code=~"5.*"}[1m]))
          /
          sum(rate(istio_requests_total{destination_service="{{args.service}}"}[1m]))
`, name, ns, g.pick(2, 3, 5), minPods, first, 2*first+g.pick(5, 10, 25), 1+g.rng.IntN(28),
		g.pick(2, 4, 8), g.pick(900, 1000, 2000), g.pick(1, 2, 3), g.pick(2, 4, 8), g.pick(20, 100, 360))
	for _, role := range []string{"canary", "stable"} {
		fmt.Fprintf(&g.b, "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: %s-%s\n  namespace: %s\nspec:\n  selector:\n    app: %s\n  ports:\n  - name: http\n    port: 80\n    targetPort: http\n", name, role, ns, name)
	}
}

// GenerateRollouts writes files manifest files of 20 Argo Rollouts
// applications (100 documents) each into dir, a corpus richer in
// cross-object rules than Generate's, and returns the bytes written.
func GenerateRollouts(dir string, files int) (int64, error) {
	g := &gen{rng: rand.New(rand.NewPCG(20260821, 2))}
	var total int64
	for f := range files {
		g.b.Reset()
		for i := range 20 {
			if i > 0 {
				g.b.WriteString("---\n")
			}
			g.rollout(f*20+i, fmt.Sprintf("ns-%03d", f))
		}
		p := filepath.Join(dir, fmt.Sprintf("rollouts-%03d.yaml", f))
		if err := os.WriteFile(p, []byte(g.b.String()), 0o644); err != nil {
			return total, err
		}
		total += int64(g.b.Len())
	}
	return total, nil
}
