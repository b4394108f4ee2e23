package analysis

import (
	"backfire.dev/backfire/internal/lazyregexp"
	"slices"
	"strings"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"

	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/object"
)

// Arg is what an {{args.NAME}} placeholder becomes in an AnalysisRun.
type Arg struct {
	Name string
	// Text is the value, or a description of it when it is not known.
	Text string
	// Latest is true when the Rollout feeds it the canary's pod-template
	// hash (valueFrom.podTemplateHashValue: Latest).
	Latest bool
	// Secret names the Secret the value comes from ("" if none); with
	// Known, its value was read from the Secret in the input.
	Secret string
	// Known is true when Text is the value itself.
	Known bool
	// Missing is true when neither the Rollout nor the template gives a
	// value: the controller cannot create the run.
	Missing bool
}

// Args merges the run's declared args with the Rollout's, as MergeArgs
// (utils/analysis/helpers.go) does: a Rollout arg sets the value of the
// declared arg of its name (a value, else its valueFrom) and is dropped
// when no template declares it; the Rollout's valueFrom is resolved as
// BuildArgumentsForRolloutAnalysisRun (utils/analysis/factory.go) does. A
// secretKeyRef is read from a Secret of the Rollout's namespace in ix, when
// the input holds it (see SecretValue); ix may be nil.
func Args(ix *index.Index, ro *object.Object, rolloutArgs []v1alpha1.AnalysisRunArgument, declared []v1alpha1.Argument) map[string]Arg {
	out := map[string]Arg{}
	for _, a := range declared {
		v := Arg{Name: a.Name}
		switch {
		case a.Value != nil:
			v.Text, v.Known = *a.Value, true
		case a.ValueFrom != nil && a.ValueFrom.SecretKeyRef != nil:
			ref := a.ValueFrom.SecretKeyRef
			v.Secret = ref.Name + " (key " + ref.Key + ")"
			v.Text = "the value of Secret " + v.Secret
			if text, ok := SecretValue(ix, ro.Namespace, ref.Name, ref.Key); ok {
				v.Text, v.Known = text, true
			}
		case a.ValueFrom != nil && a.ValueFrom.FieldRef != nil:
			v.Text, v.Known = FieldRefValue(ro, a.ValueFrom.FieldRef.FieldPath)
		default:
			v.Text, v.Missing = "not supplied", true
		}
		out[a.Name] = v
	}
	for _, a := range rolloutArgs {
		if _, declared := out[a.Name]; !declared {
			continue
		}
		v := Arg{Name: a.Name, Text: a.Value, Known: true}
		if vf := a.ValueFrom; vf != nil {
			switch {
			case vf.PodTemplateHashValue != nil:
				// A placeholder with no revision word: Stable must not count.
				v.Text = "(the " + string(*vf.PodTemplateHashValue) + " ReplicaSet's hash)"
				v.Known = false
				v.Latest = *vf.PodTemplateHashValue == v1alpha1.Latest
			case vf.FieldRef != nil:
				v.Text, v.Known = FieldRefValue(ro, vf.FieldRef.FieldPath)
			}
		}
		out[a.Name] = v
	}
	return out
}

// fieldRefPath is metadata.labels['x'] or metadata.annotations['x'].
var fieldRefPath = lazyregexp.New(`^metadata\.(labels|annotations)\['([^']*)'\]$`)

// FieldRefValue resolves the Rollout fields a fieldRef arg selects, the
// metadata paths the way fieldpath.ExtractFieldPathAsString does; other
// paths stay as written, which still shows what they select.
func FieldRefValue(ro *object.Object, path string) (string, bool) {
	switch path {
	case "metadata.name":
		return ro.Name, true
	case "metadata.namespace":
		if ro.Namespace == "" {
			return "the Rollout's namespace", false
		}
		return ro.Namespace, true
	}
	if m := fieldRefPath().FindStringSubmatch(path); m != nil && ro.Meta != nil {
		values := ro.Meta.GetLabels()
		if m[1] == "annotations" {
			values = ro.Meta.GetAnnotations()
		}
		return values[m[2]], true
	}
	return "the Rollout's " + path, false
}

// argRef is an {{args.NAME}} placeholder; the controller trims the spaces
// inside the braces (resolve in utils/template/template.go), so
// {{ args.NAME }} is the same.
var argRef = lazyregexp.New(`\{\{\s*args\.([^\s}]+)\s*\}\}`)

// Substitute replaces {{args.NAME}} with each value, and returns the args
// used, in order of first use.
func Substitute(text string, args map[string]Arg) (string, []Arg) {
	var used []Arg
	out := argRef().ReplaceAllStringFunc(text, func(m string) string {
		name := argRef().FindStringSubmatch(m)[1]
		v, ok := args[name]
		if !ok {
			v = Arg{Name: name, Text: "not supplied", Missing: true}
		}
		if !slices.ContainsFunc(used, func(u Arg) bool { return u.Name == name }) {
			used = append(used, v)
		}
		return v.Text
	})
	return out, used
}

// UsesArgs reports whether text holds an {{args.NAME}} placeholder.
func UsesArgs(text string) bool { return strings.Contains(text, "{{") && argRef().MatchString(text) }
