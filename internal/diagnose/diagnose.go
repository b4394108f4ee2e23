// Package diagnose reads a restarting pod the way an on-call engineer
// should: its status, events and logs go through the diagnose rules
// (BF501-BF503), and its spec through the static rules, in one result with
// the finding shape of a scan.
package diagnose

import (
	"cmp"
	"fmt"
	"slices"

	"backfire.dev/backfire/internal/catalog"
	"backfire.dev/backfire/internal/config"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/observe"
	"backfire.dev/backfire/internal/observe/printed"
	"backfire.dev/backfire/internal/recoverylog"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/rules/diagnosis"
	"backfire.dev/backfire/internal/scan"
)

// Stream is one input: a file's name and its bytes.
type Stream struct {
	Name string
	Data []byte
}

// Input is what was read about one or more pods.
type Input struct {
	// Pods holds kubectl get pod -o yaml|json (a Pod, a List, or a
	// pod,events dump, whose events count too), or what kubectl prints for
	// people: describe pod, get pods, get events, or a fragment of them
	// (the form is told from the text). Parsed is used instead when the
	// pods were read already (from a cluster).
	Pods   Stream
	Parsed *load.File
	Events []Stream
	Logs   []observe.Log
	// Catalog is the rule set; nil means the whole catalog.
	Catalog []*rules.Rule
	Rules   rules.Options
}

// Diagnosis is a scan result (static and diagnose findings, errors, summary)
// with what each pod was observed to do.
type Diagnosis struct {
	*scan.Result
	Pods []*observe.Observation
	// Notes say where a rule found no evidence either way.
	Notes []string
}

// Run diagnoses every pod of the input. Input problems are errors in the
// result (the rest is still diagnosed); the returned error is for options.
func Run(in Input) (*Diagnosis, error) {
	if in.Catalog == nil {
		in.Catalog = catalog.All()
	}
	if in.Rules.Config == nil {
		in.Rules.Config = &config.Config{}
	}
	f := in.Parsed
	var pods []*observe.Pod
	var events []observe.Event
	var inputErrors []load.Error
	logFromPods := false
	if f == nil {
		parsed := load.Parse(in.Pods.Name, in.Pods.Data)
		f = &parsed
		if !hasObjects(parsed) {
			if ps, evs, errs, ok := readPrinted(in.Pods); ok {
				pods, events, inputErrors = ps, evs, errs
				f = staticInput(in.Pods.Name, ps)
			} else if len(recoverylog.Scan(in.Pods.Data).Matches) > 0 {
				// A server's log pasted alone: read as the log of a pod
				// the capture does not show.
				in.Logs = append([]observe.Log{{File: in.Pods.Name, Data: in.Pods.Data}}, in.Logs...)
				logFromPods = true
				f = &load.File{Name: in.Pods.Name, Empty: true}
				pods, inputErrors = logOnlyPods(in.Pods.Name, in.Logs)
			} else if len(in.Pods.Data) == 0 && len(in.Logs) > 0 {
				// --logs without a pod: the same.
				f = &load.File{Name: in.Logs[0].File, Empty: true}
				pods, inputErrors = logOnlyPods(in.Logs[0].File, in.Logs)
			}
		}
	}
	// The static rules see the pod's spec as a scan would (a printed pod
	// only when a whole describe block gave its spec).
	res, err := scan.Run(scan.Options{Extra: []load.File{*f}, Catalog: in.Catalog, Rules: in.Rules})
	if err != nil {
		return nil, err
	}
	out := &Diagnosis{Result: res}
	res.Summary.Files += len(in.Events) + len(in.Logs)
	if logFromPods {
		res.Summary.Files-- // the pod stream was the log
	}
	res.Errors = append(res.Errors, inputErrors...)

	if pods == nil {
		evs, errs := observe.EventsIn(*f)
		events = append(events, evs...)
		res.Errors = append(res.Errors, errs...)
		for _, o := range res.Objects {
			if p, ok := observe.PodOf(o); ok {
				pods = append(pods, p)
			}
		}
	}
	for _, s := range in.Events {
		evs, errs := readEvents(s)
		events = append(events, evs...)
		res.Errors = append(res.Errors, errs...)
	}
	if len(pods) == 0 {
		if len(res.Errors) == 0 {
			res.Errors = append(res.Errors, load.Error{File: f.Name, Message: "no Pod in the input (want the output of kubectl get pod -o yaml or -o json, or of kubectl describe pod, get pods or get events)"})
		}
		return out, nil
	}
	if len(pods) == 1 {
		// Events rows that name no pod are about the only pod there is.
		for i := range events {
			if events[i].Object.Name == "" && events[i].Object.Kind == "Pod" {
				events[i].Object = pods[0].Ref
			}
		}
	}
	enabled, err := rules.Enabled(in.Catalog, &in.Rules)
	if err != nil {
		return nil, err
	}
	// The diagnosis reads in the order of seed 003's reasoning (the
	// period, the exit code, the logs), then the static findings.
	static := res.Findings
	res.Findings = nil
	used := 0
	for _, p := range pods {
		obs := observe.Observe(p, events, in.Logs)
		used += len(obs.Events)
		out.Pods = append(out.Pods, obs)
		r := diagnosis.Run(enabled, obs, &in.Rules)
		res.Findings = append(res.Findings, r.Findings...)
		res.Errors = append(res.Errors, r.Errors...)
		res.Summary.Suppressed += r.Suppressed
		out.Notes = append(out.Notes, r.Notes...)
	}
	if len(events) > 0 && used == 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("none of the %d events is about the pod read: are they from another pod or namespace?", len(events)))
	}
	slices.SortStableFunc(res.Findings, func(a, b finding.Finding) int {
		return cmp.Or(cmp.Compare(a.Object.String(), b.Object.String()), cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.Container, b.Container))
	})
	res.Findings = append(res.Findings, static...)
	res.Summary.Findings = map[string]int{"error": 0, "warning": 0, "info": 0}
	for _, fd := range res.Findings {
		res.Summary.Findings[fd.Severity.String()]++
	}
	return out, nil
}

// logOnlyPods builds the pod of logs read without one: unnamed, with the
// logs' containers (or one unnamed container), and nothing else known.
func logOnlyPods(name string, logs []observe.Log) ([]*observe.Pod, []load.Error) {
	if len(logs) == 0 {
		return nil, nil
	}
	p := &printed.Pod{Forms: []string{"server log"}, Line: 1}
	seen := map[string]bool{}
	for _, l := range logs {
		if !seen[l.Container] {
			seen[l.Container] = true
			p.Containers = append(p.Containers, &printed.Container{Name: l.Container})
		}
	}
	c := &printed.Capture{Name: name, Pods: []*printed.Pod{p}}
	pods, _, errs := c.Observe()
	return pods, errs
}

// hasObjects reports whether a parsed stream held Kubernetes objects.
func hasObjects(f load.File) bool { return len(f.Documents) > 0 }

// readPrinted reads a stream as kubectl's printed output; ok is false when
// it holds none.
func readPrinted(s Stream) (pods []*observe.Pod, events []observe.Event, errs []load.Error, ok bool) {
	c := printed.Read(s.Name, s.Data)
	if len(c.Pods) == 0 && len(c.Loose) == 0 {
		return nil, nil, nil, false
	}
	pods, events, errs = c.Observe()
	return pods, events, errs, len(pods) > 0 || len(events) > 0
}

// staticInput is the stream the static rules scan for printed pods: the
// ones whose whole spec was printed.
func staticInput(name string, pods []*observe.Pod) *load.File {
	f := &load.File{Name: name}
	for _, p := range pods {
		if p.Printed != nil && p.Printed.Spec {
			f.Documents = append(f.Documents, p.Doc)
		}
	}
	if len(f.Documents) == 0 {
		f.Empty = true
	}
	return f
}

// readEvents reads an events stream: kubectl get events -o json|yaml, or
// an events table as kubectl prints it.
func readEvents(s Stream) ([]observe.Event, []load.Error) {
	evs, errs := observe.ReadEvents(s.Name, s.Data)
	if len(evs) > 0 || !printedOnly(s.Data) {
		return evs, errs
	}
	_, pevs, perrs, ok := readPrinted(s)
	if !ok {
		return evs, errs
	}
	return pevs, perrs
}

// printedOnly: the stream is not YAML or JSON objects, so a parse error
// of it is not the user's mistake but another form.
func printedOnly(data []byte) bool {
	return !hasObjects(load.Parse("", data))
}

// Worst returns the highest severity found.
func (r *Diagnosis) Worst() finding.Severity {
	w := finding.None
	for _, f := range r.Findings {
		w = max(w, f.Severity)
	}
	return w
}

// Of returns the findings of one rule.
func (r *Diagnosis) Of(id string) []finding.Finding {
	return slices.DeleteFunc(slices.Clone(r.Findings), func(f finding.Finding) bool { return f.Rule != id })
}
