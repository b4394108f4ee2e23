package classify

import (
	"strings"
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
	justBefore := LabProbe{Phases: []LabPhase{{From: 0, To: 8.9, Samples: 10, Exit: 1}, {From: 9.5, To: 15, Samples: 5, Exit: 0}}}
	if got := s.Measured(justBefore); got != Fails {
		t.Errorf("a probe that passed from just before the server was ready on: measured %q, want %q", got, Fails)
	}
	passedAfter := LabProbe{Phases: []LabPhase{{From: 0, To: 9, Samples: 10, Exit: 1}, {From: 10, To: 15, Samples: 5, Exit: 0}}}
	if got := s.Measured(passedAfter); got != Fails {
		t.Errorf("a probe that failed until the server was ready: measured %q, want %q", got, Fails)
	}
}

// A probe that passes while Ready's last sample still waits for the answer
// it never gets passes at the recovery's end, not during it (etcd, the lab
// run of 2026-12-05 that judged `--command-timeout=1s endpoint health`
// "passes").
func TestLabMeasuredWithinReadysLastTimeout(t *testing.T) {
	s := LabServer{Recovery: LabRecovery{ListenSeconds: 0.3, RecoveringSince: 2.3, RecoveringSeconds: 4.4, ReadySeconds: 4.5}}
	p := LabProbe{Phases: []LabPhase{{From: 0, To: 2.7, Samples: 3, Exit: 1}, {From: 4.0, To: 9.3, Samples: 6, Exit: 0}}}
	if got := s.Measured(p); got != Fails {
		t.Errorf("passed from within Ready's last timed-out sample: measured %q, want %q", got, Fails)
	}
	s.Recovery.RecoveringSince = 4.4 // Ready's last sample answered: a pass before it is during the recovery
	if got := s.Measured(p); got == Fails {
		t.Errorf("passed before Ready last failed: measured %q", got)
	}
}

// Three failed samples within a second are one failure to a probe, which
// runs at most once a second (ZooKeeper's `echo ruok | nc` came back empty
// for three samples in 0.7 s, 2026-12-05); three spread over two seconds
// or more fail it.
func TestLabMeasuredJudgesRunsAsAProbeWould(t *testing.T) {
	s := LabServer{Recovery: LabRecovery{ListenSeconds: 0.5, RecoveringSeconds: 14, ReadySeconds: 14}}
	brief := LabProbe{Phases: []LabPhase{{From: 1, To: 1.7, Samples: 3, Exit: 0}, {From: 2, To: 2.7, Samples: 3, Exit: 1}, {From: 3, To: 16, Samples: 40, Exit: 0}}}
	if got := s.Measured(brief); got != Passes {
		t.Errorf("three empty answers within 0.7 s: measured %q, want %q", got, Passes)
	}
	long := LabProbe{Phases: []LabPhase{{From: 1, To: 1.7, Samples: 3, Exit: 0}, {From: 2, To: 4, Samples: 7, Exit: 1}, {From: 4.3, To: 16, Samples: 40, Exit: 0}}}
	if got := s.Measured(long); got != Depends {
		t.Errorf("failures over 2 s during the recovery: measured %q, want %q", got, Depends)
	}
}

// Every sign of a message of the table of what users see is in its own
// words: a row whose text is edited away from what the lab measured fails
// here, as a record that stops showing the sign fails TestLab.
func TestLabSignsInTheirMessage(t *testing.T) {
	for _, rb := range Recoveries {
		for _, m := range rb.Messages {
			for _, g := range m.Lab {
				if !strings.Contains(spaced(m.Text), g.Says) {
					t.Errorf("%s, %s: the sign %s is not in the text %q", rb.Server, m.When, g, m.Text)
				}
			}
		}
	}
}

// A record that no longer shows what a row of the table of what users
// see says fails: a client that printed other words, a log without the
// line, a probe that answered where the row says nothing does.
func TestLabMessageContradicted(t *testing.T) {
	r, err := Lab()
	if err != nil {
		t.Fatal(err)
	}
	if got := messageContradictions(r); len(got) > 0 {
		t.Fatalf("the committed run contradicts the table: %q", got)
	}
	edits := []struct {
		server string
		edit   func(s *LabServer)
		want   string
	}{
		{"MySQL", func(s *LabServer) {
			for i := range s.Probes {
				for j := range s.Probes[i].Phases {
					ph := &s.Probes[i].Phases[j]
					ph.Output = strings.ReplaceAll(ph.Output, "ERROR 2002 (HY000): Can't connect to server on '127.0.0.1' (115)", "ERROR 2003 (HY000): Can't connect to MySQL server on '127.0.0.1:3306' (111)")
				}
			}
		}, "ERROR 2002"},
		{"MySQL", func(s *LabServer) { s.Recovery.Log = nil }, "InnoDB: Starting crash recovery"},
		{"PostgreSQL", func(s *LabServer) { s.Loop = nil }, "interrupted while in recovery"},
		{"RabbitMQ", func(s *LabServer) {
			for i := range s.Probes {
				if s.Probes[i].TCP {
					s.Probes[i].Phases = []LabPhase{{From: 0, To: 60, Samples: 100, Exit: 0}}
				}
			}
		}, "connection refused"},
	}
	for _, e := range edits {
		r, _ := Lab()
		s := r.LabServerOf(e.server)
		if s == nil {
			t.Fatalf("no record of %s", e.server)
		}
		e.edit(s)
		got := strings.Join(messageContradictions(r), "\n")
		if !strings.Contains(got, e.want) {
			t.Errorf("%s, edited: no contradiction about %q; got %q", e.server, e.want, got)
		}
	}
}
