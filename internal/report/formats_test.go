package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/scan"
	"backfire.dev/backfire/internal/testutil"
)

func TestShortIsOneLinePerFindingAtTheEditedPlace(t *testing.T) {
	res := scanRepo(t, corpusPaths...)
	var b bytes.Buffer
	if err := Short(&b, res); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != len(res.Findings) {
		t.Fatalf("%d lines for %d findings", len(lines), len(res.Findings))
	}
	for _, want := range []string{
		"examples/registry-database.yaml:52:9: error BF101 liveness probe exec [/docker-healthcheck.sh] needs PostgreSQL",
		"testdata/corpus/harbor-helm/values.yaml:1074:7: error BF102 liveness probe exec [/docker-healthcheck.sh] must answer within 1 s",
		"testdata/corpus/rollouts-demo/examples/istio-subset/rollout.yaml:31:7: error BF402 ",
	} {
		found := false
		for _, l := range lines {
			found = found || strings.HasPrefix(l, want)
		}
		if !found {
			t.Errorf("no line starts with %q:\n%s", want, b.String())
		}
	}
}

func TestGitHubEscapesMessageAndProperties(t *testing.T) {
	r := sample()
	r.Findings[0].File = "dir,a:b.yaml"
	r.Findings[0].Message = "100% of traffic\nto 2 pods"
	r.Errors = []load.Error{{File: "bad.yaml", Line: 3, Column: 2, Message: "mapping values are not allowed"}}
	var b bytes.Buffer
	if err := GitHub(&b, r); err != nil {
		t.Fatal(err)
	}
	want := "::error file=dir%2Ca%3Ab.yaml,line=7,col=3,title=BF102 liveness-default-timeout (StatefulSet db/pg)::100%25 of traffic%0Ato 2 pods%0Afix: d\n" +
		"::warning file=a.yaml,line=30,col=1,title=BF401 rollback-window-weight-jump (Rollout r)::m2%0Afix: d2\n" +
		"::error file=bad.yaml,line=3,col=2,title=backfire%3A input error::mapping values are not allowed\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	r.Findings[0].Severity = finding.Info
	b.Reset()
	GitHub(&b, r)
	if !strings.HasPrefix(b.String(), "::notice ") {
		t.Errorf("info is not a notice: %s", b.String())
	}
}

// Fingerprints name the finding, not its place: a document added above it
// and comments that move every line change the lines and keep the
// fingerprints.
func TestFingerprintsSurviveAnUnrelatedEdit(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "examples", "registry-database.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "db.yaml")
	scanFile := func(data string) map[string]int {
		if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := scan.Run(scan.Options{Paths: []string{file}})
		if err != nil {
			t.Fatal(err)
		}
		lines := map[string]int{}
		for _, f := range res.Findings {
			lines[f.Fingerprint] = f.Line
		}
		if len(lines) != len(res.Findings) || len(lines) < 3 {
			t.Fatalf("%d fingerprints for %d findings", len(lines), len(res.Findings))
		}
		return lines
	}
	before := scanFile(string(src))
	edited := "# an unrelated edit\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: registry}\ndata: {a: b}\n---\n" + string(src)
	after := scanFile(edited)
	if len(after) != len(before) {
		t.Fatalf("%d findings before, %d after", len(before), len(after))
	}
	for fp, line := range before {
		if got, ok := after[fp]; !ok {
			t.Errorf("fingerprint %s lost by an unrelated edit", fp)
		} else if got != line+6 {
			t.Errorf("fingerprint %s: line %d, want %d (6 lines added above)", fp, got, line+6)
		}
	}
}
