// Package diagnosis is the diagnose rules' kind of check and its engine: a
// diagnose rule reads what a running pod did (its status, events and logs,
// package observe) rather than a manifest. Backfire diagnose runs these
// rules on each pod; scan never does.
package diagnosis

import (
	"fmt"

	"backfire.dev/backfire/internal/classify"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/observe"
	"backfire.dev/backfire/internal/rules"
)

// Check is the check of a diagnose rule (rules.Rule.Check).
type Check struct {
	Run func(*Pass)
}

// Driver is "diagnose".
func (*Check) Driver() string { return "diagnose" }

func checkOf(r *rules.Rule) *Check {
	c, _ := r.Check.(*Check)
	return c
}

// Pass is one diagnose rule applied to what was observed of one pod.
type Pass struct {
	Rule    *rules.Rule
	Obs     *observe.Observation
	Options *rules.Options

	findings []finding.Finding
	notes    []string
}

// Note says that the rule found no evidence either way, and why: "no
// evidence" is an answer, not a silence.
func (p *Pass) Note(s string) { p.notes = append(p.notes, s) }

// Classify says what a container of the pod is.
func (p *Pass) Classify(name string) classify.Verdict {
	c, _ := p.Obs.Pod.Container(name)
	if c == nil {
		return classify.Verdict{}
	}
	return classify.Container("Pod", c)
}

// Report records a finding about the pod: the engine fills in the rule and
// the object; f.File and f.Line default to the pod's document at f.Path.
func (p *Pass) Report(f finding.Finding) {
	pod := p.Obs.Pod
	f.Rule, f.Slug, f.Object = p.Rule.ID, p.Rule.Slug, pod.Ref
	if f.Severity == finding.None {
		f.Severity = p.Rule.Severity
	}
	if f.File == "" {
		f.File = pod.Doc.File
		f.Line, f.Column = pod.Line(f.Path)
	}
	if f.Line < 1 {
		f.Line, f.Column = 1, 1
	}
	if f.Column < 1 {
		f.Column = 1
	}
	if f.Mechanism == nil {
		f.Mechanism = []string{}
	}
	p.findings = append(p.findings, f)
}

// Outcome is what the diagnose rules said about one pod. Unlike a scan's
// findings, these are placed by the rules themselves (a log line, an
// event), so they come out located.
type Outcome struct {
	Findings []finding.Finding
	Errors   []load.Error
	// Notes say where a diagnose rule found no evidence either way.
	Notes      []string
	Suppressed int
}

// Run applies the diagnose rules among rs to one observed pod. Disabled
// rules, the ignore annotation and severity overrides apply as in a scan;
// a rule that panics is an error at the pod.
func Run(rs []*rules.Rule, obs *observe.Observation, opts *rules.Options) Outcome {
	var res Outcome
	for _, r := range rs {
		c := checkOf(r)
		if c == nil {
			continue
		}
		p := &Pass{Rule: r, Obs: obs, Options: opts}
		if err := runSafely(p, c); err != nil {
			res.Errors = append(res.Errors, *err)
			continue
		}
		for _, n := range p.notes {
			res.Notes = append(res.Notes, fmt.Sprintf("%s %s: %s", r.ID, obs.Pod.Ref, n))
		}
		if ok, _ := rules.Ignored(obs.Pod.Object, r.ID); ok && len(p.findings) > 0 {
			res.Suppressed += len(p.findings)
			continue
		}
		override, hasOverride := opts.Config.SeverityOf(r.ID)
		for _, f := range p.findings {
			if sev, err := finding.ParseSeverity(override); hasOverride && err == nil && sev != finding.None {
				f.Severity = sev
			}
			res.Findings = append(res.Findings, f)
		}
	}
	rules.Sort(res.Findings)
	return res
}

func runSafely(p *Pass, c *Check) (err *load.Error) {
	defer func() {
		if v := recover(); v != nil {
			d := p.Obs.Pod.Doc
			err = &load.Error{File: d.File, Line: d.Line,
				Message: fmt.Sprintf("internal error: rule %s failed on %s: %v (a bug in backfire; please report it with this input)", p.Rule.ID, p.Obs.Pod.Ref, v)}
		}
	}()
	c.Run(p)
	return nil
}
