package fixplan

import (
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/object"
)

// A chart's values.schema.json is checked by Helm before it renders:
// chartutil.ToRenderValues validates the coalesced values and fails with
// "values don't meet the specifications of the schema(s) in the following
// chart(s):" followed by each chart's name and its violations, one per
// line (helm v3.22.0, pkg/chartutil/values.go and jsonschema.go,
// ValidateAgainstSchema). One fix's key the schema rejects fails the
// whole render, and with it the proof of every other fix; so a chart's
// fixes are tried against the schema each on its own first.

// hasSchema reports whether a chart directory holds a values.schema.json,
// its own or a subchart's unpacked under charts/ (a packaged subchart's is
// not looked for: its violations still fail the proof, with their words).
func hasSchema(dir string) bool {
	found := false
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "values.schema.json" {
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

// schemaHeader starts Helm's schema error.
const schemaHeader = "values don't meet the specifications of the schema(s)"

// renderError is a render of a chart that failed, with the file Helm
// blames.
type renderError struct{ file, message string }

func (e *renderError) Error() string { return e.message }

// schemaRejects reports whether err is the chart's schema refusing the
// values.
func schemaRejects(err error) bool {
	var re *renderError
	return errors.As(err, &re) && (strings.HasSuffix(re.file, "values.schema.json") || strings.Contains(re.message, schemaHeader))
}

// oneLine writes an error of several lines on one: Helm's schema error
// as "values.schema.json of chart db: at '/livenessProbe/timeoutSeconds':
// maximum: got 5, want 1", any other with its lines joined.
func oneLine(msg string) string {
	if !strings.Contains(msg, "\n") {
		return msg
	}
	var parts []string
	chart := ""
	for _, l := range strings.Split(msg, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "", strings.HasPrefix(l, schemaHeader):
		case strings.HasSuffix(l, ":") && !strings.ContainsAny(l, " '"):
			chart = strings.TrimSuffix(l, ":")
		default:
			l = strings.TrimPrefix(l, "- ")
			if chart != "" {
				l = "values.schema.json of chart " + chart + ": " + l
				chart = ""
			}
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, "; ")
}

// admitted drops from c the findings whose fix sets values the chart's
// schema rejects, each left with the schema's words; a finding whose
// composed patch is rejected keeps its rule's own patch when the schema
// takes that (with --rule BF103, BF103's failureThreshold without the
// timeout BF101's handler change imposed). It gives the change of the
// findings kept, recomposed, and false when none is kept.
func (v *valuesPlan) admitted(o *object.Object, c fix.Change, chosen []finding.Finding, out *FixPlan) (fix.Change, bool) {
	set, _, _ := valuesOf(o, c.Patch, map[string]string{})
	t, err := v.trial(o)
	if err != nil || !t.schema || len(set) == 0 {
		return c, true
	}
	if _, err := t.render(set); err == nil || !schemaRejects(err) {
		return c, true
	}
	var kept []finding.Finding
	var idx []int
	for _, i := range c.Findings {
		f := chosen[i]
		patch, why := v.schemaTakes(t, o, f)
		if why != "" {
			out.leaveOne(f, reason(ReasonSchema, "the chart's schema rejects the values that fix it: "+why+"; the other fixes of the object are kept"))
			continue
		}
		fx := *f.Fix
		fx.Patch = patch
		f.Fix = &fx
		kept = append(kept, f)
		idx = append(idx, i)
	}
	rc := fix.Compose(kept)
	if len(rc) == 0 {
		return c, false
	}
	nc := rc[0]
	for k, i := range nc.Findings {
		nc.Findings[k] = idx[i]
	}
	return nc, true
}

// schemaTakes gives the patch of f whose values the schema takes (its
// composed one, else its rule's own), or why the last is not taken.
func (v *valuesPlan) schemaTakes(t *chartTrial, o *object.Object, f finding.Finding) (json.RawMessage, string) {
	why := ""
	for _, p := range []json.RawMessage{f.Fix.Patch, f.Fix.Own} {
		var m map[string]any
		if p == nil || json.Unmarshal(p, &m) != nil {
			continue
		}
		set, _, _ := valuesOf(o, m, map[string]string{})
		_, err := t.render(set)
		if err == nil {
			return p, ""
		}
		why = oneLine(err.Error()) // the rule's own patch's, when tried
	}
	return nil, why
}
