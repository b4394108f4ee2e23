package rules

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
)

// Outcome is what the engine found, in object order; the pipeline locates
// and sorts it.
type Outcome struct {
	Findings []Reported
	// Suppressed are the findings the ignore annotation silenced.
	Suppressed []Suppressed
	// Errors are rules that failed on an object: a bug in the rule, reported
	// at the object so that one bad rule cannot take the scan down.
	Errors []load.Error
}

// Suppressed is a finding silenced by the object's ignore annotation.
type Suppressed struct {
	Reported
	Reason string // the annotation's text after '#'
}

// Enabled returns the rules of the catalog that run under the options'
// configuration: the defaults, minus those disabled, plus default-off rules
// that were enabled. An unknown rule ID in the configuration is an error.
func Enabled(catalog []*Rule, opts *Options) ([]*Rule, error) {
	cfg := opts.Config
	known := func(id string) bool {
		return slices.ContainsFunc(catalog, func(r *Rule) bool { return strings.EqualFold(r.ID, id) })
	}
	for _, section := range []string{"disable", "enable"} {
		ids := cfg.Disable
		if section == "enable" {
			ids = cfg.Enable
		}
		for _, id := range ids {
			if !known(id) {
				return nil, fmt.Errorf("%s: unknown rule %q in %s", cfg.At(section, id), id, section)
			}
		}
	}
	for id, s := range cfg.Severity {
		if !known(id) {
			return nil, fmt.Errorf("%s: unknown rule %q in severity", cfg.At("severity", id), id)
		}
		// "none" orders --fail-on; it is no severity a finding can have.
		if sev, err := finding.ParseSeverity(s); err != nil || sev == finding.None {
			return nil, fmt.Errorf("%s: severity of %s: %q is not error, warning or info", cfg.At("severity", id), id, s)
		}
	}
	var out []*Rule
	for _, r := range catalog {
		on := !r.DefaultOff || containsFold(cfg.Enable, r.ID)
		if on && !containsFold(cfg.Disable, r.ID) {
			out = append(out, r)
		}
	}
	return out, nil
}

func containsFold(list []string, s string) bool {
	return slices.ContainsFunc(list, func(x string) bool { return strings.EqualFold(x, s) })
}

// Run applies the scan rules among rules to every object of the index and
// returns the findings in object order. Rules are pure functions of an
// object and the index, so objects are checked on all cores.
func Run(ix *index.Index, rules []*Rule, opts *Options) Outcome {
	objs := ix.Objects()
	perObject := make([]Outcome, len(objs))
	workers := min(runtime.GOMAXPROCS(0), max(len(objs), 1))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(objs) {
					return
				}
				perObject[i] = check(objs[i], ix, rules, opts)
			}
		}()
	}
	wg.Wait()
	var res Outcome
	for _, r := range perObject {
		res.Findings = append(res.Findings, r.Findings...)
		res.Suppressed = append(res.Suppressed, r.Suppressed...)
		res.Errors = append(res.Errors, r.Errors...)
	}
	return res
}

// checkOne applies the rules to one object; rules that read the others'
// findings run last.
func checkOne(o *object.Object, ix *index.Index, rules []*Rule, opts *Options) Outcome {
	var res Outcome
	shared := map[any]any{}
	if opts.Unshared {
		shared = nil
	}
	var reported map[string]bool // rule IDs that reported here, made on the first
	run := func(r *Rule) {
		if opts.Canceled() {
			return
		}
		p := &Pass{Rule: r, Object: o, Index: ix, Options: opts, shared: shared, reported: reported}
		if err := runSafely(p); err != nil {
			res.Errors = append(res.Errors, *err)
			return
		}
		if len(p.findings) == 0 {
			return
		}
		if reported == nil {
			reported = map[string]bool{}
		}
		reported[r.ID] = true
		ok, reason := Ignored(o, r.ID)
		if ok && r.ScanCheck().ReadsFindings {
			// "all" cannot silence the rule that checks "all" itself.
			ids, _, _ := IgnoreList(o)
			ok = containsFold(ids, r.ID)
		}
		if ok {
			for _, f := range p.findings {
				res.Suppressed = append(res.Suppressed, Suppressed{Reported: f, Reason: reason})
			}
			return
		}
		override, hasOverride := opts.Config.SeverityOf(r.ID)
		for _, f := range p.findings {
			if sev, err := finding.ParseSeverity(override); hasOverride && err == nil && sev != finding.None {
				f.Severity = sev
			}
			res.Findings = append(res.Findings, f)
		}
	}
	var last []*Rule
	for _, r := range rules {
		switch s := r.ScanCheck(); {
		case s == nil || !r.reads(o.Kind):
			// another driver's rule, or a kind the rule does not read
		case s.ReadsFindings:
			last = append(last, r)
		default:
			run(r)
		}
	}
	for _, r := range last {
		run(r)
	}
	return res
}

// runSafely runs one rule on one object, turning a panic into an error at
// the object.
func runSafely(p *Pass) (err *load.Error) {
	defer func() {
		if v := recover(); v != nil {
			err = &load.Error{File: p.Object.Doc.File, Line: p.Object.Doc.Line,
				Message: fmt.Sprintf("internal error: rule %s failed on %s: %v (a bug in backfire; please report it with this input)", p.Rule.ID, p.Object.Ref, v)}
		}
	}()
	p.Rule.ScanCheck().Run(p)
	return nil
}

// Sort orders findings by file, line, column and rule, so that output is
// stable whatever order the input was read in.
func Sort(fs []finding.Finding) {
	slices.SortStableFunc(fs, func(a, b finding.Finding) int { return finding.CompareKeys(a.Key(), b.Key()) })
}
