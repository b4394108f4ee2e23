package fixplan

import (
	"strings"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/scan"
)

// chart is the destination of an object rendered from a Helm chart
// through its values: the keys that reach each block the change makes
// (route.go), or that print each field it sets (the trace, values.go).
// It takes a change only when keys reach all of it; what they do not
// reach goes to the template (template.go), then to the keys that reach
// part of it (inpart.go). The keys go to a valuesSink: the values files
// that set them, or --values-out.
type chart struct {
	on     bool // charts are rendered by fix (--values, --set: the Helm options)
	out    *FixPlan
	chosen []finding.Finding
	values *valuesPlan
	sink   valuesSink
}

// valuesSink is where the values keys a chart's fixes set are written.
type valuesSink interface {
	// files writes v's keys: the files changed, and whether every key
	// went to each of them (one file of its own).
	files(v *valuesPlan) ([]*File, bool, error)
}

func (d *chart) claim(o *object.Object) *Reason { return claimChart(o, d.on) }

// claimChart is the claim of each of a chart's destinations: an object
// rendered from a chart fix renders, with its trace.
func claimChart(o *object.Object, on bool) *Reason {
	if o.Doc.Origin.Kind != load.ChartTemplate || !on || o.Doc.Trace == nil {
		return unclaimed(o)
	}
	return nil
}

// take routes what it can of c through the values (see route.go), then
// takes the rest when the keys the trace ties to its fields reach every
// one of them. A schema that rejects a finding's values leaves it here.
func (d *chart) take(o *object.Object, c fix.Change) (*fix.Change, *Reason) {
	v := d.values
	rest := planRoutes(o, c, d.chosen, v)
	if rest == nil {
		return nil, nil
	}
	if v.unwritableWhy != "" {
		// Not "the values do not reach": they do, in a file fix does not
		// write; --values-out does.
		return rest, reason(ReasonUnwritable, v.unwritableWhy)
	}
	c, ok := v.admitted(o, *rest, d.chosen, d.out)
	if !ok {
		return nil, nil
	}
	set, missing, keys := valuesOf(o, c.Patch, v.fileOf)
	if why := v.unwritable(set); why != "" {
		return &c, reason(ReasonUnwritable, why)
	}
	if len(missing) == 0 && len(set) > 0 {
		v.record(o, c, set, nil, keys, d.chosen, "", "")
		return nil, nil
	}
	return &c, reason(ReasonUnreached, "the chart's values do not reach "+strings.Join(missing, ", "))
}

func (d *chart) write(files map[string]*File) ([]planned, error) {
	v := d.values
	d.out.Routes = v.routes
	d.out.Ranges = v.ranges
	for _, t := range v.trials {
		if t != nil {
			d.out.TrialRenders += t.renders
		}
	}
	if len(v.set) == 0 {
		if len(v.changes) == 0 {
			return nil, nil
		}
		return v.withSpans(nil, false), nil
	}
	fs, all, err := d.sink.files(v)
	if err != nil {
		return nil, err
	}
	for _, f := range fs {
		files[f.Path] = f
	}
	return v.withSpans(fs, all), nil
}

// verify is done by the plan's rescan: the values files are proven by a
// second run (see the tests).
func (d *chart) verify(*scan.Result, map[string][]byte) error { return nil }

// valuesInPlace writes each key to the values file that sets it.
type valuesInPlace struct{ maxSize int64 }

func (s valuesInPlace) files(v *valuesPlan) ([]*File, bool, error) {
	fs, err := v.inPlace(s.maxSize)
	return fs, false, err
}

// valuesOut writes every key to the one file --values-out names, edited
// in place when it exists (old).
type valuesOut struct {
	path string
	old  []byte
}

func (s valuesOut) files(v *valuesPlan) ([]*File, bool, error) {
	f, err := v.file(s.path, s.old)
	if err != nil {
		return nil, false, err
	}
	return []*File{f}, true, nil
}
