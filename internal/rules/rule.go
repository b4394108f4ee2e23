// Package rules holds the rule value, the registry and the engine that runs
// rules. A rule is one value that carries everything about it (ID, slug,
// severity, summary, the kinds it reads, its evidence types, its doc, its
// check) in the spirit of golang.org/x/tools/go/analysis: small, pure
// functions over one object and the index. Each family package registers
// its rules (Register); package catalog joins them into one catalog, and
// everything else about the families (their lists, the evidence schema)
// is derived from the values.
package rules

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"backfire.dev/backfire/docs"
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
	// Reads are what the rule asks the index about other objects: the kinds
	// it looks up ("ConfigMap"), index.Autoscalers, index.WorkloadRefs. The
	// fixture test checks them against what the index records it asked.
	Reads []string
	// Evidence holds a zero value of each struct a finding's Evidence may
	// be (one, usually): the JSON schema and the rule page's evidence table
	// are generated from them (go generate ./internal/catalog), and a rule
	// that reports anything else fails.
	Evidence []any
	// DefaultOff rules run only when enabled in .backfire.yaml.
	DefaultOff bool
	// Fix declares the fields the rule's fix sets and those it computes its
	// values from, so that the fixes of several rules on one object
	// compose (package fixcompose).
	Fix FixFields
	// Check is what the rule runs, and so which driver runs it: a *Scan
	// reads manifests (scan, fix, the webhook, the simulators); a
	// *diagnosis.Check reads what a running pod did (diagnose).
	Check Check

	family string // see Family
}

// FixFields name fields as a fix reaches them: "container.X" is field X
// of the container the finding is about ("container.livenessProbe.timeoutSeconds"),
// "pod.X" a field of the pod spec ("pod.affinity"), and anything else a
// path in the object ("spec.strategy.canary.steps", "metadata.annotations").
// A field names everything under it.
type FixFields struct {
	// Sets are the fields the fix's patch writes; the fixture test checks
	// every patch against them.
	Sets []string
	// From are the fields the fix's values are computed from: when another
	// rule's fix sets one of them on the same object, this rule's fix is
	// computed again on the object with that fix applied.
	From []string
	// FromDocument: the fix is computed from the object's document as
	// written (its JSON), not only from its typed value, so it is asked
	// again on the patched document itself rather than on a patched typed
	// value (package typedpatch).
	FromDocument bool
}

// Check is a rule's check: a *Scan, or the diagnose rules' kind (package
// diagnosis). The driver that runs a kind picks its rules from the catalog
// by it.
type Check interface {
	// Driver names what runs the check: "scan" or "diagnose".
	Driver() string
}

// Scan is the check of a rule that reads manifests: Run is applied to each
// object of a kind the rule reads, with the index of the others.
type Scan struct {
	Run func(*Pass)
	// ReadsFindings rules run on an object after every other rule and may
	// ask Pass.Reported what the others found there.
	ReadsFindings bool
}

// Driver is "scan".
func (*Scan) Driver() string { return "scan" }

// ScanCheck returns the rule's check when it is a scan rule, else nil.
func (r *Rule) ScanCheck() *Scan {
	s, _ := r.Check.(*Scan)
	return s
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
	// Context, when set, stops the rules between one rule and the next
	// once it is done: the webhook stops judging an object whose request
	// has ended. The outcome is then incomplete; the caller that set it
	// checks Context.Err() and drops it.
	Context context.Context
	// EachObject reports each object's findings as they are, without
	// merging those of a copy into its original (see check): for a test of
	// what a rule itself asks the index.
	EachObject bool
	// Unshared makes every rule compute afresh what the rules share
	// about an object (Pass.Shared stores nothing): the reference the
	// shared answers are tested against.
	Unshared bool
}

// Canceled reports whether the options' Context is done.
func (o *Options) Canceled() bool { return o.Context != nil && o.Context.Err() != nil }

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
	// shared holds what the rules run on this object share (see Shared).
	shared map[any]any
}

// Shared returns the value stored under key for the object the pass
// checks, made by make the first time any rule asks: what several rules
// compute about one object is computed once (package podfacts classifies
// each container once). The engine does not know what is stored; key is
// best a value of a type of the package that stores it.
func (p *Pass) Shared(key any, make func() any) any {
	if v, ok := p.shared[key]; ok {
		return v
	}
	v := make()
	if p.shared != nil {
		p.shared[key] = v
	}
	return v
}

// Reported says whether rule id reported on the object in this scan,
// counting findings an annotation then suppressed. Only rules whose Scan
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
	// Most rules ask; the index answers the same for every rule.
	return p.Shared(podTemplateOf{}, func() any {
		if p.Index.RunBy(p.Object) > 0 {
			return (*object.PodTemplate)(nil)
		}
		t, _ := p.Index.PodTemplate(p.Object)
		return t
	}).(*object.PodTemplate)
}

// podTemplateOf keys the object's pod template in the shared store.
type podTemplateOf struct{}

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

// EvidenceMapper is evidence that builds its own map, equal to what
// evidence.Map makes of it by reflection: the most frequent findings' do,
// and a test holds each to evidence.Map.
type EvidenceMapper interface {
	EvidenceMap() map[string]any
}

// evidenceMap is the finding's evidence map.
func evidenceMap(v any) map[string]any {
	if m, ok := v.(EvidenceMapper); ok {
		return m.EvidenceMap()
	}
	return evidence.Map(v)
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
	if r.Evidence != nil && !p.Rule.declares(r.Evidence) {
		panic(fmt.Sprintf("evidence %T is not among the rule's declared Evidence", r.Evidence))
	}
	f := finding.Finding{
		Rule: p.Rule.ID, Slug: p.Rule.Slug, Severity: sev,
		Object:    p.Object.Ref,
		Container: r.Container,
		File:      at.Doc.File,
		Message:   r.Message, Mechanism: r.Mechanism, Evidence: evidenceMap(r.Evidence),
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
