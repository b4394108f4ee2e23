package xsd

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/testutil"
)

func junit(t *testing.T) (*Schema, string) {
	t.Helper()
	file := filepath.Join(testutil.RepoRoot(t), "internal", "report", "testdata", "junit", "junit-10.xsd")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Load(data)
	if err != nil {
		t.Fatal(err)
	}
	return s, file
}

const good = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="backfire" tests="2" failures="1" errors="1" time="0">
  <testsuite name="a.yaml" tests="2" failures="1" errors="1" skipped="0" time="1,234.5">
    <properties><property name="k" value="v"/></properties>
    <testcase name="BF101 x" classname="a.yaml" time="0">
      <failure type="error" message="a.yaml:1:1: m"><![CDATA[text]]></failure>
      <system-out>out</system-out>
    </testcase>
    <testcase name="input error"><error message="e">e</error></testcase>
    <testcase name="flaky"><flakyFailure type="t"><stackTrace>s</stackTrace></flakyFailure></testcase>
  </testsuite>
</testsuites>
`

// Each case is the good document with one replacement; want says whether
// the schema accepts it. With xmllint on PATH, xmllint must agree.
var cases = []struct {
	name, old, new string
	want           bool
}{
	{"as is", "", "", true},
	{"not well-formed (an end tag without its start)", `<testsuites name="backfire" tests="2" failures="1" errors="1" time="0">`, ``, false},
	{"suite without a name", `<testsuite name="a.yaml"`, `<testsuite`, false},
	{"suite without its failures count", ` failures="1" errors="1" skipped`, ` errors="1" skipped`, false},
	{"case without a name", `<testcase name="input error">`, `<testcase>`, false},
	{"an undeclared attribute", `classname="a.yaml"`, `classname="a.yaml" line="3"`, false},
	{"a time that is not SUREFIRE_TIME", `time="1,234.5"`, `time="1.2345"`, false},
	{"a time with a unit", `time="1,234.5"`, `time="1s"`, false},
	{"an unknown element", `<system-out>out</system-out>`, `<stdout>out</stdout>`, false},
	{"a suite in a case", `<system-out>out</system-out>`, `<testsuite name="n" tests="0" failures="0" errors="0"/>`, false},
	{"text in a case", `<system-out>out</system-out>`, `stray text`, false},
	{"an element in a failure", `<![CDATA[text]]>`, `<b>text</b>`, false},
	{"a rerun element without its type", `<flakyFailure type="t">`, `<flakyFailure>`, false},
	{"rerun children out of order", `<stackTrace>s</stackTrace>`, `<system-err>e</system-err><stackTrace>s</stackTrace>`, false},
	{"rerun children in order", `<stackTrace>s</stackTrace>`, `<stackTrace>s</stackTrace><system-err>e</system-err>`, true},
	{"a property without a value", `value="v"`, ``, false},
	{"cases in any order with outputs", `<testcase name="input error">`, `<system-err>x</system-err><testcase name="input error">`, true},
	{"a control character", `out</system-out>`, "o\x1bt</system-out>", false},
	{"an empty suites element", "", "", true},
}

func TestJUnitSchemaAcceptsAndRefusesAsXmllint(t *testing.T) {
	s, xsdFile := junit(t)
	bin, lintErr := exec.LookPath("xmllint")
	for _, c := range cases {
		doc := good
		if c.old != "" {
			if !strings.Contains(doc, c.old) {
				t.Fatalf("%s: %q is not in the document", c.name, c.old)
			}
			doc = strings.Replace(doc, c.old, c.new, 1)
		}
		if c.name == "an empty suites element" {
			doc = `<testsuites/>`
		}
		err := s.Validate([]byte(doc))
		if got := err == nil; got != c.want {
			t.Errorf("%s: valid %v, want %v (%v)", c.name, got, c.want, err)
		}
		if lintErr != nil {
			continue
		}
		file := filepath.Join(t.TempDir(), "doc.xml")
		if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(bin, "--noout", "--schema", xsdFile, file).CombinedOutput()
		if got := err == nil; got != c.want {
			t.Errorf("%s: xmllint says valid %v, want %v: %s", c.name, got, c.want, out)
		}
	}
	if lintErr != nil {
		t.Skip("validated in Go only: xmllint (Debian's libxml2-utils, which hack/test.sh installs) is not on PATH to agree")
	}
}

// A schema that uses what the package does not read is refused, not
// half-checked.
func TestUnsupportedSchemaIsRefused(t *testing.T) {
	for _, x := range []string{
		`<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:group name="g"/></xs:schema>`,
		`<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:element name="e"><xs:complexType><xs:all/></xs:complexType></xs:element></xs:schema>`,
		`<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:element name="e"><xs:complexType><xs:attribute name="a" type="xs:int"/></xs:complexType></xs:element></xs:schema>`,
		`<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:element name="e" type="t"/></xs:schema>`,
	} {
		if _, err := Load([]byte(x)); err == nil {
			t.Errorf("loaded %s", x)
		}
	}
}
