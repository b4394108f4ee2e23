package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"backfire.dev/backfire/internal/result"
	"backfire.dev/backfire/internal/testutil"
)

// sarifSchema compiles the official SARIF 2.1.0 schema (testdata/sarif,
// see SOURCE.md there), with formats asserted: uri and uri-reference are
// what GitHub resolves locations by.
func sarifSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(filepath.Join(testutil.RepoRoot(t), "internal", "report", "testdata", "sarif", "sarif-schema-2.1.0.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	const url = "https://backfire.test/sarif-schema-2.1.0.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validateSARIF(t *testing.T, s *jsonschema.Schema, out []byte) error {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("SARIF output is not JSON: %v", err)
	}
	return s.Validate(inst)
}

// sarifLog is the part of a SARIF log the tests read.
type sarifLog struct {
	Runs []struct {
		Tool struct {
			Driver struct {
				Rules []struct {
					ID, Name, HelpURI                 string
					ShortDescription, FullDescription struct{ Text string }
					DefaultConfiguration              struct{ Level string }
				}
			}
		}
		Results []sarifResult
	}
}

type sarifResult struct {
	RuleID    string
	RuleIndex int
	Level     string
	Message   struct{ Text string }
	Locations []struct {
		PhysicalLocation struct {
			ArtifactLocation struct{ URI, URIBaseID string }
			Region           struct{ StartLine, StartColumn int }
		}
	}
	RelatedLocations []struct {
		PhysicalLocation struct {
			ArtifactLocation struct{ URI string }
		}
	}
	PartialFingerprints map[string]string
}

func (r sarifResult) at() string {
	l := r.Locations[0].PhysicalLocation
	return l.ArtifactLocation.URI + ":" + itoa(l.Region.StartLine) + ":" + itoa(l.Region.StartColumn)
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestSARIFOfTheCorpusValidatesAndPointsAtTheLinesUsersEdit(t *testing.T) {
	schema := sarifSchema(t)
	res := scanRepo(t, corpusPaths...)
	var b bytes.Buffer
	if err := SARIF(&b, res, SARIFOptions{BaseDir: testutil.RepoRoot(t), Version: "test"}); err != nil {
		t.Fatal(err)
	}
	if err := validateSARIF(t, schema, b.Bytes()); err != nil {
		t.Fatalf("SARIF output does not validate against the SARIF 2.1.0 schema: %v", err)
	}
	var log sarifLog
	if err := json.Unmarshal(b.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	if len(log.Runs) != 1 {
		t.Fatalf("%d runs, want 1 (GitHub rejects a second run of the same tool and category)", len(log.Runs))
	}
	run := log.Runs[0]
	if len(run.Results) != len(res.Findings) || len(run.Results) < 20 {
		t.Fatalf("%d results for %d findings", len(run.Results), len(res.Findings))
	}
	rules := run.Tool.Driver.Rules
	for _, r := range run.Results {
		loc := r.Locations[0].PhysicalLocation
		if loc.ArtifactLocation.URI == "" || loc.ArtifactLocation.URIBaseID != SrcRoot || loc.Region.StartLine < 1 || loc.Region.StartColumn < 1 {
			t.Errorf("%s: result without a file and line: %+v", r.RuleID, loc)
		}
		if strings.HasPrefix(loc.ArtifactLocation.URI, "/") {
			t.Errorf("%s: absolute URI %s", r.RuleID, loc.ArtifactLocation.URI)
		}
		if rules[r.RuleIndex].ID != r.RuleID {
			t.Errorf("%s: ruleIndex %d names %s", r.RuleID, r.RuleIndex, rules[r.RuleIndex].ID)
		}
		if len(r.PartialFingerprints[FingerprintKey]) != 32 {
			t.Errorf("%s: partialFingerprints %v", r.RuleID, r.PartialFingerprints)
		}
	}
	for _, r := range rules {
		if r.Name == "" || r.ShortDescription.Text == "" || r.FullDescription.Text == "" || !strings.HasSuffix(r.HelpURI, r.ID) || r.DefaultConfiguration.Level == "" {
			t.Errorf("incomplete rule %+v", r)
		}
	}

	// Exact places: a plain file's field; a chart's value in values.yaml
	// (the template only prints it); an overlay's field in the resource
	// file the overlay builds from.
	want := map[string]string{
		"BF101 examples/registry-database.yaml:52:9":                                  "error",
		"BF102 examples/registry-database.yaml:58:11":                                 "error",
		"BF401 examples/order-front-api.yaml:44:9":                                    "error",
		"BF102 testdata/corpus/harbor-helm/values.yaml:1074:7":                        "error",
		"BF101 testdata/corpus/harbor-helm/values.yaml:1071:5":                        "error",
		"BF402 testdata/corpus/rollouts-demo/examples/istio-subset/rollout.yaml:31:7": "error",
	}
	got := map[string]sarifResult{}
	for _, r := range run.Results {
		got[r.RuleID+" "+r.at()] = r
	}
	for k, level := range want {
		r, ok := got[k]
		if !ok {
			t.Errorf("no result %s", k)
			continue
		}
		if r.Level != level {
			t.Errorf("%s: level %s, want %s", k, r.Level, level)
		}
	}
	// The chart finding names the template that prints the value.
	if r := got["BF102 testdata/corpus/harbor-helm/values.yaml:1074:7"]; len(r.RelatedLocations) != 1 ||
		r.RelatedLocations[0].PhysicalLocation.ArtifactLocation.URI != "testdata/corpus/harbor-helm/templates/database/database-ss.yaml" {
		t.Errorf("chart finding's related locations %+v", r.RelatedLocations)
	}
}

// The schema can fail: a result whose region starts at line 0 (what a
// linter that does not know the line writes) is rejected.
func TestSARIFSchemaRejectsLineZero(t *testing.T) {
	schema := sarifSchema(t)
	var b bytes.Buffer
	if err := SARIF(&b, sample(), SARIFOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := validateSARIF(t, schema, b.Bytes()); err != nil {
		t.Fatalf("valid log rejected: %v", err)
	}
	bad := strings.Replace(b.String(), `"startLine": 7`, `"startLine": 0`, 1)
	if bad == b.String() {
		t.Fatal("test log has no startLine 7")
	}
	if validateSARIF(t, schema, []byte(bad)) == nil {
		t.Fatal("schema accepted startLine 0")
	}
}

// With ShowSuppressed, silenced findings are results with an inSource
// suppression and the annotation's reason, and the log still validates.
func TestSARIFSuppressedResults(t *testing.T) {
	schema := sarifSchema(t)
	r := sample()
	sup := r.Findings[0]
	sup.Rule, sup.Fingerprint = "BF104", "0123456789abcdef0123456789abcdef"
	r.Suppressed = []result.Suppressed{{Finding: sup, Reason: "answers from memory"}}
	var b bytes.Buffer
	if err := SARIF(&b, r, SARIFOptions{ShowSuppressed: true}); err != nil {
		t.Fatal(err)
	}
	if err := validateSARIF(t, schema, b.Bytes()); err != nil {
		t.Fatalf("log with suppressions does not validate: %v", err)
	}
	for _, want := range []string{`"kind": "inSource"`, `"justification": "answers from memory"`, `"guid": "01234567-89ab-5def-8123-456789abcdef"`, `"status": "accepted"`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("log lacks %s", want)
		}
	}
	b.Reset()
	SARIF(&b, r, SARIFOptions{})
	if strings.Contains(b.String(), "inSource") {
		t.Error("suppressed results without ShowSuppressed")
	}
}

func TestSARIFFixesAreTextReplacementsThatValidate(t *testing.T) {
	schema := sarifSchema(t)
	r := sample()
	r.Findings[0].Fingerprint, r.Findings[1].Fingerprint = "0123456789abcdef0123456789abcdef", "fedcba98765432100123456789abcdef"
	fp := r.Findings[0].Fingerprint
	fixes := map[string][]result.TextChange{r.Findings[0].Instance(): {
		{File: "deploy/db.yaml", StartLine: 53, EndLine: 56, EndColumn: 1, Text: "          tcpSocket:\n            port: 5432\n"},
		{File: "deploy/db.yaml", StartLine: 60, EndLine: 60, EndColumn: 1, Text: "          failureThreshold: 6\n"},
		{File: "deploy/patch.yaml", StartLine: 1, EndLine: 1, EndColumn: 1, Text: "kind: StatefulSet\n", NewFile: true},
	}}
	var b bytes.Buffer
	if err := SARIF(&b, r, SARIFOptions{Fixes: fixes}); err != nil {
		t.Fatal(err)
	}
	if err := validateSARIF(t, schema, b.Bytes()); err != nil {
		t.Fatalf("log with fixes does not validate: %v", err)
	}
	var log struct {
		Runs []struct {
			Results []struct {
				PartialFingerprints map[string]string
				Fixes               []struct {
					Description     struct{ Text string }
					ArtifactChanges []struct {
						ArtifactLocation struct{ URI, URIBaseID string }
						Replacements     []struct {
							DeletedRegion   struct{ StartLine, StartColumn, EndLine, EndColumn int }
							InsertedContent struct{ Text string }
						}
					}
				}
				Properties map[string]any
			}
		}
	}
	if err := json.Unmarshal(b.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	with := 0
	for _, res := range log.Runs[0].Results {
		if res.PartialFingerprints[FingerprintKey] != fp {
			if len(res.Fixes) != 0 {
				t.Errorf("a result without text changes has fixes: %+v", res.Fixes)
			}
			continue
		}
		with++
		if len(res.Fixes) != 1 || res.Fixes[0].Description.Text == "" {
			t.Fatalf("fixes %+v", res.Fixes)
		}
		acs := res.Fixes[0].ArtifactChanges
		if len(acs) != 2 || acs[0].ArtifactLocation.URI != "deploy/db.yaml" || acs[0].ArtifactLocation.URIBaseID != SrcRoot ||
			acs[1].ArtifactLocation.URI != "deploy/patch.yaml" || len(acs[0].Replacements) != 2 || len(acs[1].Replacements) != 1 {
			t.Fatalf("artifact changes %+v", acs)
		}
		rp := acs[0].Replacements[0]
		if d := rp.DeletedRegion; d.StartLine != 53 || d.StartColumn != 1 || d.EndLine != 56 || d.EndColumn != 1 || rp.InsertedContent.Text != "          tcpSocket:\n            port: 5432\n" {
			t.Errorf("replacement %+v", rp)
		}
		if _, ok := res.Properties["fix"]; !ok && r.Findings[0].Fix != nil {
			t.Error("the patch is no longer in properties.fix")
		}
	}
	if with != 1 {
		t.Errorf("%d results carry the fingerprint", with)
	}
}
