package probesim

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"backfire.dev/backfire/internal/model/probe"
)

// The kubelet's traces: hack/test-prober.sh drives the kubelet's own probe
// worker and restart back-off over testdata/kubelet/scenarios.json at each
// pinned release and writes what they did (test/prober). The simulator
// must do the same, probe by probe: the same ticks, the same answers, the
// same kills and restart waits.

var update = flag.Bool("update", false, "rewrite the table of docs/simulate-probe.md from the kubelet's traces")

type kProbe struct {
	InitialDelaySeconds int32 `json:"initialDelaySeconds"`
	PeriodSeconds       int32 `json:"periodSeconds"`
	TimeoutSeconds      int32 `json:"timeoutSeconds"`
	SuccessThreshold    int32 `json:"successThreshold"`
	FailureThreshold    int32 `json:"failureThreshold"`
	Query               bool  `json:"query"`
	FailsDuringRecovery bool  `json:"failsDuringRecovery"`
}

type kScenario struct {
	Name              string       `json:"name"`
	Liveness          *kProbe      `json:"liveness,omitempty"`
	Startup           *kProbe      `json:"startup,omitempty"`
	Readiness         *kProbe      `json:"readiness,omitempty"`
	GraceSeconds      int64        `json:"graceSeconds"`
	RecoverySeconds   float64      `json:"recoverySeconds"`
	AfterCrash        bool         `json:"afterCrash"`
	Latency           [][2]float64 `json:"latency"`
	DurationSeconds   float64      `json:"durationSeconds"`
	BackoffCapSeconds int          `json:"backoffCapSeconds,omitempty"`
}

type kSample struct {
	T     float64 `json:"t"`
	Probe string  `json:"probe"`
	OK    bool    `json:"ok"`
}

type kKill struct {
	At    float64 `json:"at"`
	Probe string  `json:"probe"`
	Run   float64 `json:"run"`
	Wait  float64 `json:"wait"`
}

type kReady struct {
	T     float64 `json:"t"`
	Ready bool    `json:"ready"`
}

type kTrace struct {
	Name    string    `json:"name"`
	Samples []kSample `json:"samples"`
	Kills   []kKill   `json:"kills"`
	Ready   []kReady  `json:"ready"`
}

func ms(x float64) float64 { return math.Round(x*1000) / 1000 }

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func (sc kScenario) config(t *testing.T) Config {
	t.Helper()
	grace := sc.GraceSeconds
	mk := func(name string, p *kProbe) *Probe {
		if p == nil {
			return nil
		}
		return &Probe{Name: name, Query: p.Query, FailsDuringRecovery: p.FailsDuringRecovery,
			Timing: probe.TimingOf(&corev1.Probe{InitialDelaySeconds: p.InitialDelaySeconds, PeriodSeconds: p.PeriodSeconds,
				TimeoutSeconds: p.TimeoutSeconds, SuccessThreshold: p.SuccessThreshold, FailureThreshold: p.FailureThreshold}, &grace)}
	}
	var text strings.Builder
	for _, s := range sc.Latency {
		fmt.Fprintf(&text, "%gs %gs\n", s[0], s[1])
	}
	lat, err := ParseTrace(sc.Name, []byte(text.String()))
	if err != nil {
		t.Fatal(err)
	}
	return Config{Liveness: mk("liveness", sc.Liveness), Startup: mk("startup", sc.Startup), Readiness: mk("readiness", sc.Readiness),
		Recovery:   sc.RecoverySeconds,
		AfterCrash: sc.AfterCrash, Latency: lat, Duration: sc.DurationSeconds, BackoffCap: sc.BackoffCapSeconds}
}

// simTrace is the simulator's run in the kubelet trace's terms.
func simTrace(sc kScenario, res Timeline) kTrace {
	tr := kTrace{Name: sc.Name, Samples: []kSample{}, Kills: []kKill{}, Ready: []kReady{}}
	for _, r := range res.Ready {
		tr.Ready = append(tr.Ready, kReady{ms(r.At), r.Ready})
	}
	for _, s := range res.Samples {
		tr.Samples = append(tr.Samples, kSample{ms(s.T), s.Probe, s.OK})
	}
	for _, k := range res.Kills {
		kk := kKill{At: ms(k.At), Probe: k.Probe, Run: ms(k.Run), Wait: -1}
		exit := k.At + math.Min(ShutdownSeconds, float64(sc.GraceSeconds))
		for _, sp := range res.Spans {
			if sp.From > k.At && sp.State != Stopped {
				kk.Wait = ms(sp.From - StartSeconds - exit)
				break
			}
		}
		tr.Kills = append(tr.Kills, kk)
	}
	return tr
}

// kubeletTraces reads the traces of every release: fresh ones from
// BACKFIRE_KUBELET_TRACES (hack/test-prober.sh), else the recorded ones.
func kubeletTraces(t *testing.T) (map[string][]kTrace, bool) {
	dir, fresh := os.Getenv("BACKFIRE_KUBELET_TRACES"), true
	if dir == "" {
		dir, fresh = filepath.Join("testdata", "kubelet", "traces"), false
	}
	files, _ := filepath.Glob(filepath.Join(dir, "v*.json"))
	if len(files) == 0 {
		t.Fatalf("no kubelet traces in %s", dir)
	}
	out := map[string][]kTrace{}
	for _, f := range files {
		var trs []kTrace
		readJSON(t, f, &trs)
		out[strings.TrimSuffix(filepath.Base(f), ".json")] = trs
	}
	return out, fresh
}

func TestSimulatorMatchesKubelet(t *testing.T) {
	var scs []kScenario
	readJSON(t, filepath.Join("testdata", "kubelet", "scenarios.json"), &scs)
	traces, fresh := kubeletTraces(t)
	releases := make([]string, 0, len(traces))
	for r := range traces {
		releases = append(releases, r)
	}
	slices.Sort(releases)
	sims := make([]kTrace, len(scs))
	for i, sc := range scs {
		sims[i] = simTrace(sc, Run(sc.config(t)))
	}
	for _, r := range releases {
		if len(traces[r]) != len(scs) {
			t.Fatalf("%s: %d traces for %d scenarios: record them again (BACKFIRE_RECORD=1 hack/test-prober.sh)", r, len(traces[r]), len(scs))
		}
		for i, sc := range scs {
			if got := traces[r][i].Name; got != sc.Name {
				t.Fatalf("%s: trace %q for scenario %q: record them again (BACKFIRE_RECORD=1 hack/test-prober.sh)", r, got, sc.Name)
			}
			if d := traceDiff(traces[r][i], sims[i]); d != "" {
				t.Errorf("%s, %s: %s", r, sc.Name, d)
			}
		}
	}
	if fresh {
		return
	}
	table := kubeletTable(scs, sims, releases, traces)
	doc := filepath.Join("..", "..", "..", "docs", "simulate-probe.md")
	data, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- kubelet table: begin -->\n", "<!-- kubelet table: end -->"
	i, j := bytes.Index(data, []byte(begin)), bytes.Index(data, []byte(end))
	if i < 0 || j < i {
		t.Fatalf("%s: no %q ... %q section", doc, begin, end)
	}
	got := string(data[i+len(begin) : j])
	if got == table {
		return
	}
	if !*update {
		t.Fatalf("%s: the table checked against the kubelet is stale; run go test ./internal/simulate/probesim -run TestSimulatorMatchesKubelet -update\nwant:\n%s", doc, table)
	}
	out := append(append(append([]byte{}, data[:i+len(begin)]...), table...), data[j:]...)
	if err := os.WriteFile(doc, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// traceDiff is the first difference between the kubelet's trace and the
// simulator's, or "".
func traceDiff(kube, sim kTrace) string {
	for i := range max(len(kube.Samples), len(sim.Samples)) {
		var k, s kSample
		if i < len(kube.Samples) {
			k = kube.Samples[i]
		}
		if i < len(sim.Samples) {
			s = sim.Samples[i]
		}
		if k != s {
			return fmt.Sprintf("probe %d: kubelet %+v, simulator %+v (%d and %d probes)", i, k, s, len(kube.Samples), len(sim.Samples))
		}
	}
	for i := range max(len(kube.Kills), len(sim.Kills)) {
		var k, s kKill
		if i < len(kube.Kills) {
			k = kube.Kills[i]
		}
		if i < len(sim.Kills) {
			s = sim.Kills[i]
		}
		if s.Wait < 0 { // the simulator's run ended before the restart
			s.Wait = k.Wait
		}
		if k != s {
			return fmt.Sprintf("kill %d: kubelet %+v, simulator %+v", i, k, s)
		}
	}
	for i := range max(len(kube.Ready), len(sim.Ready)) {
		var k, s kReady
		if i < len(kube.Ready) {
			k = kube.Ready[i]
		}
		if i < len(sim.Ready) {
			s = sim.Ready[i]
		}
		if k != s {
			return fmt.Sprintf("readiness change %d: kubelet %+v, simulator %+v (%d and %d changes)", i, k, s, len(kube.Ready), len(sim.Ready))
		}
	}
	return ""
}

// kubeletTable is the docs' table: per scenario, what the kubelet did
// (the same at every release, or the test fails) and that the simulator
// matched it.
func kubeletTable(scs []kScenario, sims []kTrace, releases []string, traces map[string][]kTrace) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| scenario | probes sent | kills | first kill | runs killed after | restart waits (s) | ready (+) and not (-) at (s) | kubelet %s |\n|---|---|---|---|---|---|---|---|\n", strings.Join(releases, ", "))
	for i, sc := range scs {
		tr := traces[releases[0]][i]
		first, runs, waits := "-", []string{}, []string{}
		if len(tr.Kills) > 0 {
			first = fmt.Sprintf("%s at %g s", tr.Kills[0].Probe, tr.Kills[0].At)
		}
		for _, k := range tr.Kills {
			if r := fmt.Sprintf("%g", k.Run); !slices.Contains(runs, r) {
				runs = append(runs, r)
			}
			if w := fmt.Sprintf("%g", k.Wait); (len(waits) == 0 || waits[len(waits)-1] != w) && len(waits) < 8 {
				waits = append(waits, w)
			}
		}
		if len(runs) > 4 {
			runs = append(runs[:4], "...")
		}
		ready := []string{}
		for _, r := range tr.Ready {
			if len(ready) == 8 {
				ready = append(ready, "...")
				break
			}
			sign := "-"
			if r.Ready {
				sign = "+"
			}
			ready = append(ready, fmt.Sprintf("%s%g", sign, r.T))
		}
		same := "same"
		for _, r := range releases {
			if traceDiff(traces[r][i], sims[i]) != "" {
				same = "differs"
			}
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %s | %s | %s | %s |\n", sc.Name, len(tr.Samples), len(tr.Kills), first,
			strings.Join(runs, ", "), strings.Join(waits, ", "), strings.Join(ready, " "), same)
	}
	return b.String()
}
