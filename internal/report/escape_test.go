package report

import (
	"bytes"
	"strings"
	"testing"
	"unicode"

	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/result"
)

// hostile is a result whose every text from the input carries terminal
// controls: an object name that retitles the terminal, a probe path that
// clears the screen, a file name with a bidirectional override.
func hostile() *result.Result {
	r := sample()
	f := &r.Findings[0]
	f.Object.Name = "pg\x1b]0;owned\x07"
	f.File = "a\u202e.yaml"
	f.Container = "db\x1b[8m"
	f.Message = "liveness probe httpGet :8080/health\x1b[2J\x1b[H fails"
	f.Mechanism = []string{"one\rtwo"}
	f.Assumptions = []string{"\u009b31m"}
	f.Origin = "rendered\x00"
	f.Fix.Description = "d\x1b[0m"
	r.Errors = []load.Error{{File: "e\x1b.yaml", Line: 2, Message: "bad\x07"}}
	return r
}

// No control character of the input reaches the terminal or the CI log
// in the text, short and github formats: each is written as an escape.
func TestControlCharactersAreEscaped(t *testing.T) {
	raw := func(s string) bool {
		for _, r := range s {
			if r != '\n' && (unicode.IsControl(r) || bidi(r)) {
				return true
			}
		}
		return false
	}
	for name, write := range map[string]func(*bytes.Buffer) error{
		"text":   func(b *bytes.Buffer) error { return Text(b, hostile(), TextOptions{ShowSuppressed: true}) },
		"short":  func(b *bytes.Buffer) error { return Short(b, hostile()) },
		"github": func(b *bytes.Buffer) error { return GitHub(b, hostile()) },
		"errors": func(b *bytes.Buffer) error { Errors(b, hostile().Errors); return nil },
	} {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			t.Fatal(err)
		}
		if raw(b.String()) {
			t.Errorf("%s: a control character reaches the output: %q", name, b.String())
		}
		if name != "errors" && !strings.Contains(b.String(), `:8080/health\x1b[2J\x1b[H fails`) {
			t.Errorf("%s: the message is not shown escaped: %q", name, b.String())
		}
	}
	var b bytes.Buffer
	Text(&b, hostile(), TextOptions{})
	for _, want := range []string{`StatefulSet db/pg\x1b]0;owned\x07  a\u202e.yaml`, `container db\x1b[8m`, `1. one\x0dtwo`, `assumed: \x9b31m`, `(rendered\x00)`, `fix: d\x1b[0m`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
	// Colour, when asked for, is still the report's own.
	b.Reset()
	Text(&b, hostile(), TextOptions{Color: true})
	if !strings.Contains(b.String(), "\x1b[1;31merror") || strings.Contains(b.String(), "\x1b]0;owned") {
		t.Errorf("colour: %q", b.String())
	}
}

// An error of several lines is written as lines: the first after
// "backfire: ", the others indented, each escaped; a CRLF ends a line too.
func TestErrorsOfSeveralLines(t *testing.T) {
	var b bytes.Buffer
	Errors(&b, []load.Error{{File: "c/templates/a.yaml", Line: 1, Column: 3, Message: "template failed: first\r\nsecond\x1b[2J\nthird\n"}})
	want := "backfire: c/templates/a.yaml:1:3: template failed: first\n  second\\x1b[2J\n  third\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}
