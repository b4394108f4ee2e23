package fixplan

import (
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/scan"
)

// destination is one place the composed change of an object can go: the
// plain file it was read from, its chart's values keys (in place or in
// --values-out), its chart's template where it writes a field literally,
// an overlay's patch file. Each owns what it proposes and its part of the
// proof.
type destination interface {
	// claim says why the destination does not edit objects like o, or
	// nil when it does.
	claim(o *object.Object) *Reason
	// take proposes edits for the change c on o. It gives back the part
	// of c it leaves to the destinations after it (nil when it takes all
	// of c, c itself when it takes none) and why it leaves it, nil when
	// it has nothing to say. Findings it leaves for good (a schema that
	// rejects their values) it records in the plan itself.
	take(o *object.Object, c fix.Change) (*fix.Change, *Reason)
	// write adds the files its edits change and gives the changes it
	// made, each with the spans it wrote, for the rescan.
	write(files map[string]*File) ([]planned, error)
	// verify checks its edits against the rescan, beyond the findings
	// being gone (which the plan checks for every destination); overlay
	// holds the new contents by path.
	verify(after *scan.Result, overlay map[string][]byte) error
}

// destinationsFor is the declared order of the destinations tried for
// an object of each origin: each that claims the object takes what it
// can of the change and hands the rest to the next.
func (p *planner) destinationsFor(o *object.Object) []destination {
	switch o.Doc.Origin.Kind {
	case load.PlainFile:
		return []destination{p.plain}
	case load.ChartTemplate:
		// The keys that reach every field; else the template where it
		// writes the rest literally; else the keys that reach some, the
		// rest left with the reason.
		return []destination{p.chart, p.template, p.inPart}
	case load.OverlayBuild:
		return []destination{p.overlay}
	}
	return nil
}

// route gives the change c on o to its destinations in their order, each
// the part the ones before it left, and leaves what none takes with the
// first true reason: the refusal of the first destination that claims
// the object, else why none does. A final reason (the values reach the
// fields, in a file fix does not write) ends the route.
func (p *planner) route(o *object.Object, c fix.Change) {
	if o == nil {
		p.out.leave(p.chosen, c, reason(ReasonNoTarget, "the object the fix applies to ("+c.Target.String()+") is not in the input"))
		return
	}
	p.routeThrough(p.destinationsFor(o), o, c)
}

// routeThrough is route through the destinations ds, in their order.
func (p *planner) routeThrough(ds []destination, o *object.Object, c fix.Change) {
	var first *Reason
	for _, d := range ds {
		why := d.claim(o)
		if why == nil {
			var rest *fix.Change
			rest, why = d.take(o, c)
			if rest == nil {
				return
			}
			c = *rest
		}
		if first == nil {
			first = why
		}
		if why != nil && why.Type.final() {
			break
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
