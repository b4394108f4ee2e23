package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/testutil/browser"
)

// The HTML report opens in a real browser, draws something, and holds
// every finding with its mechanism, fix and excerpt.
func TestHTMLReportInTheBrowser(t *testing.T) {
	res := scanRepo(t, corpusPaths...)
	var b bytes.Buffer
	if err := HTML(&b, res, HTMLOptions{ReadFile: os.ReadFile}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	// Nothing is fetched: no script, stylesheet link, image or font by URL.
	for _, bad := range []string{"<script", "<link", `src="`, "url(", "@import"} {
		if strings.Contains(page, bad) {
			t.Errorf("page is not self-contained: it contains %q", bad)
		}
	}
	file := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	p := browser.Open(t, file)
	if n := p.Count("div.finding"); n != len(res.Findings) {
		t.Errorf("%d findings in the DOM, want %d", n, len(res.Findings))
	}
	if n := p.Count("article.object"); n < 10 {
		t.Errorf("%d objects in the DOM", n)
	}
	if p.Count("#summary-chart svg") != 1 || p.Count("#counts tr") < 5 {
		t.Error("no summary chart or counts table")
	}
	if n := p.Count("div.finding[data-rule=BF101] pre.excerpt span.hit"); n < 2 {
		t.Errorf("%d BF101 excerpts with the line marked", n)
	}
	text := p.Text()
	for _, want := range []string{
		"StatefulSet registry/registry-database",
		"examples/registry-database.yaml:52:9",
		"livenessProbe:",
		"fix", "kubectl patch statefulset registry-database -n registry",
		"testdata/corpus/harbor-helm/values.yaml:1074:7",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("page text lacks %q", want)
		}
	}
	browser.NotBlank(t, p.Screenshot())
}
