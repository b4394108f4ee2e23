package probeview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/simulate/probesim"
	"backfire.dev/backfire/internal/svgplot"
	"backfire.dev/backfire/internal/testutil"
	"backfire.dev/backfire/internal/testutil/browser"
)

// seed003 simulates the registry database of examples/ through the seed's
// latency trace (a 30 s spike beyond 1 s) and a 10-minute recovery.
func seed003(t *testing.T) *Report {
	t.Helper()
	root := testutil.RepoRoot(t)
	data, err := os.ReadFile(filepath.Join(root, "examples", "registry-database.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	traceData, err := os.ReadFile(filepath.Join(root, "examples", "simulate", "registry-database-latency.txt"))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := probesim.ParseTrace("registry-database-latency.txt", traceData)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Simulate("registry-database.yaml", data, Options{Latency: tr, Recovery: 600, Hours: 24})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestSeed003EndlessLoopAndTheFix(t *testing.T) {
	rep := seed003(t)
	as := rep.AsWritten
	if rep.Container != "database" || rep.Server != "PostgreSQL" || !as.Liveness.FailsDuringRecovery || !as.Liveness.Query {
		t.Fatalf("read %+v, liveness %+v", rep, as.Liveness)
	}
	if as.Result.Restarts < 200 || as.Result.LoopEnds || !as.NeverEnds || as.Budget != 330 || as.Result.RecoveriesCompleted != 0 {
		t.Errorf("as written: %d restarts, loop ends %v, never ends %v (budget %d)", as.Result.Restarts, as.Result.LoopEnds, as.NeverEnds, as.Budget)
	}
	if rep.Fix == nil || rep.Fix.Rule != "BF101" || rep.Fixed == nil {
		t.Fatalf("no BF101 fix: %+v", rep.Fix)
	}
	fx := rep.Fixed
	if fx.Liveness.Handler != "tcpSocket :5432" || fx.Liveness.FailsDuringRecovery || fx.Liveness.Timeout.N != 3 || fx.Liveness.Failure.N != 6 {
		t.Errorf("fixed liveness %+v", fx.Liveness)
	}
	if fx.Result.Restarts != 0 || len(fx.Result.Kills) != 0 {
		t.Errorf("with the fix: %d restarts", fx.Result.Restarts)
	}
	// Readiness: the same psql script, refused while the server recovers.
	// As written it never comes back after the first kill; the fix gives
	// it timeoutSeconds 5, so the 1.2 s spike never takes the pod out and
	// only the start's 10 s (delay 1 s, period 10 s: the first probe at
	// 10 s) is not ready.
	if as.Readiness == nil || !as.Readiness.FailsDuringRecovery || as.Readiness.Timeout.N != 1 || fx.Readiness == nil || fx.Readiness.Timeout.N != 5 {
		t.Fatalf("readiness as written %+v, with the fix %+v", as.Readiness, fx.Readiness)
	}
	if r := as.Ready; r.Episodes != 2 || r.FirstReady != 10 || r.NotReadySeconds < 0.95*86400 || len(r.KillToReady) != len(as.Result.Kills) || r.KillToReady[0] != -1 {
		t.Errorf("as written: ready %+v", r)
	}
	if r := fx.Ready; r.Episodes != 1 || r.NotReadySeconds != 10 || r.FirstReady != 10 {
		t.Errorf("with the fix: ready %+v", r)
	}

	var text bytes.Buffer
	if err := rep.Text(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"with the BF101 fix", "never: 0 of", "a recovery longer than 330 s", "no kill: the probe never fires", "assumed: ",
		"delay=1s timeout=5s period=10s #failure=3", "not ready per day", "10 s (0.0%)", "never ready again after any of the 251 kills"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	var js bytes.Buffer
	if err := rep.JSON(&js); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Schema string
		Runs   []struct {
			Restarts int
			LoopEnds bool
			Kills    []struct{ InRecovery bool }
			Ready    struct {
				NotReadySeconds  float64
				NotReadyEpisodes int
			}
		}
		Fix struct{ Rule string }
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Schema != Schema || len(doc.Runs) != 2 || doc.Runs[0].Restarts != as.Result.Restarts || doc.Runs[1].Restarts != 0 || doc.Fix.Rule != "BF101" || len(doc.Runs[0].Kills) != len(as.Result.Kills) {
		t.Errorf("json %+v", doc)
	}
	if doc.Runs[1].Ready.NotReadySeconds != 10 || doc.Runs[0].Ready.NotReadyEpisodes != 2 {
		t.Errorf("json ready %+v, %+v", doc.Runs[0].Ready, doc.Runs[1].Ready)
	}
	// Deterministic: the same input, the same bytes.
	var again bytes.Buffer
	if err := seed003(t).JSON(&again); err != nil || !bytes.Equal(again.Bytes(), js.Bytes()) {
		t.Error("two runs of the same input differ")
	}
}

// The HTML page as a person sees it, at a laptop's and a phone's width:
// the summary table with both runs, a figure per chart with its legend
// readable, the server's state as a band of more than one colour, the fix
// after the results, and nothing wider than the screen.
func TestHTMLInTheBrowser(t *testing.T) {
	rep := seed003(t)
	page, err := rep.HTML()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "probe.html")
	if err := os.WriteFile(file, page, 0o644); err != nil {
		t.Fatal(err)
	}
	p := browser.Open(t, file)
	if n := p.Count("figure.chart .plot svg"); n != 4 {
		t.Errorf("%d charts, want 4 (restarts, state, ready, latency)", n)
	}
	if n := p.Count("table#summary tr"); n != 12 {
		t.Errorf("%d summary rows, want 12", n)
	}
	text := p.Text()
	for _, want := range []string{"as written", "with the BF101 fix", "restarts per day", "never: 0 of", "Restarts (cumulative)", "Liveness probe answers, as written", "recovering",
		"Ready (the readiness probe)", "not ready per day", "of the time not ready as written"} {
		if !strings.Contains(text, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// The fix's line at 0 lies on the run as written until its first kill:
	// the one under is drawn wide, and the legend says so.
	if !strings.Contains(text, svgplot.CoveredNote) {
		t.Error("the restarts chart does not say a line runs under another")
	}
	// The band: serving, recovering and stopped are filled in their own
	// colours (a line between levels would fill nothing).
	fills := func(caption string) int {
		f := p.Eval(`(function(){var f=Array.prototype.find.call(document.querySelectorAll("figure.chart"),function(f){return f.querySelector("figcaption").textContent===` + fmt.Sprintf("%q", caption) + `});
if(!f)return "";var s={};f.querySelectorAll(".plot path").forEach(function(e){var c=e.style.fill;if(c&&c!=="none"&&c!=="rgb(255, 255, 255)"&&c!=="rgb(31, 35, 40)")s[c]=1});return Object.keys(s).sort().join(" ")})()`)
		return len(strings.Fields(strings.ReplaceAll(f, ", ", ",")))
	}
	if n := fills("Server state"); n < 3 {
		t.Errorf("the state band has %d fills, want serving, recovering and stopped", n)
	}
	// The Ready band: ready and not ready in their own colours.
	if n := fills("Ready (the readiness probe)"); n != 2 {
		t.Errorf("the ready band has %d fills, want ready and not ready", n)
	}
	// Each kill is marked on its run's band, and the legend names the mark.
	kills := 0
	for _, run := range rep.runs() {
		kills += len(run.Result.Kills)
	}
	marks := p.Eval(`(function(){var f=Array.prototype.find.call(document.querySelectorAll("figure.chart"),function(f){return f.querySelector("figcaption").textContent==="Server state"});
if(!f)return "";return String(Array.prototype.filter.call(f.querySelectorAll(".plot path"),function(e){return e.style.fill==="rgb(31, 35, 40)"}).length)})()`)
	if kills == 0 || marks != fmt.Sprint(kills) || !strings.Contains(text, "kill (the probe restarts the container)") {
		t.Errorf("%s kill marks on the state band for %d kills", marks, kills)
	}
	results, fix := p.Rects("#results"), p.Rects("#fix")
	if len(results) != 1 || len(fix) != 1 || fix[0].Top < results[0].Bottom {
		t.Errorf("the fix is not after the results: results %+v, fix %+v", results, fix)
	}
	for _, w := range browser.Widths {
		p.Viewport(w, 900)
		browser.CheckLegible(t, p, "ul.legend li", w)
		browser.Shot(t, p, fmt.Sprintf("simulate-probe-%d", w))
	}
}

func TestSVGHasTheRunsAndTheTimeout(t *testing.T) {
	svg, err := seed003(t).SVG()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<svg", "Restarts (cumulative)", "as written", "with the BF101 fix", "timeoutSeconds 1", "hours", "Ready (the readiness probe)", "not ready"} {
		if !bytes.Contains(svg, []byte(want)) {
			t.Errorf("SVG lacks %q", want)
		}
	}
}

func TestNoProbesAndUnknownContainer(t *testing.T) {
	q, _ := probesim.ParseQuantiles("p50=40ms,p99=1.2s")
	opts := Options{Latency: q, Recovery: 90, Hours: 1}
	noProbe := []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    spec:\n      containers: [{name: web, image: nginx}]\n")
	if _, err := Simulate("web.yaml", noProbe, opts); err == nil || !strings.Contains(err.Error(), "no workload with a liveness or startup probe") {
		t.Errorf("no probes: %v", err)
	}
	opts.Container = "sidecar"
	if _, err := Simulate("web.yaml", noProbe, opts); err == nil || !strings.Contains(err.Error(), `no workload has a container named "sidecar"`) {
		t.Errorf("unknown container: %v", err)
	}
	if _, err := Simulate("bad.yaml", []byte("kind: [\n"), opts); err == nil {
		t.Error("broken YAML accepted")
	}
}

// A web server with a healthy httpGet probe and quantile latency: no
// database, no fix to compare, and few or no restarts.
func TestQuantilesOnAWebServer(t *testing.T) {
	q, _ := probesim.ParseQuantiles("p50=40ms,p99=300ms")
	web := []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: nginx\n        livenessProbe: {httpGet: {path: /healthz, port: 8080}, timeoutSeconds: 1}\n")
	rep, err := Simulate("web.yaml", web, Options{Latency: q, Recovery: 90, Hours: 24})
	if err != nil {
		t.Fatal(err)
	}
	if rep.AsWritten.Result.Restarts != 0 {
		t.Errorf("%d restarts with p99 300 ms under a 1 s timeout", rep.AsWritten.Result.Restarts)
	}
}

// A startup probe below the recovery (BF105): a clean start shows no
// kill but says what a crash does; --after-crash plays the loop, and the
// fix compared is BF105's, which raises the startup budget.
func TestStartupProbeLoopAfterACrash(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "internal", "rules", "probes", "testdata", "BF105", "positive", "bitnami-postgresql-startup-enabled.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	q, err := probesim.ParseQuantiles("p50=40ms,p99=200ms")
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Latency: q, Recovery: 300, Hours: 24}
	rep, err := Simulate("postgresql.yaml", data, opts)
	if err != nil {
		t.Fatal(err)
	}
	if v := rep.AsWritten.Verdict(); len(rep.AsWritten.Result.Kills) != 0 || !strings.Contains(v, "after a crash a recovery longer than 180 s") {
		t.Errorf("a clean start: %d kills, verdict %q", len(rep.AsWritten.Result.Kills), v)
	}
	opts.AfterCrash = true
	rep, err = Simulate("postgresql.yaml", data, opts)
	if err != nil {
		t.Fatal(err)
	}
	as := rep.AsWritten.Result
	if len(as.Kills) == 0 || as.Kills[0].Probe != "startup" || as.LoopEnds || !rep.AsWritten.NeverEnds || rep.AsWritten.Budget != 180 {
		t.Errorf("after a crash: kills %d, loop ends %v, budget %d", len(as.Kills), as.LoopEnds, rep.AsWritten.Budget)
	}
	if rep.Fix == nil || rep.Fix.Rule != "BF105" || rep.Fixed == nil {
		t.Fatalf("fix %+v, want BF105's", rep.Fix)
	}
	if f := rep.Fixed.Result; len(f.Kills) != 0 || !f.LoopEnds || f.RecoveriesCompleted != 1 {
		t.Errorf("with the BF105 fix: %d kills, loop ends %v, %d completed", len(f.Kills), f.LoopEnds, f.RecoveriesCompleted)
	}
}

// A readiness probe that flaps under the latency given
// (successThreshold 3, failureThreshold 2, every 5 s from 5 s, timeout
// 1 s; answers of 2 s from 30 to 40 s and from 50 to 55 s): ready at 15 s
// (the third success, 5, 10, 15), out at 35 s (the second slow answer,
// 30 and 35), back at 65 s (the third success after 55 s: 55, 60, 65).
// Not ready 15 + 30 = 45 s of 120 s, in two stretches: 37.5%, 9.0 h a day.
func TestReadinessFlapsUnderTheLatency(t *testing.T) {
	web := []byte(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    spec:
      containers:
      - name: web
        image: nginx
        livenessProbe: {tcpSocket: {port: 8080}}
        readinessProbe: {httpGet: {path: /ready, port: 8080}, initialDelaySeconds: 5, periodSeconds: 5, timeoutSeconds: 1, successThreshold: 3, failureThreshold: 2}
`)
	tr, err := probesim.ParseTrace("flap", []byte("0s 50ms\n30s 2s\n40s 50ms\n50s 2s\n55s 50ms\n"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Simulate("web.yaml", web, Options{Latency: tr, Recovery: 90, Hours: 120.0 / 3600})
	if err != nil {
		t.Fatal(err)
	}
	as := rep.AsWritten
	if as.Readiness == nil || as.Readiness.Success.N != 3 || len(as.Result.Kills) != 0 {
		t.Fatalf("readiness %+v, %d kills", as.Readiness, len(as.Result.Kills))
	}
	if r := as.Ready; r.NotReadySeconds != 45 || r.Episodes != 2 || r.LongestSeconds != 30 || r.FirstReady != 15 {
		t.Errorf("ready %+v, want 45 s not ready in 2 stretches, the longest 30 s, first ready at 15 s", r)
	}
	var text bytes.Buffer
	if err := rep.Text(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"httpGet :8080/ready delay=5s timeout=1s period=5s #success=3 #failure=2", "not ready per day    9.0 h (37.5%)", "times not ready      2", "longest not ready    30 s", "kill to ready again  no kill"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	var js bytes.Buffer
	if err := rep.JSON(&js); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Runs []struct {
			Readiness struct{ SuccessThreshold int }
			Ready     struct {
				NotReadySeconds, NotReadyPerDaySeconds, NotReadyShare, LongestNotReadySeconds float64
				NotReadyEpisodes                                                              int
				FirstReadySeconds                                                             *float64
			}
		}
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	r := doc.Runs[0]
	if r.Readiness.SuccessThreshold != 3 || r.Ready.NotReadySeconds != 45 || r.Ready.NotReadyPerDaySeconds != 32400 || r.Ready.NotReadyShare != 0.375 ||
		r.Ready.NotReadyEpisodes != 2 || r.Ready.LongestNotReadySeconds != 30 || r.Ready.FirstReadySeconds == nil || *r.Ready.FirstReadySeconds != 15 {
		t.Errorf("json %+v", r)
	}
}

// The kill-to-ready cell: the shortest and longest way back, and the
// kills the container never came back from before the next.
func TestKillToReadyCell(t *testing.T) {
	var cell func(*Run) string
	for _, rr := range readyRows {
		if rr.name == "kill to ready again" {
			cell = rr.cell
		}
	}
	probe := &probesim.Probe{Name: "readiness"}
	for _, tc := range []struct {
		back     []float64
		restarts int
		want     string
	}{
		{nil, 0, "no kill"},
		{[]float64{74}, 1, "74 s"},
		{[]float64{31, -1, 74}, 3, "31 s to 74 s; 1 of 3 kills never ready again before the next kill"},
		{[]float64{-1, -1}, 2, "never ready again after any of the 2 kills"},
		{[]float64{-1, -1}, 1, "never ready again after any of the 2 kills (the last one not restarted within the run)"},
	} {
		run := &Run{Readiness: probe, Ready: probesim.ReadyStats{KillToReady: tc.back}, Result: probesim.Timeline{Restarts: tc.restarts}}
		if got := cell(run); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.back, got, tc.want)
		}
	}
	if got := cell(&Run{}); got != "-" {
		t.Errorf("no readiness probe: %q", got)
	}
}
