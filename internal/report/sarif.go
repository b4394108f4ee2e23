package report

import (
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/owenrumney/go-sarif/v2/sarif"

	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/result"
)

// SARIFOptions tune the SARIF log.
type SARIFOptions struct {
	// BaseDir is the directory result URIs are relative to (the
	// repository's root in CI); relative file names are kept as they are.
	BaseDir string
	// Version is backfire's version, for tool.driver.version.
	Version string
	// ShowSuppressed adds the findings an annotation silenced, as results
	// with an inSource suppression that carries the annotation's reason.
	ShowSuppressed bool
	// Fixes are the text changes of each finding's fix, by finding.Instance
	// (what `backfire fix` would write); a result with some gets them as
	// SARIF fixes, the others keep the patch in properties.fix only.
	Fixes map[string][]result.TextChange
}

// SrcRoot is the uriBaseId of every result's location: GitHub code
// scanning resolves it to the repository checkout.
const SrcRoot = "%SRCROOT%"

// FingerprintKey names backfire's entry in partialFingerprints.
const FingerprintKey = "backfireFingerprint/v1"

// DocsURL is where each rule's page is published; helpUri points there.
const DocsURL = "https://backfire.dev/docs/rules/"

// SARIF writes one SARIF 2.1.0 run: the rules that ran as
// tool.driver.rules, one result per finding located at the field a user
// edits, and input errors as tool execution notifications. docs/formats.md
// lists which of GitHub code scanning's upload rules each part meets.
func SARIF(w io.Writer, r *result.Result, opts SARIFOptions) error {
	log, err := sarif.New(sarif.Version210)
	if err != nil {
		return err
	}
	driver := sarif.NewDriver("backfire").WithInformationURI("https://backfire.dev")
	if opts.Version != "" {
		driver.WithVersion(opts.Version)
	}
	run := sarif.NewRun(*sarif.NewTool(driver))

	ruleIndex := map[string]int{}
	addRule := func(rule result.Rule) {
		if _, ok := ruleIndex[rule.ID]; ok {
			return
		}
		ruleIndex[rule.ID] = len(driver.Rules)
		d := sarif.NewRule(rule.ID).
			WithName(rule.Slug).
			WithShortDescription(sarif.NewMultiformatMessageString(firstNonEmpty(rule.Summary, rule.Slug))).
			WithFullDescription(sarif.NewMultiformatMessageString(firstNonEmpty(docParagraph(rule.Doc), rule.Summary, rule.Slug))).
			WithHelpURI(DocsURL + rule.ID).
			WithDefaultConfiguration(sarif.NewReportingConfiguration().WithLevel(sarifLevel(rule.Severity))).
			WithProperties(sarif.Properties{"tags": []string{"kubernetes", "reliability"}})
		if rule.Doc != "" {
			d.WithHelp(sarif.NewMultiformatMessageString(rule.Doc).WithMarkdown(rule.Doc))
		}
		driver.AddRule(d)
	}
	for _, rule := range r.Rules {
		addRule(rule)
	}

	results := make([]*sarif.Result, 0, len(r.Findings))
	newResult := func(f finding.Finding) *sarif.Result {
		addRule(result.Rule{ID: f.Rule, Slug: f.Slug, Severity: f.Severity})
		at := EditAt(f)
		res := sarif.NewRuleResult(f.Rule).
			WithRuleIndex(ruleIndex[f.Rule]).
			WithLevel(sarifLevel(f.Severity)).
			WithMessage(sarif.NewTextMessage(sarifMessage(f))).
			WithLocations([]*sarif.Location{location(at, opts.BaseDir)}).
			WithPartialFingerPrints(map[string]any{FingerprintKey: f.Fingerprint})
		if at.File != f.File {
			// The value came from a values file; the template prints it.
			// Its line is one of the rendered output, so it is named in
			// the message and not given as a region of the template.
			rel := sarif.NewLocationWithPhysicalLocation(sarif.NewPhysicalLocation().
				WithArtifactLocation(sarif.NewSimpleArtifactLocation(relativeURI(f.File, opts.BaseDir)).WithUriBaseId(SrcRoot))).
				WithId(1).
				WithMessage(sarif.NewTextMessage(fmt.Sprintf("the template that prints the value (line %d:%d of its rendered output)", f.Line, f.Column)))
			res.AddRelatedLocation(rel)
		}
		props := sarif.Properties{"object": f.Object.String()}
		if f.Path != "" {
			props["path"] = f.Path
		}
		if f.Container != "" {
			props["container"] = f.Container
		}
		if f.Fix != nil {
			props["fix"] = f.Fix
		}
		res.Properties = props
		if tcs := opts.Fixes[f.Instance()]; len(tcs) > 0 {
			res.AddFix(textFix(f, tcs, opts.BaseDir))
		}
		return res
	}
	for _, f := range r.Findings {
		results = append(results, newResult(f))
	}
	if opts.ShowSuppressed {
		for _, s := range r.Suppressed {
			res := newResult(s.Finding)
			// Every member is set: the schema allows no nulls, and the
			// library writes unset ones as null.
			res.AddSuppression(sarif.NewSuppression("inSource").
				WithStatus("accepted").
				WithGuid(guid(s.Fingerprint)).
				WithJustifcation(firstNonEmpty(s.Reason, "backfire.dev/ignore annotation, no reason given")).
				WithLocation(location(EditAt(s.Finding), opts.BaseDir)))
			results = append(results, res)
		}
	}
	run.WithResults(results)

	ok := len(r.Errors) == 0
	inv := &sarif.Invocation{ExecutionSuccessful: &ok}
	for _, e := range r.Errors {
		n := sarif.NewNotification().WithLevel("error").WithMessage(sarif.NewTextMessage(e.Message))
		if e.File != "" {
			n.Locations = []*sarif.Location{location(Where{File: e.File, Line: max(e.Line, 1), Column: max(e.Column, 1)}, opts.BaseDir)}
		}
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, n)
	}
	run.Invocations = []*sarif.Invocation{inv}
	if base := baseURI(opts.BaseDir); base != "" {
		run.OriginalUriBaseIDs = map[string]*sarif.ArtifactLocation{SrcRoot: sarif.NewSimpleArtifactLocation(base)}
	}
	log.AddRun(run)
	return log.PrettyWrite(w)
}

// textFix is a finding's fix as SARIF's fixes (§3.55): one artifactChange
// per file, in the order the changes came, each hunk a replacement.
func textFix(f finding.Finding, tcs []result.TextChange, base string) *sarif.Fix {
	desc := "backfire fix on " + f.Object.String() + ": the fixes of all its findings, composed and proven by a rescan"
	if f.Fix != nil && f.Fix.Description != "" {
		desc = f.Fix.Description + " (" + desc + ")"
	}
	fx := sarif.NewFix().WithDescriptionText(desc)
	changes := map[string]*sarif.ArtifactChange{}
	for _, tc := range tcs {
		ac, ok := changes[tc.File]
		if !ok {
			ac = sarif.NewArtifactChange(sarif.NewSimpleArtifactLocation(relativeURI(tc.File, base)).WithUriBaseId(SrcRoot))
			ac.Replacements = []*sarif.Replacement{}
			changes[tc.File] = ac
			fx.AddArtifactChanges(ac)
		}
		region := sarif.NewRegion().WithStartLine(tc.StartLine).WithStartColumn(1).
			WithEndLine(tc.EndLine).WithEndColumn(tc.EndColumn)
		ac.WithReplacement(sarif.NewReplacement(region).WithInsertedContent(sarif.NewArtifactContent().WithText(tc.Text)))
	}
	return fx
}

// guid spells a 32-digit hex fingerprint as a GUID, as SARIF wants a
// suppression's guid (RFC 4122 form: version 5, name-based, and the
// variant bits set), so it is stable across runs like the fingerprint.
func guid(fp string) string {
	b := []byte(fmt.Sprintf("%032s", fp))[:32]
	b[12] = '5'
	v := strings.IndexByte("0123456789abcdef", b[16])
	b[16] = "89ab"[max(v, 0)&3]
	return string(b[0:8]) + "-" + string(b[8:12]) + "-" + string(b[12:16]) + "-" + string(b[16:20]) + "-" + string(b[20:32])
}

func sarifLevel(s finding.Severity) string {
	switch s {
	case finding.Error:
		return "error"
	case finding.Warning:
		return "warning"
	}
	return "note"
}

// sarifMessage is the finding's message with the mechanism and the fix:
// code review shows only the message, and the numbers are the proof.
func sarifMessage(f finding.Finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", f.Object, f.Message)
	for i, m := range f.Mechanism {
		fmt.Fprintf(&b, "\n%d. %s", i+1, m)
	}
	if f.Fix != nil {
		fmt.Fprintf(&b, "\nFix: %s", f.Fix.Description)
	}
	return b.String()
}

func location(at Where, base string) *sarif.Location {
	return sarif.NewLocationWithPhysicalLocation(sarif.NewPhysicalLocation().
		WithArtifactLocation(sarif.NewSimpleArtifactLocation(relativeURI(at.File, base)).WithUriBaseId(SrcRoot)).
		WithRegion(sarif.NewRegion().WithStartLine(at.Line).WithStartColumn(at.Column)))
}

// relativeURI turns a file name into a URI reference relative to base,
// with '/' separators and each segment escaped ("<stdin>" is "%3Cstdin%3E").
func relativeURI(file, base string) string {
	if filepath.IsAbs(file) && base != "" {
		if rel, err := filepath.Rel(base, file); err == nil {
			file = rel
		}
	}
	return (&url.URL{Path: filepath.ToSlash(filepath.Clean(file))}).EscapedPath()
}

// baseURI is BaseDir as an absolute file URI ending in '/', as SARIF
// requires of originalUriBaseIds; "" when there is none.
func baseURI(dir string) string {
	if dir == "" {
		return ""
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	s := u.String()
	if !strings.HasSuffix(s, "/") {
		s += "/"
	}
	return s
}

// docParagraph returns the first paragraph of a rule page after its title.
func docParagraph(doc string) string {
	for _, p := range strings.Split(doc, "\n\n") {
		p = strings.TrimSpace(p)
		if p != "" && !strings.HasPrefix(p, "#") && !strings.HasPrefix(p, "Severity:") {
			return strings.Join(strings.Fields(p), " ")
		}
	}
	return ""
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
