package fixplan

import (
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/scan"
)

// chart is the destination of an object rendered from a Helm chart: the
// values keys that reach each block the change makes (route.go), then the
// keys that print its fields one by one (values.go), then the template
// where it writes a field literally (template.go). The keys go to a
// valuesSink: the values files that set them, or --values-out.
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

func (d *chart) claim(o *object.Object) *Reason {
	if o.Doc.Origin.Kind != load.ChartTemplate || !d.on || o.Doc.Trace == nil {
		return unclaimed(o)
	}
	return nil
}

func (d *chart) take(o *object.Object, c fix.Change) *Reason {
	return planValues(o, c, d.chosen, d.values, d.out)
}

func (d *chart) write(files map[string]*File) ([]planned, error) {
	v := d.values
	for p, f := range v.templates {
		f.Rules = templateRules(v.changes, p)
		files[p] = f
	}
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

// verify is done by the plan's rescan: a template edit's literal scalars
// are checked there (renders), since a failure makes the plan again
// without template edits; the values files are proven by a second run
// (see the tests).
func (d *chart) verify(*scan.Result, map[string][]byte) error { return nil }

// templateRules lists the rules of the changes that edit the template p.
func templateRules(changes []planned, p string) []string {
	var rules []string
	for _, c := range changes {
		if c.template != p {
			continue
		}
		for _, r := range c.rules {
			if !containsString(rules, r) {
				rules = append(rules, r)
			}
		}
	}
	return rules
}

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
