package probe

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func ptr[T any](v T) *T { return &v }

func TestTiming(t *testing.T) {
	tests := []struct {
		name                                        string
		p                                           corev1.Probe
		podGrace                                    *int64
		killAfterFirst, window, neverHealthy        int
		formula                                     string
		budget                                      int
		budgetFormula                               string
		grace                                       int
		timeoutSet, periodSet, failureSet, delaySet bool
	}{
		// Seed 003: the registry's PostgreSQL, exec /docker-healthcheck.sh
		// delay=300s timeout=1s period=10s #failure=3, pod grace 120 s.
		{name: "harbor database liveness",
			p:              corev1.Probe{InitialDelaySeconds: 300, PeriodSeconds: 10, TimeoutSeconds: 1, FailureThreshold: 3},
			podGrace:       ptr(int64(120)),
			killAfterFirst: 21, window: 30, neverHealthy: 330, formula: "300 + 3 x 10",
			budget: 31, budgetFormula: "3 x 10 + 1", grace: 120,
			timeoutSet: true, periodSet: true, failureSet: true, delaySet: true},
		{name: "all defaults",
			p:              corev1.Probe{},
			killAfterFirst: 21, window: 30, neverHealthy: 30, formula: "0 + 3 x 10",
			budget: 31, budgetFormula: "3 x 10 + 1", grace: 30},
		{name: "probe grace overrides the pod's",
			p:              corev1.Probe{PeriodSeconds: 5, TimeoutSeconds: 3, FailureThreshold: 6, TerminationGracePeriodSeconds: ptr(int64(10))},
			podGrace:       ptr(int64(120)),
			killAfterFirst: 28, window: 30, neverHealthy: 30, formula: "0 + 6 x 5",
			budget: 33, budgetFormula: "6 x 5 + 3", grace: 10,
			timeoutSet: true, periodSet: true, failureSet: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tm := TimingOf(&tt.p, tt.podGrace)
			if got := tm.KillAfterFirstFailure(); got != tt.killAfterFirst {
				t.Errorf("KillAfterFirstFailure = %d, want %d", got, tt.killAfterFirst)
			}
			if got := tm.FailureWindow(); got != tt.window {
				t.Errorf("FailureWindow = %d, want %d", got, tt.window)
			}
			if got := tm.NeverHealthyKill(); got != tt.neverHealthy {
				t.Errorf("NeverHealthyKill = %d, want %d", got, tt.neverHealthy)
			}
			if got := tm.NeverHealthyKillFormula(); got != tt.formula {
				t.Errorf("NeverHealthyKillFormula = %q, want %q", got, tt.formula)
			}
			if got := tm.StartupBudget(); got != tt.neverHealthy {
				t.Errorf("StartupBudget = %d, want D + F x P = %d", got, tt.neverHealthy)
			}
			if got := tm.KillBudget(); got != tt.budget {
				t.Errorf("KillBudget = %d, want %d", got, tt.budget)
			}
			if got := tm.KillBudgetFormula(); got != tt.budgetFormula {
				t.Errorf("KillBudgetFormula = %q, want %q", got, tt.budgetFormula)
			}
			if tm.Grace.N != tt.grace {
				t.Errorf("grace = %d, want %d", tm.Grace.N, tt.grace)
			}
			for _, c := range []struct {
				name string
				v    Value
				set  bool
			}{{"timeout", tm.Timeout, tt.timeoutSet}, {"period", tm.Period, tt.periodSet}, {"failure", tm.Failure, tt.failureSet}, {"delay", tm.InitialDelay, tt.delaySet}} {
				if c.v.Set != c.set {
					t.Errorf("%s.Set = %v, want %v", c.name, c.v.Set, c.set)
				}
			}
		})
	}
}

func TestValuePhrase(t *testing.T) {
	if got := (Value{N: 10, Set: true}).Phrase("periodSeconds"); got != "periodSeconds 10" {
		t.Errorf("set: %q", got)
	}
	if got := (Value{N: 1}).Phrase("timeoutSeconds"); got != "timeoutSeconds 1 by default" {
		t.Errorf("unset: %q", got)
	}
}

func TestReturnAfter(t *testing.T) {
	// Seed 000: readiness period 5 s, successThreshold 3.
	tm := TimingOf(&corev1.Probe{PeriodSeconds: 5, SuccessThreshold: 3, FailureThreshold: 1}, nil)
	if got := tm.ReturnAfter(); got != 15 {
		t.Errorf("ReturnAfter = %d, want 3 x 5 = 15", got)
	}
}

func waits(rs []Restart) []int {
	var out []int
	for _, r := range rs {
		out = append(out, r.Wait)
	}
	return out
}

func TestRestartSchedule(t *testing.T) {
	tests := []struct {
		name          string
		run           int
		killedByProbe bool
		n             int
		waits         []int
	}{
		// A crash loop: 10 s doubling to the 300 s cap; the first restart is
		// immediate.
		{"crash loop", 5, false, 9, []int{0, 10, 20, 40, 80, 160, 300, 300, 300}},
		// More than 600 s of run resets the back-off every time.
		{"crash after 700 s of run", 700, false, 4, []int{0, 0, 0, 0}},
		// 500 s of run does not reset it.
		{"crash after 500 s of run", 500, false, 4, []int{0, 10, 20, 40}},
		// Seed 003: killed 330 s after every start; the kubelet measures the
		// back-off from the previous exit, 330 s earlier: never a wait.
		{"harbor liveness kill loop", 330, true, 20, make([]int, 20)},
		{"killed after exactly the cap", 300, true, 12, make([]int, 12)},
		// Killed 30 s after start (delay 0, 3 x 10): immediate while the
		// back-off is shorter than the run, then it catches up. Once capped,
		// a kill that follows a 300 s wait is 330 s after the previous exit
		// and restarts at once: waits alternate 300 and 0.
		{"fast liveness kill loop", 30, true, 10, []int{0, 0, 0, 0, 40, 80, 160, 300, 0, 300}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := RestartSchedule(tt.run, tt.killedByProbe, tt.n)
			if got := waits(rs); !slices.Equal(got, tt.waits) {
				t.Errorf("waits = %v, want %v", got, tt.waits)
			}
			for i, r := range rs {
				if r.Stop-r.Start != tt.run {
					t.Errorf("cycle %d runs %d s, want %d", i, r.Stop-r.Start, tt.run)
				}
				if i > 0 && r.Start != rs[i-1].Stop+rs[i-1].Wait {
					t.Errorf("cycle %d starts at %d, want %d", i, r.Start, rs[i-1].Stop+rs[i-1].Wait)
				}
			}
			if tt.killedByProbe {
				never := slices.Max(waits(rs)) == 0
				if NeverWaits(tt.run) != never {
					t.Errorf("NeverWaits(%d) = %v, but the schedule says %v", tt.run, NeverWaits(tt.run), never)
				}
			}
		})
	}
}

// FailuresToCover is the inverse of the startup budget: the smallest
// failureThreshold whose D + F x P reaches the seconds asked for.
func TestFailuresToCover(t *testing.T) {
	for _, c := range []struct{ seconds, delay, period, want int }{
		{600, 0, 10, 60},  // BF101's tcpSocket startupProbe
		{600, 15, 10, 59}, // Bitnami MySQL's delay counts: 15 + 59 x 10 = 605
		{601, 0, 10, 61},  // rounds up
		{600, 0, 0, 60},   // an unset period is the default 10
		{10, 30, 10, 1},   // the delay alone covers it: one failure still kills
	} {
		got := FailuresToCover(c.seconds, c.delay, c.period)
		if got != c.want {
			t.Errorf("FailuresToCover(%d, %d, %d) = %d, want %d", c.seconds, c.delay, c.period, got, c.want)
		}
		period := c.period
		if period == 0 {
			period = DefaultPeriodSeconds
		}
		if c.delay+got*period < c.seconds {
			t.Errorf("%d + %d x %d is below %d", c.delay, got, period, c.seconds)
		}
	}
}

// The node's cap replaces 300 s; a cap below 10 s is also the first wait;
// the entry still expires 600 s after its last update, whatever the cap
// (the kubelet's HasExpiredFunc).
func TestBackoffCap(t *testing.T) {
	for _, tt := range []struct {
		limit int
		want  []int
	}{
		{0, []int{0, 10, 20, 40, 80, 160, 300, 300}},
		{60, []int{0, 10, 20, 40, 60, 60, 60, 60}},
		{5, []int{0, 5, 5, 5, 5, 5, 5, 5}},
	} {
		b := NewBackoffCap(tt.limit)
		var got []int
		stop := 0
		for range tt.want {
			stop++
			w := b.Wait(stop, false)
			got = append(got, w)
			stop += w
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("cap %d: waits %v, want %v", tt.limit, got, tt.want)
		}
	}
}
