// Package helm renders Helm charts in-process the way `helm template` does,
// one stream per rendered template, so that findings name the template file
// and the line in its rendered output, and, where it can be told, the
// values-file key that supplied the value.
package helm

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/strvals"

	"backfire.dev/backfire/internal/load"
	"backfire.dev/backfire/internal/source"
)

// Defaults of `helm template`.
const (
	DefaultReleaseName = "release-name"
	DefaultNamespace   = "default"
	// DefaultKubeVersion is what the released helm v3.22.0 binary reports as
	// .Capabilities.KubeVersion: its build stamps the client-go minor
	// version it was built with (v0.37 -> 1.37). The library's own
	// fallback, v1.20.0, would make charts that gate on newer APIs render
	// differently than the helm command users compare with.
	DefaultKubeVersion = "v1.37.0"
)

// Options are the `helm template` flags backfire honours.
type Options struct {
	ValueFiles  []string // --values, merged in order
	Set         []string // --set, after the values files
	SetString   []string // --set-string, last
	ReleaseName string   // --release-name
	Namespace   string   // --namespace
	KubeVersion string   // --kube-version
	APIVersions []string // --api-versions, added to the default set
	// MaxOutput bounds a chart's rendered output, in bytes (--max-file-size);
	// 0 means source.DefaultMaxFileSize.
	MaxOutput int64
}

// Renderer renders charts with one set of options. It is safe for
// concurrent use: every Render loads its own copy of the chart.
type Renderer struct {
	opts   Options
	user   []*valuesLayer // --values files, --set and --set-string, in order
	caps   *chartutil.Capabilities
	merged map[string]any // the user's values, merged as helm merges them
	trial  bool           // see Trial
}

// New checks the options once for all charts: the values files are read
// and the --set expressions parsed, so a mistake there is a usage error
// rather than one error per chart.
func New(opts Options) (*Renderer, error) {
	if opts.ReleaseName == "" {
		opts.ReleaseName = DefaultReleaseName
	}
	if opts.Namespace == "" {
		opts.Namespace = DefaultNamespace
	}
	if opts.KubeVersion == "" {
		opts.KubeVersion = DefaultKubeVersion
	}
	if opts.MaxOutput <= 0 {
		opts.MaxOutput = source.DefaultMaxFileSize
	}
	if err := chartutil.ValidateReleaseName(opts.ReleaseName); err != nil {
		return nil, fmt.Errorf("--release-name %q: %v", opts.ReleaseName, err)
	}
	kv, err := chartutil.ParseKubeVersion(opts.KubeVersion)
	if err != nil {
		return nil, fmt.Errorf("--kube-version %q: %v", opts.KubeVersion, err)
	}
	caps := chartutil.DefaultCapabilities.Copy()
	caps.KubeVersion = *kv
	caps.APIVersions = append(append(chartutil.VersionSet{}, caps.APIVersions...), opts.APIVersions...)

	r := &Renderer{opts: opts, caps: caps, merged: map[string]any{}}
	for _, f := range opts.ValueFiles {
		l, err := readValuesFile(f, opts.MaxOutput)
		if err != nil {
			return nil, err
		}
		r.user = append(r.user, l)
	}
	for _, s := range opts.Set {
		l, err := setLayer("--set", s, false)
		if err != nil {
			return nil, err
		}
		r.user = append(r.user, l)
	}
	for _, s := range opts.SetString {
		l, err := setLayer("--set-string", s, true)
		if err != nil {
			return nil, err
		}
		r.user = append(r.user, l)
	}
	// Helm's order: values files merged, then each --set and --set-string
	// parsed into the result in place (list indexes address the merged
	// lists).
	for _, l := range r.user {
		switch {
		case l.expr == "":
			r.merged = mergeMaps(r.merged, l.values)
		case l.asString:
			_ = strvals.ParseIntoString(l.expr, r.merged) // parsed once already
		default:
			_ = strvals.ParseInto(l.expr, r.merged)
		}
	}
	return r, nil
}

// Trial returns a renderer whose values are r's with extra merged in as a
// values file passed last would be (after the --values files, before
// --set). backfire fix renders a chart with the keys it means to write
// this way before it writes them; a null in extra deletes the key, as a
// null in a values file does. A trial render is deterministic: the calls
// that generate keys, certificates, passwords or times are rewritten to
// fixed values (see stubRandomness), so that every object, the workload
// beside its webhook's certificate too, renders the same twice; and
// generating RSA keys, most of the time of a chart such as Harbor's, is
// not done.
func (r *Renderer) Trial(extra map[string]any) *Renderer {
	l := &valuesLayer{name: "backfire fix (trial)", values: extra, keys: map[string]bool{}}
	collectKeys(extra, "", l.keys)
	w := &Renderer{opts: r.opts, caps: r.caps, merged: map[string]any{}, trial: true}
	placed := false
	for _, u := range r.user {
		if u.expr != "" && !placed {
			w.user, placed = append(w.user, l), true
		}
		w.user = append(w.user, u)
	}
	if !placed {
		w.user = append(w.user, l)
	}
	for _, l := range w.user {
		switch {
		case l.expr == "":
			w.merged = mergeMaps(w.merged, copyValue(l.values).(map[string]any))
		case l.asString:
			_ = strvals.ParseIntoString(l.expr, w.merged)
		default:
			_ = strvals.ParseInto(l.expr, w.merged)
		}
	}
	return w
}

// Render renders the chart at in.Path (a directory or a packaged .tgz).
// Each non-empty rendered template is a stream named
// "<chart as given>/templates/<file>"; CRDs from crds/ are streams of
// their own, as `helm template --include-crds` prints them.
func (r *Renderer) Render(in source.Input) (streams []source.Stream, errs []load.Error) {
	fail := func(file string, line int, format string, args ...any) ([]source.Stream, []load.Error) {
		return nil, []load.Error{{File: file, Line: line, Message: fmt.Sprintf(format, args...)}}
	}
	defer func() {
		// A broken chart costs only itself, even if the SDK panics on it.
		if p := recover(); p != nil {
			streams, errs = fail(in.Path, 0, "cannot render Helm chart: %v", p)
		}
	}()
	if st, err := os.Stat(in.Path); err == nil && st.IsDir() {
		if err := linkOutside(in.Path, in.Boundary()); err != nil {
			return fail(in.Path, 0, "%v", err)
		}
	}
	ch, err := loader.Load(in.Path)
	if err != nil {
		return fail(in.Path, 0, "cannot load Helm chart: %v", err)
	}
	if r.trial {
		stubRandomness(ch) // the chart is this render's own copy
	}
	chartFile := r.name(in.Path, ch.Name()+"/Chart.yaml")
	if strings.EqualFold(ch.Metadata.Type, "library") {
		return fail(chartFile, 0, "library chart %q has nothing to render (helm refuses to install it)", ch.Name())
	}
	if errs := missingDependencies(ch, chartFile); len(errs) > 0 {
		return nil, errs
	}
	if ch.Metadata.KubeVersion != "" && !chartutil.IsCompatibleRange(ch.Metadata.KubeVersion, r.caps.KubeVersion.String()) {
		return fail(chartFile, 0, "chart requires kubeVersion %s, which is incompatible with Kubernetes %s (set --kube-version)", ch.Metadata.KubeVersion, r.caps.KubeVersion.String())
	}
	// Copies: ProcessDependencies and coalescing write into the maps.
	userVals, err := copyMap(r.merged)
	if err != nil {
		return fail(in.Path, 0, "%v", err)
	}
	if err := chartutil.ProcessDependenciesWithMerge(ch, userVals); err != nil {
		return fail(chartFile, 0, "dependencies: %v", err)
	}
	// Templates may write into .Values (sprig's set); the provenance
	// render starts again from a copy.
	pristine, err := copyMap(userVals)
	if err != nil {
		return fail(in.Path, 0, "%v", err)
	}
	vals, err := r.renderValues(ch, userVals)
	if err != nil {
		return fail(r.name(in.Path, ch.Name()+"/values.schema.json"), 0, "%v", err)
	}
	if n := valuesSize(vals["Values"], r.opts.MaxOutput); n > r.opts.MaxOutput {
		// Checked before rendering: a template writes a value as often as
		// it likes, and what it rendered is measured only once rendered.
		return fail(chartFile, 0, "chart %q: its values hold more than the %s a scan reads from one input; not rendered (raise --max-file-size)", ch.Name(), bytesize(r.opts.MaxOutput))
	}
	if a := amplifiedCall(ch, vals, r.opts.MaxOutput); a != nil {
		return fail(r.name(in.Path, a.file), a.line, "chart %q: %s", ch.Name(), a.message())
	}
	rendered, err := engine.Engine{}.Render(ch, vals)
	if err != nil {
		return nil, []load.Error{r.templateError(in.Path, err)}
	}
	if err := r.checkSize(rendered, ch); err != nil {
		return fail(in.Path, 0, "chart %q: %v", ch.Name(), err)
	}

	prov := &provenance{compute: func() map[string]*traceTable {
		vals, err := r.renderValues(ch, pristine)
		if err != nil {
			return nil
		}
		return r.traceTables(in.Path, ch, vals, rendered)
	}}
	origin := r.origin(in.Path, ch)
	for _, crd := range ch.CRDObjects() {
		o := origin
		o.Kind, o.Text = load.ChartCRD, origin.Text+"; a CRD from crds/, not templated"
		streams = append(streams, source.Stream{
			Name:   r.name(in.Path, filepath.ToSlash(crd.Filename)),
			Data:   crd.File.Data,
			Origin: o,
		})
	}
	names := make([]string, 0, len(rendered))
	for name := range rendered {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		out := rendered[name]
		if path.Base(name) == "NOTES.txt" || strings.TrimSpace(out) == "" {
			continue // NOTES.txt is printed to the user, not applied
		}
		// Lines count from each document's own "# Source:" header, as
		// `helm template` prints them.
		docs := splitManifests(out)
		s := source.Stream{Name: r.name(in.Path, name), Data: []byte(out), Origin: origin}
		starts := make([]int, len(docs))
		for i, d := range docs {
			s.Documents = append(s.Documents, []byte(d.text))
			starts[i] = d.line
		}
		s.Trace = prov.tracer(name, starts)
		streams = append(streams, s)
	}
	return streams, nil
}

// checkSize bounds what a chart renders, templates and CRDs together:
// parsing it with positions takes about 30 times its size in memory.
func (r *Renderer) checkSize(rendered map[string]string, ch *chart.Chart) error {
	var n int64
	for _, out := range rendered {
		n += int64(len(out))
	}
	for _, crd := range ch.CRDObjects() {
		n += int64(len(crd.File.Data))
	}
	if n > r.opts.MaxOutput {
		return fmt.Errorf("the chart renders %s, more than the %s a scan reads from one input; not scanned (raise --max-file-size)", bytesize(n), bytesize(r.opts.MaxOutput))
	}
	return nil
}

// valuesSize is about what a values tree takes written out: its strings
// and keys, and a few bytes for each other scalar. It stops counting past
// limit.
func valuesSize(v any, limit int64) int64 {
	var n int64
	var walk func(v any)
	walk = func(v any) {
		if n > limit {
			return
		}
		switch v := v.(type) {
		case string:
			n += int64(len(v))
		case map[string]any:
			for k, e := range v {
				n += int64(len(k)) + 2
				walk(e)
			}
		case chartutil.Values:
			walk(map[string]any(v))
		case []any:
			for _, e := range v {
				n += 2
				walk(e)
			}
		default:
			n += 8
		}
	}
	walk(v)
	return n
}

func bytesize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// renderValues is what the templates see: the chart's values coalesced
// with the user's, the release and the capabilities.
func (r *Renderer) renderValues(ch *chart.Chart, userVals map[string]any) (chartutil.Values, error) {
	return chartutil.ToRenderValues(ch, userVals, chartutil.ReleaseOptions{
		Name: r.opts.ReleaseName, Namespace: r.opts.Namespace,
		Revision: 1, IsInstall: true,
	}, r.caps)
}

// name turns a template key of the engine ("harbor/charts/redis/templates/
// x.yaml") into the name findings show: the chart as the user gave it,
// then the path inside the chart.
func (r *Renderer) name(chartPath, key string) string {
	if i := strings.IndexByte(key, '/'); i >= 0 {
		key = key[i+1:]
	}
	return filepath.ToSlash(filepath.Join(chartPath, key))
}

func (r *Renderer) origin(chartPath string, ch *chart.Chart) load.Origin {
	var from []string
	if hasFile(ch, chartutil.ValuesfileName) {
		from = append(from, chartutil.ValuesfileName)
	}
	for _, l := range r.user {
		from = append(from, l.name)
	}
	return load.Origin{
		Kind: load.ChartTemplate, Dir: chartPath,
		Chart: ch.Name(), Release: r.opts.ReleaseName, Namespace: r.opts.Namespace,
		Text: fmt.Sprintf("rendered from chart %s %s (release %q, namespace %q, values: %s)",
			ch.Name(), ch.Metadata.Version, r.opts.ReleaseName, r.opts.Namespace, strings.Join(from, ", ")),
	}
}

func hasFile(ch *chart.Chart, name string) bool {
	for _, f := range ch.Raw {
		if f.Name == name {
			return true
		}
	}
	return false
}

// missingDependencies is helm's CheckDependencies, with the Chart.yaml line
// of each missing entry: a chart whose charts/ folder lacks a dependency
// would render without it, and silently miss its objects.
func missingDependencies(ch *chart.Chart, chartFile string) []load.Error {
	var errs []load.Error
	for _, d := range ch.Metadata.Dependencies {
		found := false
		for _, sub := range ch.Dependencies() {
			if sub.Name() == d.Name {
				found = true
				break
			}
		}
		if found {
			continue
		}
		errs = append(errs, load.Error{
			File: chartFile, Line: dependencyLine(ch, d.Name),
			Message: fmt.Sprintf("dependency %q (version %q) is listed in Chart.yaml but missing from the charts/ directory; run `helm dependency build` first", d.Name, d.Version),
		})
	}
	return errs
}

// dependencyLine finds "name: <dep>" in Chart.yaml; 0 when not found.
func dependencyLine(ch *chart.Chart, name string) int {
	for _, f := range ch.Raw {
		if f.Name != "Chart.yaml" {
			continue
		}
		for i, l := range strings.Split(string(f.Data), "\n") {
			l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "-"))
			if v, ok := strings.CutPrefix(l, "name:"); ok && strings.Trim(strings.TrimSpace(v), `"'`) == name {
				return i + 1
			}
		}
	}
	return 0
}

var errNotMap = errors.New("values are not a map")

// copyMap deep-copies a values tree.
func copyMap(m map[string]any) (map[string]any, error) {
	c, ok := copyValue(m).(map[string]any)
	if !ok {
		return nil, errNotMap
	}
	return c, nil
}

func copyValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		c := make(map[string]any, len(v))
		for k, x := range v {
			c[k] = copyValue(x)
		}
		return c
	case []any:
		c := make([]any, len(v))
		for i, x := range v {
			c[i] = copyValue(x)
		}
		return c
	}
	return v
}
