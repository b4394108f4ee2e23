package helm

import (
	"backfire.dev/backfire/internal/lazyregexp"
	"strconv"
	"strings"

	"backfire.dev/backfire/internal/load"
)

// templateLocation finds the "file:line[:column]" that Helm's engine puts
// in its errors, in any of its shapes:
//
//	parse error at (harbor/templates/x.yaml:12): function "foo" not defined
//	execution error at (harbor/templates/x.yaml:5:14): a password is required
//	template: harbor/templates/x.yaml:5:14: executing "..." at <.Values.a.b>: nil pointer ...
var templateLocation = lazyregexp.New(`(?:\(|template: )([^\s():]+):(\d+)(?::(\d+))?(?:\))?: `)

// templateError turns an engine error into a load.Error at the template's
// file and line, keeping Helm's own message (the text a chart's `required`
// or `fail` gives).
func (r *Renderer) templateError(chartPath string, err error) load.Error {
	msg := err.Error()
	m := templateLocation().FindStringSubmatchIndex(msg)
	if m == nil {
		return load.Error{File: chartPath, Message: "cannot render Helm chart: " + msg}
	}
	e := load.Error{File: r.name(chartPath, msg[m[2]:m[3]])}
	e.Line, _ = strconv.Atoi(msg[m[4]:m[5]])
	if m[6] >= 0 {
		e.Column, _ = strconv.Atoi(msg[m[6]:m[7]])
	}
	kind := "template error"
	switch {
	case strings.HasPrefix(msg, "parse error"):
		kind = "template does not parse"
	case strings.HasPrefix(msg, "execution error"):
		kind = "template failed"
	}
	rest := templateName().ReplaceAllStringFunc(strings.TrimSpace(msg[m[1]:]), func(n string) string {
		return r.name(chartPath, n)
	})
	e.Message = kind + ": " + rest
	return e
}

// templateName is a template's name inside the engine ("harbor/templates/
// x.yaml:4"), as Go's template errors quote further locations.
var templateName = lazyregexp.New(`[A-Za-z0-9_.-]+/(?:charts/[^\s/:"]+/)*templates/[^\s:"]+`)
