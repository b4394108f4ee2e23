package cluster

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/scan"
)

// What a cluster holds once Flagger has initialised a Canary: the target
// Deployment scaled to zero, and podinfo-primary, which Flagger created
// from the target's pod spec with the Canary as its controller
// (fluxcd/flagger v1.44.0 pkg/canary/deployment_controller.go
// createPrimaryDeployment, lines 234-320).
const flaggerLive = `
apiVersion: flagger.app/v1beta1
kind: Canary
metadata: {name: podinfo, namespace: test, uid: 5d1c7a0e-0000-4000-8000-000000000001}
spec:
  provider: nginx
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: podinfo}
  service: {port: 80}
  analysis: {interval: 1m, threshold: 5, maxWeight: 50, stepWeight: 10}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: podinfo, namespace: test}
spec:
  replicas: 0
  selector: {matchLabels: {app: podinfo}}
  template:
    metadata: {labels: {app: podinfo}}
    spec:
      containers:
      - name: podinfo
        image: ghcr.io/stefanprodan/podinfo:6.0.0
        livenessProbe:
          httpGet: {path: /healthz, port: 9898}
          periodSeconds: 10
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: podinfo-primary
  namespace: test
  labels: {app: podinfo-primary}
  ownerReferences:
  - {apiVersion: flagger.app/v1beta1, kind: Canary, name: podinfo, uid: 5d1c7a0e-0000-4000-8000-000000000001, controller: true, blockOwnerDeletion: true}
spec:
  replicas: 3
  selector: {matchLabels: {app: podinfo-primary}}
  template:
    metadata: {labels: {app: podinfo-primary}}
    spec:
      containers:
      - name: podinfo
        image: ghcr.io/stefanprodan/podinfo:6.0.0
        livenessProbe:
          httpGet: {path: /healthz, port: 9898}
          periodSeconds: 10
      # Not in the target's spec (added by hand, or by something other
      # than Flagger): a finding of the primary alone.
      - name: proxy
        image: registry.example.com/proxy:1.0
        livenessProbe:
          httpGet: {path: /healthz, port: 15020}
          periodSeconds: 10
`

func liveFiles(t *testing.T, docs string) []load.File {
	t.Helper()
	var files []load.File
	for _, doc := range strings.Split(docs, "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(DefaultKinds, func(k Kind) bool { return k.Kind == u.GetKind() })
		if i < 0 {
			t.Fatalf("no kind %s", u.GetKind())
		}
		if !DefaultKinds[i].ownedElsewhere(u) {
			files = append(files, Render(ctxName, DefaultKinds[i], u))
		}
	}
	return files
}

// A finding on the target's pod spec is reported once, on the target (the
// object people edit), and says that the primary runs the same spec; the
// primary's copy is not a second finding.
func TestFlaggerPrimaryIsNotReportedTwice(t *testing.T) {
	res := scanFiles(t, scan.Options{Extra: liveFiles(t, flaggerLive)})
	var onTarget, onPrimary []string
	for _, f := range res.Findings {
		switch f.Object.Name {
		case "podinfo":
			if f.Object.Kind == "Deployment" {
				onTarget = append(onTarget, f.Rule)
				if f.Rule == "BF102" && !strings.Contains(f.Message+strings.Join(f.Mechanism, " "), "podinfo-primary") {
					t.Errorf("the target's finding does not say that podinfo-primary runs the same spec: %s", f.Message)
				}
			}
		case "podinfo-primary":
			onPrimary = append(onPrimary, f.Rule+" "+f.Container)
		}
	}
	if !slices.Contains(onTarget, "BF102") {
		t.Fatalf("the target's liveness probe without timeoutSeconds is not reported: target %v, primary %v", onTarget, onPrimary)
	}
	if !slices.Equal(onPrimary, []string{"BF102 proxy"}) {
		t.Errorf("on the primary %v, want only its own container's BF102 (target %v)", onPrimary, onTarget)
	}
}
