// Package suppression holds the rule about backfire's own ignore
// annotation (BF5xx): a suppression that silences nothing.
package suppression

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/rules"
)

// BF901 reports an ignore annotation entry that matched no finding on its
// object: it silences nothing today and will silence, unreviewed, the
// first finding of that rule a later change brings.
var BF901 = rules.Register(&rules.Rule{
	ID:       "BF901",
	Slug:     "unused-suppression",
	Severity: finding.Info,
	Summary:  "a backfire.dev/ignore entry that suppresses no finding on its object",
	Check:    &rules.Scan{Run: runBF901, ReadsFindings: true},
	Fix:      rules.FixFields{Sets: []string{"metadata.annotations"}, From: []string{"metadata.annotations"}},
	Evidence: []any{BF901Evidence{}},
})

func runBF901(p *rules.Pass) {
	ids, reason, found := rules.IgnoreList(p.Object)
	if !found {
		return
	}
	var unused, kept []string
	for _, id := range ids {
		used := p.Reported(id)
		if id == "*" || strings.EqualFold(id, "all") {
			used = p.ReportedAny()
		}
		if used {
			kept = append(kept, id)
		} else {
			unused = append(unused, id)
		}
	}
	if len(unused) == 0 && len(ids) > 0 {
		return
	}
	value := p.Object.Meta.Annotations[rules.IgnoreAnnotation]
	var msg string
	switch {
	case len(ids) == 0:
		msg = fmt.Sprintf("annotation %s %q names no rule", rules.IgnoreAnnotation, value)
	default:
		msg = fmt.Sprintf("annotation %s suppresses %s, but no such finding exists on this object: it silences nothing now, and would silence the first one a later change brings, unreviewed",
			rules.IgnoreAnnotation, strings.Join(unused, ", "))
	}
	mech := []string{
		fmt.Sprintf("The annotation reads %q; the rules that ran on %s reported nothing for %s.", value, p.Object.Ref, strings.Join(unused, ", ")),
		"A suppression is a review decision about one finding; with no finding it approves in advance whatever that rule reports here next.",
	}
	if reason != "" {
		mech = append(mech, fmt.Sprintf("Its reason, %q, may be about a finding an earlier change removed.", reason))
	}
	// The fix keeps the entries that still suppress something, with the
	// reason; an annotation left with none is removed (null).
	var newValue any
	if len(kept) > 0 {
		v := strings.Join(kept, ",")
		if reason != "" {
			v += " # " + reason
		}
		newValue = v
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{rules.IgnoreAnnotation: newValue}}})
	desc := "Remove the annotation: it suppresses nothing."
	if len(kept) > 0 {
		desc = fmt.Sprintf("Keep only the entries that suppress a finding: %q.", newValue)
	}
	p.Report(rules.Report{
		Path:      field.NewPath("metadata", "annotations").Key(rules.IgnoreAnnotation),
		Message:   msg,
		Mechanism: mech,
		Evidence:  BF901Evidence{Annotation: value, Unused: slices.Clip(unused)},
		Fix:       &finding.Fix{Description: desc, Type: finding.StrategicMergePatch, Patch: patch},
	})
}

// BF901Evidence: an ignore annotation entry that matched nothing.
type BF901Evidence struct {
	Annotation string   `json:"annotation" doc:"the annotation's value"`
	Unused     []string `json:"unused" doc:"the entries that suppressed no finding"`
}
