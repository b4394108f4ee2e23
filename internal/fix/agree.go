package fix

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/jsonenc"
	"backfire.dev/backfire/internal/object"
)

// Agree makes the fix each finding proposes agree with the composition of
// all fixes on its object (see Compose): where another finding's fix wins
// a field this one sets, this one's patch takes the composed value. A
// probe or a container's resources is taken whole, so that a patch never
// proposes half of a probe another fix rewrites. Applied alone, each patch
// still removes its finding; applied together, they compose.
func Agree(fs []finding.Finding) { AgreeDecoded(fs, nil) }

// AgreeDecoded is Agree with patches[i] fs[i]'s patch decoded, or nil
// where it is to be decoded here (patches may be nil). The patches are
// read, never changed.
func AgreeDecoded(fs []finding.Finding, patches []map[string]any) {
	AgreeComposed(fs, patches, nil, nil)
}

// AgreeComposed is AgreeDecoded given, where known, the composition of one
// object's fixes: composed is ComposeDecoded's one Change of the findings
// at indexes at of fs (in order) with their patches as they are now. It is
// used for the group of exactly those findings instead of composing them
// again (fixcompose composed them to patch the object), and changed.
func AgreeComposed(fs []finding.Finding, patches []map[string]any, composed *Change, at []int) {
	agreeComposed(fs, patches, composed, at, true)
}

// agreeComposed is AgreeComposed, taking the shortcuts of agreed.go where
// short is set: the test's reference is the general path, without them.
func agreeComposed(fs []finding.Finding, patches []map[string]any, composed *Change, at []int, short bool) {
	// Only fixes that share their object with another can disagree; the
	// others are not decoded and composed at all. Objects are independent
	// and each finding belongs to one, so they are agreed on all cores.
	groups := sharingTargets(fs)
	agreeGroup := func(g *targetGroup) {
		// Each patch is decoded once, for composing and for agreeing.
		owns := make([]map[string]any, len(g.findings))
		decoded := make([]bool, len(g.findings))
		for k := range g.findings {
			if patches != nil && patches[g.at[k]] != nil {
				owns[k], decoded[k] = patches[g.at[k]], true
				continue
			}
			var err error
			owns[k], err = DecodePatch(g.findings[k].Fix.Patch)
			decoded[k] = err == nil
		}
		var changes []Change
		switch {
		case composed != nil && slices.Equal(g.at, at):
			changes = []Change{*composed}
		case short && disjoint(owns, decoded):
			return // each patch is its own part of the composition
		default:
			changes = compose(g.findings, owns, short) // the agreement reads no notes
		}
		for _, c := range changes {
			if len(c.Findings) < 2 {
				continue
			}
			own := make([]map[string]any, len(c.Findings))
			ok := make([]bool, len(c.Findings))
			for k, i := range c.Findings {
				own[k], ok[k] = owns[i], decoded[i]
				c.Findings[k] = g.at[i]
			}
			agreeChange(fs, c, own, ok, short)
		}
	}
	// A scan agrees the findings of one object at a time, already on all
	// cores: that is one group, agreed here.
	if len(groups) == 1 {
		agreeGroup(&groups[0])
		return
	}
	work := make(chan *targetGroup)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(groups)) {
		wg.Go(func() {
			for g := range work {
				agreeGroup(g)
			}
		})
	}
	for i := range groups {
		work <- &groups[i]
	}
	close(work)
	wg.Wait()
}

// agreeChange rewrites the patch of each finding of c (indices into fs)
// that disagrees with the composed patch; own holds each one's patch,
// decoded where decoded says so. Where short is set, a patch that
// certainly agrees is not projected to find so.
func agreeChange(fs []finding.Finding, c Change, own []map[string]any, decoded []bool, short bool) {
	var rulesIn []string
	for _, i := range c.Findings {
		if !slices.Contains(rulesIn, fs[i].Rule) {
			rulesIn = append(rulesIn, fs[i].Rule)
		}
	}
	pr := projector{}
	for k, i := range c.Findings {
		f := &fs[i]
		if !decoded[k] || short && pr.agrees(own[k], c.Patch) {
			continue
		}
		agreed := pr.project(own[k], c.Patch)
		if equal(agreed, own[k]) {
			continue
		}
		b, err := jsonenc.Marshal(agreed)
		if err != nil {
			continue
		}
		fx := *f.Fix
		fx.Own = f.Fix.Patch
		fx.Patch = b
		var others []string
		for _, r := range rulesIn {
			if r != f.Rule {
				others = append(others, r)
			}
		}
		fx.Description += fmt.Sprintf(" The patch is composed with the fix of %s on the same object, so the fixes agree (precedence: docs/fix.md).", strings.Join(others, ", "))
		f.Fix = &fx
	}
}

// targetGroup is the composable findings of one object, copied, with the
// index in fs of each.
type targetGroup struct {
	findings []finding.Finding
	at       []int
}

// sharingTargets groups the findings whose fixes Compose would compose
// with another's, by object.
func sharingTargets(fs []finding.Finding) []targetGroup {
	composable := func(f *finding.Finding) bool {
		return f.Fix != nil && f.Fix.Type == finding.StrategicMergePatch && len(f.Fix.Patch) > 0
	}
	count := map[object.Ref]int{}
	for i := range fs {
		if composable(&fs[i]) {
			count[TargetOf(fs[i])]++
		}
	}
	group := map[object.Ref]int{}
	var groups []targetGroup
	for i := range fs {
		t := TargetOf(fs[i])
		if !composable(&fs[i]) || count[t] < 2 {
			continue
		}
		g, ok := group[t]
		if !ok {
			g = len(groups)
			group[t] = g
			groups = append(groups, targetGroup{})
		}
		groups[g].findings = append(groups[g].findings, fs[i])
		groups[g].at = append(groups[g].at, i)
	}
	return groups
}

// A projector projects the patches of one change onto its composed patch.
// It finds the items of the composed patch's named lists by name: each
// of the thousands of containers' patches would otherwise search them all.
type projector map[*any]map[string][]int

// items returns the positions of the composed list c's items by name, nil
// when c is not a named list (NamedList).
func (pr projector) items(c []any) map[string][]int {
	if len(c) == 0 {
		return nil
	}
	byName, ok := pr[&c[0]]
	if !ok {
		if NamedList(c) {
			byName = make(map[string][]int, len(c))
			for i, ci := range c {
				cn, _ := ItemName(ci)
				byName[cn] = append(byName[cn], i)
			}
		}
		pr[&c[0]] = byName
	}
	return byName
}

// project takes from composed the fields own sets, whole for probes and
// resources.
func (pr projector) project(own, composed map[string]any) map[string]any {
	out := map[string]any{}
	for k, ov := range own {
		cv, ok := composed[k]
		if !ok {
			out[k] = ov
			continue
		}
		if isProbe(k) || k == "resources" {
			out[k] = clone(cv)
			continue
		}
		switch o := ov.(type) {
		case map[string]any:
			if c, ok := cv.(map[string]any); ok {
				out[k] = pr.project(o, c)
				continue
			}
		case []any:
			if c, ok := cv.([]any); ok && NamedList(o) {
				if byName := pr.items(c); byName != nil {
					var items []any
					for _, oi := range o {
						name, _ := ItemName(oi)
						for _, ci := range byName[name] {
							items = append(items, pr.project(oi.(map[string]any), c[ci].(map[string]any)))
						}
					}
					out[k] = items
					continue
				}
			}
		}
		out[k] = clone(cv)
	}
	return out
}
