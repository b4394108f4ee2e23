// Package scan runs the pipeline: inputs are read, parsed and decoded in
// parallel; each object is added to the index and checked by the rules as
// soon as its file is read, then dropped unless another object's rules
// read it. Checking before the index is complete is a guess the scan
// verifies: each check records what it asked the index, and the objects
// whose answers the complete index would change are read again and
// checked again (see index.Recorder). The findings are those of checking
// every object against the complete index, whatever the order the files
// were read in.
package scan

import (
	"errors"
	"io"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"backfire.dev/backfire/internal/catalog"
	"backfire.dev/backfire/internal/config"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fixcompose"
	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
	"backfire.dev/backfire/internal/redact"
	"backfire.dev/backfire/internal/result"
	"backfire.dev/backfire/internal/rules"
	"backfire.dev/backfire/internal/source"
)

// Options configure a scan.
type Options struct {
	Paths       []string
	Stdin       io.Reader
	MaxFileSize int64
	// Charts renders Helm charts and Kustomize builds Kustomize
	// directories; nil means the kind of input is not supported.
	Charts, Kustomize source.Renderer
	// Extra holds objects from elsewhere (a live cluster), already parsed.
	Extra []load.File
	Rules rules.Options
	// Catalog is the rule set to run; nil means the whole catalog.
	Catalog []*rules.Rule
	// Overlay holds new contents for files by path, read instead of the
	// disk: backfire fix rescans what it would write before writing it.
	Overlay map[string][]byte
	// KeepObjects returns the decoded objects in Result.Objects, for
	// callers that inspect them (fix, the simulators, tests). Without it an
	// object of a plain file does not outlive its file: memory is bounded
	// by the largest file plus the index, not by the whole input.
	KeepObjects bool
	// NoFixes is for a report that shows no fix (--format short): each
	// finding keeps the fix its rule proposed, neither composed with the
	// other fixes on its object nor made to agree with them
	// (fixcompose.RunAndAgree), which is a quarter of a scan's CPU. The
	// findings, their places and messages are the same.
	NoFixes bool
	// Spill writes the findings to a temporary file as they are found,
	// for the JSON report (see result.Spill); the caller closes it.
	Spill bool
	// Progress, when set, is told each time an input (a file, a chart, an
	// overlay, an object of Extra) has been read and checked: done of
	// total. It is called from the scan's goroutines.
	Progress func(done, total int)
}

// Summary and Result are the reporters' contract, package result; the
// aliases keep callers of scan.Run reading them from here.
type (
	Summary = result.Summary
	Result  = result.Result
)

// Run scans the inputs. Input problems are collected in Result.Errors; the
// returned error is for problems with the options themselves.
func Run(opts Options) (*Result, error) {
	res, _, err := run(opts, tuning{window: window})
	return res, err
}

// tuning holds what tests vary to exercise the pipeline's paths.
type tuning struct {
	window    int  // see window
	noRecheck bool // skip recheck, to show a test needs it
	// beforeRecheck runs once every input is read.
	beforeRecheck func()
	// mapped runs once a plain file's data is read or mapped, before it
	// is parsed.
	mapped func(path string)
	// reread runs each time a plain file is read again (see reload).
	reread func(path string)
	// noDefer reads each dropped object a recheck needs as it is asked
	// for, to show a test needs the deferring (see recheck).
	noDefer bool
}

func run(opts Options, tune tuning) (*Result, *scanner, error) {
	if opts.Catalog == nil {
		opts.Catalog = catalog.All()
	}
	if opts.Rules.Config == nil {
		opts.Rules.Config = &config.Config{}
	}
	enabled, err := rules.Enabled(opts.Catalog, &opts.Rules)
	if err != nil {
		return nil, nil, err
	}
	if opts.MaxFileSize <= 0 {
		opts.MaxFileSize = source.DefaultMaxFileSize
	}
	inputs, errs := source.Discover(opts.Paths)
	inputs = slices.DeleteFunc(inputs, func(in source.Input) bool {
		return in.Kind != source.Stdin && opts.Rules.Config.Ignored(in.Path)
	})
	res := &Result{Errors: errs}
	for _, r := range enabled {
		res.Rules = append(res.Rules, result.Rule{ID: r.ID, Slug: r.Slug, Summary: r.Summary, Severity: r.Severity, Doc: r.Doc()})
	}

	s := &scanner{opts: &opts, tune: tune, rules: enabled, ix: index.New(), inputs: inputs}
	if opts.Spill {
		if s.spill, err = result.NewSpill(); err != nil {
			return nil, nil, err
		}
		res.Spill = s.spill
	}
	s.ix.SetWindow(func(ord index.Ordinal) *object.Object {
		if o, ok := s.window.Load(ord); ok {
			return o.(*object.Object)
		}
		return nil
	})
	s.readAll()
	for j, f := range opts.Extra {
		s.extra(len(inputs)+j, f)
		s.progress()
	}
	s.ix.Freeze()
	s.ix.SetLoader(s.load)
	if tune.beforeRecheck != nil {
		tune.beforeRecheck()
	}
	if !tune.noRecheck {
		s.recheck()
	}

	files := sourceLines{}
	var ruleErrors []load.Error
	for _, in := range s.results {
		res.Summary.Files += in.files
		res.Summary.Documents += in.documents
		res.Summary.Skipped += in.skipped
		res.Errors = append(res.Errors, in.errors...)
		res.Objects = append(res.Objects, in.objects...)
		res.Summary.Objects += in.decoded
		for i := range in.checked {
			c := &in.checked[i]
			s.settle(c, files)
			if o := c.open; o != nil {
				ruleErrors = append(ruleErrors, o.ruleErrors...)
				res.Findings = append(res.Findings, o.findings...)
				res.Suppressed = append(res.Suppressed, o.suppressed...)
			}
		}
	}
	res.Errors = append(res.Errors, ruleErrors...)
	if s.spill != nil {
		s.spill.Sort()
		if err := s.spill.Err(); err != nil {
			s.spill.Close()
			return nil, nil, err
		}
	}
	rules.Sort(res.Findings)
	res.Count()
	return res, s, nil
}

// window is how much of a file (bytes of converted documents) is decoded
// and added to the index before its objects are checked: a whole file
// usually, so that objects that refer to each other in one file are
// checked with both known, and a few megabytes of a very large one.
const window = 4 << 20

// scanner holds one scan's state.
type scanner struct {
	opts  *Options
	tune  tuning
	rules []*rules.Rule
	ix    *index.Index
	// window holds the objects of the windows being checked, which the
	// index does not keep (see index.SetWindow), by ordinal.
	window sync.Map
	inputs []source.Input
	// results are per input (then per extra file), in input order.
	results []inputResult
	// loaded caches objects read again from plain files, by ordinal.
	loaded map[index.Ordinal]*object.Object
	// wanted, while a recheck defers, collects the objects the loader
	// was asked for and did not have (see load).
	wanted map[index.Ordinal]bool
	spill  *result.Spill
	// rechecked counts the objects checked again (see recheck).
	rechecked int
	// done counts the inputs read, for Options.Progress.
	done atomic.Int64
}

// inputResult is what one input yielded.
type inputResult struct {
	// scope is where the input's objects look for the objects their
	// rules ask about (see index.Scope).
	scope                              index.Scope
	files, documents, skipped, decoded int
	errors                             []load.Error // load errors, then decoding errors, per file
	checked                            []checked
	objects                            []*object.Object // with KeepObjects
	// stdin keeps standard input for reading an object again.
	stdin []byte
}

// checked is one object's outcome. A scan keeps one for every object until
// it ends, so what stays after the object is settled is kept small: with a
// spill, usually only its place, its recorder and its spilled findings.
type checked struct {
	ord index.Ordinal
	// rec is what the check asked the index, nil when it needs no
	// verifying.
	rec *index.Recorder
	// spilled are the findings' entries in the spill.
	spilled result.Spilled
	// open is the rest, nil once settled with nothing of it left.
	open *outcome
}

// outcome is what a check found, until it is settled, and what of it is
// kept afterwards.
type outcome struct {
	obj *object.Object // set while it must be located, or kept
	out rules.Outcome  // until located
	// located findings.
	findings   []finding.Finding
	suppressed []result.Suppressed
	ruleErrors []load.Error
	located    bool
}

// held is the checked object while the scan holds it, else nil.
func (c *checked) held() *object.Object {
	if c.open == nil {
		return nil
	}
	return c.open.obj
}

// compact drops the outcome once nothing of it is left to keep.
func (c *checked) compact() {
	if o := c.open; o != nil && o.located && o.obj == nil && o.findings == nil && o.suppressed == nil && o.ruleErrors == nil {
		c.open = nil
	}
}

// ordinal places document doc of file file of input in the input order.
func ordinal(input, file, doc int) index.Ordinal {
	return index.Ordinal(uint64(input)<<40 | uint64(file)<<24 | uint64(doc))
}

// placeOf splits an ordinal into the input and the document's place in
// its stream.
func placeOf(o index.Ordinal) (input, doc int) {
	return int(uint64(o) >> 40), int(uint64(o) & 0xffffff)
}

// progress counts one input done.
func (s *scanner) progress() {
	if s.opts.Progress != nil {
		s.opts.Progress(int(s.done.Add(1)), len(s.inputs)+len(s.opts.Extra))
	}
}

// readAll reads, parses, decodes and checks the inputs on all cores; the
// results keep input order so that output does not depend on scheduling.
func (s *scanner) readAll() {
	s.results = make([]inputResult, len(s.inputs), len(s.inputs)+len(s.opts.Extra))
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), max(len(s.inputs), 1)) {
		wg.Go(func() {
			for i := range work {
				s.readInput(i)
				s.progress()
			}
		})
	}
	for i := range s.inputs {
		work <- i
	}
	close(work)
	wg.Wait()
}

// scopeOf is where the objects of an input find the objects their rules
// ask about: a render's and standard input's among themselves, a plain
// file's in its directory's tree (see index.Scope).
func (s *scanner) scopeOf(in source.Input) index.Scope {
	if in.Kind == source.File {
		return s.ix.Tree(filepath.Dir(in.Path))
	}
	return s.ix.Apart()
}

func (s *scanner) readInput(i int) {
	in := s.inputs[i]
	r := &s.results[i]
	r.scope = s.scopeOf(in)
	if in.Kind == source.Chart || in.Kind == source.Kustomization {
		// Rendered documents are kept: they are read again only by
		// rendering again, and locating their findings traces them back
		// through the render.
		for j, f := range s.render(in) {
			s.file(r, i, j, f, true)
		}
		return
	}
	data, release, err := s.data(in)
	if err != nil {
		r.files++
		r.errors = append(r.errors, load.Error{File: in.Path, Message: err.Error()})
		return
	}
	if in.Kind == source.Stdin {
		r.stdin = data
	}
	var batch []*load.Document
	size, n, read := 0, 0, 0
	var decodeErrs []load.Error
	flush := func() {
		decodeErrs = append(decodeErrs, s.check(r, i, 0, n-len(batch), batch, s.opts.KeepObjects)...)
		batch, size = batch[:0], 0
		release(read)
	}
	if s.tune.mapped != nil {
		s.tune.mapped(in.Path)
	}
	var f load.File
	if err := source.Guard(func() {
		f = load.Stream(in.Path, data, func(d *load.Document, upTo int) {
			batch = append(batch, d)
			n++
			read = upTo
			if size += len(d.JSON); size >= s.tune.window {
				flush()
			}
		})
	}); err != nil {
		f.Errors = append(f.Errors, load.Error{File: in.Path, Message: err.Error()})
	}
	flush()
	release(len(data))
	if f.Empty && in.Explicit {
		f.Errors = append(f.Errors, load.Error{File: in.Path, Message: "empty input: no YAML or JSON document"})
	}
	r.files++
	r.documents += n
	r.skipped += f.Skipped
	r.errors = append(r.errors, f.Errors...)
	r.errors = append(r.errors, decodeErrs...)
}

// file checks the documents of one stream that is kept whole.
func (s *scanner) file(r *inputResult, input, j int, f load.File, keep bool) {
	r.files++
	r.documents += len(f.Documents)
	r.skipped += f.Skipped
	r.errors = append(r.errors, f.Errors...)
	r.errors = append(r.errors, s.check(r, input, j, 0, f.Documents, keep)...)
}

// extra checks objects of a live cluster: they are where the files are
// applied, so every object sees them and they see every object.
func (s *scanner) extra(input int, f load.File) {
	s.results = append(s.results, inputResult{scope: index.Everywhere})
	s.file(&s.results[len(s.results)-1], input, 0, f, true)
}

// check decodes docs (documents first+0, first+1, ... of a stream), adds
// them to the index and checks them; it returns the decoding errors.
func (s *scanner) check(r *inputResult, input, file, first int, docs []*load.Document, keep bool) []load.Error {
	var errs []load.Error
	type added struct {
		obj *object.Object
		ord index.Ordinal
	}
	objs := make([]added, 0, len(docs))
	for k, d := range docs {
		o, err := object.Decode(d)
		if err != nil {
			errs = append(errs, *err)
			continue
		}
		errs = append(errs, o.Dropped...)
		ord := ordinal(input, file, first+k)
		s.ix.Add(o, ord, r.scope, keep)
		objs = append(objs, added{o, ord})
	}
	r.decoded += len(objs)
	if !keep {
		// The window's objects, dropped by the index, are in memory until
		// they are checked: the index answers from them (SetWindow).
		for _, a := range objs {
			s.window.Store(a.ord, a.obj)
		}
		defer func() {
			for _, a := range objs {
				s.window.Delete(a.ord)
			}
		}()
	}
	for _, a := range objs {
		rec := &index.Recorder{}
		c := checked{ord: a.ord, open: &outcome{obj: a.obj, out: s.checkObject(a.obj, s.ix.View(r.scope, rec))}}
		if rec.Compact() {
			c.rec = rec
		}
		if a.obj.Doc.Trace == nil {
			// A plain document is located now, while it is in memory.
			s.settle(&c, nil)
		}
		if !keep {
			c.open.obj = nil
		}
		c.compact()
		r.checked = append(r.checked, c)
		if keep {
			r.objects = append(r.objects, a.obj)
		}
	}
	return errs
}

// checkObject runs the rules on one object, and composes and agrees their
// fixes unless the report shows none (Options.NoFixes).
func (s *scanner) checkObject(o *object.Object, view *index.Index) rules.Outcome {
	if s.opts.NoFixes {
		return rules.RunObject(o, view, s.rules, &s.opts.Rules)
	}
	return fixcompose.RunAndAgree(o, view, s.rules, &s.opts.Rules)
}

// settle places the findings of a check (see locate.go; files is needed
// only for traced documents), composes the fixes they propose for the
// object (each finding's fix is its part of one change) and masks the
// secrets they quote. With a spill, the findings go there.
func (s *scanner) settle(c *checked, files sourceLines) {
	o := c.open
	if o == nil || o.located {
		return
	}
	// The fixes agree already (checkObject).
	locs := locators{}
	if n := len(o.out.Findings); n > 0 {
		o.findings = make([]finding.Finding, 0, n)
	}
	for _, f := range o.out.Findings {
		o.findings = append(o.findings, locate(f, files, locs))
	}
	// Secrets a probe command carries are masked before any report sees
	// the findings (the JSON report's spill included).
	for i := range o.findings {
		redact.Finding(&o.findings[i])
	}
	if s.spill != nil {
		c.spilled = s.spill.Add(uint64(c.ord), o.findings)
		o.findings = nil
	}
	for _, sp := range o.out.Suppressed {
		f := locate(sp.Reported, files, locs)
		redact.Finding(&f)
		o.suppressed = append(o.suppressed, result.Suppressed{Finding: f, Reason: sp.Reason})
	}
	o.ruleErrors = o.out.Errors
	o.out = rules.Outcome{}
	o.located = true
}

const changedWhileScanned = "changed while it was being scanned: its objects were checked without the objects read after it"

// recheck checks again, against the complete index, every object whose
// check it would answer differently.
func (s *scanner) recheck() {
	for i := range s.results {
		r := &s.results[i]
		var stale []int
		dropped := map[index.Ordinal]bool{}
		for k := range r.checked {
			c := &r.checked[k]
			if c.rec == nil || !c.rec.Stale(s.ix) {
				c.rec = nil
				continue
			}
			stale = append(stale, k)
			if c.held() == nil {
				dropped[c.ord] = true
			}
		}
		// The dropped ones are read again in one pass over their file. A
		// file no larger than a check window is kept whole while its
		// objects are checked again: their rules ask for its other objects
		// (a headless Service for its StatefulSet, a Rollout for its
		// Deployment), and reading the file again for each cost a parse of
		// it per question.
		if len(dropped) > 0 {
			s.reload(dropped, true)
		}
		// A rule of a stale object may need the contents of a dropped
		// object of a large file (a Service its StatefulSet's). Read one
		// at a time, each would cost a parse of its whole file; so the
		// checks that need one are put off, the objects the round asked
		// for are read in one pass over each file, and those checks run
		// again. The last round reads what it needs as it asks.
		pending := stale
		for round := 0; len(pending) > 0; round++ {
			deferring := round < deferredRounds && !s.tune.noDefer
			if deferring {
				s.wanted = map[index.Ordinal]bool{}
			}
			var again []int
			for _, k := range pending {
				c := &r.checked[k]
				held := c.held()
				o := held
				if o == nil {
					if o = s.loaded[c.ord]; o == nil {
						// The file changed or vanished since it was read.
						if e := (load.Error{File: s.inputs[i].Path, Message: changedWhileScanned}); !slices.Contains(r.errors, e) {
							r.errors = append(r.errors, e)
						}
						c.rec = nil
						continue
					}
				}
				var rec *index.Recorder
				if deferring {
					rec = &index.Recorder{}
				}
				out := s.checkObject(o, s.ix.View(r.scope, rec))
				if rec != nil && rec.Incomplete {
					again = append(again, k)
					continue
				}
				if s.spill != nil {
					s.spill.Drop(c.spilled)
				}
				s.rechecked++
				*c = checked{ord: c.ord, open: &outcome{obj: held, out: out}}
				if o.Doc.Trace == nil {
					s.settle(c, nil)
				}
				c.compact()
			}
			s.readWanted()
			pending = again
		}
		clear(s.loaded) // the objects of one input at a time
	}
}

// deferredRounds bounds the rounds of a recheck that put off the checks
// needing a dropped object until the objects asked for are read together
// (see recheck).
const deferredRounds = 3

// load returns a dropped object of a plain file whose contents a rule of
// another object needs (the index's loader). While a recheck defers, an
// object not read yet is noted for readWanted and the answer is nil: the
// index marks the pass that asked incomplete.
func (s *scanner) load(ord index.Ordinal) *object.Object {
	if o, ok := s.loaded[ord]; ok {
		return o
	}
	if s.wanted != nil {
		s.wanted[ord] = true
		return nil
	}
	s.reload(map[index.Ordinal]bool{ord: true}, false)
	return s.loaded[ord]
}

// readWanted reads the objects the loader was asked for while deferring,
// in one pass over each of their files, and stops deferring.
func (s *scanner) readWanted() {
	byInput := map[int]map[index.Ordinal]bool{}
	for ord := range s.wanted {
		input, _ := placeOf(ord)
		if byInput[input] == nil {
			byInput[input] = map[index.Ordinal]bool{}
		}
		byInput[input][ord] = true
	}
	s.wanted = nil
	for _, ords := range byInput {
		s.reload(ords, false)
	}
}

// reload reads objects of one plain file again, in one pass over it, into
// s.loaded: the scan dropped them, and they must be checked again or a
// rule needs their contents. An object that cannot be read (its file
// changed) is left out. With whole, every object of a file no larger
// than a window is kept.
func (s *scanner) reload(ords map[index.Ordinal]bool, whole bool) {
	if s.loaded == nil {
		s.loaded = map[index.Ordinal]*object.Object{}
	}
	var input int
	for ord := range ords {
		input, _ = placeOf(ord)
		break
	}
	if input >= len(s.inputs) {
		return
	}
	in := s.inputs[input]
	if s.tune.reread != nil {
		s.tune.reread(in.Path)
	}
	data, release := s.results[input].stdin, func(int) {}
	if in.Kind != source.Stdin {
		var err error
		if data, release, err = s.data(in); err != nil {
			return
		}
	}
	defer release(len(data))
	whole = whole && len(data) <= window
	n := 0
	// A file that shrank since it was read loses the objects past its
	// new end: they are reported as changed (see recheck).
	_ = source.Guard(func() {
		released := 0
		load.Stream(in.Path, data, func(d *load.Document, read int) {
			if ord := ordinal(input, 0, n); ords[ord] || (whole && s.loaded[ord] == nil) {
				if o, err := object.Decode(d); err == nil {
					s.loaded[ord] = o
				}
			}
			n++
			// As on the first reading, the pages of a mapped file leave
			// memory as they are passed: a 100 MB file read again would
			// otherwise stay whole in memory until the end.
			if read-released >= window {
				release(read)
				released = read
			}
		})
	})
}

// data reads a plain file or standard input; release is called when the
// data is no longer needed (see source.MapFile).
func (s *scanner) data(in source.Input) (data []byte, release func(n int), err error) {
	none := func(int) {}
	if in.Kind == source.Stdin {
		if s.opts.Stdin == nil {
			return nil, none, errors.New("no standard input")
		}
		data, err = source.ReadStdin(s.opts.Stdin, s.opts.MaxFileSize)
		return data, none, err
	}
	if o, ok := s.opts.Overlay[in.Path]; ok {
		return o, none, nil
	}
	return source.MapFile(in.Path, s.opts.MaxFileSize)
}

// render renders a chart or builds a Kustomize directory into streams.
func (s *scanner) render(in source.Input) []load.File {
	r := s.opts.Charts
	if in.Kind == source.Kustomization {
		r = s.opts.Kustomize
	}
	if r == nil {
		return []load.File{{Name: in.Path, Errors: []load.Error{{File: in.Path, Message: in.Kind.String() + " rendering is not available"}}}}
	}
	streams, errs := r.Render(in)
	files := make([]load.File, 0, len(streams)+1)
	if len(errs) > 0 {
		files = append(files, load.File{Name: in.Path, Errors: errs})
	}
	for _, st := range streams {
		var f load.File
		if st.Documents != nil {
			f = load.ParseDocuments(st.Name, st.Documents)
		} else {
			f = load.ParseFrom(st.Name, st.Data, st.Line)
		}
		for _, d := range f.Documents {
			d.Origin = st.Origin
			d.Trace = st.Trace
		}
		files = append(files, f)
	}
	return files
}
