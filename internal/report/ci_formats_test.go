package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/testutil"
	"backfire.dev/backfire/internal/testutil/xsd"
)

// exactPlaces are the places the line-oriented formats must point at on
// the three kinds of input (as the SARIF test): a plain file's field, a
// chart's value in values.yaml, an overlay's field in its resource file.
var exactPlaces = []string{
	"BF101 examples/registry-database.yaml:52:9",
	"BF102 examples/registry-database.yaml:58:11",
	"BF401 examples/order-front-api.yaml:44:9",
	"BF102 testdata/corpus/harbor-helm/values.yaml:1074:7",
	"BF101 testdata/corpus/harbor-helm/values.yaml:1071:5",
	"BF402 testdata/corpus/rollouts-demo/examples/istio-subset/rollout.yaml:31:7",
}

// gitlabIssueSchema compiles the schema GitLab validates each Code Quality
// entry against (testdata/gitlab, see SOURCE.md there).
func gitlabIssueSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(filepath.Join(testutil.RepoRoot(t), "internal", "report", "testdata", "gitlab", "codeclimate.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	const url = "https://backfire.test/codeclimate.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type gitlabIssue struct {
	Type, Description, Fingerprint, Severity string
	CheckName                                string `json:"check_name"`
	Categories                               []string
	Location                                 struct {
		Path      string
		Positions struct{ Begin struct{ Line, Column int } }
	}
}

// checkGitLab validates a Code Quality report as GitLab reads it: each
// entry against GitLab's schema (GitLab drops those that fail), then what
// GitLab's documentation requires beyond it, and that no fingerprint
// repeats (GitLab keeps one entry per fingerprint). It returns the entries.
func checkGitLab(t *testing.T, out []byte) []gitlabIssue {
	t.Helper()
	schema := gitlabIssueSchema(t)
	var raw []json.RawMessage
	if err := json.Unmarshal(out, &raw); err != nil {
		t.Fatalf("not a JSON array: %v\n%s", err, out)
	}
	var issues []gitlabIssue
	fingerprints := map[string]bool{}
	for i, r := range raw {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(r))
		if err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate(inst); err != nil {
			t.Errorf("entry %d does not validate against GitLab's schema: %v", i, err)
		}
		var is gitlabIssue
		if err := json.Unmarshal(r, &is); err != nil {
			t.Fatal(err)
		}
		begin := is.Location.Positions.Begin
		switch {
		case is.Type != "issue" || is.CheckName == "" || is.Description == "" || len(is.Categories) == 0:
			t.Errorf("entry %d lacks a field GitLab's documentation or the Code Climate specification requires: %s", i, r)
		case !slices.Contains([]string{"info", "minor", "major", "critical", "blocker"}, is.Severity):
			t.Errorf("entry %d: severity %q is not one of GitLab's", i, is.Severity)
		case is.Location.Path == "" || filepath.IsAbs(is.Location.Path) || begin.Line < 1 || begin.Column < 1:
			t.Errorf("entry %d: location %+v is not a relative path with a line", i, is.Location)
		case strings.Contains(is.Description, "\n"):
			t.Errorf("entry %d: description of more than one line", i)
		case fingerprints[is.Fingerprint]:
			t.Errorf("entry %d: fingerprint %s repeats: GitLab would keep one of them", i, is.Fingerprint)
		}
		fingerprints[is.Fingerprint] = true
		issues = append(issues, is)
	}
	return issues
}

func TestGitLabCodeQualityOfTheCorpus(t *testing.T) {
	res := scanRepo(t, corpusPaths...)
	var b bytes.Buffer
	if err := GitLab(&b, res); err != nil {
		t.Fatal(err)
	}
	issues := checkGitLab(t, b.Bytes())
	if len(issues) != len(res.Findings) || len(issues) < 20 {
		t.Fatalf("%d issues for %d findings", len(issues), len(res.Findings))
	}
	got := map[string]gitlabIssue{}
	for _, is := range issues {
		begin := is.Location.Positions.Begin
		got[fmt.Sprintf("%s %s:%d:%d", strings.Fields(is.CheckName)[0], is.Location.Path, begin.Line, begin.Column)] = is
	}
	for _, k := range exactPlaces {
		is, ok := got[k]
		if !ok {
			t.Errorf("no issue at %s", k)
		} else if is.Severity != "critical" {
			t.Errorf("%s: severity %s, want critical (an error)", k, is.Severity)
		}
	}
	// The same finding keeps its fingerprint: the SARIF one.
	for i, f := range res.Findings {
		if issues[i].Fingerprint != f.Fingerprint {
			t.Errorf("issue %d: fingerprint %s, finding's %s", i, issues[i].Fingerprint, f.Fingerprint)
		}
	}
}

// An input error is an issue at its file and line; fingerprints that
// repeat are told apart; the checks above can fail.
func TestGitLabInputErrorsAndRepeatedFingerprints(t *testing.T) {
	r := sample()
	r.Findings[0].Fingerprint = "0123456789abcdef0123456789abcdef"
	r.Findings[1].Fingerprint = r.Findings[0].Fingerprint
	r.Errors = []load.Error{{File: "bad.yaml", Line: 3, Column: 2, Message: "mapping values are not allowed\nhere"}}
	var b bytes.Buffer
	if err := GitLab(&b, r); err != nil {
		t.Fatal(err)
	}
	issues := checkGitLab(t, b.Bytes())
	if len(issues) != 3 {
		t.Fatalf("%d issues, want 3", len(issues))
	}
	if e := issues[2]; e.CheckName != "backfire/input-error" || e.Severity != "blocker" || e.Location.Path != "bad.yaml" || e.Location.Positions.Begin.Line != 3 {
		t.Errorf("input error as %+v", e)
	}
	if issues[0].Fingerprint == issues[1].Fingerprint {
		t.Error("a repeated fingerprint was kept: GitLab would drop one of the two")
	}
	// GitLab's schema rejects an entry without a fingerprint.
	bad := bytes.Replace(b.Bytes(), []byte(`"fingerprint"`), []byte(`"fingerprint_"`), 1)
	schema := gitlabIssueSchema(t)
	var raw []json.RawMessage
	if err := json.Unmarshal(bad, &raw); err != nil {
		t.Fatal(err)
	}
	inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader(raw[0]))
	if schema.Validate(inst) == nil {
		t.Error("GitLab's schema accepted an entry without a fingerprint")
	}
}

// junitValid validates a report against Jenkins' JUnit schema (vendored in
// testdata/junit), in Go: internal/testutil/xsd reads the schema and is
// checked to agree with xmllint, so a plain go test needs no xmllint.
func junitValid(t *testing.T, doc []byte) error {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "internal", "report", "testdata", "junit", "junit-10.xsd"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := xsd.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	return s.Validate(doc)
}

type junitReport struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Errors   int `xml:"errors,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Cases    []struct {
			Name      string `xml:"name,attr"`
			ClassName string `xml:"classname,attr"`
			Failure   *struct {
				Type    string `xml:"type,attr"`
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
			} `xml:"error"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func TestJUnitOfTheCorpus(t *testing.T) {
	res := scanRepo(t, corpusPaths...)
	var b bytes.Buffer
	if err := JUnit(&b, res); err != nil {
		t.Fatal(err)
	}
	if err := junitValid(t, b.Bytes()); err != nil {
		t.Fatalf("JUnit report does not validate against junit-10.xsd: %v", err)
	}
	var rep junitReport
	if err := xml.Unmarshal(b.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Tests != len(res.Findings) || rep.Failures != len(res.Findings) || rep.Errors != 0 {
		t.Fatalf("tests %d, failures %d, errors %d for %d findings", rep.Tests, rep.Failures, rep.Errors, len(res.Findings))
	}
	got := map[string]string{}
	names := map[string]bool{}
	cases := 0
	for _, s := range rep.Suites {
		if s.Tests != len(s.Cases) || s.Failures != len(s.Cases) {
			t.Errorf("suite %s counts %d tests, %d failures for %d cases", s.Name, s.Tests, s.Failures, len(s.Cases))
		}
		for _, c := range s.Cases {
			cases++
			if c.Failure == nil || c.ClassName != s.Name {
				t.Errorf("case %q of suite %s: %+v", c.Name, s.Name, c)
				continue
			}
			place, _, _ := strings.Cut(c.Failure.Message, ": ")
			got[strings.Fields(c.Name)[0]+" "+place] = c.Failure.Type
			if names[s.Name+" "+c.Name] {
				t.Errorf("two cases %q in suite %s: dashboards would merge them", c.Name, s.Name)
			}
			names[s.Name+" "+c.Name] = true
			if !strings.Contains(c.Failure.Text, "\n1. ") {
				t.Errorf("case %q: failure text without the mechanism", c.Name)
			}
		}
	}
	if cases != len(res.Findings) {
		t.Errorf("%d test cases for %d findings", cases, len(res.Findings))
	}
	for _, k := range exactPlaces {
		if typ, ok := got[k]; !ok {
			t.Errorf("no test case at %s", k)
		} else if typ != "error" {
			t.Errorf("%s: failure type %s", k, typ)
		}
	}
}

// Input errors are errored test cases; an empty scan is a valid report;
// the schema can fail.
func TestJUnitErrorsEmptyAndTheSchemaCanFail(t *testing.T) {
	r := sample()
	r.Errors = []load.Error{{File: "bad.yaml", Line: 3, Column: 2, Message: "mapping values <are> not allowed"}}
	r.Findings[0].Message = "a control character \x1b[31m and ]]> end a CDATA section"
	var b bytes.Buffer
	if err := JUnit(&b, r); err != nil {
		t.Fatal(err)
	}
	if err := junitValid(t, b.Bytes()); err != nil {
		t.Fatalf("report with an input error does not validate: %v\n%s", err, b.String())
	}
	var rep junitReport
	if err := xml.Unmarshal(b.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Errors != 1 || rep.Tests != 3 {
		t.Errorf("errors %d tests %d, want 1 and 3", rep.Errors, rep.Tests)
	}
	last := rep.Suites[len(rep.Suites)-1]
	if last.Name != "bad.yaml" || last.Cases[0].Error == nil || last.Cases[0].Error.Message != "bad.yaml:3:2: mapping values <are> not allowed" {
		t.Errorf("input error as %+v", last)
	}

	r.Findings, r.Errors = nil, nil
	b.Reset()
	if err := JUnit(&b, r); err != nil {
		t.Fatal(err)
	}
	if err := junitValid(t, b.Bytes()); err != nil {
		t.Fatalf("empty report does not validate: %v\n%s", err, b.String())
	}
	// A test suite needs a name: the schema says so, and the check tells.
	bad := strings.Replace(b.String(), `<testsuite name="backfire"`, `<testsuite`, 1)
	if bad == b.String() || junitValid(t, []byte(bad)) == nil {
		t.Error("the schema accepted a test suite without a name")
	}
}
