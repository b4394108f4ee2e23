package fixplan

import (
	"encoding/json"
	"slices"
	"strings"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/scan"
)

// inPart is the last destination of a chart object's change: what
// neither the values keys (chart) nor the template (chartTemplate) take
// whole. A new probe handler no key reaches is left, with its reason, and
// the other findings, composed again without it, are routed afresh from
// the first destination: their numbers were only overruled for the sake
// of the new handler, and keys may reach them alone. Else the keys the
// trace ties to the fields are set, and the rescan leaves each finding
// whose fields they do not reach, with the reason; with no such key,
// the findings are left here.
type inPart struct {
	charts   bool // charts are rendered by fix (the Helm options)
	out      *FixPlan
	chosen   []finding.Finding
	values   *valuesPlan
	template *chartTemplate // its refusal and proof are said in the reason
	// reroute routes a change again from the object's first destination.
	reroute func(*object.Object, fix.Change)
}

func (d *inPart) claim(o *object.Object) *Reason { return claimChart(o, d.charts) }

func (d *inPart) take(o *object.Object, c fix.Change) (*fix.Change, *Reason) {
	v := d.values
	set, missing, keys := valuesOf(o, c.Patch, v.fileOf)
	why := notEdited(v.unreachedWhy(), d.template.refused, d.template.proofWhy)
	if owners := handlerOwners(c, d.chosen); len(missing) > 0 && len(owners) > 0 {
		// Only the handler is said unreached: the numbers composed with
		// it are routed again, each by its own finding.
		hs := handlerFields(missing)
		for _, i := range owners {
			detail := "the chart's values do not reach " + strings.Join(hs, ", ") + ": change the template" + templateLines(o, hs, v.maxSize) + ", or patch the rendered object with " + string(d.chosen[i].Fix.Patch)
			if why != "" {
				detail += "; " + why
			}
			d.out.leaveOne(d.chosen[i], reason(ReasonUnreached, detail))
		}
		if c, ok := without(c, d.chosen, owners); ok {
			d.reroute(o, c)
		}
		return nil, nil
	}
	if len(set) == 0 {
		detail := "the chart's values do not reach " + unreachedText(v, o, missing) + ": change the template" + templateLines(o, missing, v.maxSize) + ", or patch the rendered object with " + patchText(c.Patch)
		if why != "" {
			detail += "; " + why
		}
		d.out.leave(d.chosen, c, reason(ReasonUnreached, detail))
		return nil, nil
	}
	v.record(o, c, set, missing, keys, d.chosen, "", why)
	return nil, nil
}

// write: the changes it takes are the values' (see chart.write).
func (d *inPart) write(map[string]*File) ([]planned, error) { return nil, nil }

// verify: a finding whose fields no key reaches is left by the plan's
// rescan, with the reason its change records (planned.stillReason).
func (d *inPart) verify(*scan.Result, map[string][]byte) error { return nil }

// handlerFields keeps, of the fields valuesOf names, those of a probe's
// handler (livenessProbe.httpGet, livenessProbe.tcpSocket.port); all of
// them when none is.
func handlerFields(fields []string) []string {
	var out []string
	for _, f := range fields {
		segs := strings.Split(strings.TrimSuffix(f, " (deleted)"), ".")
		for i := 0; i+1 < len(segs); i++ {
			if contains(probeKeys, segs[i]) && contains(handlerKeys, segs[i+1]) {
				out = append(out, f)
				break
			}
		}
	}
	if len(out) == 0 {
		return fields
	}
	return out
}

// handlerOwners lists the findings of c whose rule's own patch replaces a
// probe's handler.
func handlerOwners(c fix.Change, chosen []finding.Finding) []int {
	var owners []int
	for _, i := range c.Findings {
		var p any
		own := chosen[i].Fix.Patch
		if chosen[i].Fix.Own != nil {
			own = chosen[i].Fix.Own
		}
		if json.Unmarshal(own, &p) == nil && fix.ReplacesHandler(p) {
			owners = append(owners, i)
		}
	}
	return owners
}

// without composes c again without the findings dropped, each of the
// others with its rule's own patch: false when none is left.
func without(c fix.Change, chosen []finding.Finding, dropped []int) (fix.Change, bool) {
	var rest []finding.Finding
	idx := []int{}
	for _, i := range c.Findings {
		if !slices.Contains(dropped, i) {
			rest = append(rest, chosen[i])
			idx = append(idx, i)
		}
	}
	rc := fix.Compose(originalPatches(rest))
	if len(rc) == 0 {
		return c, false
	}
	// The recomposed change's findings are the chosen indexes.
	nc := rc[0]
	nc.Findings = idx
	return nc, true
}

// originalPatches gives each finding its rule's own patch back: without
// the handler change it was composed with, the numbers that change
// imposed no longer apply.
func originalPatches(fs []finding.Finding) []finding.Finding {
	out := make([]finding.Finding, len(fs))
	for i, f := range fs {
		out[i] = f
		if f.Fix != nil && f.Fix.Own != nil {
			fx := *f.Fix
			fx.Patch = fx.Own
			out[i].Fix = &fx
		}
	}
	return out
}

// unreachedText names the fields no values key reaches; fields a key
// reaches on its own (the router's tiedKeys), in a block no key reaches
// whole, are said apart, so that the text does not deny the keys its
// reason names (Telegraf's pdb.minAvailable beside a budget's
// unhealthyPodEvictionPolicy).
func unreachedText(v *valuesPlan, o *object.Object, missing []string) string {
	t := v.trials[o.Doc.Origin.Dir]
	if t == nil {
		return strings.Join(missing, ", ")
	}
	var not, part []string
	for _, m := range missing {
		if t.tied[objKey{o.Doc.File, o.Ref}][strings.TrimSuffix(m, " (deleted)")] {
			part = append(part, m)
		} else {
			not = append(not, m)
		}
	}
	if len(part) == 0 || len(not) == 0 {
		return strings.Join(missing, ", ")
	}
	return strings.Join(not, ", ") + " (they reach " + strings.Join(part, ", ") + ", through the keys below, which do not make the fix without it)"
}
