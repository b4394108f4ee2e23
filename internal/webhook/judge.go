// Package webhook judges objects sent to a Kubernetes validating admission
// webhook with the same rules as a scan, and answers the API server: warnings
// in warn mode, a refusal in deny mode. Cross-object context (the
// AnalysisTemplates of a Rollout, its autoscaler) comes from informer caches
// of the cluster when the webhook can read it.
package webhook

import (
	"context"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"

	"backfire.dev/backfire/internal/catalog"
	"backfire.dev/backfire/internal/config"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fixcompose"
	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/redact"
	"backfire.dev/backfire/internal/rules"
)

// Context supplies the objects of the cluster that the rules may consult
// for an admitted object: its namespace's objects and the cluster-scoped
// ones. Implementations must be safe for concurrent use.
type Context interface {
	Objects(namespace string) []*object.Object
	// Gaps says what the context lacks (no cluster access, a kind the
	// cluster does not serve); empty when it is complete.
	Gaps() []string
}

// Judge runs the enabled rules on admitted objects.
type Judge struct {
	rules   []*rules.Rule
	opts    rules.Options
	context Context
	// noFixes: the verdicts' findings keep their rules' own fixes (see
	// WithoutFixes).
	noFixes bool
}

// WithoutFixes makes the judge skip composing the fixes of an object's
// findings and agreeing them (fixcompose.RunAndAgree), for a policy that
// shows none: warn mode's warnings name the rule, field and message only.
// The findings are the same; a fix another fix on the object would have
// rewritten is left as its rule proposed it.
func (j *Judge) WithoutFixes() { j.noFixes = true }

// NewJudge prepares the rules as a scan would: the catalog (nil means the
// whole one), minus what the configuration disables.
func NewJudge(cat []*rules.Rule, opts rules.Options, ctx Context) (*Judge, error) {
	if cat == nil {
		cat = catalog.All()
	}
	if opts.Config == nil {
		opts.Config = &config.Config{}
	}
	enabled, err := rules.Enabled(cat, &opts)
	if err != nil {
		return nil, err
	}
	return &Judge{rules: enabled, opts: opts, context: ctx}, nil
}

// Judged is one finding on the admitted object.
type Judged struct {
	finding.Finding
	// Preexisting is true on an UPDATE when the old object had the same
	// finding (rule, container and field): it is reported, never denied.
	Preexisting bool
}

// Verdict is what the rules say about one admission request.
type Verdict struct {
	Object   object.Ref
	Findings []Judged
	// Errors are objects that could not be decoded, and RuleErrors rules
	// that failed (a panic): both are reported as warnings and never deny.
	Errors, RuleErrors []load.Error
	// Skipped says why the request was not judged (a DELETE, a kind the
	// rules do not read); empty when it was.
	Skipped string
	// Assumed says what context the findings were judged without (each
	// finding carries it among its assumptions too).
	Assumed []string
}

// Judge judges the object of an admission request. On an UPDATE the new
// object is judged and the old one only tells which findings were there
// before.
func (j *Judge) Judge(req *admissionv1.AdmissionRequest) Verdict {
	v, _ := j.JudgeContext(context.Background(), req)
	return v
}

// JudgeContext is Judge stopped when ctx is done: the rules stop between
// one rule and the next, so that a judging whose request has ended does
// not go on holding memory and a core. It then returns ctx's error, and a
// verdict that must not be used.
func (j *Judge) JudgeContext(ctx context.Context, req *admissionv1.AdmissionRequest) (Verdict, error) {
	v, err := j.judge(ctx, req)
	if err == nil {
		err = ctx.Err()
	}
	return v, err
}

func (j *Judge) judge(ctx context.Context, req *admissionv1.AdmissionRequest) (Verdict, error) {
	v := Verdict{Object: object.Ref{
		APIVersion: apiVersion(req.Kind.Group, req.Kind.Version), Kind: req.Kind.Kind,
		Namespace: req.Namespace, Name: req.Name,
	}}
	if req.Operation == admissionv1.Delete || req.Operation == admissionv1.Connect {
		v.Skipped = string(req.Operation) + " is not judged"
		return v, nil
	}
	if len(req.Object.Raw) == 0 {
		v.Skipped = "the request carries no object"
		return v, nil
	}
	name := sourceName(req)
	o, errs := decode(name, req.Object.Raw, req.Namespace)
	v.Errors = errs
	if o == nil {
		return v, nil
	}
	v.Object = o.Ref
	// ConfigMaps are decoded only as context (the scripts probes run), not
	// judged themselves.
	if o.Typed == nil || o.Kind == "ConfigMap" {
		v.Skipped = o.Kind + " is not a kind the rules read"
		return v, nil
	}
	found := j.run(ctx, o, !j.noFixes)
	if err := ctx.Err(); err != nil {
		return v, err
	}
	v.RuleErrors = found.Errors

	var before map[finding.Identity]bool
	if req.Operation == admissionv1.Update && len(req.OldObject.Raw) > 0 {
		if old, _ := decode(name+" (before the update)", req.OldObject.Raw, req.Namespace); old != nil && old.Typed != nil {
			before = map[finding.Identity]bool{}
			// Only which findings were there: their fixes are not read.
			for _, r := range j.run(ctx, old, false).Findings {
				before[r.Finding.Identity()] = true
			}
		}
	}
	var gaps []string
	if j.context != nil {
		gaps = j.context.Gaps()
	} else {
		gaps = []string{NoClusterGap}
	}
	if len(found.Findings) > 0 {
		v.Assumed = gaps
	}
	for _, r := range found.Findings {
		f := r.Finding
		// Warnings reach the client, its terminal and the audit log:
		// no password a probe command carries goes with them.
		redact.Finding(&f)
		if len(gaps) > 0 {
			f.Assumptions = append(f.Assumptions, gaps...)
		}
		v.Findings = append(v.Findings, Judged{Finding: f, Preexisting: before[f.Identity()]})
	}
	return v, nil
}

// NoClusterGap is the assumption findings carry when the webhook runs
// without cluster access.
const NoClusterGap = "the webhook has no cluster access: the object was judged alone, without the AnalysisTemplates, autoscalers, Services and workloadRef Deployments of the cluster, nor the workloads a budget, policy or DestinationRule selects"

// run runs the rules on o, with their fixes composed and agreed when
// fixes is set.
func (j *Judge) run(ctx context.Context, o *object.Object, fixes bool) rules.Outcome {
	objs := []*object.Object{o}
	if j.context != nil {
		for _, c := range j.context.Objects(o.Namespace) {
			if c.Kind == o.Kind && c.Namespace == o.Namespace && c.Name == o.Name {
				continue // the cluster's copy is the old version of the admitted object
			}
			objs = append(objs, c)
		}
	}
	opts := j.opts
	opts.Context = ctx
	if !fixes {
		return rules.RunObject(o, index.Build(objs), j.rules, &opts)
	}
	return fixcompose.RunAndAgree(o, index.Build(objs), j.rules, &opts)
}

// decode parses the raw object of a request. The API server sends JSON,
// and nothing the webhook answers names a line: the object is read as
// JSON, without the positions a YAML parse would record at about 30 times
// its size in memory (load.ParseJSON).
func decode(name string, raw []byte, namespace string) (*object.Object, []load.Error) {
	f := load.ParseJSON(name, raw)
	errs := f.Errors
	if len(f.Documents) != 1 {
		if len(errs) == 0 {
			errs = append(errs, load.Error{File: name, Message: fmt.Sprintf("expected one object, found %d documents", len(f.Documents))})
		}
		return nil, errs
	}
	o, err := object.Decode(f.Documents[0])
	if err != nil {
		return nil, append(errs, *err)
	}
	// The API server drops these before it calls the webhook; a client
	// that calls it directly is told of them, as warnings.
	errs = append(errs, o.Dropped...)
	if o.Namespace == "" {
		// On a CREATE the object may leave its namespace to the request.
		o.Namespace = namespace
	}
	return o, errs
}

func sourceName(req *admissionv1.AdmissionRequest) string {
	if req.Namespace == "" {
		return fmt.Sprintf("admission:%s/%s", req.Kind.Kind, req.Name)
	}
	return fmt.Sprintf("admission:%s/%s/%s", req.Namespace, req.Kind.Kind, req.Name)
}

func apiVersion(group, version string) string {
	if group == "" {
		return version
	}
	return group + "/" + version
}
