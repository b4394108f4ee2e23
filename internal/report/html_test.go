package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/result"
	"backfire.dev/backfire/internal/testutil/browser"
)

// openReport writes the HTML report of res and opens it in the browser.
func openReport(t *testing.T, res *result.Result) (*browser.Page, string) {
	t.Helper()
	return openReportAt(t, res, "")
}

// openReportAt opens the report with a fragment in its URL (#rule=BF102).
func openReportAt(t *testing.T, res *result.Result, fragment string) (*browser.Page, string) {
	t.Helper()
	var b bytes.Buffer
	if err := HTML(&b, res, HTMLOptions{ReadFile: os.ReadFile, Version: "v0.0.0-test"}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return browser.Open(t, file+fragment), b.String()
}

// The HTML report opens in a real browser, fetches nothing, holds every
// finding grouped by object with its mechanism folded, colours severities
// as dashboards do, draws the rules most frequent first, and fits a
// laptop's and a phone's screen.
func TestHTMLReportInTheBrowser(t *testing.T) {
	res := scanRepo(t, corpusPaths...)
	p, page := openReport(t, res)
	// Nothing is fetched: no script, stylesheet, image or font by URL.
	for _, bad := range []string{"<script src", "<link", ` src="`, "url(", "@import"} {
		if strings.Contains(page, bad) {
			t.Errorf("page is not self-contained: it contains %q", bad)
		}
	}
	// Links to the rules' pages are followed only when clicked.
	for _, u := range regexp.MustCompile(`https?://[^\s"'<)]+`).FindAllString(page, -1) {
		if !strings.HasPrefix(u, "http://www.w3.org/") && !strings.HasPrefix(u, DocsURL) {
			t.Errorf("page names %s", u)
		}
	}
	if n := p.Count("div.finding"); n != len(res.Findings) {
		t.Errorf("%d findings in the DOM, want %d", n, len(res.Findings))
	}
	if n := p.Count("article.object"); n < 10 {
		t.Errorf("%d objects in the DOM", n)
	}
	if p.Count("#summary-chart svg") != 1 || p.Count("#counts tr") < 5 {
		t.Error("no summary chart or counts table")
	}

	// Folded: the mechanism, the YAML and the patch are in the page but not
	// shown until a finding is opened.
	if n := p.Count("div.finding details.more"); n != len(res.Findings) {
		t.Errorf("%d foldable findings, want %d", n, len(res.Findings))
	}
	if n := p.Visible("ol.mechanism"); n != 0 {
		t.Errorf("%d mechanisms shown before any is opened", n)
	}
	if n := p.Visible("p.message"); n != len(res.Findings) {
		t.Errorf("%d messages shown, want every finding's (%d)", n, len(res.Findings))
	}
	p.Click("#finding-1 details.more summary")
	if n := p.Visible("ol.mechanism"); n != 1 {
		t.Errorf("%d mechanisms shown after opening one", n)
	}

	// Severity colours: red errors, orange warnings, blue info.
	for sev, want := range map[string]string{"error": "rgb(211, 47, 47)", "warning": "rgb(237, 108, 2)", "info": "rgb(2, 136, 209)"} {
		got := p.Eval(`getComputedStyle(document.querySelector("div.finding.sev-` + sev + `")).borderLeftColor`)
		if got != want {
			t.Errorf("%s findings are marked %s, want %s", sev, got, want)
		}
	}
	// The chart's first bar is the most frequent rule.
	most, top := "", 0
	for _, r := range htmlData(res, HTMLOptions{}).Rules {
		if r.Total() > top {
			most, top = r.ID, r.Total()
		}
	}
	if first := p.Eval(`Array.prototype.filter.call(document.querySelectorAll("#summary-chart svg text"), function(e){return /^BF\d+ /.test(e.textContent)}).sort(function(a, b){return a.getBoundingClientRect().top - b.getBoundingClientRect().top}).map(function(e){return e.textContent})[0] || ""`); !strings.HasPrefix(first, most+" ") {
		t.Errorf("the chart's first rule is %q, want the most frequent, %s (%d)", first, most, top)
	}

	// Each finding's rule links to its page.
	if got := p.Eval(`document.querySelector("#finding-1 h4 a.rule").href`); got != DocsURL+res.Findings[0].Rule {
		t.Errorf("finding 1's rule links to %q, want %s", got, DocsURL+res.Findings[0].Rule)
	}
	// Counts have whole-number ticks.
	for _, tick := range strings.Split(p.Eval(`Array.prototype.map.call(document.querySelectorAll("#summary-chart svg text.tick"), function(e){return e.textContent}).join(" ")`), " ") {
		if !regexp.MustCompile(`^(\d+|findings)$`).MatchString(tick) {
			t.Errorf("chart tick %q is not a whole number", tick)
		}
	}

	p.Click("#f-expand")
	text := p.Text()
	for _, want := range []string{
		"StatefulSet registry/registry-database",
		"examples/registry-database.yaml:52:9",
		"livenessProbe:",
		"Fix:", "kubectl patch statefulset registry-database -n registry",
		"testdata/corpus/harbor-helm/values.yaml:1074:7",
		"backfire v0.0.0-test",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("page text lacks %q", want)
		}
	}
	if n := p.Count("div.finding[data-rule=BF101] pre.excerpt span.hit"); n < 2 {
		t.Errorf("%d BF101 excerpts with the line marked", n)
	}
	p.Click("#f-expand")

	p.Viewport(1366, 900)
	browser.Shot(t, p, "report-laptop")
	p.Viewport(390, 844)
	if w := p.Eval(`String(document.documentElement.scrollWidth)`); w != "390" {
		t.Errorf("at a phone's width (390 px) the page is %s px wide: it scrolls sideways", w)
	}
	browser.Shot(t, p, "report-phone")
}

// Each filter keeps exactly the findings it names, hides the objects left
// empty and says how many are shown; clearing brings them all back.
func TestHTMLReportFilters(t *testing.T) {
	res := scanRepo(t, corpusPaths...)
	p, _ := openReport(t, res)
	total := len(res.Findings)
	count := func(keep func(f finding.Finding) bool) (findings, objects int) {
		seen := map[string]bool{}
		for _, f := range res.Findings {
			if keep(f) {
				findings++
				seen[f.File+"\x00"+f.Object.String()] = true
			}
		}
		return findings, len(seen)
	}
	check := func(what string, keep func(f finding.Finding) bool) {
		t.Helper()
		wantF, wantO := count(keep)
		if wantF == 0 || wantF == total {
			t.Fatalf("%s: %d of %d findings: not a test of a filter", what, wantF, total)
		}
		if n := p.Visible("div.finding"); n != wantF {
			t.Errorf("%s: %d findings shown, want %d", what, n, wantF)
		}
		if n := p.Visible("article.object"); n != wantO {
			t.Errorf("%s: %d objects shown, want %d", what, n, wantO)
		}
		if got, want := p.Eval(`document.getElementById("shown").textContent`), fmt.Sprintf("%d of %d findings shown", wantF, total); got != want {
			t.Errorf("%s: %q, want %q", what, got, want)
		}
	}
	all := func() {
		t.Helper()
		p.Click("#f-reset")
		if n := p.Visible("div.finding"); n != total {
			t.Errorf("cleared: %d of %d findings shown", n, total)
		}
	}

	// The error card is a filter: clicked, only errors; clicked again, all.
	p.Click(`#cards button[data-filter-severity="error"]`)
	check("error card", func(f finding.Finding) bool { return f.Severity == finding.Error })
	if got := p.Eval(`document.querySelector('#cards button[data-filter-severity="error"]').getAttribute("aria-pressed")`); got != "true" {
		t.Errorf("error card pressed %s", got)
	}
	p.Click(`#cards button[data-filter-severity="error"]`)
	if n := p.Visible("div.finding"); n != total {
		t.Errorf("error card clicked twice: %d of %d shown", n, total)
	}

	p.Choose("#f-rule", "BF102")
	check("rule BF102", func(f finding.Finding) bool { return f.Rule == "BF102" })
	// The chart and the objects' tallies follow the filters.
	if got := p.Eval(`Array.prototype.filter.call(document.querySelectorAll("#summary-chart svg text"), function(e){return /^BF\d+ /.test(e.textContent)}).map(function(e){return e.textContent.split(" ")[0]}).join(",")`); got != "BF102" {
		t.Errorf("rule BF102: the chart draws %q", got)
	}
	if got := p.Eval(`String(document.querySelectorAll("#counts tbody tr").length)`); got != "1" {
		t.Errorf("rule BF102: the counts table has %s rows", got)
	}
	tallied := 0
	for _, n := range regexp.MustCompile(`(\d+) (error|warning|info)`).FindAllStringSubmatch(p.Eval(`Array.prototype.map.call(document.querySelectorAll(".object .tally .badge"), function(e){return e.textContent}).join(";")`), -1) {
		var k int
		fmt.Sscan(n[1], &k)
		tallied += k
	}
	if want, _ := count(func(f finding.Finding) bool { return f.Rule == "BF102" }); tallied != want {
		t.Errorf("rule BF102: the objects' tallies add up to %d, want %d", tallied, want)
	}
	p.Choose("#f-severity", "warning")
	check("rule BF102 and warning", func(f finding.Finding) bool { return f.Rule == "BF102" && f.Severity == finding.Warning })
	all()

	p.Choose("#f-namespace", "registry")
	check("namespace registry", func(f finding.Finding) bool { return f.Object.Namespace == "registry" })
	all()

	values := "testdata/corpus/harbor-helm/values.yaml"
	p.Choose("#f-file", values)
	check("file "+values, func(f finding.Finding) bool { return EditAt(f).File == values })
	all()

	p.Type("#f-text", "order-front-api")
	check("text order-front-api", func(f finding.Finding) bool {
		return strings.Contains(f.Object.Name, "order-front-api") || strings.Contains(f.Message, "order-front-api")
	})
	p.Choose("#f-rule", "BF101")
	if n := p.Visible("div.finding"); n != 0 || p.Visible("#none-shown") != 1 {
		t.Errorf("text order-front-api and rule BF101: %d shown, and no word that nothing matches", n)
	}
	all()
}

// The filters are in the URL's fragment: a filtered view opens as it was
// shared, and choosing a filter writes it there.
func TestHTMLReportFiltersInTheURL(t *testing.T) {
	res := scanRepo(t, corpusPaths...)
	p, _ := openReportAt(t, res, "#severity=warning&rule=BF102")
	want := 0
	for _, f := range res.Findings {
		if f.Rule == "BF102" && f.Severity == finding.Warning {
			want++
		}
	}
	if n := p.Visible("div.finding"); n != want || want == 0 {
		t.Errorf("opened with #severity=warning&rule=BF102: %d findings shown, want %d", n, want)
	}
	if got := p.Eval(`document.getElementById("f-rule").value + " " + document.getElementById("f-severity").value`); got != "BF102 warning" {
		t.Errorf("the filters read %q from the URL", got)
	}
	p.Click("#f-reset")
	p.Choose("#f-namespace", "registry")
	p.Type("#f-text", "liveness")
	if got := p.Eval(`location.hash`); got != "#namespace=registry&q=liveness" {
		t.Errorf("the URL says %q after choosing namespace registry and typing liveness", got)
	}
}

// A report of many objects that share their rules' texts stays small: each
// text is written once, not once per finding (a 10,000-object report was
// 3 KB a finding as HTML rows).
func TestHTMLReportSizeGrowsSlowlyWithFindings(t *testing.T) {
	res := scanRepo(t, corpusPaths...)
	base := res.Findings
	many := *res
	many.Findings = nil
	for i := 0; i < 100; i++ {
		for _, f := range base {
			f.Object.Name = fmt.Sprintf("%s-%d", f.Object.Name, i)
			many.Findings = append(many.Findings, f)
		}
	}
	size := func(r *result.Result) int {
		var b bytes.Buffer
		if err := HTML(&b, r, HTMLOptions{ReadFile: os.ReadFile}); err != nil {
			t.Fatal(err)
		}
		return b.Len()
	}
	small, large := size(res), size(&many)
	perFinding := (large - small) / (len(many.Findings) - len(base))
	if perFinding > 400 {
		t.Errorf("each further finding adds %d bytes to the page (%d findings: %d bytes), want at most 400", perFinding, len(many.Findings), large)
	}
}
