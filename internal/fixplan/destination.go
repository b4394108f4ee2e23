package fixplan

import (
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/scan"
)

// destination is one place the composed change of an object can go: the
// plain file it was read from, its chart (values keys, and the template
// where it writes a field literally; the keys in place or in
// --values-out), an overlay's patch file. Each owns what it proposes and
// its part of the proof.
type destination interface {
	// claim says why the destination does not edit objects like o, or
	// nil when it does.
	claim(o *object.Object) *Reason
	// take proposes edits for the change c on o, or says why it cannot.
	// Findings of c it takes in part and leaves it records in the plan
	// itself, each with its reason.
	take(o *object.Object, c fix.Change) *Reason
	// write adds the files its edits change and gives the changes it
	// made, each with the spans it wrote, for the rescan.
	write(files map[string]*File) ([]planned, error)
	// verify checks its edits against the rescan, beyond the findings
	// being gone (which the plan checks for every destination); overlay
	// holds the new contents by path.
	verify(after *scan.Result, overlay map[string][]byte) error
}

// destinationsFor is the declared order of the destinations tried for
// an object of each origin: the first that claims the object and takes
// the change gets it.
func (p *planner) destinationsFor(o *object.Object) []destination {
	switch o.Doc.Origin.Kind {
	case load.PlainFile:
		return []destination{p.plain}
	case load.ChartTemplate:
		return []destination{p.chart}
	case load.OverlayBuild:
		return []destination{p.overlay}
	}
	return nil
}

// route gives the change c on o to the first destination that takes it,
// or leaves its findings with the first true reason: the refusal of the
// first destination that claims the object, else why none does.
func (p *planner) route(o *object.Object, c fix.Change) {
	if o == nil {
		p.out.leave(p.chosen, c, reason(ReasonNoTarget, "the object the fix applies to ("+c.Target.String()+") is not in the input"))
		return
	}
	var first *Reason
	for _, d := range p.destinationsFor(o) {
		why := d.claim(o)
		if why == nil {
			why = d.take(o, c)
			if why == nil {
				return
			}
		}
		if first == nil {
			first = why
		}
	}
	if first == nil {
		first = unclaimed(o)
	}
	p.out.leave(p.chosen, c, first)
}

// unclaimed is why no destination edits an object of o's origin.
func unclaimed(o *object.Object) *Reason {
	return reason(ReasonOrigin, "the object is "+o.Doc.Origin.String()+"; fix edits plain YAML files, a chart's values and templates, and an overlay's patches: apply the patch to its source")
}

// leave leaves the findings of c, each with why.
func (r *FixPlan) leave(fs []finding.Finding, c fix.Change, why *Reason) {
	for _, i := range c.Findings {
		r.leaveOne(fs[i], why)
	}
}

// leaveOne leaves one finding with why.
func (r *FixPlan) leaveOne(f finding.Finding, why *Reason) {
	r.Left = append(r.Left, Left{Finding: f, Reason: why.Detail, Type: why.Type})
}
