package rolloutsim

import (
	"fmt"
	"strings"

	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/object"
)

// pickOne finds the object whose typed form is a T: the one named name, or
// the only one. kind and plural name it in the errors, which tell the user
// to choose with --name when there are several.
func pickOne[T any](objs []*object.Object, name, kind, plural string) (*object.Object, error) {
	var found []*object.Object
	for _, o := range objs {
		if _, ok := o.Typed.(T); ok && (name == "" || o.Name == name) {
			found = append(found, o)
		}
	}
	switch {
	case len(found) == 0 && name != "":
		return nil, fmt.Errorf("no %s named %q in the input", kind, name)
	case len(found) == 0:
		return nil, fmt.Errorf("no %s in the input", kind)
	case len(found) > 1:
		names := make([]string, len(found))
		for i, o := range found {
			names[i] = o.Name
		}
		return nil, fmt.Errorf("%d %s in the input (%s): choose one with --name", len(found), plural, strings.Join(names, ", "))
	}
	return found[0], nil
}

// replicasOf is the pod count a run starts from, as the rules read it: the
// live status's, else an autoscaler's minimum, else spec.replicas; with a
// note saying which (whose: "the Rollout's", "the target's"; pass: what
// --replicas stands for) when it is not spec.replicas.
func replicasOf(rr index.Replicas, whose, pass string) (int32, string) {
	switch {
	case rr.Running > 0:
		return rr.Running, fmt.Sprintf("replicas %d from %s status.replicas", rr.Running, whose)
	case len(rr.ScaledBy) > 0:
		return rr.Min, fmt.Sprintf("replicas %d: the autoscaler's minimum (range %d-%d); pass --replicas for %s", rr.Min, rr.Min, rr.Max, pass)
	}
	return rr.Min, ""
}
