package classify

import (
	"testing"
)

// The committed lab run parses, and no row of the tables contradicts it:
// a table edited against what the lab measured fails here, without the
// lab's servers.
func TestLab(t *testing.T) {
	r, err := Lab()
	if err != nil {
		t.Fatalf("lab.json: %v", err)
	}
	for _, c := range LabContradictions(r) {
		t.Error(c)
	}
}

// A probe that failed during the recovery and never passed after it is no
// evidence that it fails because of the recovery (MariaDB's healthcheck.sh
// timed out on a loaded machine before and after the server was ready).
func TestLabMeasuredNeverPassed(t *testing.T) {
	s := LabServer{Recovery: LabRecovery{ReadySeconds: 10, RecoveringSeconds: 9, ListenSeconds: 10}}
	never := LabProbe{Phases: []LabPhase{{From: 0, To: 9, Samples: 10, Exit: 1}, {From: 10, To: 15, Samples: 5, Exit: -1}}}
	if got := s.Measured(never); got != Unstable {
		t.Errorf("a probe that never passed: measured %q, want %q", got, Unstable)
	}
	passedAfter := LabProbe{Phases: []LabPhase{{From: 0, To: 9, Samples: 10, Exit: 1}, {From: 10, To: 15, Samples: 5, Exit: 0}}}
	if got := s.Measured(passedAfter); got != Fails {
		t.Errorf("a probe that failed until the server was ready: measured %q, want %q", got, Fails)
	}
}
