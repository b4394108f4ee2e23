package fixplan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backfire.dev/backfire/internal/helm"
	"backfire.dev/backfire/internal/testutil"
)

// A values.schema.json that rejects the keys of some fixes on an object
// leaves those findings, with the schema's violation on one line, and
// does not block the fix of the others (before, the proof failed on the
// schema and nothing was written); with --rule BF103, BF103's own patch
// is written without the timeout BF101's handler change imposed on it.
func TestSchemaRejectsOneFix(t *testing.T) {
	src := filepath.Join(testutil.RepoRoot(t), "internal", "fixplan", "testdata", "schema", "db")
	for _, c := range []struct {
		rules      []string
		fixed      string
		leftSchema []string
	}{
		{nil, "BF103", []string{"BF101", "BF102"}},
		{[]string{"BF103"}, "BF103", nil},
	} {
		chart := filepath.Join(t.TempDir(), "db")
		if err := os.CopyFS(chart, os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
		o := options(chart)
		o.Helm = &helm.Options{}
		o.Rules = c.rules
		p, err := Plan(o)
		if err != nil {
			t.Fatalf("rules %v: %v", c.rules, err)
		}
		if len(p.Fixed) != 1 || p.Fixed[0].Rule != c.fixed {
			t.Errorf("rules %v: fixed %v, want %s", c.rules, p.Fixed, c.fixed)
		}
		var left []string
		for _, l := range p.Left {
			left = append(left, l.Finding.Rule)
			if l.Type != ReasonSchema || strings.Contains(l.Reason, "\n") || !strings.Contains(l.Reason, "values.schema.json of chart db: at '/livenessProbe/timeoutSeconds': maximum") {
				t.Errorf("rules %v: %s left as %s: %q", c.rules, l.Finding.Rule, l.Type, l.Reason)
			}
		}
		if strings.Join(left, ",") != strings.Join(c.leftSchema, ",") {
			t.Errorf("rules %v: left %v, want %v", c.rules, left, c.leftSchema)
		}
		if len(p.Files) != 1 || !strings.Contains(string(p.Files[0].New), "failureThreshold: 6  # backfire fix: BF103") || strings.Contains(string(p.Files[0].New), "timeoutSeconds: 3") {
			t.Errorf("rules %v: files %d, want values.yaml with BF103's failureThreshold alone", c.rules, len(p.Files))
		}
	}
}
