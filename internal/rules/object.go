package rules

import (
	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/object"
)

// RunObject applies the rules to one object of the index and no other: the
// admission webhook judges the object it was sent, with the cluster's
// objects in the index as context only.
func RunObject(o *object.Object, ix *index.Index, rules []*Rule, opts *Options) Outcome {
	return check(o, ix, rules, opts)
}
