package helm

import (
	"backfire.dev/backfire/internal/lazyregexp"
	"strings"
	"unicode"
)

// manifestSeparator is Helm's document separator (sep in
// pkg/releaseutil/manifest.go).
var manifestSeparator = lazyregexp.New("(?:^|\\s*\n)---\\s*")

// manifest is one document of a rendered template as `helm template`
// prints it, and the line of the template's rendered output it starts on.
type manifest struct {
	text string
	line int
}

// splitManifests splits a rendered template the way releaseutil.
// SplitManifests does (the whole output trimmed, split at the separator,
// empty pieces dropped, each piece trimmed), and remembers where each
// piece starts. `helm template` prints each piece as
// "---\n# Source: <template>\n<piece>\n" (renderResources in
// pkg/action/action.go; hooks in cmd/helm/template.go), so a line of a
// piece, counted from its own first line, is the line under its
// "# Source:" header.
//
// Lines are counted as the pieces go, from where the last piece started:
// the whole output is read once however many documents it holds (counting
// from the start for each piece took minutes for 100,000 documents).
func splitManifests(out string) []manifest {
	lead := len(out) - len(strings.TrimLeftFunc(out, unicode.IsSpace))
	body := strings.TrimSpace(out)
	var docs []manifest
	counted, line := 0, 1 // line is the line of out[counted]
	add := func(from, to int) {
		piece := body[from:to]
		t := strings.TrimSpace(piece)
		if t == "" {
			return
		}
		start := lead + from + len(piece) - len(strings.TrimLeftFunc(piece, unicode.IsSpace))
		line += strings.Count(out[counted:start], "\n")
		counted = start
		docs = append(docs, manifest{text: t, line: line})
	}
	from := 0
	for _, loc := range manifestSeparator().FindAllStringIndex(body, -1) {
		add(from, loc[0])
		from = loc[1]
	}
	add(from, len(body))
	return docs
}
