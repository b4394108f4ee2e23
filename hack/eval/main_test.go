package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadSources(t *testing.T) {
	dir := t.TempDir()
	good := write(t, dir, "good.txt", "# comment\n\nbitnami/redis chart bitnami/charts abc bitnami/redis common=bitnami/charts@abc:bitnami/common\nexamples dir kubernetes/examples def .\n")
	got, err := readSources(good)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Deps["common"] != (pinned{"bitnami/charts", "abc", "bitnami/common"}) || got[1].Kind != "dir" || got[1].Path != "." {
		t.Errorf("readSources = %+v", got)
	}
	for name, text := range map[string]string{
		"kind":       "x helm bitnami/charts abc p\n",
		"short":      "x chart bitnami/charts abc\n",
		"dependency": "x chart bitnami/charts abc p common=bitnami/charts:bitnami/common\n",
	} {
		if _, err := readSources(write(t, dir, name+".txt", text)); err == nil || !strings.Contains(err.Error(), ":1:") {
			t.Errorf("%s: error %v, want one at line 1", name, err)
		}
	}
}

// A chart that renders nothing with its defaults takes its own example
// values; a chart at a repository's root is named after its Chart.yaml,
// as helm names it in its "# Source:" headers.
func TestValuesAndRootCharts(t *testing.T) {
	dir := t.TempDir()
	got, err := readSources(write(t, dir, "s.txt", "vault chart hashicorp/vault-helm abc . values=ci/a.yaml values=ci/b.yaml\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || strings.Join(got[0].Values, " ") != "ci/a.yaml ci/b.yaml" || len(got[0].Deps) != 0 {
		t.Fatalf("readSources = %+v", got)
	}
	checkouts := filepath.Join(dir, "co")
	write(t, checkouts, "hashicorp+vault-helm@abc/Chart.yaml", "apiVersion: v2\nname: vault\nversion: 0.34.1\n")
	if name := got[0].chartDir(checkouts); name != "vault" {
		t.Errorf("root chart named %q, want vault", name)
	}
	if name := (source{Path: "bitnami/redis"}).chartDir(checkouts); name != "redis" {
		t.Errorf("chart named %q, want redis", name)
	}
}

func TestJudgeMatching(t *testing.T) {
	container := "db"
	f := func(kind, name, file, path string) finding {
		var x finding
		x.Rule, x.Severity, x.Object.Kind, x.Object.Name, x.File, x.Path, x.Container = "BF201", "error", kind, name, file, path, &container
		return x
	}
	js := []*judgement{
		{Source: "s", Rule: "BF201", Object: "Pod/test-*", File: "*", Path: "*", Verdict: "wrong", Why: "a test hook"},
		{Source: "s", Rule: "BF201", Object: "StatefulSet/db", File: "*", Path: "*", Verdict: "debatable", Why: "wildcard"},
		{Source: "s", Rule: "BF201", Object: "StatefulSet/db", File: "db.yaml", Path: "spec.template.spec.containers[0].resources", Verdict: "right", Why: "specific"},
		{Source: "s", Rule: "BF201", Object: "StatefulSet/gone", File: "*", Path: "*", Verdict: "right", Why: "no longer found"},
	}
	all := []judged{
		{source: "s", finding: f("Pod", "test-x7k2q", "t.yaml", "spec.containers[0].resources")},
		{source: "s", finding: f("StatefulSet", "db", "db.yaml", "spec.template.spec.containers[0].resources")},
		{source: "s", finding: f("StatefulSet", "other", "o.yaml", "spec.template.spec.containers[0].resources")},
		{source: "t", finding: f("StatefulSet", "db", "db.yaml", "spec.template.spec.containers[0].resources")},
	}
	out := judge(all, js)
	for _, want := range []string{
		"| BF201 | 1 | · | 1 | 2 |",                       // right, debatable, wrong, unjudged
		"| s | BF201 error | Pod/test-x7k2q (db)",         // prefix match
		"**wrong** | a test hook",                         // its verdict
		"`db.yaml:0` | right | specific",                  // the specific judgement wins
		"- s\tBF201\tStatefulSet/other",                   // unjudged
		"- t\tBF201\tStatefulSet/db",                      // another source's finding is not matched
		"- s BF201 StatefulSet/gone * * (right)",          // stale
		"- s BF201 StatefulSet/db * * (debatable)",        // overridden everywhere, so unused
		"| rule | right | debatable | wrong | unjudged |", // header
	} {
		if !strings.Contains(out, want) {
			t.Errorf("judge output lacks %q:\n%s", want, out)
		}
	}
}

func TestReadJudgementsRejectsUnknownVerdicts(t *testing.T) {
	dir := t.TempDir()
	if _, err := readJudgements(write(t, dir, "j.tsv", "s\tBF201\tPod/x\t*\t*\tmaybe\twhy\n")); err == nil {
		t.Error("verdict maybe accepted")
	}
	if _, err := readJudgements(write(t, dir, "k.tsv", "s\tBF201\tPod/x\t*\n")); err == nil {
		t.Error("a line of 4 fields accepted")
	}
}

func TestCheckValuesSources(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "db/values.yaml", "db:\n  livenessProbe:\n    timeoutSeconds: 1\n")
	vs := func(s string) finding {
		var f finding
		f.Rule, f.Path, f.ValuesSource = "BF102", "spec.template.spec.containers[0].livenessProbe.timeoutSeconds", &s
		return f
	}
	got := checkValuesSources(dir, []finding{
		vs("db/values.yaml:3 db.livenessProbe.timeoutSeconds"),
		vs("db/values.yaml:2 db.livenessProbe (3 keys)"),
		vs("db/values.yaml:2 db.livenessProbe.timeoutSeconds"), // wrong line
		vs("db/values.yaml:9 db.x"),                            // past the end
	})
	want := []string{"\tok\t", "\tok\t", "\tMISMATCH\t", "\tMISMATCH\t"}
	for i, w := range want {
		if i >= len(got) || !strings.Contains(got[i], w) {
			t.Errorf("check %d = %q, want %q", i, got, w)
		}
	}
}

func TestCheckPositionsAgainstHelmOutput(t *testing.T) {
	dir := t.TempDir()
	// A stand-in for helm that prints two documents of one template.
	helm := write(t, dir, "helm", "#!/bin/sh\ncat <<'EOF'\n---\n# Source: db/templates/sts.yaml\napiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n---\n# Source: db/templates/sts.yaml\napiVersion: v1\nkind: Pod\nmetadata:\n  name: b\nspec:\n  containers:\n  - name: db\n    image: postgres\nEOF\n")
	if err := os.Chmod(helm, 0o755); err != nil {
		t.Fatal(err)
	}
	container := "db"
	f := func(name string, line int, path string) finding {
		var x finding
		x.Rule, x.Object.Kind, x.Object.Name, x.File, x.Line, x.Path, x.Container = "BF201", "Pod", name, "db/templates/sts.yaml", line, path, &container
		return x
	}
	got, err := checkPositions(helm, dir, "db", []finding{
		f("b", 7, "spec.containers[0].resources"), // the container item: the field is absent
		f("b", 6, "spec.containers[0].resources"), // "containers:" is a parent
		f("b", 3, "spec.containers[0].resources"), // "metadata:" is not
		f("a", 7, "spec.containers[0].resources"), // past the end of a's document
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"\tok\t", "\tok\t", "\tMISMATCH\t", "\tMISMATCH\t"}
	for i, w := range want {
		if i >= len(got) || !strings.Contains(got[i], w) {
			t.Errorf("check %d = %q, want %q", i, got, w)
		}
	}
}

func TestRecompute(t *testing.T) {
	idx := map[objectKey]map[string]any{}
	indexDocs(idx, "db.yaml", []byte(`apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  template:
    spec:
      containers:
      - name: db
        livenessProbe:
          initialDelaySeconds: 300
          exec: {command: [psql]}
        startupProbe:
          failureThreshold: 90
          exec: {command: [psql]}
        resources:
          limits: {cpu: "2"}
---
kind: Pod
metadata:
  name: other
spec:
  containers:
  - name: db
`))
	obj := idx[objectKey{"db.yaml", "StatefulSet", "db"}]
	if obj == nil || idx[objectKey{"db.yaml", "Pod", "other"}] == nil {
		t.Fatalf("index = %v", idx)
	}
	container := "db"
	f := func(rule string, evidence map[string]any) finding {
		var x finding
		x.Rule, x.Container, x.Evidence = rule, &container, evidence
		return x
	}
	for _, c := range []struct {
		f    finding
		want string
	}{
		{f("BF101", map[string]any{"timeToKillSeconds": 21.0, "neverHealthyKillSeconds": 330.0}), "ok kill/budget 21/330"},
		{f("BF101", map[string]any{"timeToKillSeconds": 21.0, "neverHealthyKillSeconds": 900.0, "startupBudgetSeconds": 900.0}), "ok kill/budget 21/900"},
		{f("BF101", map[string]any{"timeToKillSeconds": 30.0, "neverHealthyKillSeconds": 330.0}), "MISMATCH"},
		{f("BF102", nil), "ok timeoutSeconds 1"},
		{f("BF201", nil), "MISMATCH container db sets limits.cpu"},
		{f("BF202", nil), "ok cpu limit 2"},
		{f("BF103", nil), "-"},
	} {
		if got := recompute(c.f, obj); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s %v: %q, want %q", c.f.Rule, c.f.Evidence, got, c.want)
		}
	}
}
