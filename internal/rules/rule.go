// Package rules holds the rule catalog and the engine that runs it. A rule is
// a value (ID, slug, severity, doc, the kinds it reads, a Run function) in
// the spirit of golang.org/x/tools/go/analysis: small, pure functions over
// one object and the index, each family's listed in its package's Rules and
// joined into one catalog in internal/catalog.
package rules

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"backfire.dev/backfire/docs"
	"backfire.dev/backfire/internal/classify"
	"backfire.dev/backfire/internal/config"
	"backfire.dev/backfire/internal/evidence"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
)

// Rule is one entry of the catalog.
type Rule struct {
	ID       string // stable message code: "BF101"
	Slug     string // "liveness-fails-during-recovery"
	Severity finding.Severity
	Summary  string // one line
	// Kinds the rule reads; nil means every kind.
	Kinds []string
	// DefaultOff rules run only when enabled in .backfire.yaml.
	DefaultOff bool
	// ReadsFindings rules run on an object after every other rule and may
	// ask Pass.Reported what the others found there.
	ReadsFindings bool
	Run           func(*Pass)
	// Diagnose, set instead of Run, makes the rule read what a running pod
	// did (its status, events and logs) rather than a manifest: backfire
	// diagnose runs it on each pod, scan never does.
	Diagnose func(*DiagnosePass)
}

// Doc returns the rule's documentation page (docs/rules/ID.md).
func (r *Rule) Doc() string { return docs.Rule(r.ID) }

func (r *Rule) reads(kind string) bool { return r.Kinds == nil || slices.Contains(r.Kinds, kind) }

// Options are the scan-wide settings a rule may consult.
type Options struct {
	Config *config.Config
	// RolloutsVersion is the Argo Rollouts controller version the Argo rules
	// assume ("v1.10.2").
	RolloutsVersion string
}

// Pass is one rule applied to one object.
type Pass struct {
	Rule    *Rule
	Object  *object.Object
	Index   *index.Index
	Options *Options

	findings []Reported
	// reported holds the IDs of the rules that reported on this object
	// before suppression, for the rules that run last (ReadsFindings).
	reported map[string]bool
	// verdicts caches classifications for every rule run on this object:
	// several rules ask about the same containers.
	verdicts map[*corev1.Container]classify.Verdict
}

// Classify says what a container of the object's pod template is (see
// package classify), computed once per object however many rules ask.
func (p *Pass) Classify(c *corev1.Container) classify.Verdict {
	if v, ok := p.verdicts[c]; ok {
		return v
	}
	var pod classify.Pod
	if t, _ := p.Index.PodTemplate(p.Object); t != nil {
		pod = classify.Pod{Spec: t.Spec, Claims: p.Object.ClaimTemplates()}
	}
	v := classify.ContainerIn(p.RunsOnce(), c, pod)
	replicas, set := p.Object.Replicas()
	if !set {
		replicas = 1 // the API's default; a Pod is one server too
	}
	v = classify.Members(v, c, replicas)
	if p.verdicts != nil {
		p.verdicts[c] = v
	}
	return v
}

// Files reads the files of container c of template t that the input holds:
// keys of ConfigMaps in the input, mounted into c. A probe's script is read
// from there instead of being guessed at.
func (p *Pass) Files(t *object.PodTemplate, c *corev1.Container) classify.Files {
	return func(path string) (classify.File, bool) {
		f, ok := t.ConfigMapFileAt(c, path)
		if !ok {
			return classify.File{}, false
		}
		o := p.Index.Get("ConfigMap", t.Owner.Namespace, f.ConfigMap)
		if o == nil {
			return classify.File{}, false
		}
		cm, ok := o.Typed.(*corev1.ConfigMap)
		if !ok {
			return classify.File{}, false
		}
		text, ok := cm.Data[f.Key]
		if !ok {
			return classify.File{}, false
		}
		return classify.File{Text: text, From: "ConfigMap " + f.ConfigMap + ", key " + f.Key}, true
	}
}

// RunsOnce says why the object's pods run once and exit ("" when they
// serve): see classify.RunsOnce.
func (p *Pass) RunsOnce() string {
	var spec *corev1.PodSpec
	if t, _ := p.Index.PodTemplate(p.Object); t != nil {
		spec = t.Spec
	}
	return classify.RunsOnce(p.Object.Kind, p.Object.Meta, spec)
}

// Reported says whether rule id reported on the object in this scan,
// counting findings an annotation then suppressed. Only rules with
// ReadsFindings may ask: the others run in no particular order.
func (p *Pass) Reported(id string) bool { return p.reported[strings.ToUpper(id)] }

// ReportedAny says whether any rule reported on the object in this scan.
func (p *Pass) ReportedAny() bool { return len(p.reported) > 0 }

// Config returns the scan's configuration.
func (p *Pass) Config() *config.Config { return p.Options.Config }

// PodTemplate returns the pod template the object runs, resolving a
// Rollout's workloadRef. It is nil for kinds without pods, and for a
// Deployment whose template a Rollout runs: that Rollout reports it.
func (p *Pass) PodTemplate() *object.PodTemplate {
	if p.Index.RunBy(p.Object) > 0 {
		return nil
	}
	t, _ := p.Index.PodTemplate(p.Object)
	return t
}

// Report is what a rule says about the object.
type Report struct {
	// At is the object whose document holds Path; nil means the pass's
	// object. A finding about a Rollout's workloadRef template points into
	// the Deployment.
	At        *object.Object
	Path      *field.Path
	Container string
	// Severity overrides the rule's default when the evidence warrants it
	// (a database-like container makes BF102 an error).
	Severity  finding.Severity
	Message   string
	Mechanism []string
	// Evidence is the rule's evidence struct (its family's evidence.go),
	// the numbers the mechanism was computed from.
	Evidence    any
	Assumptions []string
	Fix         *finding.Fix
}

// Reported is a finding as a rule made it: the field it is about, not yet
// where that field is written. The pipeline locates it after every rule
// ran (package scan), so that a rule's goroutine never renders a chart
// again to trace a value.
type Reported struct {
	finding.Finding
	// At is the document that holds Finding.Path.
	At *load.Document
}

// Report records a finding; the engine fills in the rule and the object,
// the pipeline the source position.
func (p *Pass) Report(r Report) {
	at := r.At
	if at == nil {
		at = p.Object
	}
	sev := r.Severity
	if sev == finding.None {
		sev = p.Rule.Severity
	}
	f := finding.Finding{
		Rule: p.Rule.ID, Slug: p.Rule.Slug, Severity: sev,
		Object:    p.Object.Ref,
		Container: r.Container,
		File:      at.Doc.File,
		Message:   r.Message, Mechanism: r.Mechanism, Evidence: evidence.Map(r.Evidence),
		Assumptions: r.Assumptions, Fix: r.Fix,
	}
	if f.Fix != nil && at != p.Object {
		fx := *f.Fix
		fx.Target = &at.Ref
		f.Fix = &fx
	}
	if f.Mechanism == nil {
		f.Mechanism = []string{}
	}
	if r.Path != nil {
		f.Path = r.Path.String()
	}
	p.findings = append(p.findings, Reported{Finding: f, At: at.Doc})
}

// IgnoreAnnotation lists rule IDs to suppress on an object, with an
// optional reason after '#': "BF102,BF104 # probe is tcp in prod overlay".
const IgnoreAnnotation = "backfire.dev/ignore"

// Ignored reports whether the object's ignore annotation suppresses the
// rule, and the annotation's reason (its text after '#').
func Ignored(o *object.Object, id string) (ok bool, reason string) {
	ids, reason, found := IgnoreList(o)
	if !found {
		return false, ""
	}
	for _, f := range ids {
		if strings.EqualFold(f, id) || f == "*" || strings.EqualFold(f, "all") {
			return true, reason
		}
	}
	return false, ""
}

// IgnoreList splits the object's ignore annotation into the rule IDs it
// names and its reason; found is false when there is no annotation.
func IgnoreList(o *object.Object) (ids []string, reason string, found bool) {
	v, ok := o.Meta.Annotations[IgnoreAnnotation]
	if !ok {
		return nil, "", false
	}
	if i := strings.IndexByte(v, '#'); i >= 0 {
		v, reason = v[:i], strings.TrimSpace(v[i+1:])
	}
	return strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' }), reason, true
}
