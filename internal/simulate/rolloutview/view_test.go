package rolloutview

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/simulate/rolloutsim"
	"backfire.dev/backfire/internal/svgplot"
	"backfire.dev/backfire/internal/testutil/browser"
)

func i32(v int32) *int32 { return &v }

// report is a small hand-made run: the weight jumps to 100 on 2 Ready pods
// and they fall to 0 while it stays there.
func report(fixed bool) *Report {
	rows := []rolloutsim.Row{
		{T: 0, Reconcile: 4, StepIndex: i32(5), Weight: 0, CanaryDesired: 20, StableDesired: 20, StableReady: 19, OfferedRps: 96, ServedRps: 48, FailedRps: 48, Failed: rolloutsim.Failures{BrokenVersion: 48}, Analysis: "-"},
		{T: 1, Reconcile: 4, StepIndex: i32(5), Weight: 0, CanaryDesired: 20, StableDesired: 20, StableReady: 19, OfferedRps: 96, ServedRps: 48, FailedRps: 48, Failed: rolloutsim.Failures{BrokenVersion: 48}, Analysis: "-"},
		{T: 2, Reconcile: 6, StepIndex: i32(5), Weight: 100, CanaryDesired: 20, CanaryAvailable: 2, CanaryReady: 2, StableDesired: 20, StableReady: 19, OfferedRps: 96, ServedRps: 30, FailedRps: 66, Failed: rolloutsim.Failures{TooFewReady: 66}, CanaryRps: 96, TargetShare: 100, Analysis: "-"},
		{T: 3, Reconcile: 7, StepIndex: i32(5), Weight: 100, CanaryDesired: 20, StableDesired: 20, StableReady: 19, OfferedRps: 96, FailedRps: 96, Failed: rolloutsim.Failures{NoEndpoint: 96}, CanaryRps: 96, TargetShare: 100, Analysis: "-"},
	}
	run := &rolloutsim.Timeline{Scenario: "rollback", Version: "v1.8.2", Canary: "previous", Stable: "current", Broken: "current", Timeline: rows,
		Notes: []string{"replicas 20 from --replicas"},
		Totals: rolloutsim.Totals{OfferedRequests: 384, FailedRequests: 258, FailedByCause: rolloutsim.Failures{BrokenVersion: 96, TooFewReady: 66, NoEndpoint: 96},
			FailedShare: 258.0 / 384, ZeroEndpointSeconds: 1, PeakRpsPerCanaryPod: 48, Outcome: "in progress", WindowStart: 2, WindowSeconds: 2, WindowOffered: 192, WindowFailed: 162, WindowFailedShare: 162.0 / 192,
			BrokenUntil: 2}}
	rep := &Report{Rollout: "order-front-api", Run: run, Inputs: map[string]any{"rps": 96}}
	if fixed {
		f := *run
		f.Timeline = []rolloutsim.Row{
			{T: 0, StepIndex: i32(5), Weight: 5, CanaryDesired: 20, OfferedRps: 96, FailedRps: 48, Failed: rolloutsim.Failures{BrokenVersion: 48}, Analysis: "-"},
			{T: 3, StepIndex: i32(5), Weight: 5, CanaryDesired: 20, OfferedRps: 96, FailedRps: 48, Failed: rolloutsim.Failures{BrokenVersion: 48}, Analysis: "-"},
		}
		f.Totals = rolloutsim.Totals{OfferedRequests: 384, FailedRequests: 192, FailedByCause: rolloutsim.Failures{BrokenVersion: 192}, FailedShare: 0.5, Outcome: "in progress", BrokenUntil: 4}
		rep.Fixed, rep.Fix = &f, []string{"BF401: drop setWeight 100"}
	}
	return rep
}

func TestText(t *testing.T) {
	var b bytes.Buffer
	if err := Text(&b, report(true)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"Rollout order-front-api, scenario rollback, Argo Rollouts v1.8.2: current -> previous",
		"replicas 20 from --replicas",
		"as written", "with the fix",
		"258 of 384 (67.2%)", "192 of 384 (50.0%)",
		"2s from t=2s, 162 of 192 failed (84.4%)",
		"  - BF401: drop setWeight 100",
		// Failures by cause, as written and with the fix.
		"answered with errors by current, the version rolled back from", "96 (25.0%)", "192 (50.0%)",
		"too few Ready pods for their share", "66 (17.2%)",
		"no Ready endpoint at all",
		"current got requests until", "t=2s", "t=4s",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	// The unchanged second (t=1) is left out; the last is always shown.
	lines := strings.Split(out, "\n")
	var rows int
	for _, l := range lines {
		if f := strings.Fields(l); len(f) > 3 && (f[0] == "0" || f[0] == "1" || f[0] == "2" || f[0] == "3") && f[2] == "5" {
			rows++
		}
	}
	if rows != 3 {
		t.Errorf("%d timeline rows, want 3 (t=0, 2, 3):\n%s", rows, out)
	}
	// The fix loses fewer here: no trade to explain.
	if strings.Contains(out, "more requests fail") {
		t.Errorf("a trade explained where the fix loses fewer:\n%s", out)
	}
}

// TestTradeSaysWhyTheFixLosesMore: when the fixed run fails more, the
// report says which cause grew and which shrank.
func TestTradeSaysWhyTheFixLosesMore(t *testing.T) {
	rep := report(true)
	if got := Trade(rep.Run, rep.Fixed); got != "" {
		t.Fatalf("trade %q for a fix that loses fewer", got)
	}
	// Swapped: the run that stays on the broken version is the fix.
	got := Trade(rep.Fixed, rep.Run)
	for _, want := range []string{"66 more requests fail", "errors of current 192 -> 96, too few Ready pods 0 -> 66, no Ready endpoint 0 -> 96",
		"current gets requests until t=4s as written, t=2s with the fix"} {
		if !strings.Contains(got, want) {
			t.Errorf("trade lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "trades a burst on the canary") {
		t.Errorf("the burst-for-stay explanation given where the canary's failures grew:\n%s", got)
	}
	// The seed's case: the fix keeps the broken version longer.
	a := &rolloutsim.Timeline{Stable: "current", Broken: "current", Totals: rolloutsim.Totals{FailedRequests: 8721, BrokenUntil: 32,
		FailedByCause: rolloutsim.Failures{BrokenVersion: 1536, TooFewReady: 3345, NoEndpoint: 3840}}}
	f := &rolloutsim.Timeline{Stable: "current", Broken: "current", Totals: rolloutsim.Totals{FailedRequests: 10176, BrokenUntil: 222,
		FailedByCause: rolloutsim.Failures{BrokenVersion: 10176}}}
	if got := Trade(a, f); !strings.Contains(got, "1455 more requests fail") || !strings.Contains(got, "trades a burst on the canary for a longer stay") {
		t.Errorf("seed trade: %s", got)
	}
}

func TestJSON(t *testing.T) {
	var b bytes.Buffer
	if err := JSON(&b, report(true)); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Schema   string `json:"schema"`
		Scenario string `json:"scenario"`
		Version  string `json:"version"`
		Timeline []struct {
			T             float64             `json:"t"`
			Reconcile     int                 `json:"reconcile"`
			StepIndex     int                 `json:"stepIndex"`
			Weight        int                 `json:"weight"`
			CanaryDesired int                 `json:"canaryDesired"`
			CanaryReady   int                 `json:"canaryReady"`
			FailedRps     float64             `json:"failedRps"`
			Failed        rolloutsim.Failures `json:"failedByCause"`
			Analysis      string              `json:"analysis"`
		} `json:"timeline"`
		Totals struct {
			FailedByCause       rolloutsim.Failures `json:"failedByCause"`
			FailedRequests      float64             `json:"failedRequests"`
			FailedShare         float64             `json:"failedShare"`
			ZeroEndpointSeconds float64             `json:"zeroEndpointSeconds"`
			PeakRpsPerCanaryPod float64             `json:"peakRpsPerCanaryPod"`
			Outcome             string              `json:"outcome"`
		} `json:"totals"`
		Fixed *struct {
			Schema string `json:"schema"`
			Totals struct {
				FailedRequests float64 `json:"failedRequests"`
			} `json:"totals"`
		} `json:"fixed"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Schema != Schema || doc.Scenario != "rollback" || doc.Version != "v1.8.2" || len(doc.Timeline) != 4 {
		t.Fatalf("document %+v", doc)
	}
	if r := doc.Timeline[2]; r.Weight != 100 || r.CanaryReady != 2 || r.StepIndex != 5 || r.FailedRps != 66 || r.Failed.TooFewReady != 66 || r.Analysis != "-" {
		t.Errorf("row 2: %+v", r)
	}
	if c := doc.Totals.FailedByCause; c != (rolloutsim.Failures{BrokenVersion: 96, TooFewReady: 66, NoEndpoint: 96}) {
		t.Errorf("totals by cause %+v", c)
	}
	if doc.Totals.FailedRequests != 258 || doc.Totals.Outcome != "in progress" || doc.Totals.PeakRpsPerCanaryPod != 48 {
		t.Errorf("totals %+v", doc.Totals)
	}
	if doc.Fixed == nil || doc.Fixed.Totals.FailedRequests != 192 || doc.Fixed.Schema != "" {
		t.Errorf("fixed %+v: want the same document (without the schema) under fixed", doc.Fixed)
	}
}

func TestSVGIsWellFormedWithItsPanels(t *testing.T) {
	svg, err := SVG(report(true))
	if err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(bytes.NewReader(svg))
	for {
		if _, err := d.Token(); err != nil {
			if err.Error() == "EOF" {
				break
			}
			t.Fatalf("not well-formed XML: %v", err)
		}
	}
	for _, want := range []string{"Traffic to previous", "dashed with the fix", "Canary pods", "Failed requests per second, by cause", "Ready canary pods, with the fix",
		"errors of current", "too few Ready pods", "no Ready endpoint", "errors of current, with the fix",
		// Time ticks in minutes and seconds, not 250.00.
		">0<", ">1s<", ">2s<", ">3s<",
		// The fixed run is dashed, not only another colour.
		"stroke-dasharray"} {
		if !bytes.Contains(svg, []byte(want)) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	// A cause that failed nothing in a run has no line.
	if bytes.Contains(svg, []byte("too few Ready pods, with the fix")) {
		t.Error("SVG draws a cause that failed nothing in the fixed run")
	}
}

// TestHTMLInBrowser opens the page in headless Chromium at a laptop's and
// a phone's width: the totals and a figure per panel, legends readable, the
// line under another (the weight under the share it sends) said so, the fix
// after the results, nothing wider than the screen.
func TestHTMLInBrowser(t *testing.T) {
	page, err := HTML(report(true))
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "sim.html")
	if err := os.WriteFile(f, page, 0o644); err != nil {
		t.Fatal(err)
	}
	p := browser.Open(t, f)
	if n := p.Count("figure.chart .plot svg"); n != 3 {
		t.Errorf("%d charts, want 3", n)
	}
	if n := p.Count("table.totals tr"); n < 8 {
		t.Errorf("%d rows in the totals table, want the header and 8 lines", n)
	}
	if n := p.Count(".plot svg path"); n < 10 {
		t.Errorf("%d paths in the charts: the lines are missing", n)
	}
	text := p.Text()
	for _, want := range []string{"order-front-api", "with the fix", "258 of 384 (67.2%)", "BF401", svgplot.CoveredNote} {
		if !strings.Contains(text, want) {
			t.Errorf("page text lacks %q", want)
		}
	}
	results, fix := p.Rects("#results"), p.Rects("#fix")
	if len(results) != 1 || len(fix) != 1 || fix[0].Top < results[0].Bottom {
		t.Errorf("the fix is not after the results: results %+v, fix %+v", results, fix)
	}
	for _, w := range browser.Widths {
		p.Viewport(w, 900)
		browser.CheckLegible(t, p, "ul.legend li", w)
		browser.Shot(t, p, fmt.Sprintf("simulate-rollout-%d", w))
	}
}

// TestCompareText: the remedies, the inputs' table by cause with the one
// that lost least marked, the sweep and the wins.
func TestCompareText(t *testing.T) {
	tried := func(least string, failed ...float64) rolloutsim.CaseResult {
		cr := rolloutsim.CaseResult{Case: rolloutsim.Case{ErrorRate: 0.5, Start: "20s..4m0s", RPS: 96}, Horizon: 600, Least: least}
		for i, f := range failed {
			cr.Tried = append(cr.Tried, rolloutsim.Tried{Remedy: []string{"as-written", "drop-last-setweight"}[i], Outcome: "completed",
				OfferedRequests: 57600, FailedRequests: f, FailedShare: f / 57600, FailedByCause: rolloutsim.Failures{BrokenVersion: f}, BrokenUntil: 32, Settled: 232})
		}
		return cr
	}
	c := &Comparison{Rollout: "order-front-api", Version: "v1.10.2", Broken: "current", Result: &rolloutsim.Comparison{
		Remedies: []rolloutsim.Remedy{{Name: "as-written", Change: "the Rollout as written"}, {Name: "drop-last-setweight", Change: "BF401's fix"}},
		Base:     tried("as-written", 8721, 10656),
		Cases:    []rolloutsim.CaseResult{tried("as-written", 100, 200), tried("drop-last-setweight", 300, 100)},
		Wins:     map[string]int{"as-written": 1, "drop-last-setweight": 1},
	}}
	var b bytes.Buffer
	if err := CompareText(&b, c); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"tried 2 ways", "drop-last-setweight  BF401's fix", "failing 50.0% of its requests", "over 10m",
		"as-written *", "8721 (15.1%)", "3m52s", "2 cases", "*0.2%", "*0.2%", "Loses least: as-written in 1, drop-last-setweight in 1 of 2 cases."} {
		if !strings.Contains(out, want) {
			t.Errorf("comparison lacks %q:\n%s", want, out)
		}
	}
	svg, err := CompareSVG(c)
	if err != nil || !bytes.Contains(svg, []byte("errors of current")) || !bytes.Contains(svg, []byte("drop-last-setweight")) {
		t.Errorf("chart: %v", err)
	}
}

func TestCompareHTMLAndJSON(t *testing.T) {
	cr := rolloutsim.CaseResult{Case: rolloutsim.Case{ErrorRate: 0.5, Start: "30s", RPS: 10}, Horizon: 60, Least: "as-written",
		Tried: []rolloutsim.Tried{{Remedy: "as-written", FailedRequests: 3, FailedByCause: rolloutsim.Failures{NoEndpoint: 3}}}}
	c := &Comparison{Rollout: "web <x>", Version: "v1.10.2", Broken: "current", Result: &rolloutsim.Comparison{
		Remedies: []rolloutsim.Remedy{{Name: "as-written", Change: "the Rollout as written"}}, Base: cr, Wins: map[string]int{}}}
	page, err := CompareHTML(c)
	if err != nil || !bytes.HasPrefix(page, []byte("<!DOCTYPE html>")) || !bytes.Contains(page, []byte("<svg")) || !bytes.Contains(page, []byte("web &lt;x&gt;")) {
		t.Fatalf("page: %v\n%.300s", err, page)
	}
	var b bytes.Buffer
	if err := CompareJSON(&b, c); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil || doc["schema"] != CompareSchema || doc["atTheseInputs"] == nil {
		t.Fatalf("json %v: %s", err, b.String())
	}
}

// comparison is seed 000's comparison at the inputs (the figures of
// examples/order-front-api.compare.txt) with a sweep of three cases.
func comparison() *Comparison {
	names := []string{"as-written", "drop-last-setweight", "cap-last-setweight", "dynamic-stable-scale", "no-rollback-window", "undo-promote-full"}
	causes := [][3]float64{{1536, 3345, 3840}, {10656, 0, 0}, {10176, 0, 0}, {0, 3345, 6912}, {49197.12, 0, 0}, {11136, 0, 0}}
	var rems []rolloutsim.Remedy
	for _, n := range names {
		rems = append(rems, rolloutsim.Remedy{Name: n, Change: "what " + n + " changes"})
	}
	base := rolloutsim.CaseResult{Case: rolloutsim.Case{ErrorRate: 0.5, Start: "20s..4m0s", RPS: 96}, Horizon: 1056, Least: "as-written"}
	for i, n := range names {
		c := causes[i]
		f := c[0] + c[1] + c[2]
		base.Tried = append(base.Tried, rolloutsim.Tried{Remedy: n, Outcome: "completed", OfferedRequests: 101376, FailedRequests: f, FailedShare: f / 101376,
			FailedByCause: rolloutsim.Failures{BrokenVersion: c[0], TooFewReady: c[1], NoEndpoint: c[2]}, BrokenUntil: 232, Settled: 232})
	}
	var cases []rolloutsim.CaseResult
	for k, least := range []string{"as-written", "cap-last-setweight", "cap-last-setweight"} {
		cr := rolloutsim.CaseResult{Case: rolloutsim.Case{ErrorRate: []float64{1, 0.02, 0.1}[k], Start: "10s..30s", RPS: 48}, Horizon: 600, Least: least}
		for i, n := range names {
			cr.Tried = append(cr.Tried, rolloutsim.Tried{Remedy: n, FailedShare: 0.01 * float64(i+1+k)})
		}
		cases = append(cases, cr)
	}
	return &Comparison{Rollout: "order-front-api", Version: "v1.10.2", Broken: "current", Notes: []string{"replicas 20 from --replicas"},
		Result: &rolloutsim.Comparison{Remedies: rems, Base: base, Cases: cases, Wins: map[string]int{"as-written": 1, "cap-last-setweight": 2}}}
}

// TestCompareHTMLInBrowser opens the --compare page in headless Chromium at
// a laptop's and a phone's width: the bars by cause with their legend as
// page text, readable and within the screen at both widths (the chart
// shrinks rather than scrolls, its text stays at least 10 px high), the
// table at the inputs and the sweep with the least marked, the remedies
// after the results.
func TestCompareHTMLInBrowser(t *testing.T) {
	page, err := CompareHTML(comparison())
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "compare.html")
	if err := os.WriteFile(f, page, 0o644); err != nil {
		t.Fatal(err)
	}
	p := browser.Open(t, f)
	if n := p.Count("figure.chart .plot svg"); n != 1 {
		t.Errorf("%d charts, want 1", n)
	}
	if n := p.Count("ul.legend li"); n != 3 {
		t.Errorf("%d legend entries, want the 3 causes", n)
	}
	// The least of the inputs' table (name and total) and of each case.
	if n := p.Count("td.least"); n != 2+3 {
		t.Errorf("%d cells marked least, want 5", n)
	}
	text := p.Text()
	for _, want := range []string{"8721 (8.6%)", "49197", "no Ready endpoint", "Loses least: as-written in 1, cap-last-setweight in 2 of 3 cases", "what undo-promote-full changes", "replicas 20 from --replicas"} {
		if !strings.Contains(text, want) {
			t.Errorf("page text lacks %q", want)
		}
	}
	if strings.Contains(text, "49197.12") {
		t.Error("a bar's total carries its fraction")
	}
	results, remedies := p.Rects("#results"), p.Rects("#remedies")
	if len(results) != 1 || len(remedies) != 1 || remedies[0].Top < results[0].Bottom {
		t.Errorf("the remedies are not after the results: %+v %+v", results, remedies)
	}
	for _, w := range browser.Widths {
		p.Viewport(w, 900)
		browser.CheckLegible(t, p, "ul.legend li", w)
		if o := p.Eval(`String(document.querySelector("figure.chart .plot").scrollWidth - document.querySelector("figure.chart .plot").clientWidth)`); o != "0" {
			t.Errorf("at %d px the chart scrolls sideways by %s px", w, o)
		}
		var small int
		for _, r := range p.Rects("figure.chart .plot svg text") {
			if r.Bottom-r.Top < 10 {
				small++
			}
		}
		if small > 0 {
			t.Errorf("at %d px %d of the chart's labels are less than 10 px high", w, small)
		}
		browser.Shot(t, p, fmt.Sprintf("simulate-rollout-compare-%d", w))
	}
}
