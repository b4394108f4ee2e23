package rolloutview

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/simulate/rolloutsim"
	"backfire.dev/backfire/internal/testutil/browser"
)

func i32(v int32) *int32 { return &v }

// report is a small hand-made run: the weight jumps to 100 on 2 Ready pods
// and they fall to 0 while it stays there.
func report(fixed bool) *Report {
	rows := []rolloutsim.Row{
		{T: 0, Reconcile: 4, StepIndex: i32(5), Weight: 0, CanaryDesired: 20, StableDesired: 20, StableReady: 19, OfferedRps: 96, ServedRps: 48, FailedRps: 48, Analysis: "-"},
		{T: 1, Reconcile: 4, StepIndex: i32(5), Weight: 0, CanaryDesired: 20, StableDesired: 20, StableReady: 19, OfferedRps: 96, ServedRps: 48, FailedRps: 48, Analysis: "-"},
		{T: 2, Reconcile: 6, StepIndex: i32(5), Weight: 100, CanaryDesired: 20, CanaryAvailable: 2, CanaryReady: 2, StableDesired: 20, StableReady: 19, OfferedRps: 96, ServedRps: 30, FailedRps: 66, CanaryRps: 96, TargetShare: 100, Analysis: "-"},
		{T: 3, Reconcile: 7, StepIndex: i32(5), Weight: 100, CanaryDesired: 20, StableDesired: 20, StableReady: 19, OfferedRps: 96, FailedRps: 96, CanaryRps: 96, TargetShare: 100, Analysis: "-"},
	}
	run := &rolloutsim.Result{Scenario: "rollback", Version: "v1.8.2", Canary: "previous", Stable: "current", Timeline: rows,
		Notes:  []string{"replicas 20 from --replicas"},
		Totals: rolloutsim.Totals{OfferedRequests: 384, FailedRequests: 258, FailedShare: 258.0 / 384, ZeroEndpointSeconds: 1, PeakRpsPerCanaryPod: 48, Outcome: "in progress", WindowStart: 2, WindowSeconds: 2, WindowOffered: 192, WindowFailed: 162, WindowFailedShare: 162.0 / 192}}
	rep := &Report{Rollout: "order-front-api", Run: run, Inputs: map[string]any{"rps": 96}}
	if fixed {
		f := *run
		f.Totals = rolloutsim.Totals{OfferedRequests: 384, FailedRequests: 192, FailedShare: 0.5, Outcome: "in progress"}
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
			T             float64 `json:"t"`
			Reconcile     int     `json:"reconcile"`
			StepIndex     int     `json:"stepIndex"`
			Weight        int     `json:"weight"`
			CanaryDesired int     `json:"canaryDesired"`
			CanaryReady   int     `json:"canaryReady"`
			FailedRps     float64 `json:"failedRps"`
			Analysis      string  `json:"analysis"`
		} `json:"timeline"`
		Totals struct {
			FailedRequests      float64 `json:"failedRequests"`
			FailedShare         float64 `json:"failedShare"`
			ZeroEndpointSeconds float64 `json:"zeroEndpointSeconds"`
			PeakRpsPerCanaryPod float64 `json:"peakRpsPerCanaryPod"`
			Outcome             string  `json:"outcome"`
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
	if r := doc.Timeline[2]; r.Weight != 100 || r.CanaryReady != 2 || r.StepIndex != 5 || r.FailedRps != 66 || r.Analysis != "-" {
		t.Errorf("row 2: %+v", r)
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
	for _, want := range []string{"Traffic to the canary", "Canary pods", "Requests per second", "Ready canary pods (fixed)", "failed rps"} {
		if !bytes.Contains(svg, []byte(want)) {
			t.Errorf("SVG lacks %q", want)
		}
	}
}

// TestHTMLInBrowser opens the page in headless Chromium: the summary and
// the chart are there, and the screenshot is not blank.
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
	if n := p.Count("figure.chart svg"); n != 1 {
		t.Errorf("%d charts, want 1", n)
	}
	if n := p.Count("table.totals tr"); n < 8 {
		t.Errorf("%d rows in the totals table, want the header and 8 lines", n)
	}
	if n := p.Count("svg path"); n < 10 {
		t.Errorf("%d paths in the chart: the lines are missing", n)
	}
	text := p.Text()
	for _, want := range []string{"order-front-api", "with the fix", "258 of 384 (67.2%)", "BF401"} {
		if !strings.Contains(text, want) {
			t.Errorf("page text lacks %q", want)
		}
	}
	browser.NotBlank(t, p.Screenshot())
}
