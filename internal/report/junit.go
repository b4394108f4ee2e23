package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"backfire.dev/backfire/internal/result"
)

// JUnit writes a JUnit XML report for the test dashboards of Jenkins,
// GitLab and Azure DevOps: one test suite per file a user edits, one failed
// test case per finding, and an errored test case per input error. It is
// valid against Jenkins' JUnit schema (junit-10.xsd of
// jenkinsci/xunit-plugin, vendored in testdata/junit), which has no
// attribute for a line: the place, file:line:column as in SARIF, opens the
// failure's message.
//
// A test case is named by what it judges (rule and object), never by a
// line, so a dashboard tracks the same case from run to run while lines
// move; its class name is the file, as linters' JUnit reports do.
func JUnit(w io.Writer, r *result.Result) error {
	doc := junitSuites{Name: "backfire", Time: "0"}
	suites := map[string]*junitSuite{}
	suite := func(file string) *junitSuite {
		if s := suites[file]; s != nil {
			return s
		}
		doc.Suites = append(doc.Suites, &junitSuite{Name: file, Time: "0", names: map[string]bool{}})
		suites[file] = doc.Suites[len(doc.Suites)-1]
		return suites[file]
	}
	for _, f := range r.Findings {
		at := EditAt(f)
		name := f.Rule + " " + f.Slug + " (" + f.Object.String()
		if f.Container != "" {
			name += ", container " + f.Container
		}
		name += ")"
		s := suite(at.File)
		if s.names[name] && f.Path != "" {
			// Two findings of one rule on one object: the field tells them apart.
			name += " " + f.Path
		}
		s.names[name] = true
		var body strings.Builder
		fmt.Fprintf(&body, "%s:%d:%d: %s %s %s\n", at.File, at.Line, at.Column, f.Severity, f.Rule, f.Message)
		for i, m := range f.Mechanism {
			fmt.Fprintf(&body, "%d. %s\n", i+1, m)
		}
		for _, a := range f.Assumptions {
			fmt.Fprintf(&body, "assumed: %s\n", a)
		}
		if f.Fix != nil {
			fmt.Fprintf(&body, "fix: %s\n", f.Fix.Description)
		}
		s.Tests++
		s.Failures++
		s.Cases = append(s.Cases, junitCase{
			Name: name, ClassName: at.File, Time: "0",
			Failure: &junitProblem{
				Type:    f.Severity.String(),
				Message: fmt.Sprintf("%s:%d:%d: %s", at.File, at.Line, at.Column, f.Message),
				Text:    xmlText(body.String()),
			},
		})
	}
	for _, e := range r.Errors {
		s := suite(e.File)
		s.Tests++
		s.Errors++
		s.Cases = append(s.Cases, junitCase{
			Name: "input error", ClassName: e.File, Time: "0",
			Error: &junitProblem{Type: "input-error", Message: e.Error(), Text: xmlText(e.Error() + "\n")},
		})
	}
	if len(doc.Suites) == 0 {
		// An empty report is still a report: one suite with no tests.
		doc.Suites = append(doc.Suites, &junitSuite{Name: "backfire", Time: "0"})
	}
	for _, s := range doc.Suites {
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

type junitSuites struct {
	XMLName  xml.Name      `xml:"testsuites"`
	Name     string        `xml:"name,attr"`
	Tests    int           `xml:"tests,attr"`
	Failures int           `xml:"failures,attr"`
	Errors   int           `xml:"errors,attr"`
	Time     string        `xml:"time,attr"`
	Suites   []*junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
	names    map[string]bool
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
}

type junitProblem struct {
	Type    string `xml:"type,attr"`
	Message string `xml:"message,attr"`
	Text    string `xml:",cdata"`
}

// xmlText replaces the characters XML 1.0 does not allow (control
// characters from a hostile input) with U+FFFD: a CDATA section is not
// escaped, and one such character would make the whole report unreadable.
func xmlText(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r',
			r >= 0x20 && r <= 0xD7FF,
			r >= 0xE000 && r <= 0xFFFD,
			r >= 0x10000 && r <= 0x10FFFF:
			return r
		}
		return '\uFFFD'
	}, s)
}
