package probesim

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"backfire.dev/backfire/internal/model/probe"
)

// A readiness probe that flaps (successThreshold 3, failureThreshold 2):
// ready at 15 s, out at 35 s, back at 65 s (TestReadinessThresholds), so
// 15 + 30 s not ready in two stretches.
func TestReadyStatsOfAFlappingProbe(t *testing.T) {
	tr, err := ParseTrace("flap", []byte("0s 50ms\n30s 2s\n40s 50ms\n50s 2s\n55s 50ms\n"))
	if err != nil {
		t.Fatal(err)
	}
	res := Run(Config{Readiness: readinessProbe(5, 5, 3, 2, true), Latency: tr, Duration: 120})
	got := res.ReadyStats()
	want := ReadyStats{NotReadySeconds: 45, Episodes: 2, LongestSeconds: 30, FirstReady: 15}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("stats %+v, want %+v (condition %v)", got, want, res.Condition)
	}
}

// A kill takes the container out of rotation and its recovery keeps it
// out: readiness fails its third probe in the spike at 3610 s, liveness
// kills at 3621 s, the new container runs at 3631 s and recovers until
// 3691 s, and the first readiness tick after that, 3695 s, is ready.
func TestReadyStatsAcrossAKill(t *testing.T) {
	liveness := &Probe{Name: "liveness", Query: true,
		Timing: probe.TimingOf(&corev1.Probe{PeriodSeconds: 10, TimeoutSeconds: 1, FailureThreshold: 3}, nil)}
	res := Run(Config{Liveness: liveness, Readiness: readinessProbe(0, 5, 1, 3, true), Recovery: 60, Latency: spike(t), Duration: 3800})
	if len(res.Kills) != 1 || res.Kills[0].At != 3621 {
		t.Fatalf("kills %+v, want one at 3621 s", res.Kills)
	}
	got := res.ReadyStats()
	want := ReadyStats{NotReadySeconds: 3695 - 3610, Episodes: 1, LongestSeconds: 3695 - 3610, FirstReady: 0, KillToReady: []float64{3695 - 3621}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("stats %+v, want %+v (condition %v)", got, want, res.Condition)
	}
}

// Playing a readiness probe leaves the liveness probe's latency draws as
// they were: the readiness probe draws on its own stream.
func TestReadinessLeavesLivenessDrawsAlone(t *testing.T) {
	q, err := ParseQuantiles("p50=200ms,p99=2s")
	if err != nil {
		t.Fatal(err)
	}
	liveness := &Probe{Name: "liveness", Query: true,
		Timing: probe.TimingOf(&corev1.Probe{PeriodSeconds: 10, TimeoutSeconds: 1, FailureThreshold: 2}, nil)}
	cfg := Config{Liveness: liveness, Latency: q, Recovery: 30, Duration: 86400}
	alone := Run(cfg)
	cfg.Readiness = readinessProbe(0, 5, 1, 3, true)
	both := Run(cfg)
	if len(alone.Kills) == 0 || !reflect.DeepEqual(alone.Kills, both.Kills) {
		t.Errorf("%d kills alone, %d with a readiness probe", len(alone.Kills), len(both.Kills))
	}
}

// A kill after which the container is never ready again before the end.
func TestReadyStatsNeverReadyAgain(t *testing.T) {
	tl := Timeline{Duration: 100, Kills: []Kill{{At: 50}},
		Condition: []ReadyChange{{10, true}, {50, false}}}
	want := ReadyStats{NotReadySeconds: 60, Episodes: 2, LongestSeconds: 50, FirstReady: 10, KillToReady: []float64{-1}}
	if got := tl.ReadyStats(); !reflect.DeepEqual(got, want) {
		t.Errorf("stats %+v, want %+v", got, want)
	}
	if got := (Timeline{Duration: 100}).ReadyStats(); got.NotReadySeconds != 100 || got.Episodes != 1 || got.FirstReady != -1 {
		t.Errorf("never ready: %+v", got)
	}
}
