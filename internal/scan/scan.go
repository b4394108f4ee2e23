// Package scan runs the pipeline: inputs are read and parsed in parallel
// into objects, indexed once, and checked by the rules.
package scan

import (
	"io"
	"runtime"
	"slices"
	"sync"

	"backfire.dev/backfire/internal/catalog"
	"backfire.dev/backfire/internal/config"
	"backfire.dev/backfire/internal/finding"
	"backfire.dev/backfire/internal/fix"
	"backfire.dev/backfire/internal/index"
	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/object"
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
	if opts.Catalog == nil {
		opts.Catalog = catalog.All()
	}
	if opts.Rules.Config == nil {
		opts.Rules.Config = &config.Config{}
	}
	enabled, err := rules.Enabled(opts.Catalog, &opts.Rules)
	if err != nil {
		return nil, err
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

	parsed := readAll(inputs, &opts)
	for _, f := range opts.Extra {
		parsed = append(parsed, decode(f))
	}
	for _, p := range parsed {
		res.Summary.Files++
		res.Summary.Documents += len(p.file.Documents)
		res.Summary.Skipped += p.file.Skipped
		res.Errors = append(res.Errors, p.file.Errors...)
		res.Errors = append(res.Errors, p.errors...)
		res.Objects = append(res.Objects, p.objects...)
	}
	res.Summary.Objects = len(res.Objects)

	ix := index.Build(res.Objects)
	out := rules.Run(ix, enabled, &opts.Rules)
	res.Errors = append(res.Errors, out.Errors...)
	res.Findings = make([]finding.Finding, 0, len(out.Findings))
	files := sourceLines{}
	for _, r := range out.Findings {
		res.Findings = append(res.Findings, locate(r, files))
	}
	// Fixes on one object are composed; each finding proposes its part.
	fix.Agree(res.Findings)
	rules.Sort(res.Findings)
	for _, s := range out.Suppressed {
		res.Suppressed = append(res.Suppressed, result.Suppressed{Finding: locate(s.Reported, files), Reason: s.Reason})
	}
	res.Count()
	return res, nil
}

// parsed is one stream, parsed and decoded.
type parsed struct {
	file    load.File
	objects []*object.Object
	errors  []load.Error // decoding errors
}

func decode(f load.File) parsed {
	p := parsed{file: f}
	for _, doc := range f.Documents {
		o, err := object.Decode(doc)
		if err != nil {
			p.errors = append(p.errors, *err)
			continue
		}
		p.objects = append(p.objects, o)
	}
	return p
}

// readAll reads, parses and decodes the inputs on all cores; the result
// keeps input order so that output does not depend on scheduling.
func readAll(inputs []source.Input, opts *Options) []parsed {
	perInput := make([][]parsed, len(inputs))
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), max(len(inputs), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				for _, f := range read(inputs[i], opts) {
					perInput[i] = append(perInput[i], decode(f))
				}
			}
		}()
	}
	for i := range inputs {
		work <- i
	}
	close(work)
	wg.Wait()
	var out []parsed
	for _, ps := range perInput {
		out = append(out, ps...)
	}
	return out
}

func read(in source.Input, opts *Options) []load.File {
	fail := func(msg string) []load.File {
		return []load.File{{Name: in.Path, Errors: []load.Error{{File: in.Path, Message: msg}}}}
	}
	switch in.Kind {
	case source.Chart, source.Kustomization:
		r := opts.Charts
		if in.Kind == source.Kustomization {
			r = opts.Kustomize
		}
		if r == nil {
			return fail(in.Kind.String() + " rendering is not available")
		}
		streams, errs := r.Render(in)
		files := make([]load.File, 0, len(streams)+1)
		if len(errs) > 0 {
			files = append(files, load.File{Name: in.Path, Errors: errs})
		}
		for _, s := range streams {
			var f load.File
			if s.Documents != nil {
				f = load.ParseDocuments(s.Name, s.Documents)
			} else {
				f = load.Parse(s.Name, s.Data)
			}
			for _, d := range f.Documents {
				d.Origin = s.Origin
				d.Trace = s.Trace
			}
			files = append(files, f)
		}
		return files
	}
	var data []byte
	var err error
	if in.Kind == source.Stdin {
		if opts.Stdin == nil {
			return fail("no standard input")
		}
		data, err = source.ReadStdin(opts.Stdin, opts.MaxFileSize)
	} else if o, ok := opts.Overlay[in.Path]; ok {
		data = o
	} else {
		data, err = source.ReadFile(in.Path, opts.MaxFileSize)
	}
	if err != nil {
		return fail(err.Error())
	}
	f := load.Parse(in.Path, data)
	if f.Empty && in.Explicit {
		f.Errors = append(f.Errors, load.Error{File: in.Path, Message: "empty input: no YAML or JSON document"})
	}
	return []load.File{f}
}
