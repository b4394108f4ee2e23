package fixplan

import (
	"path/filepath"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/helm"
	"backfire.dev/backfire/internal/testutil"
)

// Telegraf's chart (influxdata/helm-charts, charts/telegraf,
// templates/pdb.yaml) prints its budget's minAvailable and maxUnavailable
// from pdb.* keys and writes nothing for unhealthyPodEvictionPolicy. The
// reason BF303 is left with names the keys that reach the two fields and
// the field none reaches, not "no values key of the chart is tied to
// spec".
func TestBudgetReasonNamesTheKeysThatReach(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{
		"telegraf/Chart.yaml":  "apiVersion: v2\nname: telegraf\nversion: 1.0.0\n",
		"telegraf/values.yaml": "pdb:\n  create: true\n  minAvailable: 1\n  # maxUnavailable: 1\n",
		"telegraf/templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: telegraf
spec:
  replicas: 1
  selector:
    matchLabels:
      app: telegraf
  template:
    metadata:
      labels:
        app: telegraf
    spec:
      containers:
      - name: telegraf
        image: telegraf:1.34
        resources:
          requests: {cpu: 100m, memory: 128Mi}
          limits: {memory: 128Mi}
`,
		// The chart's template, but for its apiVersion switch and labels.
		"telegraf/templates/pdb.yaml": `{{- if .Values.pdb.create }}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: telegraf
spec:
  {{- if .Values.pdb.minAvailable }}
  minAvailable: {{ .Values.pdb.minAvailable }}
  {{- end }}
  {{- if .Values.pdb.maxUnavailable }}
  maxUnavailable: {{ .Values.pdb.maxUnavailable }}
  {{- end }}
  selector:
    matchLabels:
      app: telegraf
  {{- end }}
`,
	})
	o := options(filepath.Join(dir, "telegraf"))
	o.Helm = &helm.Options{}
	p, err := Plan(o)
	if err != nil {
		t.Fatal(err)
	}
	var reason string
	for _, l := range p.Left {
		if l.Finding.Rule == "BF303" {
			reason = l.Reason
		}
	}
	if reason == "" {
		t.Fatalf("BF303 not left (left %+v, fixed %+v)", p.Left, p.Fixed)
	}
	for _, want := range []string{
		"do not reach spec.unhealthyPodEvictionPolicy (they reach spec.maxUnavailable, spec.minAvailable (deleted),",
		"pdb.minAvailable sets spec.minAvailable",
		"the template names pdb.maxUnavailable for spec.maxUnavailable",
	} {
		if !strings.Contains(reason, want) {
			t.Errorf("reason %q\nlacks %q", reason, want)
		}
	}
	if strings.Contains(reason, "no values key of the chart is tied to spec") {
		t.Errorf("reason denies the pdb keys: %s", reason)
	}
}
