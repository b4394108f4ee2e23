package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kubectl describe piped straight in: the form is told from the text, the
// findings point at its lines, and what it lacked is said.
func TestDiagnoseDescribeFromStdin(t *testing.T) {
	describe, err := os.ReadFile(filepath.Join(examples(t), "diagnose", "describe.txt"))
	if err != nil {
		t.Fatal(err)
	}
	out, stderr, code := execute(t, string(describe), "diagnose", "-")
	if code != exitFindings || stderr != "" {
		t.Fatalf("exit %d, stderr %q\n%s", code, stderr, out)
	}
	for _, want := range []string{
		"Pod registry/registry-database-0  <stdin> (kubectl describe pod, line 1)",
		"container database: 42 restarts, last exit 141 (Error) after 5m32s",
		"<stdin>\n  55:1    error   BF501",
		"match the liveness probe's 300 + 3 x 10 = 330 s = 5.5 min: the probe is the killer",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	out, _, _ = execute(t, string(describe), "diagnose", "-", "--format", "json")
	var doc struct {
		Findings []struct {
			Rule, File string
			Line       int
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Findings) == 0 || doc.Findings[0].Rule != "BF501" || doc.Findings[0].File != "<stdin>" || doc.Findings[0].Line != 55 {
		t.Errorf("json findings: %+v", doc.Findings)
	}
}

// An Events table saved from kubectl get events goes to --events beside a
// pod dump; a fragment says what it lacks.
func TestDiagnosePrintedEventsAndFragments(t *testing.T) {
	dir := t.TempDir()
	events := filepath.Join(dir, "events.txt")
	if err := os.WriteFile(events, []byte("LAST SEEN   TYPE     REASON    OBJECT                    MESSAGE\n"+
		"4m57s (x42 over 4h1m)   Normal   Killing   pod/registry-database-0   Container database failed liveness probe, will be restarted\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code := execute(t, "", "diagnose", filepath.Join(examples(t), "diagnose", "pod.txt"), "--events", events)
	if code != exitFindings || !strings.Contains(out, "read: 1 events about this pod") || !strings.Contains(out, "over the Killing event's count of 42") {
		t.Errorf("exit %d\n%s", code, out)
	}
	out, _, code = execute(t, "  Last State:     Terminated\n  Reason:       OOMKilled\n  Exit Code:    137\n", "diagnose", "-")
	if code != exitClean || !strings.Contains(out, "not in the capture: the capture does not name the pod") || !strings.Contains(out, "BF502") {
		t.Errorf("fragment: exit %d\n%s", code, out)
	}
}

// Control characters pasted in a capture (ESC[2J, an OSC 52 clipboard
// write, BEL) are escaped in what diagnose prints, as the report escapes
// them: they must not drive the reader's terminal.
func TestDiagnoseEscapesControlCharacters(t *testing.T) {
	capture := "Name:         web\x1b[2J\nNamespace:    shop\x07\nContainers:\n  app\x1b]52;c;aGk=\x07:\n    Restart Count:  3\n" +
		"Events:\n  Type     Reason     Age  From     Message\n  ----     ------     ---  ----     -------\n" +
		"  Warning  Unhealthy  2m   kubelet  Liveness probe failed: \x1b]52;c;aGVsbG8=\x07 boom\n"
	for _, format := range []string{"text", "json"} {
		out, stderr, _ := execute(t, capture, "diagnose", "-", "--format", format)
		if strings.ContainsAny(out+stderr, "\x1b\x07") {
			t.Errorf("%s: raw control characters in\n%q\n%q", format, out, stderr)
		}
	}
}
