package rules

import (
	"fmt"

	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/object"
)

// check applies the rules to one object. Where a controller runs a copy of
// the object's pod spec beside it (index.CopyOf: Flagger's -primary), a
// finding the original and the copy both have is reported once, on the
// original, the object people edit, and says the copy runs the same; a
// finding of the copy alone (its own replica count, say) stays on it.
func check(o *object.Object, ix *index.Index, rules []*Rule, opts *Options) Outcome {
	res := checkOne(o, ix, rules, opts)
	if len(res.Findings) == 0 || opts.EachObject {
		return res
	}
	pair := ix.CopyOf(o)
	if pair == nil {
		return res
	}
	isCopy := pair.Copy.Ref == o.Ref
	other := pair.Copy
	if isCopy {
		other = pair.Original
	}
	theirs := map[sameKey]bool{}
	o2 := checkOne(other, ix, rules, opts)
	for _, f := range o2.Findings {
		theirs[keyOfReported(f)] = true
	}
	for _, f := range o2.Suppressed {
		theirs[keyOfReported(f.Reported)] = true
	}
	kept := res.Findings[:0]
	for _, f := range res.Findings {
		switch {
		case !theirs[keyOfReported(f)]:
			kept = append(kept, f)
		case !isCopy:
			f.Message += fmt.Sprintf(" (%s %s, which %s made from it, runs the same and is not reported again)", pair.Copy.Kind, pair.Copy.Name, pair.By)
			f.Mechanism = append(f.Mechanism, fmt.Sprintf("%s %s runs a copy of this pod spec: Flagger creates it from %s and copies the spec again at each promotion (fluxcd/flagger v1.44.0 pkg/canary/deployment_controller.go createPrimaryDeployment :234-320, Promote :65-138). The finding holds there too; it is reported here, on the object to edit.", pair.Copy.Kind, pair.Copy.Name, pair.Original.Name))
			kept = append(kept, f)
		}
	}
	res.Findings = kept
	return res
}

// sameKey identifies a finding within its object, whichever object of a
// pair it is on.
type sameKey struct{ rule, container, path string }

func keyOfReported(f Reported) sameKey {
	return sameKey{f.Rule, f.Container, f.Path}
}
