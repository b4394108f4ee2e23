package analysis

import (
	"slices"
	"strings"
	"testing"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
)

// objects decodes a multi-document input into an index and its Rollout.
func objects(t *testing.T, input string) (*index.Index, *object.Object) {
	t.Helper()
	f := load.Parse("in.yaml", []byte(input))
	if len(f.Errors) > 0 {
		t.Fatal(f.Errors)
	}
	var objs []*object.Object
	var ro *object.Object
	for _, d := range f.Documents {
		o, err := object.Decode(d)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o)
		if o.Kind == "Rollout" {
			ro = o
		}
	}
	return index.Build(objs), ro
}

const templates = `
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: web, namespace: shop, labels: {team: payments}}
spec:
  selector: {matchLabels: {app: web}}
  template: {metadata: {labels: {app: web}}, spec: {containers: [{name: web, image: web:1}]}}
  strategy:
    canary:
      analysis:
        templates:
        - templateName: errors
        - templateName: global
          clusterScope: true
        - templateName: elsewhere
        - templateName: absent
        args:
        - {name: service, value: web}
        - {name: hash, valueFrom: {podTemplateHashValue: Latest}}
        - {name: team, valueFrom: {fieldRef: {fieldPath: "metadata.labels['team']"}}}
        - {name: undeclared, value: dropped}
        dryRun: [{metricName: "^lat"}]
---
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: errors, namespace: shop}
spec:
  args: [{name: service}, {name: hash}, {name: team}, {name: window, value: 5m}]
  templates: [{templateName: latency}]
  metrics:
  - name: error-rate
    provider: {prometheus: {query: 'errors{service="{{ args.service }}",hash="{{args.hash}}",w="{{args.window}}"}'}}
---
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: latency, namespace: shop}
spec:
  args: [{name: window}, {name: token, valueFrom: {secretKeyRef: {name: api, key: token}}}, {name: ns, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}]
  metrics:
  - {name: latency, provider: {prometheus: {query: 'p99'}}}
---
apiVersion: argoproj.io/v1alpha1
kind: ClusterAnalysisTemplate
metadata: {name: global}
spec:
  metrics:
  - {name: smoke, provider: {job: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox, command: [sleep, "5"]}]}}}}}}
---
apiVersion: argoproj.io/v1alpha1
kind: AnalysisTemplate
metadata: {name: elsewhere, namespace: other}
spec: {metrics: [{name: x, provider: {prometheus: {query: 'up'}}}]}
`

func TestResolve(t *testing.T) {
	ix, ro := objects(t, templates)
	c := ro.Typed.(*v1alpha1.Rollout).Spec.Strategy.Canary
	blocks := Blocks(c)
	if len(blocks) != 1 || !blocks[0].Background || blocks[0].Path.String() != "spec.strategy.canary.analysis" {
		t.Fatalf("blocks %+v", blocks)
	}
	res := Resolve(ix, ro, blocks[0].Analysis)
	var got []string
	for _, m := range res.Metrics {
		s := m.KindName + ":" + m.Metric.Name
		if m.DryRun {
			s += " (dry run)"
		}
		got = append(got, s)
	}
	want := []string{"AnalysisTemplate errors:error-rate", "AnalysisTemplate latency:latency (dry run)", "ClusterAnalysisTemplate global:smoke"}
	if !slices.Equal(got, want) {
		t.Errorf("metrics %q, want %q", got, want)
	}
	if len(res.Missing) != 2 || !strings.Contains(res.Missing[0], "only in namespace other") || res.Missing[1] != "AnalysisTemplate absent" {
		t.Errorf("missing %q", res.Missing)
	}
	// Declared args, flattened: window keeps the value errors gave it.
	args := Args(ix, ro, blocks[0].Analysis.Args, res.Args)
	for name, want := range map[string]Arg{
		"service": {Name: "service", Text: "web", Known: true},
		"hash":    {Name: "hash", Text: "(the Latest ReplicaSet's hash)", Latest: true},
		"team":    {Name: "team", Text: "payments", Known: true},
		"window":  {Name: "window", Text: "5m", Known: true},
		"token":   {Name: "token", Text: "the value of Secret api (key token)", Secret: "api (key token)"},
		"ns":      {Name: "ns", Text: "shop", Known: true},
	} {
		if args[name] != want {
			t.Errorf("args.%s = %+v, want %+v", name, args[name], want)
		}
	}
	if _, ok := args["undeclared"]; ok {
		t.Errorf("an arg no template declares is dropped by MergeArgs, yet it is here")
	}
	text, used := Substitute(res.Metrics[0].Metric.Provider.Prometheus.Query, args)
	if text != `errors{service="web",hash="(the Latest ReplicaSet's hash)",w="5m"}` || len(used) != 3 || !used[1].Latest {
		t.Errorf("substituted %q, used %+v", text, used)
	}
}

func TestSubstituteMissingArg(t *testing.T) {
	text, used := Substitute("{{args.a}} {{ args.a }} {{args.b}}", map[string]Arg{"a": {Name: "a", Text: "1", Known: true}})
	if text != "1 1 not supplied" || len(used) != 2 || !used[1].Missing {
		t.Errorf("%q %+v", text, used)
	}
}

func TestTemplateWithoutNamespaceIsAssumedShared(t *testing.T) {
	in := strings.Replace(templates, "metadata: {name: errors, namespace: shop}", "metadata: {name: errors}", 1)
	ix, ro := objects(t, in)
	res := Resolve(ix, ro, Blocks(ro.Typed.(*v1alpha1.Rollout).Spec.Strategy.Canary)[0].Analysis)
	if len(res.Notes) == 0 || !strings.Contains(res.Notes[0], "applied to the same namespace") {
		t.Errorf("notes %q", res.Notes)
	}
}

func TestBlocksOfSteps(t *testing.T) {
	var c v1alpha1.CanaryStrategy
	two := int32(2)
	c.Analysis = &v1alpha1.RolloutAnalysisBackground{StartingStep: &two}
	c.Steps = []v1alpha1.CanaryStep{{SetWeight: &two}, {Analysis: &v1alpha1.RolloutAnalysis{}}}
	b := Blocks(&c)
	if len(b) != 2 || b[0].Step != 2 || !b[0].StartingStep || b[1].Step != 1 || b[1].Background || b[1].Path.String() != "spec.strategy.canary.steps[1].analysis" {
		t.Errorf("%+v", b)
	}
}
