package restarts_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/diagnose"
	"backfire.dev/backfire/internal/observe"
	"backfire.dev/backfire/internal/report"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/rules/restarts"
	"backfire.dev/backfire/internal/rules/rulestest"
)

// diagnoseFixture runs one rule over a fixture: NAME.yaml holds the pod and
// its events (kubectl get pod,events -o yaml), or NAME.txt what kubectl
// prints of them (describe pod, get pods, get events); NAME.CONTAINER.log
// the logs.
func diagnoseFixture(t *testing.T, r *rules.Rule, file string) *diagnose.Result {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSuffix(strings.TrimSuffix(file, ".yaml"), ".txt")
	logs, _ := filepath.Glob(base + ".*.log")
	in := diagnose.Input{Pods: diagnose.Stream{Name: file, Data: data}, Catalog: []*rules.Rule{r}}
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			t.Fatal(err)
		}
		container := strings.TrimSuffix(strings.TrimPrefix(l, base+"."), ".log")
		in.Logs = append(in.Logs, observe.Log{Container: container, File: l, Data: b})
	}
	res, err := diagnose.Run(in)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// golden is the text report followed by the notes: a negative fixture's
// golden says why nothing was found.
func golden(t *testing.T, path string, res *diagnose.Result) {
	t.Helper()
	var b bytes.Buffer
	if err := report.Text(&b, res.Result, report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, n := range res.Notes {
		b.WriteString("no evidence: " + n + "\n")
	}
	if *rulestest.Update {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no golden file (run with -update): %v", err)
	}
	if !bytes.Equal(want, b.Bytes()) {
		t.Errorf("report differs from %s (run with -update if intended):\n--- got\n%s\n--- want\n%s", path, b.String(), want)
	}
}

func TestFixtures(t *testing.T) {
	for _, r := range restarts.Rules {
		t.Run(r.ID, func(t *testing.T) {
			for _, kind := range []string{"positive", "negative"} {
				files, _ := filepath.Glob(filepath.Join("testdata", r.ID, kind, "*.yaml"))
				txt, _ := filepath.Glob(filepath.Join("testdata", r.ID, kind, "*.txt"))
				files = append(files, txt...)
				if len(files) < 3 {
					t.Errorf("%d %s fixtures, want at least 3", len(files), kind)
				}
				for _, file := range files {
					name := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(file), ".yaml"), ".txt")
					t.Run(kind+"/"+name, func(t *testing.T) {
						res := diagnoseFixture(t, r, file)
						if len(res.Errors) > 0 {
							t.Fatalf("fixture does not load: %v", res.Errors)
						}
						got := res.Of(r.ID)
						if kind == "positive" && len(got) == 0 {
							t.Fatalf("%s did not fire (notes: %v)", r.ID, res.Notes)
						}
						if kind == "negative" && len(got) > 0 {
							t.Fatalf("%s fired on a negative fixture: %s", r.ID, got[0].Message)
						}
						for _, f := range got {
							if f.Line < 1 || f.File == "" || len(f.Mechanism) == 0 {
								t.Errorf("finding without a place or a mechanism: %+v", f)
							}
						}
						golden(t, filepath.Join(filepath.Dir(file), name+".golden"), res)
					})
				}
			}
		})
	}
}
