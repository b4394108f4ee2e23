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

	var text bytes.Buffer
	if err := rep.Text(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"with the BF101 fix", "never: 0 of", "a recovery longer than 330 s", "no kill: the probe never fires", "assumed: "} {
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
		}
		Fix struct{ Rule string }
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Schema != Schema || len(doc.Runs) != 2 || doc.Runs[0].Restarts != as.Result.Restarts || doc.Runs[1].Restarts != 0 || doc.Fix.Rule != "BF101" || len(doc.Runs[0].Kills) != len(as.Result.Kills) {
		t.Errorf("json %+v", doc)
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
	if n := p.Count("figure.chart .plot svg"); n != 3 {
		t.Errorf("%d charts, want 3 (restarts, state, latency)", n)
	}
	if n := p.Count("table#summary tr"); n != 7 {
		t.Errorf("%d summary rows, want 7", n)
	}
	text := p.Text()
	for _, want := range []string{"as written", "with the BF101 fix", "restarts per day", "never: 0 of", "Restarts (cumulative)", "Liveness probe answers, as written", "recovering"} {
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
	fills := p.Eval(`(function(){var f=Array.prototype.find.call(document.querySelectorAll("figure.chart"),function(f){return f.querySelector("figcaption").textContent==="Server state"});
if(!f)return "";var s={};f.querySelectorAll(".plot path").forEach(function(e){var c=e.style.fill;if(c&&c!=="none"&&c!=="rgb(255, 255, 255)")s[c]=1});return Object.keys(s).sort().join(" ")})()`)
	if n := len(strings.Fields(strings.ReplaceAll(fills, ", ", ","))); n < 3 {
		t.Errorf("the state band has %d fills (%q), want serving, recovering and stopped", n, fills)
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
	for _, want := range []string{"<svg", "Restarts (cumulative)", "as written", "with the BF101 fix", "timeoutSeconds 1", "hours"} {
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
