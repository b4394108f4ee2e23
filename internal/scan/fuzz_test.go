package scan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode"

	"backfire.dev/backfire/internal/catalog"
	"backfire.dev/backfire/internal/config"
	"backfire.dev/backfire/internal/report"
	"backfire.dev/backfire/internal/rules"
)

// fuzzSeeds are small manifests that reach every family of rules: the
// fuzzer mutates small inputs quickly and minimizes what it finds in
// seconds (the examples and fixtures, kilobytes each, gave about one
// input a second).
var fuzzSeeds = []string{
	"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: w}\nspec:\n  replicas: 2\n  template:\n    spec:\n      containers:\n      - name: a\n        image: nginx\n        livenessProbe: {httpGet: {path: /h, port: 80}, timeoutSeconds: 1}\n        readinessProbe: {httpGet: {path: /h, port: 80}, failureThreshold: 1}\n",
	"apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec:\n  template:\n    spec:\n      containers:\n      - name: pg\n        image: postgres:16\n        livenessProbe: {exec: {command: [pg_isready, -U, postgres]}, periodSeconds: 10}\n",
	"apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: my}\nspec:\n  template:\n    spec:\n      containers:\n      - name: m\n        image: mysql:8\n        livenessProbe: {exec: {command: [sh, -c, mysqladmin ping -psecret]}}\n        resources: {limits: {cpu: 500m}}\n",
	"apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: r}\nspec:\n  replicas: 2\n  rollbackWindow: {revisions: 3}\n  strategy:\n    canary:\n      steps: [{setWeight: 50}, {analysis: {templates: [{templateName: t}]}}, {setWeight: 100}]\n      trafficRouting: {nginx: {stableIngress: i}}\n  template:\n    spec:\n      containers: [{name: a, image: x}]\n---\napiVersion: argoproj.io/v1alpha1\nkind: AnalysisTemplate\nmetadata: {name: t}\nspec:\n  metrics: [{name: m, failureLimit: 0, provider: {prometheus: {query: up}}}]\n",
	"apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: h}\nspec: {scaleTargetRef: {kind: Deployment, name: w}, minReplicas: 1, maxReplicas: 9}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: w}\nspec:\n  template:\n    spec:\n      containers: [{name: a, image: redis, readinessProbe: {exec: {command: [redis-cli, ping]}}}]\n",
	"apiVersion: keda.sh/v1alpha1\nkind: ScaledObject\nmetadata: {name: k}\nspec: {scaleTargetRef: {name: d}, minReplicaCount: 1}\n---\napiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: r}\nspec:\n  workloadRef: {apiVersion: apps/v1, kind: Deployment, name: d}\n  strategy: {blueGreen: {activeService: s}}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: 0, template: {spec: {containers: [{name: a, image: x}]}}}\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s}\ndata: {check.sh: \"psql -c 'select 1'\"}\n---\napiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: p}\nspec:\n  template:\n    spec:\n      volumes: [{name: v, configMap: {name: s}}]\n      containers:\n      - name: pg\n        image: postgres\n        volumeMounts: [{name: v, mountPath: /s}]\n        livenessProbe: {exec: {command: [/s/check.sh]}}\n",
	"{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"x\"}]}}]}\n{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"s\"}}\n",
	"apiVersion: v1\nkind: List\nitems:\n- apiVersion: batch/v1\n  kind: Job\n  metadata: {name: \"j\\e]0;x\\a\"}\n  spec: {template: {spec: {containers: [{name: a, image: x, livenessProbe: {tcpSocket: {port: 1}, periodSeconds: -4}}]}}}\n",
}

// FuzzScan runs the whole pipeline over one stream, every rule and two
// reports included: decoding, indexing, the rules, locating, masking, the
// text and JSON reports must survive any input, and the text report must
// let no control character of the input through.
//
//	go test ./internal/scan -run '^$' -fuzz FuzzScan -fuzztime 5m -fuzzminimizetime 20x
func FuzzScan(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	// What every input shares is prepared once.
	cat, cfg := catalog.All(), &config.Config{}
	f.Fuzz(func(t *testing.T, data []byte) {
		res, _, err := run(Options{Paths: []string{"-"}, Stdin: bytes.NewReader(data), Catalog: cat, Rules: rules.Options{Config: cfg}}, tuning{window: window})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range res.Errors {
			if strings.Contains(e.Message, "internal error") {
				t.Fatal(e.Error())
			}
		}
		for _, fd := range res.Findings {
			if fd.Line < 1 || fd.Rule == "" || fd.Message == "" {
				t.Fatalf("bad finding %+v", fd)
			}
		}
		var text, js bytes.Buffer
		if err := report.Text(&text, res, report.TextOptions{}); err != nil {
			t.Fatal(err)
		}
		report.Errors(&text, res.Errors)
		if i := strings.IndexFunc(text.String(), func(r rune) bool { return r != '\n' && unicode.IsControl(r) }); i >= 0 {
			t.Fatalf("a control character reaches the text report: %q", text.String()[max(0, i-40):min(text.Len(), i+40)])
		}
		if err := report.JSON(&js, res, report.JSONOptions{}); err != nil || !json.Valid(js.Bytes()) {
			t.Fatalf("JSON report (%v): %s", err, js.String())
		}
	})
}
