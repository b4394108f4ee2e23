package rules

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"

	"backfire.dev/backfire/internal/classify"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
)

// Result is what the engine found.
type Result struct {
	Findings []finding.Finding
	// Suppressed counts findings silenced by the ignore annotation.
	Suppressed int
	// Errors are rules that failed on an object: a bug in the rule, reported
	// at the object so that one bad rule cannot take the scan down.
	Errors []load.Error
	// Notes say where a diagnose rule found no evidence either way.
	Notes []string
}

// Enabled returns the rules of the catalog that run under the options'
// configuration: the defaults, minus those disabled, plus default-off rules
// that were enabled. An unknown rule ID in the configuration is an error.
func Enabled(catalog []*Rule, opts *Options) ([]*Rule, error) {
	cfg := opts.Config
	known := func(id string) bool {
		return slices.ContainsFunc(catalog, func(r *Rule) bool { return strings.EqualFold(r.ID, id) })
	}
	for _, id := range append(slices.Clone(cfg.Disable), cfg.Enable...) {
		if !known(id) {
			return nil, fmt.Errorf("%s: unknown rule %q", cfgName(opts), id)
		}
	}
	for id, s := range cfg.Severity {
		if !known(id) {
			return nil, fmt.Errorf("%s: unknown rule %q in severity", cfgName(opts), id)
		}
		if _, err := finding.ParseSeverity(s); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", cfgName(opts), id, err)
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

func cfgName(opts *Options) string {
	if opts.Config.Path != "" {
		return opts.Config.Path
	}
	return "configuration"
}

func containsFold(list []string, s string) bool {
	return slices.ContainsFunc(list, func(x string) bool { return strings.EqualFold(x, s) })
}

// Run applies the rules to every object of the index and returns the
// findings sorted by file, line and rule. Rules are pure functions of an
// object and the index, so objects are checked on all cores.
func Run(ix *index.Index, rules []*Rule, opts *Options) Result {
	objs := ix.Objects()
	perObject := make([]Result, len(objs))
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
	var res Result
	for _, r := range perObject {
		res.Findings = append(res.Findings, r.Findings...)
		res.Suppressed += r.Suppressed
		res.Errors = append(res.Errors, r.Errors...)
	}
	Sort(res.Findings)
	return res
}

// check applies the rules to one object.
func check(o *object.Object, ix *index.Index, rules []*Rule, opts *Options) Result {
	var res Result
	verdicts := map[*corev1.Container]classify.Verdict{}
	for _, r := range rules {
		if r.Run == nil || !r.reads(o.Kind) {
			continue // a diagnose rule, or a kind the rule does not read
		}
		p := &Pass{Rule: r, Object: o, Index: ix, Options: opts, verdicts: verdicts}
		if err := runSafely(p); err != nil {
			res.Errors = append(res.Errors, *err)
			continue
		}
		if len(p.findings) == 0 {
			continue
		}
		if ignored(o, r.ID) {
			res.Suppressed += len(p.findings)
			continue
		}
		for _, f := range p.findings {
			if s, ok := opts.Config.Severity[r.ID]; ok {
				f.Severity, _ = finding.ParseSeverity(s)
			}
			res.Findings = append(res.Findings, f)
		}
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
	p.Rule.Run(p)
	return nil
}

// Sort orders findings by file, line, column and rule, so that output is
// stable whatever order the input was read in.
func Sort(fs []finding.Finding) {
	slices.SortStableFunc(fs, func(a, b finding.Finding) int {
		return cmp.Or(
			cmp.Compare(a.File, b.File),
			cmp.Compare(a.Line, b.Line),
			cmp.Compare(a.Column, b.Column),
			cmp.Compare(a.Rule, b.Rule),
			cmp.Compare(a.Container, b.Container),
		)
	})
}
